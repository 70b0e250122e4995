// The solver's non-template pieces: time-step limit, Taylor-Green, precision mapping.
#include <cfd/Solver.hpp>

#include <mantissa/core/Error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mantissa::cfd {

std::vector<Precision> solver_level_precisions(Precision solver) {
  switch (solver) {
    case Precision::fp64:
      return {Precision::fp64};
    case Precision::fp32:
      return {Precision::fp32};
    case Precision::bf16:
      return {Precision::fp32, Precision::bf16};
    case Precision::fp16:
      return {Precision::fp32, Precision::fp16};
    default:
      break;
  }
  throw Error("cfd: solver precision " + std::string(to_string(solver)) +
              " has no multigrid; use fp64, fp32, bf16 or fp16 (campaign.variants[].solver)");
}

std::string to_string(Side s) {
  switch (s) {
    case Side::periodic:
      return "periodic";
    case Side::wall:
      return "wall";
    case Side::lid:
      return "lid";
    case Side::inflow:
      return "inflow";
    case Side::outflow:
      return "outflow";
  }
  return "?";
}

double stable_dt(const Grid& grid, double viscosity, double speed) {
  double adv = 0.0, visc = 0.0;
  for (int a = 0; a < (grid.dim == 3 ? 3 : 2); ++a) {
    adv += std::abs(speed) / grid.spacing[a];
    visc += 1.0 / (grid.spacing[a] * grid.spacing[a]);
  }
  return 1.0 / (adv + 2.0 * viscosity * visc);
}

TaylorGreen TaylorGreen::on(const Grid& grid, double amplitude, double viscosity) {
  TaylorGreen t;
  t.amplitude = amplitude;
  t.viscosity = viscosity;
  const double pi = std::acos(-1.0);
  for (int a = 0; a < 2; ++a) {
    t.k[std::size_t(a)] = 2.0 * pi / (double(grid.n[a]) * grid.spacing[a]);
    t.origin[std::size_t(a)] = grid.origin[a];
  }
  return t;
}
double TaylorGreen::decay(double t) const {
  return std::exp(-viscosity * (k[0] * k[0] + k[1] * k[1]) * t);
}
double TaylorGreen::u(double x, double y, double t) const {
  return amplitude * std::sin(k[0] * (x - origin[0])) * std::cos(k[1] * (y - origin[1])) * decay(t);
}
double TaylorGreen::v(double x, double y, double t) const {
  return -amplitude * (k[0] / k[1]) * std::cos(k[0] * (x - origin[0])) * std::sin(k[1] * (y - origin[1])) *
         decay(t);
}

TaylorGreen3D TaylorGreen3D::on(const Grid& grid, double amplitude) {
  TaylorGreen3D t;
  t.amplitude = amplitude;
  const double pi = std::acos(-1.0);
  for (int a = 0; a < 3; ++a) {
    t.k[std::size_t(a)] = 2.0 * pi / (double(grid.n[a]) * grid.spacing[a]);
    t.origin[std::size_t(a)] = grid.origin[a];
  }
  return t;
}
double TaylorGreen3D::u(double x, double y, double z) const {
  return amplitude * std::sin(k[0] * (x - origin[0])) * std::cos(k[1] * (y - origin[1])) *
         std::cos(k[2] * (z - origin[2]));
}
double TaylorGreen3D::v(double x, double y, double z) const {
  return -amplitude * (k[0] / k[1]) * std::cos(k[0] * (x - origin[0])) * std::sin(k[1] * (y - origin[1])) *
         std::cos(k[2] * (z - origin[2]));
}

Beltrami Beltrami::on(const Grid& grid, double amplitude, double viscosity) {
  const double lx = double(grid.n[0]) * grid.spacing[0];
  bool cube = grid.dim == 3;
  for (int a = 1; a < 3 && cube; ++a) cube = std::abs(double(grid.n[a]) * grid.spacing[a] - lx) <= 1e-12 * lx;
  if (!cube)
    throw Error(
        "cfd: cfd.initial.kind = beltrami needs a 3D cube (mesh.dim: 3, the same n x spacing on every "
        "axis, all sides periodic)");
  Beltrami b;
  b.amplitude = amplitude;
  b.viscosity = viscosity;
  b.k = 2.0 * std::acos(-1.0) / lx;
  for (int a = 0; a < 3; ++a) b.origin[std::size_t(a)] = grid.origin[a];
  return b;
}
double Beltrami::decay(double t) const {
  return std::exp(-viscosity * k * k * t);
}
double Beltrami::u(double, double y, double z, double t) const {
  return amplitude * (std::sin(k * (z - origin[2])) + std::cos(k * (y - origin[1]))) * decay(t);
}
double Beltrami::v(double x, double, double z, double t) const {
  return amplitude * (std::sin(k * (x - origin[0])) + std::cos(k * (z - origin[2]))) * decay(t);
}
double Beltrami::w(double x, double y, double, double t) const {
  return amplitude * (std::sin(k * (y - origin[1])) + std::cos(k * (x - origin[0]))) * decay(t);
}

double velocity_scale(const Config& c) {
  double s = 0.0;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      if (c.side[a][side] == Side::lid) s = std::max(s, std::abs(c.lid_velocity));
      // the parabolic profile's peak is at most 1.5 x 1.5 of the bulk speed (a 3D duct)
      if (c.side[a][side] == Side::inflow)
        s = std::max(
            s, std::abs(c.inflow_velocity) * (c.inflow_profile == InflowProfile::parabolic ? 2.25 : 1.0));
    }
  if (c.initial == InitialKind::taylor_green) s = std::max(s, std::abs(c.amplitude));
  // each ABC component is the sum of two unit waves
  if (c.initial == InitialKind::beltrami) s = std::max(s, 2.0 * std::abs(c.amplitude));
  return s;
}

double choose_dt(const Grid& grid, const Config& c) {
  if (!(c.cfl > 0.0 && c.cfl <= 1.0))
    throw Error("cfd: cfd.cfl is " + std::to_string(c.cfl) + "; it must be in (0, 1]");
  // Taylor-Green with kx != ky has |v| up to U kx / ky: take the larger component.
  double speed = velocity_scale(c);
  if (c.initial == InitialKind::taylor_green) {
    const auto tg = TaylorGreen::on(grid, c.amplitude, c.viscosity);
    speed = std::max(speed, std::abs(c.amplitude) * std::max(1.0, tg.k[0] / tg.k[1]));
  }
  const double limit = stable_dt(grid, c.viscosity, speed);
  if (c.dt < 0.0)
    throw Error("cfd: cfd.dt is " + std::to_string(c.dt) + "; use a positive dt or 0 (cfl x the limit)");
  if (c.dt == 0.0) return c.cfl * limit;
  if (c.dt > limit) {
    char buf[400];
    std::snprintf(
        buf, sizeof(buf),
        "cfd: cfd.dt = %.6g is above the stable limit %.6g of this grid and flow (velocity scale %.4g, "
        "viscosity %.4g, spacing %.4g x %.4g: dt <= 1 / (sum U/h + 2 nu sum 1/h^2)); use cfd.dt <= %.6g, "
        "or cfd.dt: 0 to take cfd.cfl x the limit",
        c.dt, limit, speed, c.viscosity, grid.spacing[0], grid.spacing[1], limit);
    throw Error(buf);
  }
  return c.dt;
}

}  // namespace mantissa::cfd
