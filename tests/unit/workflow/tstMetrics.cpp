// Metrics of the campaign on inputs whose answers are known in closed form.
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/workflow/Metrics.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mw = mantissa::workflow;

namespace {

// Ricker wavelet sampled at dt, centred at t0: a typical seismic trace.
std::vector<double> ricker(int n, double dt, double t0, double f) {
  std::vector<double> v(static_cast<std::size_t>(n));
  const double pi = 3.141592653589793;
  for (int i = 0; i < n; ++i) {
    const double a = pi * f * (i * dt - t0);
    v[static_cast<std::size_t>(i)] = (1.0 - 2.0 * a * a) * std::exp(-a * a);
  }
  return v;
}

TEST(WorkflowMetrics, RelativeL2OfIdenticalTracesIsExactlyZero) {
  const auto a = ricker(200, 1e-3, 0.05, 25.0);
  EXPECT_EQ(mw::relative_l2(a, a), 0.0);
  EXPECT_EQ(mw::max_abs_error(a, a), 0.0);
}

TEST(WorkflowMetrics, RelativeL2OfAScaledTraceIsTheScaleMinusOne) {
  const auto a = ricker(200, 1e-3, 0.05, 25.0);
  auto b = a;
  for (auto& x : b) x *= 1.25;
  // ||1.25 a - a|| / ||a|| = 0.25; round-off of ~200 terms bounds the deviation far below 1e-12.
  EXPECT_NEAR(mw::relative_l2(b, a), 0.25, 1e-12);
}

TEST(WorkflowMetrics, RelativeL2EdgeCases) {
  const std::vector<double> zero(10, 0.0), one(10, 1.0);
  EXPECT_EQ(mw::relative_l2(zero, zero), 0.0);
  EXPECT_TRUE(std::isinf(mw::relative_l2(one, zero)));
  auto bad = one;
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(mw::relative_l2(bad, one)));
  EXPECT_TRUE(std::isnan(mw::max_abs_error(bad, one)));
}

TEST(WorkflowMetrics, CrossCorrelationFindsAKnownShift) {
  const double dt = 1e-3;
  const auto ref = ricker(400, dt, 0.1, 20.0);
  for (int shift : {-7, 0, 3, 12}) {
    const auto test = ricker(400, dt, 0.1 + shift * dt, 20.0);
    const auto cc = mw::cross_correlation(test, ref, 40);
    EXPECT_EQ(cc.lag, shift) << "shift " << shift;
    // A pure shift of a wavelet that is negligible at the ends correlates to 1 up to the
    // truncated tail (exp(-(pi f 0.1)^2) ~ 1e-17) and round-off.
    EXPECT_NEAR(cc.peak, 1.0, 1e-9) << "shift " << shift;
  }
}

TEST(WorkflowMetrics, CrossCorrelationOfOppositeSignsIsNegative) {
  const auto ref = ricker(100, 1e-3, 0.05, 25.0);
  auto neg = ref;
  for (auto& x : neg) x = -x;
  // Lag window 0: only c(0) = -1 is available.
  EXPECT_NEAR(mw::cross_correlation(neg, ref, 0).peak, -1.0, 1e-12);
  const std::vector<double> zero(100, 0.0);
  EXPECT_EQ(mw::cross_correlation(zero, ref, 5).peak, 0.0);
  EXPECT_EQ(mw::cross_correlation(zero, zero, 5).peak, 1.0);
}

TEST(WorkflowMetrics, WorstReceiverSkipsReceiversTheWaveDoesNotReach) {
  // Three receivers: two carry the wavelet (one 5 samples late in the test), the third only
  // a 1e-20 precursor that the test variant rounded to zero (what 16-bit storage does).
  const double dt = 1e-3;
  const auto ref = ricker(300, dt, 0.1, 20.0);
  const auto late = ricker(300, dt, 0.1 + 5 * dt, 20.0);
  std::vector<double> tiny(300, 0.0), zero(300, 0.0);
  for (std::size_t i = 0; i < tiny.size(); ++i) tiny[i] = 1e-20 * ref[i];
  const std::vector<std::vector<double>> r{ref, ref, tiny}, t{ref, late, zero};
  const auto cc = mw::worst_receiver_correlation(t, r, 20);
  EXPECT_EQ(cc.lag, 5);
  EXPECT_NEAR(cc.peak, 1.0, 1e-9);
  EXPECT_TRUE(cc.receiver == 0 || cc.receiver == 1);
  EXPECT_EQ(cc.signal, 1.0);
  // With no signal threshold the silent receiver decides, and its correlation is 0.
  EXPECT_EQ(mw::worst_receiver_correlation(t, r, 20, 0.0).peak, 0.0);
  // A receiver with signal that the variant got wrong (sign flipped) is not skipped.
  auto flipped = ref;
  for (auto& x : flipped) x = -x;
  const std::vector<std::vector<double>> t2{ref, flipped, zero};
  EXPECT_LT(mw::worst_receiver_correlation(t2, r, 0).peak, -0.99);
  EXPECT_EQ(mw::worst_receiver_correlation(t2, r, 0).receiver, 1);
  // The worst receiver is named with its share of the largest trace: a weak receiver (1e-4 of
  // the largest, above the cut) that the test got wrong.
  std::vector<double> weak(300, 0.0);
  for (std::size_t i = 0; i < weak.size(); ++i) weak[i] = 1e-4 * ref[i];
  const std::vector<std::vector<double>> r4{ref, weak}, t4{ref, zero};
  const auto c4 = mw::worst_receiver_correlation(t4, r4, 5);
  EXPECT_EQ(c4.peak, 0.0);
  EXPECT_EQ(c4.receiver, 1);
  EXPECT_NEAR(c4.signal, 1e-4, 1e-12);
  // NaN anywhere that counts gives NaN.
  auto bad = ref;
  bad[10] = std::nan("");
  const std::vector<std::vector<double>> t3{bad, ref, zero};
  EXPECT_TRUE(std::isnan(mw::worst_receiver_correlation(t3, r, 5).peak));
}

TEST(WorkflowMetrics, EnergyDrift) {
  EXPECT_EQ(mw::energy_drift(2.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(mw::energy_drift(2.0, 2.5), 0.25);
  EXPECT_DOUBLE_EQ(mw::energy_drift(-4.0, -5.0), -0.25);
  EXPECT_TRUE(std::isinf(mw::energy_drift(0.0, 1.0)));
}

TEST(WorkflowMetrics, ThresholdCrossing) {
  const std::vector<double> t{0.0, 1.0, 2.0, 3.0}, e{0.0, 0.05, 0.2, 0.1};
  EXPECT_EQ(mw::threshold_crossing(t, e, 0.1).value(), 2.0);
  EXPECT_FALSE(mw::threshold_crossing(t, e, 0.5).has_value());
  const std::vector<double> n{0.0, std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0};
  EXPECT_EQ(mw::threshold_crossing(t, n, 0.5).value(), 1.0);
}

TEST(WorkflowMetrics, FieldErrorOverOwnedPointsOnly) {
  mantissa::Grid g;
  g.dim = 2;
  g.n = {6, 5, 1};
  mantissa::Decomposition d(MPI_COMM_SELF, g);
  mantissa::Field<double> a("a", d, 2), b("b", d, 2);
  auto ha = mw::to_host(a, "a");
  auto hb = mw::to_host(b, "b");
  // Ghost points carry garbage that must not count.
  Kokkos::deep_copy(ha.view, 1e6);
  Kokkos::deep_copy(hb.view, -1e6);
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 6; ++i) {
      hb.view(0, j + 2, i + 2) = 2.0;
      ha.view(0, j + 2, i + 2) = (i == 1 && j == 3) ? 5.0 : 2.0;
    }
  const auto e = mw::field_error(MPI_COMM_SELF, ha, hb);
  // One point differs by 3 out of 30 points of value 2: ||diff|| = 3, ||ref|| = 2 sqrt(30).
  EXPECT_NEAR(e.rel_l2, 3.0 / (2.0 * std::sqrt(30.0)), 1e-15);
  EXPECT_EQ(e.max_abs, 3.0);
  EXPECT_EQ(e.ref_max, 2.0);
  // Stride 2 samples global indices (0, 2, 4) x (0, 2, 4): the differing point (1, 3) is not
  // in the sample.
  EXPECT_EQ(mw::field_error(MPI_COMM_SELF, ha, hb, 2).rel_l2, 0.0);
  EXPECT_EQ(mw::field_error(MPI_COMM_SELF, hb, hb).rel_l2, 0.0);
}

}  // namespace
