// FlowSolver::project_velocity: the step's own projection applied to a velocity written from
// outside (what the campaign does to every surrogate prediction, CfdModel::constrain). It removes
// a discrete gradient exactly (to the solve's tolerance), leaves the divergence at the solver
// tolerance, imposes the walls' normal velocity, keeps the stage potentials, step and time, and
// leaves a divergence-free field alone to rounding.
#include "CfdTestUtils.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mantissa_test;

namespace {

constexpr double pi = 3.14159265358979323846;

// The cavity at Re 100 after 40 steps on 32 x 24 cells (one rank): a divergence-free flow with
// walls on every side.
struct Cavity {
  Grid g = unit_square(32, 24, false);
  Decomposition decomp{MPI_COMM_SELF, g};
  Config c = [] {
    Config k = cavity_config(100.0);
    k.solve.tolerance = 1e-10;
    return k;
  }();
  FlowSolver<double> s{decomp, c};
  Cavity() {
    s.initialize();
    s.run(40);
  }
};

// A host copy that never aliases the field (create_mirror_view would on a host build).
auto host(const Field<double>& f) {
  auto h = Kokkos::create_mirror(Kokkos::HostSpace(), f.view());
  Kokkos::deep_copy(h, f.view());
  return h;
}

template <class A, class B>
double max_abs_diff(const A& a, const B& b, std::int64_t nx, std::int64_t ny) {
  double m = 0.0;
  for (std::int64_t j = 1; j <= ny; ++j)
    for (std::int64_t i = 1; i <= nx; ++i) m = std::max(m, std::abs(a(0, j, i) - b(0, j, i)));
  return m;
}

}  // namespace

TEST(Projection, RemovesADiscreteGradientAndKeepsTheRest) {
  Cavity cav;
  auto& s = cav.s;
  const std::int64_t nx = 32, ny = 24;
  const double hx = 1.0 / 32.0, hy = 1.0 / 24.0;
  const auto u0 = host(s.u()), v0 = host(s.v());
  const auto phi0 = host(s.phi(0)), phi1 = host(s.phi(1));
  // w = u + G psi on the faces the update owns (not the wall faces), psi a smooth cell field: the
  // projection's solve sees D G psi = L psi and returns psi up to a constant, so P w = u.
  auto hu = host(s.u());
  auto hv = host(s.v());
  const auto psi = [&](std::int64_t i, std::int64_t j) {
    const double x = (double(i) + 0.5) * hx, y = (double(j) + 0.5) * hy;
    return 0.05 * std::cos(pi * x) * std::cos(2.0 * pi * y) + 0.02 * x * x * y;
  };
  double grad_max = 0.0;
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 1; i < nx; ++i) {
      const double gx = (psi(i, j) - psi(i - 1, j)) / hx;
      hu(0, j + 1, i + 1) += gx;
      grad_max = std::max(grad_max, std::abs(gx));
    }
  for (std::int64_t j = 1; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) hv(0, j + 1, i + 1) += (psi(i, j) - psi(i, j - 1)) / hy;
  // and a non-zero normal velocity on the low x wall face, which the projection must set to 0
  for (std::int64_t j = 0; j < ny; ++j) hu(0, j + 1, 1) = 0.3;
  Kokkos::deep_copy(s.u().view(), hu);
  Kokkos::deep_copy(s.v().view(), hv);
  s.restore(s.step_index(), s.time());
  const std::int64_t step = s.step_index();
  const double time = s.time();

  const Projection p = s.project_velocity();
  EXPECT_TRUE(p.projected);
  EXPECT_GT(p.divergence_before, 1e-2);
  // the solve's relative residual 1e-10 bounds what is left of div w (the 1e-13: fp64 rounding
  // of the update, |u| <= 1 on h = 1/32)
  EXPECT_LE(p.divergence_after, 1e-10 * p.divergence_before * 1.0001 + 1e-13);
  EXPECT_LE(p.residual, 1e-10);
  EXPECT_GT(p.iterations, 0);
  EXPECT_EQ(s.last_solves().iterations, p.iterations);
  EXPECT_NEAR(s.diagnostics().divergence, p.divergence_after, 1e-3 * p.divergence_after + 1e-15);
  // P w = u: the gradient removed to the solve's tolerance (measured 3e-11 of it, 2026-12-02)
  const auto u1 = host(s.u()), v1 = host(s.v());
  const double du = max_abs_diff(u1, u0, nx, ny), dv = max_abs_diff(v1, v0, nx, ny);
  std::printf("  |P(u + G psi) - u|: %.3e (u), %.3e (v) of |G psi| %.3e; div %.3e -> %.3e, %d cycles\n", du,
              dv, grad_max, p.divergence_before, p.divergence_after, p.iterations);
  EXPECT_LE(du, 1e-9 * grad_max);
  EXPECT_LE(dv, 1e-9 * grad_max);
  for (std::int64_t j = 0; j < ny; ++j) ASSERT_EQ(u1(0, j + 1, 1), 0.0) << "wall face at row " << j;
  // the stage potentials (the next step's initial guesses), step and time are the state's
  const auto phi0b = host(s.phi(0)), phi1b = host(s.phi(1));
  EXPECT_EQ(max_abs_diff(phi0b, phi0, nx, ny), 0.0);
  EXPECT_EQ(max_abs_diff(phi1b, phi1, nx, ny), 0.0);
  EXPECT_EQ(s.step_index(), step);
  EXPECT_EQ(s.time(), time);
}

TEST(Projection, LeavesADivergenceFreeFieldAlone) {
  Cavity cav;
  auto& s = cav.s;
  const auto u0 = host(s.u()), v0 = host(s.v());
  const double div0 = s.diagnostics().divergence;
  const Projection p = s.project_velocity();
  EXPECT_NEAR(p.divergence_before, div0, 1e-3 * div0 + 1e-15);
  // projected or not (the flow is divergence-free to the solve's tolerance after every step),
  // the velocity moves by at most that tolerance's worth
  const auto u1 = host(s.u()), v1 = host(s.v());
  EXPECT_LE(max_abs_diff(u1, u0, 32, 24), 1e-9);
  EXPECT_LE(max_abs_diff(v1, v0, 32, 24), 1e-9);
  EXPECT_LE(p.divergence_after, std::max(div0, 1e-12));
  // and the run continues from it
  s.step();
  EXPECT_LE(s.last_solves().max_residual, 1e-10);
}

TEST(Projection, WorksIn3D) {
  const Grid g = box3(8, 8, 8, 1.0, 1.0, 1.0, false);
  Decomposition decomp(MPI_COMM_SELF, g);
  Config c = cavity3_config(100.0);
  c.solve.tolerance = 1e-10;
  FlowSolver<double> s(decomp, c);
  s.initialize();
  s.run(5);
  auto hw = host(s.w());
  for (std::int64_t k = 1; k <= 8; ++k)
    for (std::int64_t j = 1; j <= 8; ++j)
      for (std::int64_t i = 1; i <= 8; ++i) hw(k, j, i) += 0.01 * std::sin(double(i + 2 * j + 3 * k));
  Kokkos::deep_copy(s.w().view(), hw);
  s.restore(s.step_index(), s.time());
  const Projection p = s.project_velocity();
  EXPECT_TRUE(p.projected);
  EXPECT_GT(p.divergence_before, 1e-3);
  EXPECT_LE(p.divergence_after, 1e-10 * p.divergence_before * 1.0001 + 1e-13);
  EXPECT_NEAR(s.diagnostics().divergence, p.divergence_after, 1e-3 * p.divergence_after + 1e-15);
}
