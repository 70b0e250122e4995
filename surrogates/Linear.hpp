#pragma once
// y = x W^T + b (PyTorch nn.Linear convention: W is [out, in]) with its backward pass:
//   dx = dy W,   dW += dy^T x,   db += sum over rows of dy.
// The input is kept by reference (a View handle) for the backward pass.
#include <surrogates/Matmul.hpp>
#include <surrogates/Parameter.hpp>

#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace mantissa::surrogates {

// Which precision the matrix multiplies use and whether fp8 scaling states advance.
struct Context {
  Precision compute = Precision::fp32;
  // The caller guarantees that the weights are unchanged since this model's previous forward
  // (an inference session): 16-bit weight copies rounded then are reused instead of rounded again.
  bool weights_unchanged = false;
  // How fp8 operands get their amax (reduction over ranks, counted rows, current vs delayed).
  Fp8Amax fp8{};
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
    forward_residual(ctx, x, Matrix<T>(), y);
  }

  // y = residual + x W^T + b; an empty residual means none. On the oneDNN fp32 path one matmul
  // adds b and then the residual in its epilogue; elsewhere a residual connection is folded into
  // the GEMM's accumulation (one pass writes residual + b, the GEMM adds onto it).
  void forward_residual(const Context& ctx, const Matrix<T>& x, const Matrix<T>& residual, Matrix<T>& y) {
    m_x = x;
    ensure_shape(y, "mantissa::surrogates::Linear::" + m_name + ".y", x.extent(0), m_out);
    if (residual.data() != nullptr &&
        (residual.extent(0) != y.extent(0) || residual.extent(1) != y.extent(1)))
      throw Error("mantissa::surrogates::Linear::forward_residual: residual shape does not match the output");
    if constexpr (std::is_same<T, float>::value) {
      if (ctx.compute == Precision::fp32 && linear_onednn_f32(x, m_w, m_b, residual, y)) return;
    }
    init_output(y, m_b, residual);
    forward_gemm(ctx, x, y);
  }

  // y = b (+ residual), row by row, so the inner loop is contiguous (no index division).
  static void init_output(const Matrix<T>& y, const Vector<T>& bias, const Matrix<T>& residual) {
    auto b = bias;
    auto yy = y;
    auto res = residual;
    const bool has_res = residual.data() != nullptr;
    const std::int64_t cols = y.extent(1);
    Kokkos::parallel_for(
        "mantissa::surrogates::Linear::bias", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(y.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t r) {
          T* KOKKOS_RESTRICT row = &yy(r, 0);
          const T* KOKKOS_RESTRICT bb = b.data();
          if (has_res) {
            const T* KOKKOS_RESTRICT rr = &res(r, 0);
            for (std::int64_t c = 0; c < cols; ++c) row[c] = rr[c] + bb[c];
          } else {
            for (std::int64_t c = 0; c < cols; ++c) row[c] = bb[c];
          }
        });
  }

  // y = residual + x W^T + b with x given as bf16 bit patterns (its producer rounded it), on the
  // oneDNN bf16 path (takes_bf16_input): the input is kept for the backward as forward would keep
  // its own rounded copy.
  static bool takes_bf16_input(Precision p) {
    return std::is_same<T, float>::value && p == Precision::bf16 && gemm_path(p) == GemmPath::onednn_bf16;
  }
  void forward_bf16_input(const Context& ctx, const Matrix<std::uint16_t>& x16, const Matrix<T>& residual,
                          Matrix<T>& y) {
    if (!takes_bf16_input(ctx.compute))
      throw Error("mantissa::surrogates::Linear::forward_bf16_input: not on the oneDNN bf16 path (internal)");
    if constexpr (std::is_same<T, float>::value) {
      m_x = Matrix<T>();
      ensure_shape(y, "mantissa::surrogates::Linear::" + m_name + ".y", x16.extent(0), m_out);
      init_output(y, m_b, residual);
      m_xr.bits = x16;
      round_weights(ctx);
      gemm_rounded(ctx.compute, 'N', 'T', 1.0f, m_xr, m_wr, 1.0f, y);
    } else {
      (void)x16, (void)residual, (void)y;
    }
  }

  // The 16-bit weight copy, rounded again unless the weights are unchanged since the last one.
  void round_weights(const Context& ctx) {
    if constexpr (std::is_same<T, float>::value) {
      if (!(ctx.weights_unchanged && m_wr_valid && m_wr_precision == ctx.compute)) {
        m_wr.round(ctx.compute, m_w, "mantissa::surrogates::Linear::w_rounded");
        m_wr_precision = ctx.compute;
        m_wr_valid = true;
      }
    } else {
      (void)ctx;
    }
  }

  void forward_gemm(const Context& ctx, const Matrix<T>& x, const Matrix<T>& y) {
    if constexpr (std::is_same<T, float>::value) {
      if (rounds_without_scaling(ctx.compute)) {
        m_xr.round(ctx.compute, x, "mantissa::surrogates::Linear::x_rounded");
        round_weights(ctx);
        gemm_rounded(ctx.compute, 'N', 'T', 1.0f, m_xr, m_wr, 1.0f, y);
        return;
      }
    }
    m_mm.run(ctx.compute, 'N', 'T', T(1), x, {&m_sx, OperandKind::activation, &ctx.fp8}, m_w,
             {&m_sw, OperandKind::weight, &ctx.fp8}, T(1), y);
  }

  // Accumulates dW, db; writes dx when need_dx (the first layer does not need it).
  void backward(const Context& ctx, const Matrix<T>& dy, Matrix<T>& dx, bool need_dx = true) {
    if (need_dx) ensure_shape(dx, "mantissa::surrogates::Linear::" + m_name + ".dx", dy.extent(0), m_in);
    bool done = false;
    if constexpr (std::is_same<T, float>::value) {
      if (rounds_without_scaling(ctx.compute)) {
        // x and W as rounded by forward (same step, same weights), dy rounded once for both.
        m_dyr.round(ctx.compute, dy, "mantissa::surrogates::Linear::dy_rounded");
        if (need_dx) gemm_rounded(ctx.compute, 'N', 'N', 1.0f, m_dyr, m_wr, 0.0f, dx);
        gemm_rounded(ctx.compute, 'T', 'N', 1.0f, m_dyr, m_xr, 1.0f, m_dw);
        done = true;
      }
    }
    if (!done) {
      if (need_dx)
        m_mm.run(ctx.compute, 'N', 'N', T(1), dy, {&m_sdy, OperandKind::gradient, &ctx.fp8}, m_w,
                 {&m_sw, OperandKind::weight, &ctx.fp8}, T(0), dx);
      m_mm.run(ctx.compute, 'T', 'N', T(1), dy, {&m_sdy, OperandKind::gradient, &ctx.fp8}, m_x,
               {&m_sx, OperandKind::activation, &ctx.fp8}, T(1), m_dw);
    }
    column_sums_into(dy, m_db);
  }

  // db += column sums of g, in a fixed order per column (no atomics, so results do not depend on
  // the thread count); blocks of kSumColumns columns, so the inner loop runs along a row.
  static void column_sums_into(const Matrix<T>& g, const Vector<T>& db) {
    constexpr int kSumColumns = 32;
    const std::int64_t rows = g.extent(0), cols = g.extent(1);
    const std::int64_t blocks = (cols + kSumColumns - 1) / kSumColumns;
    Kokkos::parallel_for(
        "mantissa::surrogates::Linear::bias_grad", Kokkos::RangePolicy<ExecSpace>(0, blocks),
        KOKKOS_LAMBDA(const std::int64_t blk) {
          const std::int64_t c0 = blk * kSumColumns;
          const int nc = int(cols - c0 < kSumColumns ? cols - c0 : kSumColumns);
          T s[kSumColumns];
          for (int c = 0; c < kSumColumns; ++c) s[c] = T(0);
          for (std::int64_t r = 0; r < rows; ++r) {
            const T* KOKKOS_RESTRICT row = &g(r, c0);
            for (int c = 0; c < nc; ++c) s[c] += row[c];
          }
          for (int c = 0; c < nc; ++c) db(c0 + c) += s[c];
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
  RoundedOperand m_xr, m_wr, m_dyr;
  Precision m_wr_precision = Precision::fp32;
  bool m_wr_valid = false;
  DelayedScaling m_sx{448.0f}, m_sw{448.0f}, m_sdy{57344.0f};
};

}  // namespace mantissa::surrogates
