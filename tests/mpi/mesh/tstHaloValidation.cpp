// Halo exchange plan validation: wrong widths, field counts and fields that do not match the
// plan are refused with messages that say what is wrong, before any MPI traffic; and the
// GPU-aware default follows the build option.
#include <mantissa/mesh/HaloExchange.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using mantissa::Decomposition;
using mantissa::Error;
using mantissa::Field;
using mantissa::Grid;
using mantissa::HaloExchange;
using mantissa::HaloPattern;

template <class F>
void expect_error(F&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no mantissa::Error; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

Grid grid(int dim) {
  Grid g;
  g.dim = dim;
  g.n = {16, 12, dim == 3 ? 10 : 1};
  return g;
}

TEST(HaloValidation, PlanArguments) {
  Decomposition d(MPI_COMM_WORLD, grid(3));
  expect_error([&] { HaloExchange<double> h(d, 5, 1); }, "ghost width 5 is outside 0..4");
  expect_error([&] { HaloExchange<double> h(d, -1, 1); }, "ghost width -1 is outside 0..4");
  expect_error([&] { HaloExchange<double> h(d, 1, 0); }, "at least one field");
}

TEST(HaloValidation, EveryRankRefusesARankRowThinnerThanTheGhosts) {
  // 2k + 1 points over k + 1 ranks along x: the last rank row owns one point, every other row
  // two. With ghost width 2 every rank must refuse, not only the thin one (which left the others
  // blocked in their first exchange: a hang instead of a message).
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Grid g = grid(2);
  g.n = {2 * (size - 1) + 1, 12, 1};
  Decomposition d(MPI_COMM_WORLD, g, {size, 1, 1});
  expect_error([&] { HaloExchange<double> h(d, 2, 1); }, "with 1 of the grid's");
  // Counted over the ranks, so rank 0 (the one that prints) sees a rank that was not refused.
  int refused = 0;
  try {
    HaloExchange<double> h(d, 2, 1);
  } catch (const Error&) {
    refused = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &refused, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(refused, size);
  HaloExchange<double> h1(d, 1, 1);  // width 1 fits everywhere
  EXPECT_EQ(h1.ghost_width(), 1);
}

TEST(HaloValidation, FieldsMustMatchThePlan) {
  Decomposition d(MPI_COMM_WORLD, grid(3));
  HaloExchange<double> halo(d, 2, 2, HaloPattern::full);
  Field<double> a("mantissa::test::a", d, 2), b("mantissa::test::b", d, 2),
      narrow("mantissa::test::narrow", d, 1);
  expect_error([&] { halo.exchange({&a}); }, "plan built for 2 fields, called with 1");
  expect_error([&] { halo.exchange({&a, nullptr}); }, "field 1 is a null pointer");
  expect_error(
      [&] {
        halo.exchange({&a, &narrow});
      },
      "('mantissa::test::narrow') has ghost widths 1x1x1 but the plan was built for 2x2x2");
  Grid other = grid(3);
  other.n = {40, 12, 10};
  Decomposition d2(MPI_COMM_WORLD, other);
  Field<double> big("mantissa::test::big", d2, 2);
  expect_error([&] { halo.exchange({&big, &a}); }, "('mantissa::test::big') owns");
  Field<double> empty;
  expect_error([&] { halo.exchange({&a, &empty}); }, "field 1");
  halo.exchange({&a, &b});  // the matching call still works after the refusals
  EXPECT_EQ(halo.num_fields(), 2);
  EXPECT_EQ(halo.ghost_width(), 2);
}

TEST(HaloValidation, GpuAwareDefaultFollowsTheBuildOption) {
  Decomposition d(MPI_COMM_WORLD, grid(2));
  HaloExchange<float> halo(d, 1, 1);
#if defined(MANTISSA_ENABLE_GPU_AWARE_MPI)
  EXPECT_TRUE(halo.gpu_aware());
#else
  EXPECT_FALSE(halo.gpu_aware());
#endif
  // Asking explicitly works either way; on host memory both paths are the same.
  HaloExchange<float> explicit_on(d, 1, 1, HaloPattern::faces, true);
  EXPECT_TRUE(explicit_on.gpu_aware());
  Field<float> f("mantissa::test::f", d, 1);
  explicit_on.exchange({&f});
}

}  // namespace
