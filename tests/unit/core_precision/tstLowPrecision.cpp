// Low-precision value types against independent oracles:
//  - a reference decoder written from the format definitions with std::ldexp (not the
//    library's bit manipulation) for every bit pattern of every format;
//  - exact midpoints between neighbouring values, computed in double, for round-to-nearest-
//    even, with one float/double ulp either side;
//  - the x86 hardware converters where this CPU has them: F16C (VCVTPS2PH) for fp16 and
//    AVX-512 BF16 (VCVTNEPS2BF16) for bf16, on a dense sample of all floats;
//  - double arithmetic (exact for sums/products of two small-format values) for operators;
//  - /proc/cpuinfo for cpu_features().
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/core/PrecisionSupport.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MANTISSA_TEST_X86 1
#endif

namespace {

using mantissa::bf16;
using mantissa::fp16;
using mantissa::fp8_e4m3;
using mantissa::fp8_e5m2;
using mantissa::Overflow;
using mantissa::precision_traits;
namespace detail = mantissa::detail;

// The format definitions, restated independently of lowprec_convert.hpp.
struct Layout {
  int exponent_bits;
  int mantissa_bits;
  bool ieee;  // IEEE-like specials (Inf, NaN with exponent all ones); false: OFP8 E4M3
};
template <class T>
Layout layout();
template <>
Layout layout<bf16>() {
  return {8, 7, true};
}
template <>
Layout layout<fp16>() {
  return {5, 10, true};
}
template <>
Layout layout<fp8_e4m3>() {
  return {4, 3, false};
}
template <>
Layout layout<fp8_e5m2>() {
  return {5, 2, true};
}

template <class T>
std::uint32_t num_patterns() {
  return std::uint32_t(1) << (8 * sizeof(T));
}

// Value of a bit pattern from the format definition (IEEE 754-2019 3.4; OFP8 section 4).
template <class T>
double reference_value(std::uint32_t bits) {
  const Layout l = layout<T>();
  const int bias = (1 << (l.exponent_bits - 1)) - 1;
  const std::uint32_t all_ones = (1u << l.exponent_bits) - 1;
  const bool neg = (bits >> (l.exponent_bits + l.mantissa_bits)) & 1u;
  const std::uint32_t e = (bits >> l.mantissa_bits) & all_ones;
  const std::uint32_t m = bits & ((1u << l.mantissa_bits) - 1);
  double v;
  if (l.ieee && e == all_ones) {
    v = m != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (!l.ieee && e == all_ones && m == (1u << l.mantissa_bits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(double(m), 1 - bias - l.mantissa_bits);
  } else {
    v = std::ldexp(double(m + (1u << l.mantissa_bits)), int(e) - bias - l.mantissa_bits);
  }
  return neg ? -v : v;
}

template <class T>
bool is_nan_pattern(std::uint32_t bits) {
  return std::isnan(reference_value<T>(bits));
}

// Largest finite positive pattern, from the definition.
template <class T>
std::uint32_t max_finite_pattern() {
  const Layout l = layout<T>();
  return l.ieee ? ((((1u << l.exponent_bits) - 1) << l.mantissa_bits) - 1)
                : ((1u << (l.exponent_bits + l.mantissa_bits)) - 2);
}
template <class T>
std::uint32_t sign_bit() {
  const Layout l = layout<T>();
  return 1u << (l.exponent_bits + l.mantissa_bits);
}

template <class T>
class LowPrecisionTest : public ::testing::Test {};
using AllTypes = ::testing::Types<bf16, fp16, fp8_e4m3, fp8_e5m2>;
class TypeNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return precision_traits<T>::name;
  }
};
TYPED_TEST_SUITE(LowPrecisionTest, AllTypes, TypeNames);

// Every pattern decodes to the value the format definition gives, and converts back (from
// float and from double) to the same pattern. NaNs stay NaN; quiet NaNs keep their bits.
TYPED_TEST(LowPrecisionTest, EveryPatternRoundTripsExactly) {
  using T = TypeParam;
  using S = typename T::storage_type;
  const Layout l = layout<T>();
  int bad_value = 0, bad_float = 0, bad_double = 0, bad_nan = 0;
  for (std::uint32_t b = 0; b < num_patterns<T>(); ++b) {
    const T x = T::from_bits(S(b));
    const double ref = reference_value<T>(b);
    const float f = x;
    if (std::isnan(ref)) {
      if (!std::isnan(f)) ++bad_nan;
      const T back = T(f);
      if (!std::isnan(float(back))) ++bad_nan;
      // A quiet NaN (top mantissa bit set) is reproduced bit for bit.
      if (l.ieee && ((b >> (l.mantissa_bits - 1)) & 1u) && back.bits() != b) ++bad_nan;
      if (!l.ieee && back.bits() != b) ++bad_nan;  // E4M3 has only S.1111.111
      continue;
    }
    if (double(f) != ref || std::signbit(f) != std::signbit(ref)) ++bad_value;
    // Propagating conversions round-trip everything; the default ones (saturating for fp8)
    // everything but the infinities, which they clamp to +-max.
    if (T::from_float(f, Overflow::propagate).bits() != b) ++bad_float;
    if (T::from_double(double(f), Overflow::propagate).bits() != b) ++bad_double;
    if (!std::isinf(ref) && T(f).bits() != b) ++bad_float;
    if (!std::isinf(ref) && T(double(f)).bits() != b) ++bad_double;
    if (double(x) != ref) ++bad_value;
    // The portable decoder too (the device path; the host may use F16C for fp16).
    if constexpr (!std::is_same<T, bf16>::value)  // bf16 decodes by a shift, no portable decoder
      if (double(detail::decode<typename T::format>(S(b))) != ref) ++bad_value;
  }
  EXPECT_EQ(bad_value, 0);
  EXPECT_EQ(bad_float, 0);
  EXPECT_EQ(bad_double, 0);
  EXPECT_EQ(bad_nan, 0);
}

// Round to nearest, ties to even, at every boundary between neighbouring finite values, both
// signs, from float and from double. The midpoint of two neighbours needs one bit more than
// the format, so it is exact in float (and double); one ulp of the source type either side
// must round away from the tie. The double case also catches double rounding through float:
// mid + 1 double-ulp rounds to mid in float and then to the even neighbour, which is wrong.
TYPED_TEST(LowPrecisionTest, MidpointsRoundToEven) {
  using T = TypeParam;
  using S = typename T::storage_type;
  int bad = 0;
  const std::uint32_t maxp = max_finite_pattern<T>();
  for (std::uint32_t b = 0; b < maxp; ++b) {
    for (std::uint32_t sgn : {0u, sign_bit<T>()}) {
      const std::uint32_t lo = b | sgn, hi = (b + 1) | sgn;  // |lo| < |hi|
      const double vlo = reference_value<T>(lo), vhi = reference_value<T>(hi);
      const double mid = 0.5 * (vlo + vhi);
      const float midf = float(mid);
      if (double(midf) != mid) {
        ADD_FAILURE() << "midpoint not exact in float: " << mid;
        return;
      }
      const std::uint32_t even = (lo & 1u) == 0 ? lo : hi;
      const double inf = std::numeric_limits<double>::infinity();
      const double toward0 = sgn ? inf : -inf;  // direction from mid towards lo
      if (T(midf).bits() != even) ++bad;
      if (T(mid).bits() != even) ++bad;
      if (T(std::nextafter(midf, float(toward0))).bits() != S(lo)) ++bad;
      if (T(std::nextafter(midf, float(-toward0))).bits() != S(hi)) ++bad;
      if (T(std::nextafter(mid, toward0)).bits() != S(lo)) ++bad;
      if (T(std::nextafter(mid, -toward0)).bits() != S(hi)) ++bad;
    }
  }
  EXPECT_EQ(bad, 0);
}

// Beyond the largest finite value. Rounding acts as if the exponent range were unbounded: the
// tie between max and the next value above it goes to whichever pattern is even. For the
// IEEE-like formats the next value is 2^(emax+1) (pattern of Inf, even), so the tie
// overflows; for E4M3 the next value 480 would be S.1111.111 (odd), so 464 rounds to 448 and
// only values above 464 overflow (as in CUDA's __nv_cvt_*_to_fp8).
TYPED_TEST(LowPrecisionTest, OverflowSaturationAndNaNRules) {
  using T = TypeParam;
  using S = typename T::storage_type;
  const Layout l = layout<T>();
  const std::uint32_t maxp = max_finite_pattern<T>();
  const double vmax = reference_value<T>(maxp);
  const double ulp = vmax - reference_value<T>(maxp - 1);
  const double tie = vmax + 0.5 * ulp;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::uint32_t pos_inf = l.ieee ? maxp + 1 : 0;  // pattern of +Inf where it exists
  for (double sgn : {1.0, -1.0}) {
    const std::uint32_t sb = sgn < 0 ? sign_bit<T>() : 0u;
    const std::uint32_t overflow_prop = l.ieee ? (pos_inf | sb) : (sign_bit<T>() - 1) | sb;
    for (Overflow o : {Overflow::saturate, Overflow::propagate}) {
      const std::uint32_t over = o == Overflow::saturate ? (maxp | sb) : overflow_prop;
      EXPECT_EQ(T::from_double(sgn * std::nextafter(tie, 0.0), o).bits(), S(maxp | sb));
      const std::uint32_t at_tie = ((maxp + 1) & 1u) == 0 ? over : (maxp | sb);
      EXPECT_EQ(T::from_double(sgn * tie, o).bits(), S(at_tie)) << "tie above max, overflow " << int(o);
      EXPECT_EQ(T::from_float(float(sgn * tie), o).bits(), S(at_tie));
      EXPECT_EQ(T::from_double(sgn * std::nextafter(tie, 2 * tie), o).bits(), S(over));
      EXPECT_EQ(T::from_float(std::nextafter(float(sgn * tie), float(sgn) * inf), o).bits(), S(over));
      EXPECT_EQ(T::from_double(sgn * 2.0 * vmax, o).bits(), S(over));
      EXPECT_EQ(T::from_float(float(sgn * 2.0 * vmax), o).bits(), S(over));  // Inf in float for bf16
      EXPECT_EQ(T::from_float(float(sgn) * inf, o).bits(), S(over));
      EXPECT_EQ(T::from_double(sgn * 1e300, o).bits(), S(over));
      EXPECT_TRUE(std::isnan(float(T::from_float(nan, o))));
      EXPECT_TRUE(std::isnan(float(T::from_double(double(nan), o))));
    }
  }
  // Default rules: IEEE-like Inf for bf16/fp16, saturation for both fp8 formats (OFP8).
  const bool default_saturates = sizeof(T) == 1;
  EXPECT_EQ(T(2.0 * vmax).bits(), S(default_saturates ? maxp : pos_inf));
  EXPECT_EQ(T(-inf).bits(), S((default_saturates ? maxp : pos_inf) | sign_bit<T>()));
  EXPECT_TRUE(std::isnan(float(T(nan))));
  EXPECT_TRUE(std::isnan(float(T(-nan))));
  // NaN compares unequal, zeros of both signs compare equal, negation is exact.
  const T tn = T(nan);
  EXPECT_FALSE(tn == tn);
  EXPECT_TRUE(T(0.0f) == T(-0.0f));
  EXPECT_EQ(T(-0.0f).bits(), S(sign_bit<T>()));
  EXPECT_EQ((-T(0.0f)).bits(), S(sign_bit<T>()));
  // Underflow: half the smallest subnormal is a tie with zero (even) and goes to zero;
  // anything above it goes to the smallest subnormal.
  const double dmin = reference_value<T>(1);
  EXPECT_EQ(T(0.5 * dmin).bits(), S(0));
  EXPECT_EQ(T(-0.5 * dmin).bits(), S(sign_bit<T>()));
  EXPECT_EQ(T(std::nextafter(0.5 * dmin, 1.0)).bits(), S(1));
  EXPECT_EQ(T(float(std::nextafter(float(0.5 * dmin), 1.0f))).bits(), S(1));
  EXPECT_EQ(T(1e-300).bits(), S(0));
  EXPECT_EQ(T(std::numeric_limits<float>::denorm_min()).bits(), S(0));
}

TEST(LowPrecision, Fp8SpecValues) {
  // OFP8 spec table 1: E4M3 max 448 (S.1111.110), min normal 2^-6, min subnormal 2^-9;
  // E5M2 max 57344 (S.11110.11), Inf S.11111.00, min subnormal 2^-16.
  EXPECT_EQ(float(precision_traits<fp8_e4m3>::max()), 448.0f);
  EXPECT_EQ(precision_traits<fp8_e4m3>::max().bits(), 0x7E);
  EXPECT_EQ(float(precision_traits<fp8_e4m3>::min_normal()), std::ldexp(1.0f, -6));
  EXPECT_EQ(float(precision_traits<fp8_e4m3>::denorm_min()), std::ldexp(1.0f, -9));
  EXPECT_EQ(precision_traits<fp8_e4m3>::quiet_nan().bits(), 0x7F);
  EXPECT_EQ(float(precision_traits<fp8_e5m2>::max()), 57344.0f);
  EXPECT_EQ(float(precision_traits<fp8_e5m2>::denorm_min()), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isinf(float(fp8_e5m2::from_bits(0x7C))));
  EXPECT_EQ(float(precision_traits<fp16>::max()), 65504.0f);
  EXPECT_EQ(float(precision_traits<bf16>::max()), std::ldexp(255.0f, 120));
  // 464 is the tie between 448 (even) and 480 (would be S.1111.111): rounds to 448; above
  // it, NaN without saturation.
  EXPECT_EQ(float(fp8_e4m3::from_float(464.0f, Overflow::propagate)), 448.0f);
  EXPECT_TRUE(std::isnan(float(fp8_e4m3::from_float(464.5f, Overflow::propagate))));
  EXPECT_EQ(float(fp8_e4m3(464.5f)), 448.0f);
  // E5M2: 61440 is the tie between 57344 (S.11110.11, odd) and 65536 (Inf pattern, even).
  EXPECT_TRUE(std::isinf(float(fp8_e5m2::from_float(61440.0f, Overflow::propagate))));
  EXPECT_EQ(float(fp8_e5m2::from_float(61439.0f, Overflow::propagate)), 57344.0f);
  EXPECT_EQ(float(fp8_e5m2(1e9f)), 57344.0f);
}

TYPED_TEST(LowPrecisionTest, TraitsAreConsistent) {
  using T = TypeParam;
  using tr = precision_traits<T>;
  const float one = 1.0f, eps = tr::epsilon();
  EXPECT_EQ(eps, std::ldexp(1.0f, 1 - tr::digits));
  EXPECT_GT(float(T(one) + T(eps)), one);
  EXPECT_EQ(float(T(one + 0.5f * eps)), one);  // tie: 1 is even
  EXPECT_EQ(float(tr::max()), float(reference_value<T>(max_finite_pattern<T>())));
  EXPECT_EQ(float(tr::lowest()), -float(tr::max()));
  EXPECT_EQ(float(tr::min_normal()), float(reference_value<T>(1u << layout<T>().mantissa_bits)));
  EXPECT_EQ(float(tr::denorm_min()), float(reference_value<T>(1)));
  EXPECT_TRUE(std::isnan(float(tr::quiet_nan())));
  EXPECT_EQ(std::string(tr::name), std::string(mantissa::to_string(tr::precision)));
}

// Operators compute in float and round once. The sum, difference and product of two values
// of these formats are exact in double, and the quotient is correctly rounded in double
// (53 >= 2p+2), so T(double op double) is the correctly rounded result to compare with.
template <class T>
int count_operator_mismatches(std::uint32_t a, std::uint32_t b) {
  using S = typename T::storage_type;
  const T x = T::from_bits(S(a)), y = T::from_bits(S(b));
  const double dx = reference_value<T>(a), dy = reference_value<T>(b);
  int bad = 0;
  auto same = [](T got, T want) {
    return got.bits() == want.bits() || (std::isnan(float(got)) && std::isnan(float(want)));
  };
  bad += !same(x + y, T(dx + dy));
  bad += !same(x - y, T(dx - dy));
  bad += !same(x * y, T(dx * dy));
  bad += !same(x / y, T(dx / dy));
  bad += (x < y) != (dx < dy);
  bad += (x == y) != (dx == dy);
  bad += (x >= y) != (dx >= dy);
  return bad;
}
TEST(LowPrecision, Fp8OperatorsAreCorrectlyRoundedOnAllPairs) {
  int bad = 0;
  for (std::uint32_t a = 0; a < 256; ++a)
    for (std::uint32_t b = 0; b < 256; ++b) bad += count_operator_mismatches<fp8_e4m3>(a, b);
  EXPECT_EQ(bad, 0);
  bad = 0;
  for (std::uint32_t a = 0; a < 256; ++a)
    for (std::uint32_t b = 0; b < 256; ++b) bad += count_operator_mismatches<fp8_e5m2>(a, b);
  EXPECT_EQ(bad, 0);
}
TEST(LowPrecision, SixteenBitOperatorsAreCorrectlyRoundedOnRandomPairs) {
  std::mt19937 rng(12345);
  int bad = 0;
  for (int i = 0; i < 400000; ++i) {
    const std::uint32_t a = rng() & 0xFFFFu, b = rng() & 0xFFFFu;
    bad += count_operator_mismatches<bf16>(a, b);
    bad += count_operator_mismatches<fp16>(a, b);
  }
  EXPECT_EQ(bad, 0);
  bf16 acc(1.0f);
  acc += bf16(2.0f);
  acc *= 3.0f;
  EXPECT_EQ(float(acc), 9.0f);
}

// ---- Hardware oracles -------------------------------------------------------------------

// Dense sample of float patterns: every 2^8-th pattern (the dropped low bits of fp16 and
// bf16 still take every value at bit 8 and above, which covers ties) plus 10M random ones.
std::vector<std::uint32_t> float_sample() {
  std::vector<std::uint32_t> v;
  v.reserve((1u << 24) + 10000000u);
  for (std::uint64_t u = 0; u < (std::uint64_t(1) << 32); u += 256) v.push_back(std::uint32_t(u));
  std::mt19937 rng(2026);
  for (int i = 0; i < 10000000; ++i) v.push_back(std::uint32_t(rng()));
  return v;
}

float float_from_bits(std::uint32_t u) {
  float f;
  static_assert(sizeof f == sizeof u, "binary32");
  std::memcpy(&f, &u, sizeof f);
  return f;
}

#if defined(MANTISSA_TEST_X86)
__attribute__((target("f16c"))) std::uint16_t f16c_convert(float x) {
  return static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#if (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10) || \
    (defined(__clang__) && __clang_major__ >= 11)
#define MANTISSA_TEST_AVX512BF16 1
__attribute__((target("avx512bf16,avx512f"))) void bf16_convert16(const float* in, std::uint16_t* out) {
  const __m512 v = _mm512_loadu_ps(in);
  const __m256bh r = _mm512_cvtneps_pbh(v);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), reinterpret_cast<const __m256i&>(r));
}
#endif
#endif

TEST(LowPrecision, Fp16MatchesF16CHardware) {
#if defined(MANTISSA_TEST_X86)
  if (!mantissa::cpu_features().f16c) GTEST_SKIP() << "this CPU has no F16C";
  int bad = 0;
  long checked = 0;
  for (std::uint32_t u : float_sample()) {
    const float x = float_from_bits(u);
    const std::uint16_t hw = f16c_convert(x);
    const fp16 sw = fp16::from_float(x, Overflow::propagate);
    // The portable encoder (the device path) bit for bit, NaNs included: quiet, same leading
    // payload bits; fp16's own conversion, which may be F16C itself on this host, too.
    const std::uint16_t portable =
        detail::encode<detail::Fp16Format, detail::Binary32>(u, Overflow::propagate);
    ++checked;
    if (portable != hw) {
      if (bad < 5)
        ADD_FAILURE() << "float 0x" << std::hex << u << ": portable 0x" << portable << " hw 0x" << hw;
      ++bad;
    }
    if (std::isnan(x)) {
      bad += !std::isnan(float(sw));
    } else if (sw.bits() != hw) {
      if (bad < 5) ADD_FAILURE() << "float 0x" << std::hex << u << ": sw 0x" << sw.bits() << " hw 0x" << hw;
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << checked;
#else
  GTEST_SKIP() << "not an x86 build";
#endif
}

TEST(LowPrecision, Bf16MatchesAvx512Bf16Hardware) {
#if defined(MANTISSA_TEST_AVX512BF16)
  if (!mantissa::cpu_features().avx512_bf16) GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  const auto sample = float_sample();
  int bad = 0;
  alignas(64) float in[16];
  alignas(64) std::uint16_t out[16];
  for (std::size_t i = 0; i + 16 <= sample.size(); i += 16) {
    for (int k = 0; k < 16; ++k) in[k] = float_from_bits(sample[i + k]);
    bf16_convert16(in, out);
    for (int k = 0; k < 16; ++k) {
      const std::uint32_t u = sample[i + k];
      // VCVTNEPS2BF16 treats subnormal inputs as zero whatever MXCSR says (Intel SDM), so
      // those are not comparable; NaN payload handling differs in detail, NaN-ness not.
      if ((u & 0x7F800000u) == 0) continue;
      const bf16 sw(in[k]);
      if (std::isnan(in[k])) {
        bad += !std::isnan(float(sw)) || !std::isnan(float(bf16::from_bits(out[k])));
      } else if (sw.bits() != out[k]) {
        if (bad < 5)
          ADD_FAILURE() << "float 0x" << std::hex << u << ": sw 0x" << sw.bits() << " hw 0x" << out[k];
        ++bad;
      }
    }
  }
  EXPECT_EQ(bad, 0);
#else
  GTEST_SKIP() << "compiler or CPU without AVX-512 BF16";
#endif
}

// ---- Kokkos: conversions inside kernels on the default execution space -------------------

template <class T>
void check_device_conversions() {
  using S = typename T::storage_type;
  const std::uint32_t n = num_patterns<T>();
  Kokkos::View<T*> patterns("mantissa::test::patterns", n);
  Kokkos::View<float*> widened("mantissa::test::widened", n);
  Kokkos::View<T*> narrowed("mantissa::test::narrowed", n);
  Kokkos::View<float*> probes("mantissa::test::probes", 4 * n);
  Kokkos::View<T*> probes_narrowed("mantissa::test::probes_narrowed", 4 * n);
  auto probes_h = Kokkos::create_mirror_view(probes);
  std::mt19937 rng(7);
  for (std::size_t i = 0; i < probes_h.extent(0); ++i) {
    // values around the format's range: random sign, exponent and mantissa bits
    const float m = 1.0f + float(rng() & 0xFFFFFF) / float(0x1000000);
    probes_h(i) = std::ldexp((rng() & 1u) != 0 ? m : -m, int(rng() % 80) - 40);
  }
  Kokkos::deep_copy(probes, probes_h);
  Kokkos::parallel_for(
      "mantissa::test::convert", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(const std::uint32_t i) {
        patterns(i) = T::from_bits(S(i));
        widened(i) = patterns(i);
        narrowed(i) = T::from_float(widened(i), Overflow::propagate);
        for (int k = 0; k < 4; ++k) probes_narrowed(4 * i + k) = T(probes(4 * i + k)) * T(1.0f);
      });
  auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), widened);
  auto nr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), narrowed);
  auto pn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probes_narrowed);
  int bad = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const float host = T::from_bits(S(i));
    if (std::isnan(host)) {
      bad += !std::isnan(w(i)) || !std::isnan(float(nr(i)));
    } else {
      bad += w(i) != host || std::signbit(w(i)) != std::signbit(host) || nr(i).bits() != S(i);
    }
  }
  for (std::size_t i = 0; i < pn.extent(0); ++i) bad += pn(i).bits() != T(probes_h(i)).bits();
  EXPECT_EQ(bad, 0) << precision_traits<T>::name;
}
TEST(LowPrecision, KernelsMatchHost) {
  check_device_conversions<bf16>();
  check_device_conversions<fp16>();
  check_device_conversions<fp8_e4m3>();
  check_device_conversions<fp8_e5m2>();
}

// ---- fp8 scaling -------------------------------------------------------------------------

TEST(Fp8Scaling, AmaxFindsLargestMagnitudeOnDevice) {
  const int n = 10007;
  Kokkos::View<float**> v("mantissa::test::amax", n, 3);
  auto h = Kokkos::create_mirror_view(v);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  float expect = 0.0f;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j) {
      h(i, j) = dist(rng);
      expect = std::max(expect, std::fabs(h(i, j)));
    }
  h(n / 3, 1) = -7.5f;  // a negative extreme must count by magnitude
  expect = std::max(expect, 7.5f);
  Kokkos::deep_copy(v, h);
  EXPECT_EQ(mantissa::amax(v), expect);
  Kokkos::View<float*> empty("mantissa::test::empty", 0);
  EXPECT_EQ(mantissa::amax(empty), 0.0f);
  Kokkos::View<bf16*> vb("mantissa::test::amax_bf16", 5);
  Kokkos::deep_copy(vb, bf16(-3.0f));
  EXPECT_EQ(mantissa::amax(vb), 3.0f);
}

TEST(Fp8Scaling, QuantizeDequantizeErrorIsHalfAnUlp) {
  const int n = 4096;
  Kokkos::View<float*> x("mantissa::test::x", n), back("mantissa::test::back", n);
  Kokkos::View<fp8_e4m3*> q("mantissa::test::q", n);
  auto h = Kokkos::create_mirror_view(x);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1e-3f, 1e-3f);  // far below fp8's normal range
  for (int i = 0; i < n; ++i) h(i) = dist(rng);
  Kokkos::deep_copy(x, h);
  auto scaling = mantissa::DelayedScaling::for_type<fp8_e4m3>();
  scaling.update(mantissa::amax(x));
  mantissa::quantize(x, q, scaling.scale());
  mantissa::dequantize(q, back, scaling.scale());
  EXPECT_EQ(mantissa::amax(q), 448.0f);  // amax maps onto the format's maximum
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  // Relative error of round-to-nearest in E4M3 is at most 2^-4 (half of 2^-3) for values
  // in the normal range; smaller values (scaled below 2^-6) get an absolute bound of half
  // the subnormal spacing 2^-9, divided by the scale. The float multiplications by scale and
  // 1/scale add a few 2^-24 relative, covered by the factor 1 + 1e-5 on a bound >= |x|/16.
  const float scale = scaling.scale();
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const float bound = std::max(std::fabs(h(i)) * 0.0625f, std::ldexp(1.0f, -10) / scale) * (1.0f + 1e-5f);
    bad += std::fabs(hb(i) - h(i)) > bound;
  }
  EXPECT_EQ(bad, 0);
  Kokkos::View<float*> wrong("mantissa::test::wrong", n + 1);
  EXPECT_THROW(mantissa::quantize(wrong, q, 1.0f), mantissa::Error);
  EXPECT_THROW(mantissa::dequantize(q, back, 0.0f), mantissa::Error);
  auto strided = Kokkos::subview(Kokkos::View<float**>("mantissa::test::s", 8, 8), Kokkos::ALL, 1);
  Kokkos::View<fp8_e4m3*> q8("mantissa::test::q8", 8);
  EXPECT_THROW(mantissa::quantize(strided, q8, 1.0f), mantissa::Error);
}

TEST(Fp8Scaling, DelayedScalingUsesHistoryWindowAndMargin) {
  mantissa::Fp8ScalingConfig cfg;
  cfg.history_length = 3;
  cfg.margin = 1;
  mantissa::DelayedScaling s(448.0f, cfg);
  EXPECT_EQ(s.scale(), 1.0f);
  s.update(0.0f);  // no information: keep the scale
  EXPECT_EQ(s.scale(), 1.0f);
  const std::vector<float> amaxes{8.0f, 2.0f, 1.0f, 0.5f, 4.0f};
  for (std::size_t i = 0; i < amaxes.size(); ++i) {
    s.update(amaxes[i]);
    float window = 0.0f;  // the last 3 updates, the 0 included
    std::vector<float> all{0.0f};
    all.insert(all.end(), amaxes.begin(), amaxes.begin() + long(i) + 1);
    for (std::size_t k = all.size() >= 3 ? all.size() - 3 : 0; k < all.size(); ++k)
      window = std::max(window, all[k]);
    EXPECT_EQ(s.scale(), 448.0f / window / 2.0f) << "after update " << i;
    EXPECT_EQ(s.history().size(), std::min<std::size_t>(all.size(), 3));
  }
  s.update(std::numeric_limits<float>::infinity());  // overflowed step: keep the last scale
  EXPECT_EQ(s.scale(), 448.0f / 4.0f / 2.0f);
  cfg.algorithm = mantissa::Fp8ScalingConfig::AmaxAlgorithm::most_recent;
  cfg.margin = 0;
  mantissa::DelayedScaling r(448.0f, cfg);
  r.update(8.0f);
  r.update(2.0f);
  EXPECT_EQ(r.scale(), 224.0f);
  cfg.history_length = 0;
  EXPECT_THROW(mantissa::DelayedScaling(448.0f, cfg), mantissa::Error);
}

// ---- dispatch and support tables ----------------------------------------------------------

TEST(LowPrecision, DispatchCallsTheMatchingType) {
  for (auto p : mantissa::all_precisions()) {
    const auto got = mantissa::dispatch_precision(p, [](auto t) {
      using T = decltype(t);
      return std::make_pair(int(sizeof(T)), std::string(precision_traits<T>::name));
    });
    EXPECT_EQ(got.first, mantissa::size_in_bytes(p));
    EXPECT_EQ(got.second, std::string(mantissa::to_string(p)));
  }
}

std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream is(line.substr(line.find(':') + 1));
    std::string f;
    while (is >> f) flags.insert(f);
    break;
  }
  return flags;
}

TEST(PrecisionSupport, CpuFeaturesAgreeWithProcCpuinfo) {
  const auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line (not Linux x86)";
  const auto f = mantissa::cpu_features();
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512_bf16, flags.count("avx512_bf16") == 1);
  EXPECT_EQ(f.avx512_fp16, flags.count("avx512_fp16") == 1);
  EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
}

TEST(PrecisionSupport, OneEntryPerPrecisionWithNotes) {
  const auto table = mantissa::precision_support();
  ASSERT_EQ(table.size(), mantissa::all_precisions().size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].precision, mantissa::all_precisions()[i]);
    EXPECT_FALSE(table[i].note.empty());
    // Native arithmetic implies native storage; both imply the hardware has the format.
    EXPECT_TRUE(!table[i].arithmetic_native || table[i].storage_native);
    EXPECT_TRUE(!table[i].storage_native || table[i].hardware_available);
  }
  EXPECT_TRUE(table[0].arithmetic_native);  // fp64
  EXPECT_TRUE(table[1].arithmetic_native);  // fp32
  // The value types never use hardware arithmetic in a narrow format (they compute in fp32).
  for (std::size_t i = 2; i < table.size(); ++i) EXPECT_FALSE(table[i].arithmetic_native);
}

}  // namespace
