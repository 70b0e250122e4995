#pragma once
// Portable low-precision value types: mantissa::bf16, fp16, fp8_e4m3, fp8_e5m2.
//
// Each is a trivially copyable struct holding the bit pattern, usable in Kokkos Views and
// inside kernels on every back-end. Conversions round to nearest even and handle subnormals
// exactly (detail/lowprec_convert.hpp); specials follow IEEE 754 for bf16, fp16 and E5M2 and
// the OCP 8-bit floating point spec (OFP8, 2023) for E4M3.
//
// Arithmetic converts to float, computes there and rounds back once. For + - * / this gives
// the correctly rounded result of the small format: float's 24 significand bits are at least
// 2p+2 for p = 8 (bf16), 11 (fp16), 4 and 3 (fp8), so the double rounding is innocuous
// (S. A. Figueroa, "When is double rounding innocuous?", ACM SIGNUM Newsletter 30(3), 1995).
// Longer expressions should be written in float (or T's compute type) by the caller and
// stored once; every operator here rounds.
//
// Construction from double rounds directly from binary64 (no double rounding through float).
//
// Reductions: accumulate in float or double, never in these types (no reduction_identity
// specialisations on purpose).
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Precision.hpp>
#include <mantissa/core/detail/lowprec_convert.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

// fp16 <-> float through the x86 F16C instructions in host-only builds compiled for them
// (-march=native or -mf16c): one instruction instead of the portable bit manipulation, which
// made every fp16 read a dozen operations with branches in the solver's boundary kernels. Both
// give the same bits for every input (decoding is exact; encoding rounds to nearest even,
// overflows to Inf and keeps a NaN's leading payload bits, quiet), which
// tests/unit/core_precision checks for the portable path, still used on devices, against F16C.
// GPU builds keep the portable path on the host too (no x86 intrinsics through nvcc/hipcc).
#if defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
#include <immintrin.h>
#define MANTISSA_LOWPREC_HOST_F16C 1
#endif

namespace mantissa {

template <class Format>
class LowPrecisionFloat {
 public:
  using format = Format;
  using storage_type = typename Format::storage_type;

  // Trivial, so Views value-initialise it to +0 and memcpy/MPI_BYTE moves it.
  LowPrecisionFloat() = default;

  KOKKOS_INLINE_FUNCTION explicit LowPrecisionFloat(float x)
      : m_bits(convert_float(x, Format::default_overflow)) {}
  KOKKOS_INLINE_FUNCTION explicit LowPrecisionFloat(double x)
      : m_bits(
            detail::encode<Format, detail::Binary64>(detail::double_to_bits(x), Format::default_overflow)) {}
  // Integers go through double: exact for |i| < 2^53, then one rounding.
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION explicit LowPrecisionFloat(I i) : LowPrecisionFloat(static_cast<double>(i)) {}

  // Conversion with an explicit overflow rule (saturate, or Inf/NaN).
  static KOKKOS_INLINE_FUNCTION LowPrecisionFloat from_float(float x, Overflow overflow) {
    return from_bits(convert_float(x, overflow));
  }
  static KOKKOS_INLINE_FUNCTION LowPrecisionFloat from_double(double x, Overflow overflow) {
    return from_bits(detail::encode<Format, detail::Binary64>(detail::double_to_bits(x), overflow));
  }
  static KOKKOS_INLINE_FUNCTION constexpr LowPrecisionFloat from_bits(storage_type b) {
    LowPrecisionFloat r{};
    r.m_bits = b;
    return r;
  }
  KOKKOS_INLINE_FUNCTION constexpr storage_type bits() const { return m_bits; }

  // Widening is exact, so it may be implicit; double is explicit to keep mixed expressions
  // with float unambiguous (double d = x; still works through float).
  KOKKOS_INLINE_FUNCTION operator float() const { return to_float(m_bits); }
  KOKKOS_INLINE_FUNCTION explicit operator double() const { return static_cast<double>(to_float(m_bits)); }

  // Sign flips are exact: no rounding, NaN payloads kept.
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat operator-() const {
    return from_bits(storage_type(m_bits ^ sign_mask()));
  }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat operator+() const { return *this; }

  friend KOKKOS_INLINE_FUNCTION LowPrecisionFloat operator+(LowPrecisionFloat a, LowPrecisionFloat b) {
    return LowPrecisionFloat(float(a) + float(b));
  }
  friend KOKKOS_INLINE_FUNCTION LowPrecisionFloat operator-(LowPrecisionFloat a, LowPrecisionFloat b) {
    return LowPrecisionFloat(float(a) - float(b));
  }
  friend KOKKOS_INLINE_FUNCTION LowPrecisionFloat operator*(LowPrecisionFloat a, LowPrecisionFloat b) {
    return LowPrecisionFloat(float(a) * float(b));
  }
  friend KOKKOS_INLINE_FUNCTION LowPrecisionFloat operator/(LowPrecisionFloat a, LowPrecisionFloat b) {
    return LowPrecisionFloat(float(a) / float(b));
  }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator+=(LowPrecisionFloat b) { return *this = *this + b; }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator-=(LowPrecisionFloat b) { return *this = *this - b; }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator*=(LowPrecisionFloat b) { return *this = *this * b; }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator/=(LowPrecisionFloat b) { return *this = *this / b; }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator+=(float b) {
    return *this = LowPrecisionFloat(float(*this) + b);
  }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator-=(float b) {
    return *this = LowPrecisionFloat(float(*this) - b);
  }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator*=(float b) {
    return *this = LowPrecisionFloat(float(*this) * b);
  }
  KOKKOS_INLINE_FUNCTION LowPrecisionFloat& operator/=(float b) {
    return *this = LowPrecisionFloat(float(*this) / b);
  }

  // Comparisons through float: IEEE semantics (NaN unordered, -0 == +0).
  friend KOKKOS_INLINE_FUNCTION bool operator==(LowPrecisionFloat a, LowPrecisionFloat b) {
    return float(a) == float(b);
  }
  friend KOKKOS_INLINE_FUNCTION bool operator!=(LowPrecisionFloat a, LowPrecisionFloat b) {
    return float(a) != float(b);
  }
  friend KOKKOS_INLINE_FUNCTION bool operator<(LowPrecisionFloat a, LowPrecisionFloat b) {
    return float(a) < float(b);
  }
  friend KOKKOS_INLINE_FUNCTION bool operator<=(LowPrecisionFloat a, LowPrecisionFloat b) {
    return float(a) <= float(b);
  }
  friend KOKKOS_INLINE_FUNCTION bool operator>(LowPrecisionFloat a, LowPrecisionFloat b) {
    return float(a) > float(b);
  }
  friend KOKKOS_INLINE_FUNCTION bool operator>=(LowPrecisionFloat a, LowPrecisionFloat b) {
    return float(a) >= float(b);
  }

 private:
  static KOKKOS_INLINE_FUNCTION constexpr storage_type sign_mask() {
    return storage_type(1u << (Format::exponent_bits + Format::mantissa_bits));
  }
  static KOKKOS_INLINE_FUNCTION storage_type convert_float(float x, Overflow overflow) {
    if constexpr (std::is_same<Format, detail::Bf16Format>::value) {
      return detail::float_to_bf16_bits(x, overflow);
#if defined(MANTISSA_LOWPREC_HOST_F16C)
    } else if constexpr (std::is_same<Format, detail::Fp16Format>::value) {
      if (overflow == Overflow::propagate)
        return storage_type(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      return detail::encode<Format, detail::Binary32>(detail::float_to_bits(x), overflow);
#endif
    } else {
      return detail::encode<Format, detail::Binary32>(detail::float_to_bits(x), overflow);
    }
  }
  static KOKKOS_INLINE_FUNCTION float to_float(storage_type b) {
    if constexpr (std::is_same<Format, detail::Bf16Format>::value) {
      return detail::bits_to_float(std::uint32_t(b) << 16);
#if defined(MANTISSA_LOWPREC_HOST_F16C)
    } else if constexpr (std::is_same<Format, detail::Fp16Format>::value) {
      return _cvtsh_ss(b);
#endif
    } else {
      return detail::decode<Format>(b);
    }
  }

  storage_type m_bits;
};

using bf16 = LowPrecisionFloat<detail::Bf16Format>;
using fp16 = LowPrecisionFloat<detail::Fp16Format>;
using fp8_e4m3 = LowPrecisionFloat<detail::Fp8E4M3Format>;
using fp8_e5m2 = LowPrecisionFloat<detail::Fp8E5M2Format>;

static_assert(std::is_trivially_copyable<bf16>::value && sizeof(bf16) == 2, "bf16 must be 2 plain bytes");
static_assert(std::is_trivially_copyable<fp16>::value && sizeof(fp16) == 2, "fp16 must be 2 plain bytes");
static_assert(std::is_trivially_copyable<fp8_e4m3>::value && sizeof(fp8_e4m3) == 1, "fp8 must be 1 byte");
static_assert(std::is_trivially_copyable<fp8_e5m2>::value && sizeof(fp8_e5m2) == 1, "fp8 must be 1 byte");

template <class T>
struct is_low_precision : std::false_type {};
template <class F>
struct is_low_precision<LowPrecisionFloat<F>> : std::true_type {};

// numeric_limits-like facts, usable in kernels. Values are returned as T; digits counts the
// implicit bit as std::numeric_limits does.
template <class T>
struct precision_traits;

template <>
struct precision_traits<double> {
  static constexpr Precision precision = Precision::fp64;
  static constexpr const char* name = "fp64";
  static constexpr int digits = 53;
  static constexpr bool has_infinity = true;
  static KOKKOS_INLINE_FUNCTION constexpr double epsilon() { return 2.220446049250313080847e-16; }
  static KOKKOS_INLINE_FUNCTION constexpr double max() { return 1.797693134862315708145e+308; }
  static KOKKOS_INLINE_FUNCTION constexpr double lowest() { return -max(); }
  static KOKKOS_INLINE_FUNCTION constexpr double min_normal() { return 2.225073858507201383090e-308; }
  static KOKKOS_INLINE_FUNCTION constexpr double denorm_min() { return 4.940656458412465441766e-324; }
};
template <>
struct precision_traits<float> {
  static constexpr Precision precision = Precision::fp32;
  static constexpr const char* name = "fp32";
  static constexpr int digits = 24;
  static constexpr bool has_infinity = true;
  static KOKKOS_INLINE_FUNCTION constexpr float epsilon() { return 1.1920928955078125e-07f; }
  static KOKKOS_INLINE_FUNCTION constexpr float max() { return 3.40282346638528859812e+38f; }
  static KOKKOS_INLINE_FUNCTION constexpr float lowest() { return -max(); }
  static KOKKOS_INLINE_FUNCTION constexpr float min_normal() { return 1.17549435082228750797e-38f; }
  static KOKKOS_INLINE_FUNCTION constexpr float denorm_min() { return 1.40129846432481707092e-45f; }
};

namespace detail {
// Traits of a LowPrecisionFloat from its bit layout: max finite, smallest normal and
// subnormal, epsilon, all as bit patterns.
template <class T, Precision P>
struct LowPrecisionTraits {
  using F = typename T::format;
  using storage_type = typename T::storage_type;
  static constexpr Precision precision = P;
  static constexpr int digits = F::mantissa_bits + 1;
  static constexpr bool has_infinity = F::has_infinity;
  static constexpr int bias = (1 << (F::exponent_bits - 1)) - 1;
  static KOKKOS_INLINE_FUNCTION constexpr T epsilon() {
    // 2^-mantissa_bits as a normal number
    return T::from_bits(storage_type((bias - F::mantissa_bits) << F::mantissa_bits));
  }
  static KOKKOS_INLINE_FUNCTION constexpr T max() {
    return T::from_bits(storage_type(F::has_infinity ? (((1 << F::exponent_bits) - 1) << F::mantissa_bits) - 1
                                                     : (1 << (F::exponent_bits + F::mantissa_bits)) - 2));
  }
  static KOKKOS_INLINE_FUNCTION constexpr T lowest() {
    return T::from_bits(storage_type(max().bits() | (1 << (F::exponent_bits + F::mantissa_bits))));
  }
  static KOKKOS_INLINE_FUNCTION constexpr T min_normal() {
    return T::from_bits(storage_type(1 << F::mantissa_bits));
  }
  static KOKKOS_INLINE_FUNCTION constexpr T denorm_min() { return T::from_bits(storage_type(1)); }
  static KOKKOS_INLINE_FUNCTION constexpr T quiet_nan() {
    return T::from_bits(storage_type(F::has_infinity ? (((1 << F::exponent_bits) - 1) << F::mantissa_bits) |
                                                           (1 << (F::mantissa_bits - 1))
                                                     : (1 << (F::exponent_bits + F::mantissa_bits)) - 1));
  }
};
}  // namespace detail

template <>
struct precision_traits<bf16> : detail::LowPrecisionTraits<bf16, Precision::bf16> {
  static constexpr const char* name = "bf16";
};
template <>
struct precision_traits<fp16> : detail::LowPrecisionTraits<fp16, Precision::fp16> {
  static constexpr const char* name = "fp16";
};
template <>
struct precision_traits<fp8_e4m3> : detail::LowPrecisionTraits<fp8_e4m3, Precision::fp8_e4m3> {
  static constexpr const char* name = "fp8_e4m3";
};
template <>
struct precision_traits<fp8_e5m2> : detail::LowPrecisionTraits<fp8_e5m2, Precision::fp8_e5m2> {
  static constexpr const char* name = "fp8_e5m2";
};

// Calls f(T{}) with the value type of p: double, float, bf16, fp16, fp8_e4m3 or fp8_e5m2.
// Use it once at the top of a run to instantiate the templated path; never inside kernels.
// Every instantiation of f must return the same type.
template <class F>
decltype(auto) dispatch_precision(Precision p, F&& f) {
  switch (p) {
    case Precision::fp64:
      return std::forward<F>(f)(double{});
    case Precision::fp32:
      return std::forward<F>(f)(float{});
    case Precision::bf16:
      return std::forward<F>(f)(bf16{});
    case Precision::fp16:
      return std::forward<F>(f)(fp16{});
    case Precision::fp8_e4m3:
      return std::forward<F>(f)(fp8_e4m3{});
    case Precision::fp8_e5m2:
      return std::forward<F>(f)(fp8_e5m2{});
  }
  throw Error("dispatch_precision: precision value " + std::to_string(static_cast<int>(p)) +
              " is not one of fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 (corrupted enum?)");
}

}  // namespace mantissa

#include <mantissa/core/detail/lowprec_scaling.hpp>
