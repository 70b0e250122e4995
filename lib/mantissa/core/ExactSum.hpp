#pragma once
// Exact, order-independent sums of doubles: the global sums of the report (energy, the rel. L2
// norms, the diagnostics) give the same bits at any rank count, thread count and back-end.
//
// A floating-point sum depends on the order of its additions; an MPI_Allreduce of per-rank
// partial sums therefore changes in the last bits with the rank count, and a Kokkos reduction
// with the thread count. Here every term is added exactly into a fixed-point integer that
// covers the whole double range (a "long accumulator", Kulisch and Miranker 1981), so the sum
// is the exact sum of the terms in any order, and only the final conversion rounds (to
// nearest, ties to even: the correctly rounded sum, more accurate than the naive one).
//
// The layout is the "small superaccumulator" of R. M. Neal, "Fast exact summation using small
// and large superaccumulators" (arXiv:1505.05571, 2015): 32-bit digits held in 64-bit signed
// limbs, so that an addition touches three limbs without propagating carries, and a limb
// carries into the next only when it nears the int64 range (rarely: after ~2^29 additions to
// one limb). ExBLAS (Collange, Defour, Graillat, Iakymchuk, "Numerical reproducibility for the
// parallel reduction on multi- and many-core architectures", Parallel Computing 2015) uses the
// same accumulator on GPUs. ReproBLAS (Demmel and Nguyen, "Parallel reproducible summation",
// IEEE TC 2015) instead keeps K bins below the running maximum: also one pass and
// reproducible, but not exact, and its bin shifts make the accumulator harder to get right; a
// two-pass scheme (global maximum first, then fixed point below it) evaluates every term twice.
// The accumulator costs 70 int64 (560 bytes) per thread, in L1 on CPUs; on GPUs it lives in
// local memory, acceptable for the diagnostics (once per sample, not per step).
//
// Across ranks the limbs are normalised (carries propagated, each digit in [0, 2^32)) and
// summed with MPI_Allreduce(MPI_INT64_T, MPI_SUM): integer addition is exact and associative,
// so no custom MPI operation is needed (the limbs cannot overflow below 2^31 ranks).
//
//   ExactAccumulator acc;
//   Kokkos::parallel_reduce(label, policy, KOKKOS_LAMBDA(int i, ExactAccumulator& a) {
//     a.add(term(i)); }, ExactSum<>(acc));
//   const double global = exact_allreduce(acc, comm);
//
// NaN and infinities follow IEEE addition: a NaN, or +inf and -inf together, give NaN; else an
// infinity gives that infinity. A sum of zeros is +0 (the sign of a zero sum is not kept).
#include <mantissa/core/KokkosCompat.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

namespace mantissa {

class ExactAccumulator {
 public:
  // Bit positions are counted from 2^-1074 (the smallest subnormal). A finite double is
  // M * 2^(p - 1074) with M < 2^53 and p in [0, 2045], so its bits lie in [0, 2098); 66 limbs
  // of 32 bits cover 2112, the 67th holds the carries beyond (the sign of the whole sum).
  static constexpr int num_limbs = 67;
  static constexpr int digit_bits = 32;
  // Entries after the limbs: counts of NaN, +inf and -inf terms (summed over ranks too).
  static constexpr int nan_slot = num_limbs, pinf_slot = num_limbs + 1, ninf_slot = num_limbs + 2;
  static constexpr int size = num_limbs + 3;

  std::int64_t word[size];

  KOKKOS_INLINE_FUNCTION ExactAccumulator() {
    for (int i = 0; i < size; ++i) word[i] = 0;
  }

  KOKKOS_INLINE_FUNCTION void add(double x) {
    std::uint64_t bits = 0;
    memcpy(&bits, &x, sizeof bits);  // a bit cast; memcpy is a device function on CUDA and HIP
    const int biased = int((bits >> 52) & 0x7ff);
    std::uint64_t mant = bits & ((std::uint64_t(1) << 52) - 1);
    const bool negative = (bits >> 63) != 0;
    if (biased == 0x7ff) {
      word[mant != 0 ? nan_slot : (negative ? ninf_slot : pinf_slot)] += 1;
      return;
    }
    int p = 0;  // position of the significand's lowest bit
    if (biased == 0) {
      if (mant == 0) return;  // +-0
    } else {
      mant |= std::uint64_t(1) << 52;
      p = biased - 1;
    }
    const int i = p / digit_bits, s = p % digit_bits;
    // mant << s spans up to 85 bits: three digits, none of them shifted out.
    const std::int64_t d0 = std::int64_t((mant << s) & 0xffffffffu);
    const std::uint64_t upper = mant >> (digit_bits - s);  // s = 0 shifts by 32: defined for 64 bits
    const std::int64_t d1 = std::int64_t(upper & 0xffffffffu);
    const std::int64_t d2 = std::int64_t(upper >> digit_bits);
    if (negative) {
      word[i] -= d0;
      word[i + 1] -= d1;
      word[i + 2] -= d2;
    } else {
      word[i] += d0;
      word[i + 1] += d1;
      word[i + 2] += d2;
    }
    carry_from(i);
  }

  // Adds another accumulator (a Kokkos join, or the terms of another part of the domain).
  KOKKOS_INLINE_FUNCTION void add(const ExactAccumulator& o) {
    for (int i = 0; i < size; ++i) word[i] += o.word[i];
    for (int k = 0; k < num_limbs - 1; ++k) {
      if (word[k] < carry_limit && word[k] > -carry_limit) continue;
      const std::int64_t c = floor_div_digit(word[k]);
      word[k] -= c * digit_base;
      word[k + 1] += c;
    }
  }

  // Propagates every carry: limbs 0..65 become digits in [0, 2^32), limb 66 the signed rest.
  // The represented value is unchanged.
  KOKKOS_INLINE_FUNCTION void normalize() {
    for (int i = 0; i < num_limbs - 1; ++i) {
      const std::int64_t c = floor_div_digit(word[i]);
      word[i] -= c * digit_base;
      word[i + 1] += c;
    }
  }

  // The correctly rounded value of the sum (host; normalises a copy).
  double value() const;

 private:
  static constexpr std::int64_t digit_base = std::int64_t(1) << digit_bits;
  // A limb beyond +-2^61 hands its high part to the next; two limbs below that add without
  // overflow (a join), and 2^29 more digit additions fit before the next check.
  static constexpr std::int64_t carry_limit = std::int64_t(1) << 61;

  KOKKOS_INLINE_FUNCTION static std::int64_t floor_div_digit(std::int64_t v) {
    // Arithmetic shift = floor division by 2^32 on every compiler mantissa supports (and
    // guaranteed from C++20).
    return v >> digit_bits;
  }
  KOKKOS_INLINE_FUNCTION void carry_from(int i) {
    for (int k = i; k < num_limbs - 1; ++k) {
      if (word[k] < carry_limit && word[k] > -carry_limit) {
        if (k >= i + 2) return;  // the three limbs an addition touches are checked, then stop
        continue;
      }
      const std::int64_t c = floor_div_digit(word[k]);
      word[k] -= c * digit_base;
      word[k + 1] += c;
    }
  }
};

// A Kokkos reducer (the concept of Kokkos::Sum) whose value is an ExactAccumulator.
// Space: where the result lives (host by default, as for Kokkos::Sum on a scalar).
template <class Space = Kokkos::HostSpace>
class ExactSum {
 public:
  using reducer = ExactSum<Space>;
  using value_type = ExactAccumulator;
  using result_view_type = Kokkos::View<value_type, Space>;

  KOKKOS_INLINE_FUNCTION explicit ExactSum(value_type& v) : m_value(&v), m_scalar(true) {}
  KOKKOS_INLINE_FUNCTION explicit ExactSum(const result_view_type& v) : m_value(v), m_scalar(false) {}

  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const { dest.add(src); }
#if MANTISSA_KOKKOS_VOLATILE_JOIN
  // Kokkos 3.x joins through volatile references on some back-ends (plain assignments: C++20
  // deprecates compound assignment to volatile).
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest, const volatile value_type& src) const {
    value_type a, b;
    for (int i = 0; i < value_type::size; ++i) {
      a.word[i] = dest.word[i];
      b.word[i] = src.word[i];
    }
    a.add(b);
    for (int i = 0; i < value_type::size; ++i) dest.word[i] = a.word[i];
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {
    for (int i = 0; i < value_type::size; ++i) v.word[i] = 0;
  }
  KOKKOS_INLINE_FUNCTION value_type& reference() const {
    return *m_value.data();
  }
  KOKKOS_INLINE_FUNCTION result_view_type view() const {
    return m_value;
  }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const {
    return m_scalar;
  }

 private:
  result_view_type m_value;
  bool m_scalar;
};

// Sums every rank's accumulator exactly (collective) and returns the correctly rounded sum.
double exact_allreduce(const ExactAccumulator& local, MPI_Comm comm);
// The same for several accumulators in one collective call; out[i] is the sum of local[i].
void exact_allreduce(const ExactAccumulator* local, double* out, int count, MPI_Comm comm);

}  // namespace mantissa
