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

}  // namespace mantissa::surrogates::detail
