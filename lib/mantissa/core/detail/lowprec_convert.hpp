#pragma once
// Bit-level conversions between IEEE binary32/binary64 and the small formats of
// LowPrecision.hpp. Not for inclusion outside mantissa/core.
//
// Everything here is plain integer arithmetic on the bit patterns, so it gives the same bits
// on every Kokkos back-end (host, CUDA, HIP) and does not depend on the floating-point
// environment (flush-to-zero, DAZ, fast-math): subnormals of every format are produced and
// read exactly.
//
// Rounding is round-to-nearest, ties-to-even (IEEE 754-2019 section 4.3.1). Special values
// follow IEEE 754 for bf16, fp16 and fp8 E5M2, and the OCP 8-bit Floating Point
// Specification (OFP8) rev. 1.0, 2023, for fp8 E4M3 (no infinities, NaN = S.1111.111,
// largest finite 448).
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace mantissa {

// What a conversion does with values beyond the largest finite number of the target format
// (and with infinities). saturate: clamp to +-max finite (OFP8 "saturation mode";
// __NV_SATFINITE in CUDA). propagate: +-Inf where the format has infinities, NaN where it
// does not (fp8 E4M3).
enum class Overflow { saturate, propagate };

namespace detail {

// Type punning through a union: accepted by GCC, Clang, nvcc and hipcc in host and device
// code alike (std::bit_cast is C++20 and host-only before CUDA 11.x; memcpy is not
// available in every device compiler's constexpr/inline paths).
KOKKOS_INLINE_FUNCTION std::uint32_t float_to_bits(float x) {
  union {
    float f;
    std::uint32_t u;
  } c{};
  c.f = x;
  return c.u;
}
KOKKOS_INLINE_FUNCTION float bits_to_float(std::uint32_t u) {
  union {
    std::uint32_t u;
    float f;
  } c{};
  c.u = u;
  return c.f;
}
KOKKOS_INLINE_FUNCTION std::uint64_t double_to_bits(double x) {
  union {
    double d;
    std::uint64_t u;
  } c{};
  c.d = x;
  return c.u;
}

// Layout of a source format (binary32 or binary64) as seen by the encoder.
template <class UInt, int ExponentBits, int MantissaBits>
struct SourceLayout {
  using uint_type = UInt;
  static constexpr int exponent_bits = ExponentBits;
  static constexpr int mantissa_bits = MantissaBits;
};
using Binary32 = SourceLayout<std::uint32_t, 8, 23>;
using Binary64 = SourceLayout<std::uint64_t, 11, 52>;

// Round the finite or special value with bit pattern `a` (source layout Src) to the target
// format Fmt. Fmt provides exponent_bits, mantissa_bits, has_infinity and storage_type.
template <class Fmt, class Src>
KOKKOS_INLINE_FUNCTION typename Fmt::storage_type encode(typename Src::uint_type a, Overflow overflow) {
  using U = typename Src::uint_type;
  using S = std::uint32_t;  // wide enough for every target pattern (<= 16 bits) and carries
  constexpr int SE = Src::exponent_bits, SM = Src::mantissa_bits;
  constexpr int DE = Fmt::exponent_bits, DM = Fmt::mantissa_bits;
  constexpr int sbias = (1 << (SE - 1)) - 1, dbias = (1 << (DE - 1)) - 1;
  static_assert(dbias <= sbias && DM < SM, "target must be narrower than the source in range and precision");
  constexpr int src_exp_all_ones = (1 << SE) - 1;
  constexpr S exp_all_ones = ((S(1) << DE) - 1) << DM;
  // IEEE-like formats reserve the all-ones exponent for Inf/NaN; OFP8 E4M3 uses it for
  // finite numbers except mantissa all ones (NaN).
  constexpr S max_finite = Fmt::has_infinity ? exp_all_ones - 1 : (S(1) << (DE + DM)) - 2;
  constexpr S canonical_nan =
      Fmt::has_infinity ? (exp_all_ones | (S(1) << (DM - 1))) : ((S(1) << (DE + DM)) - 1);
  constexpr int emin = 1 - dbias;  // exponent of the smallest normal
  constexpr int emax = Fmt::has_infinity ? (1 << DE) - 2 - dbias : (1 << DE) - 1 - dbias;

  using R = typename Fmt::storage_type;
  const S sign = S(a >> (SE + SM)) << (DE + DM);
  const int e = int((a >> SM) & U(src_exp_all_ones));
  const U m = a & ((U(1) << SM) - 1);
  const S overflowed =
      overflow == Overflow::saturate ? max_finite : (Fmt::has_infinity ? exp_all_ones : canonical_nan);

  // Written as selects without early returns so that compilers vectorise loops of
  // conversions (GCC and Clang turn the ternaries into blends; GPUs into predication).
  //
  // NaN stays NaN and becomes quiet; the leading payload bits are kept where the target has
  // room, so a quiet NaN read from the target converts back bit-exactly.
  const bool is_special = e == src_exp_all_ones;
  const bool is_nan = is_special && m != 0;
  const S nan_bits = Fmt::has_infinity ? (canonical_nan | S(m >> (SM - DM))) : canonical_nan;

  // |x| = sig * 2^(E - SM), with the implicit bit in sig for normal numbers (zero: sig = 0).
  const U sig = e == 0 ? m : (m | (U(1) << SM));
  const int E = e == 0 ? 1 - sbias : e - sbias;
  // Bits to drop: the precision difference, plus the distance below the smallest normal
  // exponent for results that are subnormal in the target. Capped at SM + 2, where every
  // significand rounds to zero anyway (it is below half the smallest subnormal), so that the
  // shifts stay defined.
  const int below = E < emin ? emin - E : 0;
  const int shift = (SM - DM) + (below < DM + 2 ? below : DM + 2);
  // Round to nearest even: adding half - 1 plus the lowest kept bit and truncating rounds up
  // exactly when the dropped part is above half, or equal to half with an odd result.
  const U half_minus_one = (U(1) << (shift - 1)) - 1;
  const U q = (sig + half_minus_one + ((sig >> shift) & 1u)) >> shift;
  // (biased exponent - 1) << DM plus the significand with its implicit bit: a carry out of
  // the significand moves into the exponent, and subnormals (biased exponent 0, no implicit
  // bit) come out right as the same formula with biased = 1. E <= 1024, so this fits in S.
  const int biased = E < emin ? 1 : E + dbias;
  const S bits = (S(biased - 1) << DM) + S(q);
  // Too large (or infinite): Inf, NaN or max finite by the overflow rule.
  const bool overflows = is_special || E > emax + 1 || bits > max_finite;
  return R(sign | (is_nan ? nan_bits : (overflows ? overflowed : bits)));
}

// Exact widening of a target pattern to binary32 (every value of these formats is a float).
template <class Fmt>
KOKKOS_INLINE_FUNCTION float decode(typename Fmt::storage_type b) {
  using S = std::uint32_t;
  constexpr int DE = Fmt::exponent_bits, DM = Fmt::mantissa_bits;
  constexpr int dbias = (1 << (DE - 1)) - 1;
  constexpr S exp_all_ones = (S(1) << DE) - 1;
  constexpr S man_mask = (S(1) << DM) - 1;
  const S bits = S(b);
  const S sign = ((bits >> (DE + DM)) & 1u) << 31;
  const S e = (bits >> DM) & exp_all_ones;
  const S m = bits & man_mask;
  // Selects instead of branches, so that loops of conversions vectorise.
  const bool is_special = Fmt::has_infinity ? e == exp_all_ones : (e == exp_all_ones && m == man_mask);
  const S special = Fmt::has_infinity ? (0x7F800000u | (m << (23 - DM))) : 0x7FC00000u;
  const S normal = (S(int(e) - dbias + 127) << 23) | (m << (23 - DM));
  // Subnormal m * 2^(emin - DM): int -> float of m is exact and normal, so its bits only need
  // the exponent lowered by DM - emin (the result is a normal float for every format here).
  // No multiplication, so a flush-to-zero floating-point mode cannot touch it.
  constexpr int emin = 1 - dbias;
  static_assert(127 + emin - DM > 0, "subnormals of the format must be normal floats");
  const S subnormal = float_to_bits(static_cast<float>(static_cast<int>(m))) - (S(DM - emin) << 23);
  const S magnitude = is_special ? special : (e != 0 ? normal : (m != 0 ? subnormal : 0u));
  return bits_to_float(sign | magnitude);
}

// Formats. has_infinity: IEEE-like specials; default_overflow: what the constructors do.
struct Bf16Format {
  using storage_type = std::uint16_t;
  static constexpr int exponent_bits = 8;
  static constexpr int mantissa_bits = 7;
  static constexpr bool has_infinity = true;
  static constexpr Overflow default_overflow = Overflow::propagate;
};
struct Fp16Format {
  using storage_type = std::uint16_t;
  static constexpr int exponent_bits = 5;
  static constexpr int mantissa_bits = 10;
  static constexpr bool has_infinity = true;
  static constexpr Overflow default_overflow = Overflow::propagate;
};
// OFP8 E4M3 ("E4M3FN"): saturation is the default, as in NVIDIA Transformer Engine and the
// OCP spec's recommendation for training (Micikevicius et al. 2022, arXiv:2209.05433).
struct Fp8E4M3Format {
  using storage_type = std::uint8_t;
  static constexpr int exponent_bits = 4;
  static constexpr int mantissa_bits = 3;
  static constexpr bool has_infinity = false;
  static constexpr Overflow default_overflow = Overflow::saturate;
};
struct Fp8E5M2Format {
  using storage_type = std::uint8_t;
  static constexpr int exponent_bits = 5;
  static constexpr int mantissa_bits = 2;
  static constexpr bool has_infinity = true;
  static constexpr Overflow default_overflow = Overflow::saturate;
};

// bf16 is the upper half of a float: the common case gets the classic add-and-truncate
// rounding (ties to even), which is the same function as encode<Bf16Format, Binary32> for
// every finite input and overflows to Inf.
KOKKOS_INLINE_FUNCTION std::uint16_t float_to_bf16_bits(float x, Overflow overflow) {
  const std::uint32_t u = float_to_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return std::uint16_t((u >> 16) | 0x0040u);  // quiet NaN
  const std::uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  if (overflow == Overflow::saturate && (r & 0x7FFFu) == 0x7F80u)
    return std::uint16_t((r & 0x8000u) | 0x7F7Fu);
  return std::uint16_t(r);
}

}  // namespace detail
}  // namespace mantissa
