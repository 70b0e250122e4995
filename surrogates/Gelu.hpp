#pragma once
// GELU with the exact erf form, x * Phi(x) (Hendrycks and Gimpel, arXiv:1606.08415), which is
// PyTorch's nn.GELU() default; derivative Phi(x) + x * phi(x).
#include <surrogates/Tensor.hpp>
#include <surrogates/detail/FastMath.hpp>

#include <cstdint>
#include <string>

namespace mantissa::surrogates {

template <class T>
KOKKOS_INLINE_FUNCTION T gelu(T x) {
  return T(0.5) * x * (T(1) + math::erf(x * T(0.70710678118654752440)));
}
template <class T>
KOKKOS_INLINE_FUNCTION T gelu_derivative(T x) {
  const T cdf = T(0.5) * (T(1) + math::erf(x * T(0.70710678118654752440)));
  const T pdf = T(0.39894228040143267794) * math::exp(T(-0.5) * x * x);
  return cdf + x * pdf;
}

// fp32: erf and exp as vectorisable arithmetic (detail/FastMath.hpp, ~1 ulp) instead of libm calls,
// which kept these loops scalar; the fp64 model keeps math::erf / math::exp.
template <>
KOKKOS_INLINE_FUNCTION float gelu<float>(float x) {
  return 0.5f * x * (1.0f + detail::erf_fast(x * 0.70710678118654752440f));
}
template <>
KOKKOS_INLINE_FUNCTION float gelu_derivative<float>(float x) {
  const float cdf = 0.5f * (1.0f + detail::erf_fast(x * 0.70710678118654752440f));
  const float pdf = 0.39894228040143267794f * detail::exp_nonpositive(-0.5f * x * x);
  return cdf + x * pdf;
}

template <class T>
class Gelu {
 public:
  void forward(const Matrix<T>& x, Matrix<T>& y) {
    m_x = x;
    ensure_shape(y, "mantissa::surrogates::Gelu::y", x.extent(0), x.extent(1));
    auto yy = y;
    Kokkos::parallel_for(
        "mantissa::surrogates::Gelu::forward", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(x.size())),
        KOKKOS_LAMBDA(const std::int64_t k) { yy.data()[k] = gelu(x.data()[k]); });
  }
  // The same, with the output written as bf16 bit patterns (rounded to nearest even).
  void forward_bf16(const Matrix<T>& x, Matrix<std::uint16_t>& y16) {
    m_x = x;
    ensure_shape(y16, "mantissa::surrogates::Gelu::y_bf16", x.extent(0), x.extent(1));
    auto yy = y16;
    Kokkos::parallel_for(
        "mantissa::surrogates::Gelu::forward_bf16", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(x.size())),
        KOKKOS_LAMBDA(const std::int64_t k) { yy.data()[k] = bf16(float(gelu(x.data()[k]))).bits(); });
  }
  void backward(const Matrix<T>& dy, Matrix<T>& dx) {
    ensure_shape(dx, "mantissa::surrogates::Gelu::dx", dy.extent(0), dy.extent(1));
    auto x = m_x;
    auto out = dx;
    Kokkos::parallel_for(
        "mantissa::surrogates::Gelu::backward", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(dy.size())),
        KOKKOS_LAMBDA(const std::int64_t k) { out.data()[k] = dy.data()[k] * gelu_derivative(x.data()[k]); });
  }

 private:
  Matrix<T> m_x;
};

}  // namespace mantissa::surrogates
