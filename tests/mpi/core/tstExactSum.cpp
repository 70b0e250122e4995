// ExactSum: the exact sum correctly rounded, the same bits at every rank count, thread
// partition and order (the report's global sums rely on it), IEEE's rules for NaN and inf.
#include <mantissa/core/ExactSum.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

double host_sum(const std::vector<double>& v) {
  mantissa::ExactAccumulator a;
  for (double x : v) a.add(x);
  return a.value();
}

std::uint64_t bits(double x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// Terms of a wide spread: magnitudes from 1e-300 to 1e300, both signs, subnormals and the
// realistic middle (squares of a field), the same on every rank (fixed seed).
std::vector<double> wide_terms(std::size_t n) {
  std::mt19937_64 gen(20261201);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-1000, 1000);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0:
        v[i] = std::ldexp(u(gen), e(gen));
        break;
      case 1:
        v[i] = u(gen) * u(gen);
        break;
      case 2:
        v[i] = std::ldexp(u(gen), -1060);  // subnormal
        break;
      default:
        v[i] = 1e3 * u(gen);
    }
  }
  return v;
}

// The device reduction, in a free function: nvcc refuses an extended lambda whose enclosing
// function is private (a gtest TEST body is).
mantissa::ExactAccumulator device_exact_sum(const Kokkos::View<double*>& terms) {
  mantissa::ExactAccumulator local;
  Kokkos::parallel_reduce(
      "mantissa::test::ExactSum::reduce", Kokkos::RangePolicy<>(0, terms.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, mantissa::ExactAccumulator& acc) { acc.add(terms(i)); },
      mantissa::ExactSum<>(local));
  return local;
}

}  // namespace

TEST(CoreExactSum, CancellationThatNaiveSummationLoses) {
  EXPECT_EQ(host_sum({1e100, 1.0, -1e100}), 1.0);
  EXPECT_EQ(host_sum({DBL_MAX, DBL_MAX, -DBL_MAX}), DBL_MAX);  // no intermediate overflow
  EXPECT_EQ(host_sum({1.0, 1e-300, -1.0}), 1e-300);
  // Ten copies of double(0.1) sum exactly to 1 + 5.55e-17, which rounds to 1 (naive: 1 - 1.1e-16).
  EXPECT_EQ(host_sum(std::vector<double>(10, 0.1)), 1.0);
  EXPECT_EQ(host_sum({}), 0.0);
  EXPECT_EQ(host_sum({0.0, -0.0}), 0.0);
}

TEST(CoreExactSum, RoundsToNearestTiesToEven) {
  const double big = std::ldexp(1.0, 53);
  EXPECT_EQ(host_sum({big, 1.0}), big);                              // tie, even stays
  EXPECT_EQ(host_sum({big + 2.0, 1.0}), big + 4.0);                  // tie, odd rounds up
  EXPECT_EQ(host_sum({big, 1.0, std::ldexp(1.0, -60)}), big + 2.0);  // above the tie: up
  EXPECT_EQ(host_sum({big, 1.0, -std::ldexp(1.0, -60)}), big);       // below the tie: down
  EXPECT_EQ(host_sum({-big, -1.0, -std::ldexp(1.0, -60)}), -(big + 2.0));
  // A carry out of the 53 bits: (2^53 - 1) + 0.5 + tiny rounds to 2^53.
  EXPECT_EQ(host_sum({big - 1.0, 0.5, 1e-30}), big);
  // Subnormals are exact.
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(host_sum({tiny, tiny, tiny}), 3.0 * tiny);
  EXPECT_EQ(host_sum({DBL_MIN, -tiny}), DBL_MIN - tiny);
  // Beyond the double range: +-inf, as IEEE addition rounds.
  EXPECT_EQ(host_sum({DBL_MAX, DBL_MAX}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(host_sum({-DBL_MAX, -DBL_MAX}), -std::numeric_limits<double>::infinity());
}

TEST(CoreExactSum, NanAndInfinityFollowIeeeAddition) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(host_sum({1.0, inf}), inf);
  EXPECT_EQ(host_sum({1.0, -inf}), -inf);
  EXPECT_TRUE(std::isnan(host_sum({inf, -inf})));
  EXPECT_TRUE(std::isnan(host_sum({1.0, nan, 2.0})));
}

// Integers below 2^53 whose sum stays below 2^53: the exact answer is the int64 sum.
TEST(CoreExactSum, MatchesIntegerArithmetic) {
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<std::int64_t> d(-(std::int64_t(1) << 40), std::int64_t(1) << 40);
  std::vector<double> v;
  std::int64_t exact = 0;
  for (int i = 0; i < 4096; ++i) {
    const std::int64_t k = d(gen);
    exact += k;
    v.push_back(double(k) * 0.25);  // quarter units: fractional bits too, still exact
  }
  EXPECT_EQ(host_sum(v), double(exact) * 0.25);
}

// Doubling an accumulator 80 times drives every limb through the carry path many times; the
// value must stay the sum scaled by 2^80 (a power-of-two scaling is exact).
TEST(CoreExactSum, CarriesKeepTheValue) {
  mantissa::ExactAccumulator a;
  for (double x : {0.75, -1e-200, 3.0e10, -2.5e-310}) a.add(x);
  const double base = a.value();
  for (int k = 1; k <= 80; ++k) {
    const mantissa::ExactAccumulator copy = a;
    a.add(copy);
    ASSERT_EQ(a.value(), std::ldexp(base, k)) << "after " << k << " doublings";
  }
  // Many additions of the largest significand at one position (the three-limb carry path).
  mantissa::ExactAccumulator b;
  const double m = std::nextafter(2.0, 0.0);  // 2 - 2^-52: all 53 bits set
  for (int i = 0; i < 1 << 20; ++i) b.add(m);
  EXPECT_EQ(b.value(), m * double(1 << 20));
}

TEST(CoreExactSum, IndependentOfOrder) {
  auto v = wide_terms(20000);
  const double forward = host_sum(v);
  std::reverse(v.begin(), v.end());
  EXPECT_EQ(bits(host_sum(v)), bits(forward));
  std::shuffle(v.begin(), v.end(), std::mt19937_64(3));
  EXPECT_EQ(bits(host_sum(v)), bits(forward));
  std::sort(v.begin(), v.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
  EXPECT_EQ(bits(host_sum(v)), bits(forward));
}

// Each rank reduces a contiguous slice (its size depends on the rank count) with a Kokkos
// parallel_reduce, then exact_allreduce: the bits equal the serial host sum of all terms, so
// they are the same at 1, 2, 3 and 4 ranks.
TEST(CoreExactSum, SameBitsAtEveryRankCount) {
  const std::size_t n = 30011;  // prime: uneven slices
  const auto all = wide_terms(n);
  const double serial = host_sum(all);
  const int rank = world_rank(), size = world_size();
  const std::size_t lo = n * std::size_t(rank) / std::size_t(size),
                    hi = n * std::size_t(rank + 1) / std::size_t(size);
  Kokkos::View<double*> terms("mantissa::test::ExactSum::terms", hi - lo);
  auto host = Kokkos::create_mirror_view(terms);
  for (std::size_t i = lo; i < hi; ++i) host(i - lo) = all[i];
  Kokkos::deep_copy(terms, host);
  const mantissa::ExactAccumulator local = device_exact_sum(terms);
  EXPECT_EQ(bits(mantissa::exact_allreduce(local, MPI_COMM_WORLD)), bits(serial));
  // Several at once: the slice sums and their negatives.
  mantissa::ExactAccumulator neg;
  for (std::size_t i = lo; i < hi; ++i) neg.add(-all[i]);
  const mantissa::ExactAccumulator pair[2] = {local, neg};
  double out[2] = {0.0, 0.0};
  mantissa::exact_allreduce(pair, out, 2, MPI_COMM_WORLD);
  EXPECT_EQ(bits(out[0]), bits(serial));
  EXPECT_EQ(bits(out[1]), bits(-serial));
}
