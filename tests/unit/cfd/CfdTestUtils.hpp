#pragma once
// Flow set-ups shared by the unit and MPI CFD tests: the periodic Taylor-Green vortex and the
// lid-driven cavity, and host copies of the owned velocity.
#include <cfd/Solver.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <vector>

namespace mantissa_test {

using mantissa::Decomposition;
using mantissa::Field;
using mantissa::Grid;
using namespace mantissa::cfd;

// [0, 1]^2 with n x m cells.
inline Grid unit_square(std::int64_t n, std::int64_t m, bool periodic) {
  Grid g;
  g.dim = 2;
  g.n = {n, m, 1};
  g.spacing = {1.0 / double(n), 1.0 / double(m), 1.0};
  g.periodic = {periodic, periodic, false};
  return g;
}

inline Config taylor_green_config(double viscosity = 0.01) {
  Config c;
  c.viscosity = viscosity;
  c.initial = InitialKind::taylor_green;
  c.amplitude = 1.0;
  for (auto& s : c.side) s = {Side::periodic, Side::periodic};
  c.quiet = true;
  return c;
}

// Re = U L / nu with the lid (y high) at U = 1 on the unit square.
inline Config cavity_config(double reynolds) {
  Config c;
  c.viscosity = 1.0 / reynolds;
  c.initial = InitialKind::rest;
  c.side[0] = {Side::wall, Side::wall};
  c.side[1] = {Side::wall, Side::lid};
  c.lid_velocity = 1.0;
  c.quiet = true;
  return c;
}

// A dt that reaches t_end in a whole number of steps at or below cfl x the stable limit.
inline int steps_to(const Grid& g, Config& c, double t_end, double cfl) {
  Config probe = c;
  probe.dt = 0.0;
  probe.cfl = cfl;
  const double dt = choose_dt(g, probe);
  const int steps = int(std::ceil(t_end / dt));
  c.dt = t_end / double(steps);
  return steps;
}

// The owned x and y velocities (fp64), x fastest, rows of the owned box.
template <class S>
struct Owned {
  std::vector<double> u, v;
  std::array<std::int64_t, 3> offset{}, extent{};
};

template <class S, class C>
Owned<S> owned_velocity(const FlowSolver<S, C>& s) {
  Owned<S> o;
  o.offset = s.decomposition().offset();
  o.extent = s.decomposition().extent();
  auto hu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.u().view());
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.v().view());
  for (std::int64_t j = 0; j < o.extent[1]; ++j)
    for (std::int64_t i = 0; i < o.extent[0]; ++i) {
      o.u.push_back(double(hu(0, j + 1, i + 1)));
      o.v.push_back(double(hv(0, j + 1, i + 1)));
    }
  return o;
}

// Relative L2 error of the owned velocity against the analytic Taylor-Green field at time t
// (one rank: the whole grid).
template <class S, class C>
double taylor_green_error(const FlowSolver<S, C>& s) {
  const Grid& g = s.decomposition().grid();
  const auto tg = TaylorGreen::on(g, s.config().amplitude, s.config().viscosity);
  const auto o = owned_velocity(s);
  double err = 0.0, norm = 0.0;
  const double hx = g.spacing[0], hy = g.spacing[1];
  for (std::int64_t j = 0; j < o.extent[1]; ++j)
    for (std::int64_t i = 0; i < o.extent[0]; ++i) {
      const double xf = double(o.offset[0] + i) * hx, yf = double(o.offset[1] + j) * hy;
      const double eu = tg.u(xf, yf + 0.5 * hy, s.time()), ev = tg.v(xf + 0.5 * hx, yf, s.time());
      const std::size_t q = std::size_t(j * o.extent[0] + i);
      err += (o.u[q] - eu) * (o.u[q] - eu) + (o.v[q] - ev) * (o.v[q] - ev);
      norm += eu * eu + ev * ev;
    }
  double sums[2] = {err, norm};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, s.decomposition().comm());
  return std::sqrt(sums[0] / sums[1]);
}

}  // namespace mantissa_test
