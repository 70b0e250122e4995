// The free baselines a surrogate is scored against, and the held-out time window, on hand-made
// fields (one rank): the zero field's error is 1, persistence's error after 0 steps is 0, linear
// extrapolation is exact on a field that changes linearly in time and is not on one that does not.
#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Baselines.hpp>
#include <mantissa/workflow/RolloutReport.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

namespace mw = mantissa::workflow;

namespace {

// A 2D host field of nx x ny owned points and one ghost layer, value f(x, y) (ghosts NaN so
// that reading one shows).
template <class F>
mw::HostField field(std::int64_t nx, std::int64_t ny, F f) {
  mw::HostField h;
  h.ghost = {1, 1, 0};
  h.extent = {nx, ny, 1};
  h.view = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>("h", 1, ny + 2, nx + 2);
  Kokkos::deep_copy(h.view, std::nan(""));
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) h.view(0, y + 1, x + 1) = f(double(x), double(y));
  return h;
}

}  // namespace

TEST(Baselines, ZeroFieldErrorIsOnePersistenceAfterZeroStepsIsZero) {
  const auto p = field(12, 7, [](double x, double y) { return std::sin(0.4 * x) * std::cos(0.3 * y) + 0.1; });
  const auto p_old =
      field(12, 7, [](double x, double y) { return std::sin(0.4 * x - 0.05) * std::cos(0.3 * y); });
  const auto e = mw::rollout_errors(MPI_COMM_SELF, p, p, p, p_old, 0);
  EXPECT_EQ(e.zero, 1.0);
  EXPECT_EQ(e.persistence, 0.0);
  EXPECT_EQ(e.linear, 0.0);  // 0 steps of extrapolation is the state itself
  EXPECT_EQ(e.model, 0.0);
  // Against a later, different state the zero field still scores exactly 1 (||0 - r|| / ||r||).
  const auto later =
      field(12, 7, [](double x, double y) { return std::sin(0.4 * x + 1.0) * std::cos(0.3 * y); });
  const auto e2 = mw::rollout_errors(MPI_COMM_SELF, p, later, p, p_old, 10);
  EXPECT_DOUBLE_EQ(e2.zero, 1.0);
  EXPECT_GT(e2.persistence, 0.1);
  EXPECT_DOUBLE_EQ(e2.model, e2.persistence);  // the model predicted "no change"
}

TEST(Baselines, LinearExtrapolationIsExactOnALinearTrajectoryOnly) {
  // p(t) = a + t b: from p^n and p^{n-1} = p^n - b, 5 steps later is p^n + 5 b.
  auto a = [](double x, double y) { return 1.0 + 0.1 * x - 0.2 * y; };
  auto b = [](double x, double y) { return 0.01 * x * y + 0.5; };
  const auto pn = field(9, 5, [&](double x, double y) { return a(x, y) + 3.0 * b(x, y); });
  const auto po = field(9, 5, [&](double x, double y) { return a(x, y) + 2.0 * b(x, y); });
  const auto p8 = field(9, 5, [&](double x, double y) { return a(x, y) + 8.0 * b(x, y); });
  const auto e = mw::rollout_errors(MPI_COMM_SELF, pn, p8, pn, po, 5);
  EXPECT_LE(e.linear, 1e-15);
  EXPECT_GT(e.persistence, 0.1);
  // Extrapolating 4 or 6 steps instead of 5 is not exact (the step count is used as given).
  EXPECT_GT(mw::rollout_errors(MPI_COMM_SELF, pn, p8, pn, po, 4).linear, 1e-3);
  EXPECT_GT(mw::rollout_errors(MPI_COMM_SELF, pn, p8, pn, po, 6).linear, 1e-3);
  // The ghosts of the extrapolated field are the start's (never NaN-poisoned by the formula).
  const auto lin = mw::linear_extrapolation(pn, po, 5);
  EXPECT_TRUE(std::isnan(lin.view(0, 0, 0)));
  EXPECT_DOUBLE_EQ(lin.view(0, 1, 1), a(0, 0) + 8.0 * b(0, 0));
}

TEST(Baselines, TimeWindowSplitHoldsOutTheEnd) {
  const auto s = mw::split_time_window(160, 300, 2, 0.25, "campaign.surrogate.heldout");
  EXPECT_EQ(s.train_begin, 160);
  EXPECT_EQ(s.heldout_end, 300);
  EXPECT_EQ(s.train_end, s.heldout_begin);
  EXPECT_EQ((s.train_end - 160) % 2, 0);
  EXPECT_EQ(s.heldout_end - s.heldout_begin, 36);  // round(0.25 * 70) = 18 strides of 2
  // A window too short to split, or a fraction outside (0, 1), is refused naming the key.
  try {
    (void)mw::split_time_window(160, 162, 2, 0.25, "campaign.surrogate.heldout");
    FAIL() << "no error";
  } catch (const mantissa::Error& err) {
    EXPECT_NE(std::string(err.what()).find("campaign.surrogate.heldout"), std::string::npos) << err.what();
  }
  EXPECT_THROW((void)mw::split_time_window(160, 300, 2, 1.0, "k"), mantissa::Error);
  // The smallest split still trains on one stride and holds one out.
  const auto t = mw::split_time_window(0, 4, 2, 0.01, "k");
  EXPECT_EQ(t.train_end, 2);
  EXPECT_EQ(t.heldout_end, 4);
}

// The hybrid against the reference (RolloutReport.hpp hybrid_truth): the first sample after the
// lead-in whose true error passes campaign.surrogate.hybrid.error_limit, and whether the
// surrogate or the physics (a stretch of physics_steps after a hand-over) ran there.
TEST(Baselines, HybridTruthSaysWhetherTheIndicatorHandedOverInTime) {
  mw::VariantResult r;
  r.kind = "hybrid";
  r.handover_step = 20;  // the lead-in: steps 0 to 20
  r.steps = {0, 10, 20, 30, 40, 50, 60};
  r.rel_l2 = {0.0, 0.0, 0.0, 0.02, 0.04, 0.06, 0.07};
  mw::HybridSpec hs;
  hs.error_limit = 0.05;
  hs.physics_steps = 10;
  // 4 predictions of 5 steps (20 steps) and 40 physics steps (20 of them the lead-in).
  r.surrogate_steps = 4;
  r.physics_steps = 40;
  r.steps_done = 60;
  // A hand-over at 40 (true error 0.04): the physics runs 41 to 50, where the error passes 0.05.
  r.handovers = {{40, 0.4, "residual", 0.0, 0.2, 0.04}};
  auto t = mw::hybrid_truth(r, hs);
  EXPECT_EQ(t.first_over, 50);
  EXPECT_EQ(t.error_at_first_over, 0.06);
  EXPECT_TRUE(t.passed_under_physics);
  EXPECT_EQ(t.physics_from, 40);
  EXPECT_TRUE(t.in_time_known);
  EXPECT_TRUE(t.in_time);
  EXPECT_EQ(t.stride, 5);
  EXPECT_EQ(t.surrogate_covered, 20);
  EXPECT_EQ(t.physics_after_start, 20);
  EXPECT_EQ(t.end_error, 0.07);
  // The hand-over's own true error above the limit: too late; not at a sample step: unknown.
  r.handovers[0].true_error = 0.055;
  t = mw::hybrid_truth(r, hs);
  EXPECT_TRUE(t.in_time_known);
  EXPECT_FALSE(t.in_time);
  r.handovers[0].true_error = std::nan("");
  t = mw::hybrid_truth(r, hs);
  EXPECT_FALSE(t.in_time_known);
  // The same errors with the hand-over only at 50: the surrogate ran when the error passed.
  r.handovers = {{50, 0.5, "residual", 0.0, 0.2, 0.06}};
  t = mw::hybrid_truth(r, hs);
  EXPECT_EQ(t.first_over, 50);
  EXPECT_FALSE(t.passed_under_physics);
  EXPECT_FALSE(t.in_time);
  // Never above the limit (the lead-in's samples never count; a NaN does).
  hs.error_limit = 0.1;
  t = mw::hybrid_truth(r, hs);
  EXPECT_EQ(t.first_over, -1);
  EXPECT_TRUE(t.in_time);
  r.rel_l2[4] = std::nan("");
  t = mw::hybrid_truth(r, hs);
  EXPECT_EQ(t.first_over, 40);
  EXPECT_FALSE(t.in_time);
  // The report's words: the indicator's checks beside the true error.
  r.indicator_checks = {{30, 0.0, 0.01, 0.02, "continue"}, {50, 0.0, 0.2, 0.06, "residual"}};
  const std::string md = mw::hybrid_md(r, hs);
  EXPECT_NE(md.find("| 30 | 0 | 0.01 | 0.02 | continue |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 50 | 0 | 0.2 | 0.06 | hand over (residual) |"), std::string::npos) << md;
  EXPECT_NE(md.find("while the surrogate ran"), std::string::npos) << md;
  EXPECT_NE(md.find("did not hand over in time"), std::string::npos) << md;
  EXPECT_NE(md.find("the surrogate took 20 of 40 steps (50 %)"), std::string::npos) << md;
}
