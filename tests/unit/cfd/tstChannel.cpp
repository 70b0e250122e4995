// Inflow and outflow sides (issue 14): plane Poiseuille flow in the channel [0, 4] x [0, 1],
// inflow on the low x side, outflow (zero pressure) on the high x side, no-slip walls at y = 0, 1.
// The steady laminar solution is u = 6 U s (1 - s), s = y / H, v = 0, with the pressure gradient
// dp/dx = -12 nu U / H^2 (U the bulk speed). The pressure is recovered as 2 phi_2 / dt
// (Solver.hpp), which at a steady state is the pressure exactly (P F(u) = 0 makes the second
// stage's predictor u + dt/2 grad p).
#include "CfdTestUtils.hpp"

#include <mantissa/core/Error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace mantissa_test;

namespace {

constexpr double nu = 0.05, bulk = 1.0;  // Re = U H / nu = 20

Grid channel(std::int64_t m) {
  return channel_grid(4 * m, m, 1.0 / double(m));
}

struct Result {
  double profile_error = 0.0;  // max |u - 6 U s (1 - s)| / U on the column of faces at x = 3.5
  double dpdx = 0.0;           // pressure gradient between the cells at x = 3 and x = 3.5
  double outflux = 0.0;        // sum of the outflow face velocities times h_y
  double max_divergence = 0.0;
  double max_v = 0.0;  // max |v| where the flow is developed (x >= 3)
};

// Runs to t = 6 (the viscous time H^2 / nu is 20; the flow is steady to ~1e-6 of U by t = 6 at
// Re 20, measured by the change over the last unit of time).
Result run(std::int64_t m, InflowProfile profile) {
  const Grid g = channel(m);
  Decomposition d(MPI_COMM_SELF, g);
  Config c = channel_config(nu, profile);
  const int steps = steps_to(g, c, 6.0, 0.5);
  FlowSolver<double> s(d, c);
  s.initialize();
  s.run(steps);
  Result r;
  const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.u().view());
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.v().view());
  const auto p = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.phi(1).view());
  const double h = 1.0 / double(m);
  const std::int64_t column = std::int64_t(3.5 * double(m));  // face x = 3.5
  for (std::int64_t j = 0; j < m; ++j) {
    const double y = (double(j) + 0.5) * h;
    r.profile_error =
        std::max(r.profile_error, std::abs(u(0, j + 1, column + 1) - 6.0 * bulk * y * (1.0 - y)) / bulk);
    r.outflux += u(0, j + 1, 4 * m + 1) * h;
    for (std::int64_t i = 3 * m; i < 4 * m; ++i) r.max_v = std::max(r.max_v, std::abs(v(0, j + 1, i + 1)));
  }
  // 2 phi / dt on the centreline cells at x = 3 and 3.5 (averaged over the rows: p is uniform
  // across the fully developed channel)
  double p3 = 0.0, p35 = 0.0;
  for (std::int64_t j = 0; j < m; ++j) {
    p3 += p(0, j + 1, 3 * m + 1) / double(m);
    p35 += p(0, j + 1, column + 1) / double(m);
  }
  r.dpdx = 2.0 / s.dt() * (p35 - p3) / (double(column - 3 * m) * h);
  r.max_divergence = s.diagnostics().max_divergence;
  return r;
}

}  // namespace

TEST(Channel, UniformInflowDevelopsPoiseuilleFlow) {
  const Result a = run(8, InflowProfile::uniform), b = run(16, InflowProfile::uniform);
  const double exact = -12.0 * nu * bulk;
  std::printf(
      "channel, uniform inflow: h = 1/8: profile %.3e, dp/dx %.6f; h = 1/16: profile %.3e, dp/dx %.6f "
      "(exact %.6f); outflux %.12f, max div %.2e, max |v| %.2e\n",
      a.profile_error, a.dpdx, b.profile_error, b.dpdx, exact, b.outflux, b.max_divergence, b.max_v);
  // what goes in comes out (the projection's divergence is at its 1e-10 tolerance)
  EXPECT_NEAR(b.outflux, bulk, 1e-8);
  EXPECT_LT(b.max_divergence, 1e-7);
  // fully developed at x = 3.5 (entrance length ~ 0.06 Re H = 1.2 H): the profile and the pressure
  // gradient within the discretisation error, which falls at second order
  EXPECT_LT(b.profile_error, 0.02);
  EXPECT_NEAR(b.dpdx, exact, 0.03 * std::abs(exact));
  EXPECT_GT(a.profile_error / b.profile_error, 3.0);
  EXPECT_GT(std::abs(a.dpdx - exact) / std::abs(b.dpdx - exact), 3.0);
  EXPECT_LT(b.max_v, 1e-3);  // developed: v is the inlet's adjustment only
}

TEST(Channel, ParabolicInflowStaysPoiseuille) {
  const Result a = run(8, InflowProfile::parabolic), b = run(16, InflowProfile::parabolic);
  const double exact = -12.0 * nu * bulk;
  std::printf(
      "channel, parabolic inflow: h = 1/8: profile %.3e, dp/dx %.6f; h = 1/16: profile %.3e, dp/dx "
      "%.6f; outflux %.12f, max |v| %.2e\n",
      a.profile_error, a.dpdx, b.profile_error, b.dpdx, b.outflux, b.max_v);
  EXPECT_NEAR(b.outflux, bulk, 1e-8);
  EXPECT_LT(b.profile_error, 0.02);
  EXPECT_NEAR(b.dpdx, exact, 0.03 * std::abs(exact));
  EXPECT_GT(a.profile_error / b.profile_error, 3.0);
  EXPECT_LT(b.max_v, 1e-3);
}

TEST(Channel, InflowWithoutOutflowIsRefused) {
  const Grid g = channel(8);
  Decomposition d(MPI_COMM_SELF, g);
  Config c = channel_config(nu, InflowProfile::uniform);
  c.side[0] = {Side::inflow, Side::wall};
  try {
    FlowSolver<double> s(d, c);
    FAIL() << "an inflow without an outflow was accepted";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("outflow"), std::string::npos) << e.what();
  }
}
