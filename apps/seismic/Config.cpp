#include <mantissa/core/Error.hpp>
#include <seismic/Config.hpp>
#include <seismic/stencil_kernels.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace mantissa::seismic {

namespace {
std::string num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}
const char* axis_name(int a) {
  return a == 0 ? "x" : a == 1 ? "y" : "z";
}
}  // namespace

double stable_dt(int order, const Grid& grid, double v_max) {
  const int r = order / 2;
  // Symbol of -d2 at k h = pi: -(c0 + 2 sum_m c_m (-1)^m).
  double s = -second_derivative_coefficient(r, 0);
  for (int m = 1; m <= r; ++m) s -= 2.0 * second_derivative_coefficient(r, m) * (m % 2 ? -1.0 : 1.0);
  double sum = 0.0;
  for (int a = 0; a < grid.dim; ++a) sum += s / (grid.spacing[a] * grid.spacing[a]);
  return 2.0 / (v_max * std::sqrt(sum));
}

double required_points_per_wavelength(int order) {
  // Rules of thumb for a phase error below ~1% over tens of wavelengths (Alford, Kelly and
  // Boore 1974 for order 2; Dablain 1986 for higher orders).
  switch (order) {
    case 2:
      return 10.0;
    case 4:
      return 5.0;
    case 6:
      return 4.0;
    default:
      return 3.5;
  }
}

double max_frequency(const Config& c) {
  double f = 0.0;
  for (const auto& shot : c.shots)
    for (const auto& s : shot.sources)
      f = std::max(f, s.wavelet == WaveletKind::file ? s.frequency : 2.5 * s.frequency);
  return f;
}

double effective_dt(const Config& c, const Grid& grid, double v_max) {
  return c.dt > 0.0 ? c.dt : c.courant * stable_dt(c.order, grid, v_max);
}

std::vector<std::string> check_config(const Config& c, const Grid& grid, double v_min, double v_max) {
  std::vector<std::string> warnings;
  if (c.order != 2 && c.order != 4 && c.order != 6 && c.order != 8)
    throw Error("seismic.order = " + std::to_string(c.order) + " is not supported; use 2, 4, 6 or 8");
  if (grid.dim != 2 && grid.dim != 3)
    throw Error("mesh.dim = " + std::to_string(grid.dim) + ": the seismic solver runs in 2D or 3D");
  if (!(v_min > 0.0) || !std::isfinite(v_max))
    throw Error("seismic.velocity: the model has velocities in [" + num(v_min) + ", " + num(v_max) +
                "]; every velocity must be positive and finite");
  if (c.steps < 0) throw Error("seismic.steps = " + std::to_string(c.steps) + " must be >= 0");
  if (c.record_every < 1)
    throw Error("seismic.record_every = " + std::to_string(c.record_every) + " must be >= 1");
  if (c.dt < 0.0)
    throw Error("seismic.dt = " + num(c.dt) + " must be >= 0 (0 chooses it from seismic.courant)");
  if (c.dt == 0.0 && !(c.courant > 0.0 && c.courant <= 1.0))
    throw Error("seismic.courant = " + num(c.courant) + " must be in (0, 1]");
  const double dt_max = stable_dt(c.order, grid, v_max);
  if (c.dt > dt_max)
    throw Error("seismic.dt = " + num(c.dt) + " violates the CFL condition for order " +
                std::to_string(c.order) + " in " + std::to_string(grid.dim) + "D with the maximum velocity " +
                num(v_max) + "; the largest stable dt is " + num(dt_max) +
                ". Set seismic.dt <= " + num(dt_max) + " or 0 to use seismic.courant x " + num(dt_max));
  bool any_pml = false;
  for (int a = 0; a < grid.dim; ++a)
    for (int side = 0; side < 2; ++side) {
      if (c.boundary[a][side] != Boundary::pml) continue;
      any_pml = true;
      if (2 * c.pml_cells >= grid.n[a])
        throw Error("seismic.pml.cells = " + std::to_string(c.pml_cells) + " leaves no interior along " +
                    axis_name(a) + " (" + std::to_string(grid.n[a]) +
                    " points); use a thinner layer or a larger grid");
    }
  if (any_pml && (c.pml_cells < 1 || !(c.pml_reflection > 0.0 && c.pml_reflection < 1.0)))
    throw Error("seismic.pml: cells = " + std::to_string(c.pml_cells) +
                ", reflection = " + num(c.pml_reflection) + "; need cells >= 1 and 0 < reflection < 1");
  if (grid.periodic[0] || grid.periodic[1] || grid.periodic[2])
    throw Error(
        "mesh.periodic: the seismic solver has no periodic boundaries; use seismic.boundaries instead");
  const int r = c.order / 2;
  for (int a = 0; a < grid.dim; ++a)
    if (grid.n[a] < 2 * r + 1)
      throw Error(std::string("mesh.n along ") + axis_name(a) + " = " + std::to_string(grid.n[a]) +
                  " is smaller than the stencil (" + std::to_string(2 * r + 1) + " points); refine the grid");
  auto inside = [&](const std::array<double, 3>& p) {
    for (int a = 0; a < grid.dim; ++a) {
      const double lo = grid.origin[a], hi = grid.coordinate(a, grid.n[a] - 1);
      if (p[a] < lo || p[a] > hi) return false;
    }
    return true;
  };
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    for (std::size_t i = 0; i < c.shots[s].sources.size(); ++i) {
      const auto& p = c.shots[s].sources[i].position;
      if (!inside(p))
        throw Error("seismic.shots[" + std::to_string(s) + "].sources[" + std::to_string(i) + "] at (" +
                    num(p[0]) + ", " + num(p[1]) + ", " + num(p[2]) +
                    ") lies outside the grid; move it inside");
    }
  for (std::size_t i = 0; i < c.receivers.size(); ++i)
    if (!inside(c.receivers[i]))
      throw Error("seismic.receivers[" + std::to_string(i) + "] at (" + num(c.receivers[i][0]) + ", " +
                  num(c.receivers[i][1]) + ", " + num(c.receivers[i][2]) +
                  ") lies outside the grid; move it inside");
  const double f_max = max_frequency(c);
  if (f_max > 0.0) {
    double h = 0.0;
    for (int a = 0; a < grid.dim; ++a) h = std::max(h, grid.spacing[a]);
    const double ppw = v_min / f_max / h;
    const double need = required_points_per_wavelength(c.order);
    if (ppw < need)
      warnings.push_back("seismic: " + num(ppw) + " points per minimum wavelength (v_min " + num(v_min) +
                         ", f_max " + num(f_max) + ", h " + num(h) + ") is fewer than the " + num(need) +
                         " that order " + std::to_string(c.order) +
                         " needs; expect numerical dispersion. Refine the grid to h <= " +
                         num(v_min / f_max / need) + " or lower the source frequency");
  }
  return warnings;
}

std::string to_string(Boundary b) {
  switch (b) {
    case Boundary::pml:
      return "pml";
    case Boundary::free_surface:
      return "free_surface";
    case Boundary::rigid:
      return "rigid";
  }
  return "unknown";
}

Boundary parse_boundary(const std::string& s, const std::string& where) {
  if (s == "pml") return Boundary::pml;
  if (s == "free_surface" || s == "free") return Boundary::free_surface;
  if (s == "rigid") return Boundary::rigid;
  throw Error(where + ": unknown boundary '" + s + "'; use pml, free_surface or rigid");
}

WaveletKind parse_wavelet(const std::string& s, const std::string& where) {
  if (s == "ricker") return WaveletKind::ricker;
  if (s == "gaussian_derivative") return WaveletKind::gaussian_derivative;
  if (s == "file") return WaveletKind::file;
  throw Error(where + ": unknown wavelet '" + s + "'; use ricker, gaussian_derivative or file");
}

ModelKind parse_model(const std::string& s, const std::string& where) {
  if (s == "constant") return ModelKind::constant;
  if (s == "layered") return ModelKind::layered;
  if (s == "gradient") return ModelKind::gradient;
  if (s == "file") return ModelKind::file;
  throw Error(where + ": unknown velocity model '" + s + "'; use constant, layered, gradient or file");
}

// ---- host helpers declared in stencil_kernels.hpp ----

CpmlCoefficients cpml_coefficients(double x, double thickness, double v_max, double reflection,
                                   double frequency, double dt) {
  constexpr double pi = 3.14159265358979323846;
  constexpr double n_power = 2.0;
  if (x <= 0.0) return {0.0, 1.0};
  const double d0 = -(n_power + 1.0) * v_max * std::log(reflection) / (2.0 * thickness);
  const double d = d0 * std::pow(x, n_power);
  const double alpha = pi * frequency * (1.0 - x);
  const double b = std::exp(-(d + alpha) * dt);
  const double a = (d + alpha) > 0.0 ? d * (b - 1.0) / (d + alpha) : 0.0;
  return {a, b};
}

void lagrange_weights(double s, long first, int count, double* weights) {
  for (int j = 0; j < count; ++j) {
    double w = 1.0;
    for (int m = 0; m < count; ++m)
      if (m != j) w *= (s - double(first + m)) / double(j - m);
    weights[j] = w;
  }
}

}  // namespace mantissa::seismic
