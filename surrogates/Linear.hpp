#pragma once
// y = x W^T + b (PyTorch nn.Linear convention: W is [out, in]) with its backward pass:
//   dx = dy W,   dW += dy^T x,   db += sum over rows of dy.
// The input is kept by reference (a View handle) for the backward pass.
#include <surrogates/Matmul.hpp>
#include <surrogates/Parameter.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace mantissa::surrogates {

// Which precision the matrix multiplies use and whether fp8 scaling states advance.
struct Context {
  Precision compute = Precision::fp32;
};

template <class T>
class Linear {
 public:
  Linear() = default;
  Linear(const std::string& name, int in, int out)
      : m_name(name),
        m_in(in),
        m_out(out),
        m_w(make_matrix<T>("mantissa::surrogates::Linear::" + name + ".weight", out, in)),
        m_dw(make_matrix<T>("mantissa::surrogates::Linear::" + name + ".weight.grad", out, in)),
        m_b(Kokkos::view_alloc("mantissa::surrogates::Linear::" + name + ".bias"), out),
        m_db(Kokkos::view_alloc("mantissa::surrogates::Linear::" + name + ".bias.grad"), out),
        m_sx(DelayedScaling::for_type<fp8_e4m3>()),
        m_sw(DelayedScaling::for_type<fp8_e4m3>()),
        m_sdy(DelayedScaling::for_type<fp8_e5m2>()) {}

  // PyTorch's default initialisation (kaiming_uniform with a = sqrt(5)): U(-1/sqrt(in), 1/sqrt(in))
  // for weight and bias, drawn on the host from the model's generator.
  void initialize(std::mt19937_64& gen, double gain = 1.0) {
    const double bound = gain / std::sqrt(double(m_in));
    std::uniform_real_distribution<double> u(-bound, bound);
    auto hw = Kokkos::create_mirror_view(m_w);
    auto hb = Kokkos::create_mirror_view(m_b);
    for (int o = 0; o < m_out; ++o)
      for (int i = 0; i < m_in; ++i) hw(o, i) = T(u(gen));
    for (int o = 0; o < m_out; ++o) hb(o) = T(u(gen));
    Kokkos::deep_copy(m_w, hw);
    Kokkos::deep_copy(m_b, hb);
  }

  void forward(const Context& ctx, const Matrix<T>& x, Matrix<T>& y) {
    m_x = x;
    ensure_shape(y, "mantissa::surrogates::Linear::" + m_name + ".y", x.extent(0), m_out);
    auto b = m_b;
    auto yy = y;
    const std::int64_t cols = m_out;
    Kokkos::parallel_for(
        "mantissa::surrogates::Linear::bias", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(y.size())),
        KOKKOS_LAMBDA(const std::int64_t k) { yy.data()[k] = b(k % cols); });
    m_mm.run(ctx.compute, 'N', 'T', T(1), x, {&m_sx, OperandKind::activation}, m_w,
             {&m_sw, OperandKind::weight}, T(1), y);
  }

  // Accumulates dW, db; writes dx when need_dx (the first layer does not need it).
  void backward(const Context& ctx, const Matrix<T>& dy, Matrix<T>& dx, bool need_dx = true) {
    if (need_dx) {
      ensure_shape(dx, "mantissa::surrogates::Linear::" + m_name + ".dx", dy.extent(0), m_in);
      m_mm.run(ctx.compute, 'N', 'N', T(1), dy, {&m_sdy, OperandKind::gradient}, m_w,
               {&m_sw, OperandKind::weight}, T(0), dx);
    }
    m_mm.run(ctx.compute, 'T', 'N', T(1), dy, {&m_sdy, OperandKind::gradient}, m_x,
             {&m_sx, OperandKind::activation}, T(1), m_dw);
    auto db = m_db;
    auto g = dy;
    const std::int64_t rows = dy.extent(0);
    // Column sums in a fixed order (no atomics), so results do not depend on the thread count.
    Kokkos::parallel_for(
        "mantissa::surrogates::Linear::bias_grad", Kokkos::RangePolicy<ExecSpace>(0, m_out),
        KOKKOS_LAMBDA(const int o) {
          T s = T(0);
          for (std::int64_t r = 0; r < rows; ++r) s += g(r, o);
          db(o) += s;
        });
  }

  void parameters(std::vector<Parameter<T>>& out) {
    out.push_back(make_parameter(m_name + ".weight", m_w, m_dw));
    out.push_back(make_parameter(m_name + ".bias", m_b, m_db));
  }
  // fp8 scaling states, by name (for checkpoints).
  void scalings(std::vector<std::pair<std::string, DelayedScaling*>>& out) {
    out.emplace_back(m_name + ".scale_x", &m_sx);
    out.emplace_back(m_name + ".scale_w", &m_sw);
    out.emplace_back(m_name + ".scale_dy", &m_sdy);
  }

  const Matrix<T>& weight() const { return m_w; }
  const Vector<T>& bias() const { return m_b; }
  int in() const { return m_in; }
  int out() const { return m_out; }

 private:
  std::string m_name;
  int m_in = 0, m_out = 0;
  Matrix<T> m_w, m_dw;
  Vector<T> m_b, m_db;
  Matrix<T> m_x;
  Matmul<T> m_mm;
  DelayedScaling m_sx{448.0f}, m_sw{448.0f}, m_sdy{57344.0f};
};

}  // namespace mantissa::surrogates
