#pragma once
// Elementary functions written as plain arithmetic, so that loops calling them vectorise (a libm
// call inside a loop keeps it scalar unless the whole build uses -ffast-math). fp32 only; the
// fp64 model keeps math::exp / math::erf. Device back-ends compile the same arithmetic. The
// polynomials use fused multiply-adds where the target has them (half the operations of a
// multiply and an add under -ffp-contract=off). tstFastMath measures the accuracy: exp 0.99 ulp,
// erf 1.03 ulp, GELU 0.90 and its derivative 1.20 float epsilons x max(1, |x|).
#include <mantissa/core/LowPrecision.hpp>

#include <cstdint>

namespace mantissa::surrogates::detail {

// a * b + c with one rounding where the target has fused multiply-add (devices; hosts compiled
// with FMA, e.g. -march=native on x86-64), else a * b + c rounded twice.
KOKKOS_INLINE_FUNCTION float fused(float a, float b, float c) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return fmaf(a, b, c);
#elif defined(__FMA__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// exp(x) for x <= 0 (softmax arguments after subtracting the row maximum), within 1 ulp of the
// correctly rounded value for -87 <= x <= 0; below -87 it returns exp(-87) = 1.6e-38 (far below
// any row sum, which is >= 1, and below any product GELU forms with it); NaN stays NaN.
// Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, and the polynomial of Cephes' expf
// (S. L. Moshier, Cephes Math Library, 1989). n is rounded with the 1.5 * 2^23 trick rather than a
// float-to-int conversion: a conversion may trap (-ftrapping-math, GCC's default), so GCC will not
// if-convert around it and the loop would stay scalar; an addition it does.
KOKKOS_INLINE_FUNCTION float exp_nonpositive(float x) {
  const float xc = x < -87.0f ? -87.0f : (x > 0.0f ? 0.0f : x);
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: t's low mantissa bits hold n
  const float t = xc * 1.44269504088896341f + kShifter;
  const float fn = t - kShifter;
  const float r = (xc - fn * 0.693359375f) - fn * -2.12194440e-4f;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = fused(p, r, 1.3981999507e-3f);
  p = fused(p, r, 8.3334519073e-3f);
  p = fused(p, r, 4.1665795894e-2f);
  p = fused(p, r, 1.6666665459e-1f);
  p = fused(p, r, 5.0000001201e-1f);
  p = fused(p, r2, r) + 1.0f;
  // bits(t) = bits(kShifter) + n, so 2^n has exponent field n + 127 (n in [-126, 0]).
  const std::uint32_t e = mantissa::detail::float_to_bits(t) - 0x4B400000u + 127u;
  return p * mantissa::detail::bits_to_float(e << 23);
}

// erf(x) in fp32, within about 1 ulp (N. Juffa's minimax erff: an odd polynomial for
// |x| < 0.9277 and 1 - exp(poly(|x|)) beyond, both branches evaluated and one selected, so that a
// loop over it vectorises).
KOKKOS_INLINE_FUNCTION float erf_fast(float a) {
  const float t = a < 0.0f ? -a : a;
  const float s = a * a;
  // |x| >= 0.927734375
  float r = fused(-1.72853470e-5f, t, 3.83197126e-4f);
  const float u = fused(-3.88396438e-3f, t, 2.42546219e-2f);
  r = fused(r, s, u);
  r = fused(r, t, -1.06777877e-1f);
  r = fused(r, t, -6.34846687e-1f);
  r = fused(r, t, -1.28717512e-1f);
  r = r * t - t;
  const float big = 1.0f - exp_nonpositive(r);
  // |x| < 0.927734375
  float q = -5.96761703e-4f;
  q = fused(q, s, 4.99119423e-3f);
  q = fused(q, s, -2.67681349e-2f);
  q = fused(q, s, 1.12819925e-1f);
  q = fused(q, s, -3.76125336e-1f);
  q = fused(q, s, 1.28379166e-1f);
  q = fused(q, a, a);
  return t > 0.927734375f ? (a < 0.0f ? -big : big) : q;
}

}  // namespace mantissa::surrogates::detail
