#pragma once
// Eight 16-bit storage values at a time on x86-64 host back-ends with AVX2 and F16C: decoded to
// eight floats in a register, and eight floats encoded, with the same bits as LowPrecisionFloat's
// conversions (bf16: the exact shift, and round to nearest even by add-and-truncate with NaN
// kept quiet, Overflow::propagate; fp16: F16C, exact for decoding and round to nearest even
// for encoding). The host row kernels of the seismic step and of the multigrid use them to
// decode, update and encode in one loop instead of decoding whole rows into scratch first.
//
// MANTISSA_HOST_AVX2_F16C is defined where they exist. Host only: never compiled for a device.
#include <mantissa/core/LowPrecision.hpp>

#if defined(__F16C__) && defined(__AVX2__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <immintrin.h>

#include <type_traits>
#define MANTISSA_HOST_AVX2_F16C 1

namespace mantissa::host {

template <class S>
inline __m256 decode8(const S* in) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  if constexpr (std::is_same<S, bf16>::value) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    static_assert(std::is_same<S, fp16>::value, "decode8: bf16 or fp16 storage");
    return _mm256_cvtph_ps(h);
  }
}

// The eight encoded values in one 128-bit register (value e in 16-bit lane e).
template <class S>
inline __m128i encode8_bits(__m256 v) {
  if constexpr (std::is_same<S, bf16>::value) {
    // In 32-bit lanes, the bf16 result is the high half of: u + 0x7FFF + lsb (round to nearest
    // even), or u | 0x00400000 for a NaN (kept quiet, the row encode's (u >> 16) | 0x0040).
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb);
    const __m256i nan = _mm256_or_si256(u, _mm256_set1_epi32(0x00400000));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i b = _mm256_blendv_epi8(rounded, nan, is_nan);
    // The high halves: bytes 2-3 of every lane into each 128-bit half's low 8 bytes, then the
    // two halves' low quadwords together.
    const __m256i high = _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                          2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_shuffle_epi8(b, high), 0x08));
  } else {
    static_assert(std::is_same<S, fp16>::value, "encode8: bf16 or fp16 storage");
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
}

template <class S>
inline void encode8(__m256 v, S* out) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), encode8_bits<S>(v));
}

}  // namespace mantissa::host

#endif
