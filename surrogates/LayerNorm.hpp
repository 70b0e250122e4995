#pragma once
// Layer normalisation over the feature axis (Ba, Kiros and Hinton, arXiv:1607.06450, 2016),
// y = (x - mean) / sqrt(var + eps) * gamma + beta with the biased variance, as PyTorch's
// nn.LayerNorm. Always computed in T (fp32 or fp64), also under low-precision compute, as
// mixed-precision training does (Micikevicius et al., ICLR 2018).
//
// Backward, with xhat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dgamma += sum dy * xhat,  dbeta += sum dy.
// Row sums run in kLanes partial sums (detail/Lanes.hpp), so they vectorise.
#include <surrogates/Parameter.hpp>
#include <surrogates/detail/Lanes.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::surrogates {

template <class T>
class LayerNorm {
 public:
  LayerNorm() = default;
  LayerNorm(const std::string& name, int features, double eps = 1e-5)
      : m_name(name),
        m_d(features),
        m_eps(eps),
        m_gamma(Kokkos::view_alloc("mantissa::surrogates::LayerNorm::" + name + ".weight"), features),
        m_dgamma(Kokkos::view_alloc("mantissa::surrogates::LayerNorm::" + name + ".weight.grad"), features),
        m_beta(Kokkos::view_alloc("mantissa::surrogates::LayerNorm::" + name + ".bias"), features),
        m_dbeta(Kokkos::view_alloc("mantissa::surrogates::LayerNorm::" + name + ".bias.grad"), features) {
    Kokkos::deep_copy(m_gamma, T(1));
  }

  void forward(const Matrix<T>& x, Matrix<T>& y) { forward_impl(x, &y, nullptr); }
  // The same, with the output written as bf16 bit patterns (rounded to nearest even) instead of T:
  // for a consumer that multiplies in bf16 and needs nothing else of it (the backward needs x).
  void forward_bf16(const Matrix<T>& x, Matrix<std::uint16_t>& y16) { forward_impl(x, nullptr, &y16); }

  void forward_impl(const Matrix<T>& x, Matrix<T>* y_out, Matrix<std::uint16_t>* y16_out) {
    m_x = x;
    const std::int64_t n = x.extent(0);
    Matrix<T> y;
    Matrix<std::uint16_t> y16;
    if (y_out) {
      ensure_shape(*y_out, "mantissa::surrogates::LayerNorm::" + m_name + ".y", n, m_d);
      y = *y_out;
    } else {
      ensure_shape(*y16_out, "mantissa::surrogates::LayerNorm::" + m_name + ".y_bf16", n, m_d);
      y16 = *y16_out;
    }
    const bool to16 = y16_out != nullptr;
    ensure_size(m_mean, "mantissa::surrogates::LayerNorm::" + m_name + ".mean", n);
    ensure_size(m_rstd, "mantissa::surrogates::LayerNorm::" + m_name + ".rstd", n);
    auto mean = m_mean;
    auto rstd = m_rstd;
    auto gamma = m_gamma;
    auto beta = m_beta;
    auto yy = y;
    auto yb = y16;
    const int d = m_d;
    const T eps = T(m_eps);
    Kokkos::parallel_for(
        "mantissa::surrogates::LayerNorm::forward", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const std::int64_t r) {
          const T* KOKKOS_RESTRICT xr = &x(r, 0);
          const T* KOKKOS_RESTRICT ga = gamma.data();
          const T* KOKKOS_RESTRICT be = beta.data();
          T* KOKKOS_RESTRICT yr = to16 ? nullptr : &yy(r, 0);
          std::uint16_t* KOKKOS_RESTRICT y16r = to16 ? &yb(r, 0) : nullptr;
          const T mu = detail::lane_sum(xr, d) / T(d);
          const T rs = T(1) / math::sqrt(detail::lane_sum_sq_dev(xr, mu, d) / T(d) + eps);
          mean(r) = mu;
          rstd(r) = rs;
          if (to16)
            for (int j = 0; j < d; ++j) y16r[j] = bf16(float((xr[j] - mu) * rs * ga[j] + be[j])).bits();
          else
            for (int j = 0; j < d; ++j) yr[j] = (xr[j] - mu) * rs * ga[j] + be[j];
        });
  }

  void backward(const Matrix<T>& dy, Matrix<T>& dx) {
    const std::int64_t n = dy.extent(0);
    ensure_shape(dx, "mantissa::surrogates::LayerNorm::" + m_name + ".dx", n, m_d);
    auto mean = m_mean;
    auto rstd = m_rstd;
    auto gamma = m_gamma;
    auto x = m_x;
    auto g = dy;
    auto out = dx;
    const int d = m_d;
    Kokkos::parallel_for(
        "mantissa::surrogates::LayerNorm::backward", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const std::int64_t r) {
          const T* KOKKOS_RESTRICT gr = &g(r, 0);
          const T* KOKKOS_RESTRICT xr = &x(r, 0);
          const T* KOKKOS_RESTRICT ga = gamma.data();
          T* KOKKOS_RESTRICT o = &out(r, 0);
          const T mu = mean(r), rs = rstd(r);
          const T sg = detail::lane_dot(gr, ga, d) / T(d);
          const T sgx = rs * detail::lane_dot_dev(gr, ga, xr, mu, d) / T(d);
          for (int j = 0; j < d; ++j) o[j] = rs * (gr[j] * ga[j] - sg - (xr[j] - mu) * rs * sgx);
        });
    auto dgamma = m_dgamma;
    auto dbeta = m_dbeta;
    // Blocks of columns, rows in order inside each (the per-column order of the sums is fixed, so
    // results do not depend on the thread count), inner loop along a row.
    constexpr int kSumColumns = 32;
    const std::int64_t blocks = (d + kSumColumns - 1) / kSumColumns;
    Kokkos::parallel_for(
        "mantissa::surrogates::LayerNorm::param_grad", Kokkos::RangePolicy<ExecSpace>(0, blocks),
        KOKKOS_LAMBDA(const std::int64_t blk) {
          const int c0 = int(blk) * kSumColumns;
          const int nc = d - c0 < kSumColumns ? d - c0 : kSumColumns;
          T a[kSumColumns], b[kSumColumns];
          for (int c = 0; c < kSumColumns; ++c) a[c] = b[c] = T(0);
          for (std::int64_t r = 0; r < n; ++r) {
            const T* KOKKOS_RESTRICT gr = &g(r, c0);
            const T* KOKKOS_RESTRICT xr = &x(r, c0);
            const T mu = mean(r), rs = rstd(r);
            for (int c = 0; c < nc; ++c) {
              a[c] += gr[c] * (xr[c] - mu) * rs;
              b[c] += gr[c];
            }
          }
          for (int c = 0; c < nc; ++c) {
            dgamma(c0 + c) += a[c];
            dbeta(c0 + c) += b[c];
          }
        });
  }

  void parameters(std::vector<Parameter<T>>& out) {
    out.push_back(make_parameter(m_name + ".weight", m_gamma, m_dgamma));
    out.push_back(make_parameter(m_name + ".bias", m_beta, m_dbeta));
  }

 private:
  std::string m_name;
  int m_d = 0;
  double m_eps = 1e-5;
  Vector<T> m_gamma, m_dgamma, m_beta, m_dbeta, m_mean, m_rstd;
  Matrix<T> m_x;
};

}  // namespace mantissa::surrogates
