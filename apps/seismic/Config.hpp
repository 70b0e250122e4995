#pragma once
// Configuration of the acoustic wave solver (issue 3). Filled from the deck's `seismic:` and
// `mesh:` sections by config_from_deck, or directly in tests.
//
// Conventions: axis 0 is x, 1 is y, 2 is z. The vertical axis is the last one of the grid
// (y in 2D, z in 3D) and grows downwards, so "top" is the low side of the vertical axis.
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/Grid.hpp>

#include <array>
#include <string>
#include <vector>

namespace mantissa::seismic {

// What happens at one side of the domain.
//  - pml: convolutional PML (Komatitsch and Martin 2007) of Config::pml_cells cells;
//  - free_surface: pressure zero on the boundary plane (antisymmetric image, Levander 1988);
//  - rigid: zero normal derivative (symmetric image), which conserves the discrete energy.
enum class Boundary { pml, free_surface, rigid };

enum class WaveletKind { ricker, gaussian_derivative, file };

struct Source {
  std::array<double, 3> position{0.0, 0.0, 0.0};  // physical coordinates, need not be grid points
  WaveletKind wavelet = WaveletKind::ricker;
  double frequency = 10.0;  // peak frequency of the Ricker / Gaussian derivative [Hz]
  double delay = -1.0;      // time of the wavelet's centre; < 0 chooses 1.5 / frequency
  double amplitude = 1.0;
  std::string file;  // WaveletKind::file: two columns "time value" per line, linear interpolation
};

struct Shot {
  std::vector<Source> sources;
};

enum class ModelKind { constant, layered, gradient, file };

// An ellipsoidal body of constant velocity laid over the base model (e.g. a salt body).
struct VelocityBody {
  std::array<double, 3> center{0.0, 0.0, 0.0};
  std::array<double, 3> radii{1.0, 1.0, 1.0};
  double velocity = 4500.0;
};

struct VelocityModelConfig {
  ModelKind kind = ModelKind::constant;
  double velocity = 1500.0;          // constant
  std::vector<double> interfaces;    // layered: depths of the interfaces, increasing
  std::vector<double> velocities;    // layered: one more than interfaces, top to bottom
  double top_velocity = 1500.0;      // gradient: velocity at depth 0 ...
  double gradient = 0.0;             // ... increasing by this much per unit depth
  std::string file;                  // file: HDF5 file holding a (z, y, x) dataset
  std::string dataset = "velocity";  // with attributes "origin" and "spacing" (x, y, z)
  std::vector<VelocityBody> bodies;  // over any base model, later bodies on top
};

struct Config {
  int order = 8;         // spatial order: 2, 4, 6 or 8
  double dt = 0.0;       // time step; 0 chooses courant * the largest stable dt
  double courant = 0.5;  // fraction of the largest stable dt when dt == 0
  int steps = 1000;      // steps per shot
  // boundary[axis][0 = low, 1 = high]; only the first dim axes are used.
  std::array<std::array<Boundary, 2>, 3> boundary{
      {{Boundary::pml, Boundary::pml}, {Boundary::pml, Boundary::pml}, {Boundary::pml, Boundary::pml}}};
  int pml_cells = 20;
  double pml_reflection = 1e-3;  // target reflection coefficient of the layer (R in K&M 2007)
  double pml_frequency = 0.0;    // frequency for the CFS alpha; 0 takes the highest source peak
  std::vector<Shot> shots;
  std::vector<std::array<double, 3>> receivers;
  int record_every = 1;  // traces sample every k steps
  VelocityModelConfig velocity;
  Precision storage = Precision::fp64;
  Precision compute = Precision::fp64;
  bool quiet = false;  // do not print warnings to stderr (they are still collected)
};

// Radius of the centred stencil (order / 2).
inline int stencil_radius(const Config& c) {
  return c.order / 2;
}

// The largest stable leapfrog time step for the given order, grid and maximum velocity:
// dt_max = 2 / (v_max * sqrt(sum_a s / h_a^2)), where s is the largest eigenvalue of the 1D
// second-difference stencil (its symbol at the Nyquist wavenumber).
double stable_dt(int order, const Grid& grid, double v_max);

// Points per minimum wavelength that an order needs for the dispersion error to stay small.
double required_points_per_wavelength(int order);

// Highest frequency to resolve: 2.5 x the peak frequency for Ricker / Gaussian derivative
// (their spectra are down to ~3% there); for a file wavelet, the frequency field is used.
double max_frequency(const Config& c);

// Checks a configuration against the grid and the velocity range. Throws mantissa::Error for
// what cannot run (order, CFL, receivers outside, ...); returns warnings for what runs but is
// doubtful (too few points per wavelength), each with the numbers.
std::vector<std::string> check_config(const Config& c, const Grid& grid, double v_min, double v_max);

// The time step the solver uses (config.dt, or courant * stable_dt when dt == 0).
double effective_dt(const Config& c, const Grid& grid, double v_max);

std::string to_string(Boundary b);
Boundary parse_boundary(const std::string& s, const std::string& where);
WaveletKind parse_wavelet(const std::string& s, const std::string& where);
ModelKind parse_model(const std::string& s, const std::string& where);

}  // namespace mantissa::seismic
