// The lid-driven cavity (issue 14): Re 100 centreline profiles against Ghia, Ghia and Shin
// (1982), the projection's divergence at the solver tolerance, and the mixed-precision pressure
// solve against the fp64 one.
#include "CfdTestUtils.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace {

using namespace mantissa_test;

// Ghia U., Ghia K. N. and Shin C. T., "High-Re solutions for incompressible flow using the
// Navier-Stokes equations and a multigrid method", J. Comput. Phys. 48 (1982) 387-411.
// Table I: u along the vertical centreline x = 0.5, Re = 100 (the interior points; y = 0 and
// y = 1 are the boundary values 0 and 1).
constexpr double ghia_y[] = {0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000,
                             0.4531, 0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547};
constexpr double ghia_u[] = {0.84123,  0.78871,  0.73722,  0.68717,  0.23151,  0.00332,  -0.13641, -0.20581,
                             -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717};
// Table II: v along the horizontal centreline y = 0.5, Re = 100.
constexpr double ghia_x[] = {0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000,
                             0.2344, 0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625};
constexpr double ghia_v[] = {-0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533, 0.05454,
                             0.17527,  0.17507,  0.16077,  0.12317,  0.10890,  0.10091,  0.09233};
constexpr int ghia_points = 15;

struct Profiles {
  std::vector<double> u, v;
};

template <class S, class C>
Profiles centrelines(const FlowSolver<S, C>& s) {
  std::vector<std::array<double, 3>> pu, pv;
  for (int q = 0; q < ghia_points; ++q) {
    pu.push_back({0.5, ghia_y[q], 0.0});
    pv.push_back({ghia_x[q], 0.5, 0.0});
  }
  return {s.sample(0, pu), s.sample(1, pv)};
}

double max_change(const Profiles& a, const Profiles& b) {
  double d = 0.0;
  for (int q = 0; q < ghia_points; ++q)
    d = std::max({d, std::abs(a.u[std::size_t(q)] - b.u[std::size_t(q)]),
                  std::abs(a.v[std::size_t(q)] - b.v[std::size_t(q)])});
  return d;
}

TEST(Cavity, Re100CentrelinesMatchGhia) {
  const std::int64_t n = 48;
  const Grid g = unit_square(n, n, false);
  Decomposition decomp(MPI_COMM_SELF, g);
  Config c = cavity_config(100.0);
  c.cfl = 0.9;
  FlowSolver<double> s(decomp, c);
  s.initialize();
  // to steady state: the scheme's fixed point P F(u) = 0 does not depend on dt, so the largest
  // stable dt is used; stop when the profiles change by less than 1e-5 over 0.5 time units (Ghia gives 5
  // decimals)
  const int chunk = int(std::ceil(0.5 / s.dt()));
  Profiles prev = centrelines(s), now;
  double change = 1.0;
  while (s.time() < 60.0) {
    s.run(chunk);
    now = centrelines(s);
    change = max_change(now, prev);
    prev = now;
    if (change < 1e-5) break;
  }
  std::printf("cavity Re 100 %lld^2: steady at t = %.2f (%lld steps, change %.2e over 0.5)\n", (long long)n,
              s.time(), (long long)s.step_index(), change);
  ASSERT_LT(change, 1e-5) << "not steady by t = 60";
  double du = 0.0, dv = 0.0;
  for (int q = 0; q < ghia_points; ++q) {
    std::printf("  y %.4f u %+.5f (Ghia %+.5f)   x %.4f v %+.5f (Ghia %+.5f)\n", ghia_y[q],
                now.u[std::size_t(q)], ghia_u[q], ghia_x[q], now.v[std::size_t(q)], ghia_v[q]);
    du = std::max(du, std::abs(now.u[std::size_t(q)] - ghia_u[q]));
    dv = std::max(dv, std::abs(now.v[std::size_t(q)] - ghia_v[q]));
  }
  const double umin = *std::min_element(now.u.begin(), now.u.end());
  std::printf("  max |u - Ghia| %.4f, max |v - Ghia| %.4f, u at y = 0.4531: %.5f (Ghia -0.21090)\n", du, dv,
              umin);
  // Tolerance: 0.01 of the lid speed. Measured at 48^2 (this run): see docs/user-guide.md; the
  // second-order error of a 48^2 grid near the lid's boundary layer (y > 0.95 holds four of
  // Ghia's points within two cells) dominates, and Ghia's 129^2 values carry their own ~0.1-0.5 %.
  EXPECT_LT(du, 0.01);
  EXPECT_LT(dv, 0.01);
  // the minimum of u near the centre is the classic comparison point
  EXPECT_NEAR(now.u[8], -0.21090, 0.004);
}

// Ghia et al. (1982) Tables I and II at Re = 1000, the same points as ghia_y / ghia_x.
constexpr double ghia_u1000[] = {0.65928,  0.57492,  0.51117,  0.46604,  0.33304,
                                 0.18719,  0.05702,  -0.06080, -0.10648, -0.27805,
                                 -0.38289, -0.29730, -0.22220, -0.20196, -0.18109};
constexpr double ghia_v1000[] = {-0.21388, -0.27669, -0.33714, -0.39188, -0.51550,
                                 -0.42665, -0.31966, 0.02526,  0.32235,  0.33075,
                                 0.37095,  0.32627,  0.30353,  0.29012,  0.27485};

// The extreme of samples f at positions (k + 1/2) h: the vertex of the parabola through the
// extreme sample and its two neighbours.
struct Extreme {
  double value = 0.0, at = 0.0;
};
Extreme vertex(const std::vector<double>& f, bool minimum, double h) {
  const auto it = minimum ? std::min_element(f.begin(), f.end()) : std::max_element(f.begin(), f.end());
  const std::size_t c = std::size_t(it - f.begin());
  if (c == 0 || c + 1 >= f.size()) return {f[c], (double(c) + 0.5) * h};
  const double fm = f[c - 1], f0 = f[c], fp = f[c + 1];
  const double d = 0.5 * (fm - fp) / (fm - 2.0 * f0 + fp);
  return {f0 - 0.25 * (fm - fp) * d, (double(c) + 0.5 + d) * h};
}

TEST(Cavity, Re1000ExtremaAgainstBotellaPeyret) {
  // Re 1000 on 64^2 to steady state: the extrema of u on x = 0.5 and of v on y = 0.5 against
  // Botella and Peyret (1998, Chebyshev N = 160; Comput. Fluids 27 (1998) 421-433), and
  // the centrelines against Ghia et al. (1982). 1% needs ~160^2 with this second-order scheme
  // (bench/cfd/mantissa_bench_cavity: 64^2 -5.75 %, 96^2 -2.68 %, observed order 1.9, the
  // grid convergence in docs/performance.md); a test affords 64^2 (~1 minute), so it checks
  // the 64^2 error against that measured convergence: every extreme low in magnitude (the
  // second-order error's sign on this scheme), by 4.5 % to 6.5 % (measured 5.1-5.8 % for the
  // three), at B-P's positions within one cell. A wrong viscous or advective term, boundary
  // or projection moves these by far more than the 1 % margin around the measured values.
  const std::int64_t n = 64;
  const double h = 1.0 / double(n);
  const Grid g = unit_square(n, n, false);
  Decomposition decomp(MPI_COMM_SELF, g);
  Config c = cavity_config(1000.0);
  c.cfl = 0.9;
  FlowSolver<double> s(decomp, c);
  s.initialize();
  std::vector<std::array<double, 3>> pu, pv;
  for (std::int64_t k = 0; k < n; ++k) {
    pu.push_back({0.5, (double(k) + 0.5) * h, 0.0});
    pv.push_back({(double(k) + 0.5) * h, 0.5, 0.0});
  }
  // Steady: the samples change by less than 1e-4 over one time unit. The approach is
  // geometric with ratio ~0.85-0.94 per unit (bench), so what remains of the transient is
  // below ~1e-3 of the lid speed, 0.3 % of the extrema: inside the margins above.
  const int chunk = int(std::ceil(1.0 / s.dt()));
  std::vector<double> u = s.sample(0, pu), v = s.sample(1, pv);
  double change = 1.0;
  while (s.time() < 100.0 && change >= 1e-4) {
    s.run(chunk);
    const auto u2 = s.sample(0, pu), v2 = s.sample(1, pv);
    change = 0.0;
    for (std::size_t k = 0; k < u.size(); ++k)
      change = std::max({change, std::abs(u2[k] - u[k]), std::abs(v2[k] - v[k])});
    u = u2;
    v = v2;
  }
  ASSERT_LT(change, 1e-4) << "not steady by t = 100";
  EXPECT_EQ(s.last_solves().unconverged, 0);
  const Extreme umin = vertex(u, true, h), vmax = vertex(v, false, h), vmin = vertex(v, true, h);
  const double eu = umin.value / -0.3885698 - 1.0, evx = vmax.value / 0.3769447 - 1.0,
               evn = vmin.value / -0.5270771 - 1.0;
  std::printf(
      "cavity Re 1000 %lld^2, steady at t = %.0f (change %.1e): u_min %.5f at y %.4f (B-P -0.38857 at "
      "0.1717, %+.2f %%), v_max %.5f at x %.4f (B-P 0.37694 at 0.1578, %+.2f %%), v_min %.5f at x %.4f "
      "(B-P -0.52708 at 0.9092, %+.2f %%)\n",
      (long long)n, s.time(), change, umin.value, umin.at, 100 * eu, vmax.value, vmax.at, 100 * evx,
      vmin.value, vmin.at, 100 * evn);
  for (double e : {eu, evx, evn}) {
    EXPECT_LT(e, -0.045);
    EXPECT_GT(e, -0.065);
  }
  EXPECT_NEAR(umin.at, 0.1717, h);
  EXPECT_NEAR(vmax.at, 0.1578, h);
  EXPECT_NEAR(vmin.at, 0.9092, h);
  // Ghia's 15 + 15 points: their 129^2 values are themselves 1.5-3 % off the converged
  // extrema, and 64^2 adds its 5-6 %; measured max deviation u 0.018, v 0.020 (bench): 0.03
  // of the lid speed.
  std::vector<std::array<double, 3>> qu, qv;
  for (int q = 0; q < ghia_points; ++q) {
    qu.push_back({0.5, ghia_y[q], 0.0});
    qv.push_back({ghia_x[q], 0.5, 0.0});
  }
  const auto su = s.sample(0, qu), sv = s.sample(1, qv);
  double du = 0.0, dv = 0.0;
  for (int q = 0; q < ghia_points; ++q) {
    du = std::max(du, std::abs(su[std::size_t(q)] - ghia_u1000[q]));
    dv = std::max(dv, std::abs(sv[std::size_t(q)] - ghia_v1000[q]));
  }
  std::printf("  max |u - Ghia| %.4f, max |v - Ghia| %.4f over 15 points each\n", du, dv);
  EXPECT_LT(du, 0.03);
  EXPECT_LT(dv, 0.03);
}

TEST(Cavity, ProjectionLeavesDivergenceAtTheSolverTolerance) {
  const Grid g = unit_square(32, 24, false);
  Decomposition decomp(MPI_COMM_SELF, g);
  Config c = cavity_config(100.0);
  c.solve.tolerance = 1e-10;
  FlowSolver<double> s(decomp, c);
  s.initialize();
  for (int k = 0; k < 20; ++k) {
    s.step();
    const auto& st = s.last_solves();
    const auto d = s.diagnostics();
    ASSERT_LE(st.max_residual, 1e-10) << "step " << k;
    // div u^{n+1} is the residual of the last stage's solve: -lap phi = -div w, so after
    // w - grad phi the divergence left is b - A phi, at most the tolerance times div w
    // (the 1e-13 absolute part is the rounding of the fp64 update, |u| <= 1, h = 1/32)
    EXPECT_LE(d.divergence, 1e-10 * st.divergence_before * 1.0001 + 1e-13) << "step " << k;
    EXPECT_GT(st.divergence_before, 1e3 * d.divergence) << "the projection did nothing at step " << k;
  }
}

TEST(Cavity, MixedPrecisionSolveChangesTheFlowByLessThan1e6) {
  // the same 200 steps with the multigrid in fp32 (iterative refinement to the fp64 residual)
  // and in progressive bf16: the velocity agrees with the fp64 solve's to < 1e-6 of its maximum
  const Grid g = unit_square(32, 32, false);
  Decomposition decomp(MPI_COMM_SELF, g);
  auto run = [&](mantissa::Precision p, int& iterations) {
    Config c = cavity_config(100.0);
    c.solver = p;
    FlowSolver<double> s(decomp, c);
    s.initialize();
    iterations = 0;
    for (int k = 0; k < 200; ++k) {
      s.step();
      iterations += s.last_solves().iterations;
      EXPECT_LE(s.last_solves().max_residual, c.solve.tolerance);
    }
    EXPECT_EQ(s.last_solves().unconverged, 0);
    return owned_velocity(s);
  };
  int it64 = 0, it32 = 0, it16 = 0;
  const auto r64 = run(mantissa::Precision::fp64, it64);
  const auto r32 = run(mantissa::Precision::fp32, it32);
  const auto r16 = run(mantissa::Precision::bf16, it16);
  auto rel = [&](const Owned<double>& o) {
    double d = 0.0, m = 0.0;
    for (std::size_t q = 0; q < o.u.size(); ++q) {
      d = std::max({d, std::abs(o.u[q] - r64.u[q]), std::abs(o.v[q] - r64.v[q])});
      m = std::max({m, std::abs(r64.u[q]), std::abs(r64.v[q])});
    }
    return d / m;
  };
  std::printf(
      "cavity 32^2, 200 steps: multigrid cycles fp64 %d, fp32 %d, bf16 %d; max rel. change fp32 %.3e, bf16 "
      "%.3e\n",
      it64, it32, it16, rel(r32), rel(r16));
  EXPECT_LT(rel(r32), 1e-6);
  EXPECT_LT(rel(r16), 1e-6);
}

}  // namespace
