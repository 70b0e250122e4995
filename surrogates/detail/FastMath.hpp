#pragma once
// Elementary functions written as plain arithmetic, so that loops calling them vectorise (a libm
// call inside a loop keeps it scalar unless the whole build uses -ffast-math). fp32 only; the
// fp64 model keeps math::exp / math::erf. Device back-ends compile the same arithmetic.
#include <mantissa/core/LowPrecision.hpp>

#include <cstdint>

namespace mantissa::surrogates::detail {

// exp(x) for x <= 0 (softmax arguments after subtracting the row maximum), within 2 ulp of the
// correctly rounded value for x >= -87 and 0 below (where exp(x) < 1.7e-38, far below any row
// sum, which is >= 1); NaN stays NaN. Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, and the
// degree-7 polynomial of Cephes' expf (S. L. Moshier, Cephes Math Library, 1989).
KOKKOS_INLINE_FUNCTION float exp_nonpositive(float x) {
  const bool tiny = x < -87.0f;
  const float xc = tiny ? -87.0f : (x > 0.0f ? 0.0f : x);
  // n = x log2(e) rounded to nearest: the conversion truncates towards 0 and x log2(e) <= 0.
  const int n = int(xc * 1.44269504088896341f - 0.5f);
  const float fn = float(n);
  const float r = (xc - fn * 0.693359375f) - fn * -2.12194440e-4f;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r2 + r + 1.0f;
  const float two_n = mantissa::detail::bits_to_float(std::uint32_t(n + 127) << 23);
  const float e = p * two_n;
  return tiny ? 0.0f : e;
}

// erf(x) in fp32, within about 1 ulp (N. Juffa's minimax erff: an odd polynomial for
// |x| < 0.9277 and 1 - exp(poly(|x|)) beyond, both branches evaluated and one selected, so that a
// loop over it vectorises).
KOKKOS_INLINE_FUNCTION float erf_fast(float a) {
  const float t = a < 0.0f ? -a : a;
  const float s = a * a;
  // |x| >= 0.927734375
  float r = -1.72853470e-5f * t + 3.83197126e-4f;
  const float u = -3.88396438e-3f * t + 2.42546219e-2f;
  r = r * s + u;
  r = r * t + -1.06777877e-1f;
  r = r * t + -6.34846687e-1f;
  r = r * t + -1.28717512e-1f;
  r = r * t - t;
  const float big = 1.0f - exp_nonpositive(r);
  // |x| < 0.927734375
  float q = -5.96761703e-4f;
  q = q * s + 4.99119423e-3f;
  q = q * s + -2.67681349e-2f;
  q = q * s + 1.12819925e-1f;
  q = q * s + -3.76125336e-1f;
  q = q * s + 1.28379166e-1f;
  q = q * a + a;
  return t > 0.927734375f ? (a < 0.0f ? -big : big) : q;
}

}  // namespace mantissa::surrogates::detail
