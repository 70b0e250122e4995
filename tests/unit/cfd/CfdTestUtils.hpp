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

// A channel of nx x ny cells of width h: inflow on the low x side (bulk speed 1), outflow on the
// high x side, no-slip walls on the others (2D; in 3D a duct with nz cells across z).
inline Grid channel_grid(std::int64_t nx, std::int64_t ny, double h, std::int64_t nz = 0) {
  Grid g;
  g.dim = nz > 0 ? 3 : 2;
  g.n = {nx, ny, nz > 0 ? nz : 1};
  g.spacing = {h, h, nz > 0 ? h : 1.0};
  g.periodic = {false, false, false};
  return g;
}

inline Config channel_config(double viscosity, InflowProfile profile) {
  Config c;
  c.viscosity = viscosity;
  c.side[0] = {Side::inflow, Side::outflow};
  c.side[1] = {Side::wall, Side::wall};
  c.side[2] = {Side::wall, Side::wall};
  c.inflow_velocity = 1.0;
  c.inflow_profile = profile;
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

// ---- 3D ---------------------------------------------------------------------------------

// [0, lx] x [0, ly] x [0, lz] with nx x ny x nz cells.
inline Grid box3(std::int64_t nx, std::int64_t ny, std::int64_t nz, double lx, double ly, double lz,
                 bool periodic) {
  Grid g;
  g.dim = 3;
  g.n = {nx, ny, nz};
  g.spacing = {lx / double(nx), ly / double(ny), lz / double(nz)};
  g.periodic = {periodic, periodic, periodic};
  return g;
}

// The periodic cube [0, 2 pi]^3 with n^3 cells (the Taylor-Green and ABC box).
inline Grid periodic_cube(std::int64_t n) {
  const double l = 2.0 * std::acos(-1.0);
  return box3(n, n, n, l, l, l, true);
}

inline Config periodic_config(InitialKind kind, double viscosity) {
  Config c;
  c.viscosity = viscosity;
  c.initial = kind;
  c.amplitude = 1.0;
  for (auto& s : c.side) s = {Side::periodic, Side::periodic};
  c.quiet = true;
  return c;
}

// The lid-driven cube: walls everywhere, the y-high side a lid sliding along x.
inline Config cavity3_config(double reynolds) {
  Config c = cavity_config(reynolds);
  c.side[2] = {Side::wall, Side::wall};
  return c;
}

// The owned values of a field (fp64), x fastest, then y, then z (2D: the one plane).
template <class T>
std::vector<double> owned_values(const Field<T>& f) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.view());
  const auto e = f.extent();
  const auto g = f.ghosts();
  std::vector<double> out;
  out.reserve(std::size_t(e[0] * e[1] * e[2]));
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i) out.push_back(double(h(k + g[2], j + g[1], i + g[0])));
  return out;
}

// Relative L2 error of the owned velocity against the ABC flow at the solver's time.
template <class S, class C>
double beltrami_error(const FlowSolver<S, C>& s) {
  const Grid& g = s.decomposition().grid();
  const auto ab = Beltrami::on(g, s.config().amplitude, s.config().viscosity);
  const auto off = s.decomposition().offset(), e = s.decomposition().extent();
  const auto u = owned_values(s.u()), v = owned_values(s.v()), w = owned_values(s.w());
  const double hx = g.spacing[0], hy = g.spacing[1], hz = g.spacing[2], t = s.time();
  double err = 0.0, norm = 0.0;
  std::size_t q = 0;
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i, ++q) {
        const double xf = double(off[0] + i) * hx, yf = double(off[1] + j) * hy, zf = double(off[2] + k) * hz;
        const double xc = xf + 0.5 * hx, yc = yf + 0.5 * hy, zc = zf + 0.5 * hz;
        const double eu = ab.u(xf, yc, zc, t), ev = ab.v(xc, yf, zc, t), ew = ab.w(xc, yc, zf, t);
        err += (u[q] - eu) * (u[q] - eu) + (v[q] - ev) * (v[q] - ev) + (w[q] - ew) * (w[q] - ew);
        norm += eu * eu + ev * ev + ew * ew;
      }
  double sums[2] = {err, norm};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, s.decomposition().comm());
  return std::sqrt(sums[0] / sums[1]);
}

}  // namespace mantissa_test
