// FloatEnv: the subnormal mode set on every thread of Kokkos' host pool and read back; the
// subnormal census counting exactly in the storage type (fp64, fp32, bf16, fp16).
#include <mantissa/core/Error.hpp>
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/Field.hpp>
#include <mantissa/workflow/SubnormalCensus.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace {

using namespace mantissa;
using HostExec = Kokkos::DefaultHostExecutionSpace;
constexpr bool host_kernels = std::is_same<Kokkos::DefaultExecutionSpace, HostExec>::value;

float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// A host kernel over many points of subnormal fp32 inputs, as the pool's threads run it: with
// denormals-are-zero every product is exactly 0, without it none is.
std::int64_t nonzero_products(int n) {
  Kokkos::View<float*, Kokkos::HostSpace> a("a", n), out("out", n);
  for (int i = 0; i < n; ++i) a(i) = float_from_bits(0x00000100u + std::uint32_t(i % 1000));  // subnormal
  Kokkos::parallel_for("mantissa::test::FloatEnv::products", Kokkos::RangePolicy<HostExec>(0, n),
                       [=](const int i) { out(i) = a(i) * 3.0f; });
  Kokkos::fence();
  // Counted on the bits: a comparison with 0.0f on this thread would read a subnormal as zero
  // under denormals-are-zero.
  std::int64_t nz = 0;
  for (int i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &out(i), sizeof u);
    nz += (u & 0x7FFFFFFFu) != 0 ? 1 : 0;
  }
  return nz;
}

TEST(FloatEnv, ParsesTheDeckValuesAndNamesTheKeyOnBadInput) {
  EXPECT_EQ(parse_subnormal_mode("flush"), SubnormalMode::flush);
  EXPECT_EQ(parse_subnormal_mode("keep"), SubnormalMode::keep);
  try {
    parse_subnormal_mode("ftz", "campaign.subnormals");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("campaign.subnormals"), std::string::npos) << what;
    EXPECT_NE(what.find("'ftz'"), std::string::npos) << what;
    EXPECT_NE(what.find("flush"), std::string::npos) << what;
  }
}

TEST(FloatEnv, SetsAndReadsBackEveryPoolThread) {
  if (!host_kernels || !host_float_env_controllable()) GTEST_SKIP() << "kernels not on a settable host CPU";
  const int threads = concurrency(HostExec());
#if defined(KOKKOS_ENABLE_OPENMP)
  ASSERT_GE(threads, 2) << "registered with OMP_NUM_THREADS=2: the test must see a pool, not one thread";
#endif
  {
    ScopedFloatEnv env(SubnormalMode::flush);
    const auto& r = env.report();
    EXPECT_EQ(r.in_force, "flush") << r.describe();
    EXPECT_TRUE(r.as_requested()) << r.describe();
    EXPECT_EQ(r.control, "run-time");
    EXPECT_EQ(r.threads, threads);
    EXPECT_EQ(r.threads_flushing, threads);
    EXPECT_TRUE(this_thread_float_env().flush_to_zero);
    EXPECT_TRUE(this_thread_float_env().denormals_are_zero);
    EXPECT_EQ(nonzero_products(1 << 16), 0)
        << "a pool thread computed with subnormals under " << r.describe();
    // Switch within the run: the other variant of a side-by-side pair.
    const auto keep = apply_float_env(SubnormalMode::keep);
    EXPECT_EQ(keep.in_force, "keep") << keep.describe();
    EXPECT_EQ(keep.threads_flushing, 0);
    EXPECT_EQ(nonzero_products(1 << 16), 1 << 16);
    apply_float_env(SubnormalMode::flush);
  }
  // The scope restored the mode it found (keep at start-up).
  EXPECT_EQ(query_float_env().in_force, "keep");
  EXPECT_FALSE(this_thread_float_env().flushing());
}

// What the pool-wide setting is for: setting the calling thread alone leaves the other OpenMP
// threads computing with subnormals, and the read-back says "mixed". This is the failure the
// kernel tests (tstSubnormals in tests/unit/seismic) would catch.
TEST(FloatEnv, TheMasterThreadAloneIsNotEnough) {
  if (!host_kernels || !host_float_env_controllable()) GTEST_SKIP() << "kernels not on a settable host CPU";
#if !defined(KOKKOS_ENABLE_OPENMP)
  GTEST_SKIP() << "no OpenMP pool";
#else
  if (!std::is_same<HostExec, Kokkos::OpenMP>::value) GTEST_SKIP() << "host pool is not OpenMP";
  ASSERT_GE(concurrency(HostExec()), 2);
  apply_float_env(SubnormalMode::keep);
  set_this_thread_float_env(SubnormalMode::flush);
  const auto r = query_float_env(SubnormalMode::flush);
  EXPECT_EQ(r.in_force, "mixed") << r.describe();
  EXPECT_FALSE(r.as_requested());
  EXPECT_EQ(r.threads_flushing, 1);
  const auto nz = nonzero_products(1 << 16);
  EXPECT_GT(nz, 0);
  EXPECT_LT(nz, 1 << 16);
  apply_float_env(SubnormalMode::keep);
#endif
}

// ---- census -------------------------------------------------------------------------------

Grid grid_2d(int nx, int ny) {
  Grid g;
  g.dim = 2;
  g.n = {nx, ny, 1};
  g.spacing = {1.0, 1.0, 1.0};
  return g;
}

// Seeds the owned points of an fp64 field with the fp64 images of `values` (cycled over the
// global x index, so the global count does not depend on the rank count) and returns how many of
// the seeded points fall in each class.
struct Seeded {
  std::int64_t subnormal = 0, zero = 0, total = 0;
};
template <class S>
Seeded seed(Field<double>& f, const std::vector<S>& values, const std::vector<int>& subnormal,
            const Grid& grid) {
  // Keeps the ghosts as they are (the caller fills them with values that must not be counted).
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.view());
  Seeded s;
  const auto ext = f.extent();
  const auto off = f.offset();
  for (std::int64_t j = 0; j < ext[1]; ++j)
    for (std::int64_t i = 0; i < ext[0]; ++i) {
      const std::int64_t gi = off[0] + i, gj = off[1] + j;
      const std::size_t v = std::size_t((gi + gj * grid.n[0]) % std::int64_t(values.size()));
      const auto st = f.storage(OwnedIndex{{i, j, 0}});
      h(st[2], st[1], st[0]) = double(float(values[v]));  // storage -> fp64, exact
    }
  Kokkos::deep_copy(f.view(), h);
  // Global expectation from the global pattern.
  for (std::int64_t gj = 0; gj < grid.n[1]; ++gj)
    for (std::int64_t gi = 0; gi < grid.n[0]; ++gi) {
      const std::size_t v = std::size_t((gi + gj * grid.n[0]) % std::int64_t(values.size()));
      s.subnormal += subnormal[v];
      s.zero += double(float(values[v])) == 0.0 && !subnormal[v] ? 1 : 0;
      ++s.total;
    }
  return s;
}

TEST(SubnormalCensus, CountsExactlyInEachStorageType) {
  const Grid grid = grid_2d(37, 11);
  Decomposition decomp(MPI_COMM_WORLD, grid);
  Field<double> f("mantissa::test::census", decomp, 2);
  // The ghosts hold subnormals too; they must not be counted.
  Kokkos::deep_copy(f.view(), std::ldexp(1.0, -1030));

  {  // fp32: smallest and largest subnormal, both signs; smallest normal; zero; ordinary values
    const std::vector<float> v = {float_from_bits(0x00000001u),
                                  float_from_bits(0x007FFFFFu),
                                  float_from_bits(0x80000001u),
                                  float_from_bits(0x00800000u),
                                  0.0f,
                                  -0.0f,
                                  1.0f,
                                  std::ldexp(1.0f, -20)};
    const std::vector<int> sub = {1, 1, 1, 0, 0, 0, 0, 0};
    const auto want = seed(f, v, sub, grid);
    const auto c = workflow::count_subnormals("p", f, Precision::fp32, MPI_COMM_WORLD);
    EXPECT_EQ(c.values, want.total);
    EXPECT_EQ(c.subnormal, want.subnormal);
    EXPECT_EQ(c.zero, want.zero);
    EXPECT_GT(c.subnormal, 0);
    // The same values counted as fp16 storage would be: 2^-126 and 2^-20 are subnormal there,
    // and the fp32 subnormals too (all lie below fp16's smallest normal 2^-14).
    const auto as16 = workflow::count_subnormals("p", f, Precision::fp16, MPI_COMM_WORLD);
    std::int64_t more = 0;
    for (std::int64_t gj = 0; gj < grid.n[1]; ++gj)
      for (std::int64_t gi = 0; gi < grid.n[0]; ++gi) {
        const auto idx = (gi + gj * grid.n[0]) % 8;
        more += idx == 3 || idx == 7 ? 1 : 0;
      }
    EXPECT_EQ(as16.subnormal, want.subnormal + more);
  }
  {  // bf16: fp32's exponent range with 7 mantissa bits
    const std::vector<bf16> v = {bf16::from_bits(0x0001), bf16::from_bits(0x007F), bf16::from_bits(0x8040),
                                 bf16::from_bits(0x0080), bf16::from_bits(0x3F80), bf16::from_bits(0x0000)};
    const std::vector<int> sub = {1, 1, 1, 0, 0, 0};
    const auto want = seed(f, v, sub, grid);
    const auto c = workflow::count_subnormals("p", f, Precision::bf16, MPI_COMM_WORLD);
    EXPECT_EQ(c.subnormal, want.subnormal);
    EXPECT_EQ(c.zero, want.zero);
    EXPECT_EQ(c.values, want.total);
  }
  {  // fp16: subnormal below 2^-14, values that are normal in fp32 and bf16
    const std::vector<fp16> v = {fp16::from_bits(0x0001), fp16::from_bits(0x03FF), fp16::from_bits(0x8200),
                                 fp16::from_bits(0x0400), fp16::from_bits(0x3C00), fp16::from_bits(0x8000),
                                 fp16::from_bits(0x0010)};
    const std::vector<int> sub = {1, 1, 1, 0, 0, 0, 1};
    const auto want = seed(f, v, sub, grid);
    const auto c = workflow::count_subnormals("p", f, Precision::fp16, MPI_COMM_WORLD);
    EXPECT_EQ(c.subnormal, want.subnormal);
    EXPECT_EQ(c.zero, want.zero);
    // None of them is subnormal as fp32: the storage type decides.
    EXPECT_EQ(workflow::count_subnormals("p", f, Precision::fp32, MPI_COMM_WORLD).subnormal, 0);
  }
}

TEST(SubnormalCensus, SameCountsUnderDenormalsAreZero) {
  // fp64 subnormals are the ones DAZ would hide from a floating-point comparison.
  const Grid grid = grid_2d(16, 8);
  Decomposition decomp(MPI_COMM_WORLD, grid);
  Field<double> f("mantissa::test::census64", decomp, 1);
  double tiny = std::ldexp(1.0, -1050), normal = std::ldexp(1.0, -1022);
  std::uint64_t b = 1;
  double smallest;
  std::memcpy(&smallest, &b, sizeof smallest);
  const std::vector<double> v = {tiny, -tiny, smallest, normal, 0.0, 1.0};
  const std::vector<int> sub = {1, 1, 1, 0, 0, 0};
  auto h = Kokkos::create_mirror_view(f.view());
  Kokkos::deep_copy(h, 0.0);
  for (std::int64_t j = 0; j < f.extent()[1]; ++j)
    for (std::int64_t i = 0; i < f.extent()[0]; ++i) {
      const auto st = f.storage(OwnedIndex{{i, j, 0}});
      h(st[2], st[1], st[0]) = v[std::size_t((f.offset()[0] + i + (f.offset()[1] + j) * 16) % 6)];
    }
  Kokkos::deep_copy(f.view(), h);
  std::int64_t want = 0;
  for (int p = 0; p < 16 * 8; ++p) want += sub[std::size_t(p % 6)];
  const auto keep = workflow::count_subnormals("p", f, Precision::fp64, MPI_COMM_WORLD);
  EXPECT_EQ(keep.subnormal, want);
  ScopedFloatEnv env(SubnormalMode::flush);
  const auto flushed = workflow::count_subnormals("p", f, Precision::fp64, MPI_COMM_WORLD);
  EXPECT_EQ(flushed.subnormal, want);
  EXPECT_EQ(flushed.zero, keep.zero);
}

TEST(SubnormalCensus, OneEntryPerStateFieldAndSizesChecked) {
  const Grid grid = grid_2d(8, 8);
  Decomposition decomp(MPI_COMM_WORLD, grid);
  workflow::State st;
  st.push_back({"p", Field<double>("p", decomp, 1)});
  st.push_back({"psi_x", Field<double>("psi_x", decomp, 1)});
  Kokkos::deep_copy(st[1].field.view(), std::ldexp(1.0, -130));  // fp32-subnormal everywhere
  const auto c = workflow::subnormal_census(st, {Precision::bf16, Precision::fp32}, MPI_COMM_WORLD);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].field, "p");
  EXPECT_EQ(c[0].subnormal, 0);
  EXPECT_EQ(c[0].zero, 64);
  EXPECT_EQ(c[1].subnormal, 64);
  EXPECT_DOUBLE_EQ(c[1].subnormal_share(), 1.0);
  EXPECT_THROW(workflow::subnormal_census(st, {Precision::fp32}, MPI_COMM_WORLD), Error);
}

}  // namespace
