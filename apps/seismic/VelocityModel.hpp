#pragma once
// Velocity models on the host: constant, layered, linear gradient, or an HDF5 file resampled
// onto the run's grid. The solver evaluates the model at its owned points once per run.
#include <seismic/Config.hpp>

#include <mpi.h>

#include <array>
#include <vector>

namespace mantissa::seismic {

// The smallest velocity a model may hold, m/s: the deck's lower bound for every velocity key
// (SeismicDeck.cpp), also applied to the values of a file model.
inline constexpr double min_velocity = 1e-9;

class VelocityModel {
 public:
  // A file model is read on rank 0 of comm (serially, through mantissa::io) and broadcast.
  // Refused with a message naming the file, dataset or attribute and the value: NaN, infinite
  // or below min_velocity velocities, a zero/negative/NaN spacing, a non-finite origin, a
  // dataset whose dimensions are not the grid's or which does not cover the mesh.
  VelocityModel(const VelocityModelConfig& config, const Grid& grid, MPI_Comm comm);
  // Velocity at a global grid index.
  double at(std::int64_t ix, std::int64_t iy, std::int64_t iz) const;
  // Velocity at a physical position (the vertical axis is the grid's last one).
  double at_position(const std::array<double, 3>& x) const;

 private:
  double base_at_position(const std::array<double, 3>& x) const;
  VelocityModelConfig m_config;
  Grid m_grid;
  // File models: the file's grid and values, (z, y, x) row major.
  std::array<std::int64_t, 3> m_fn{1, 1, 1};
  std::array<double, 3> m_forigin{0, 0, 0}, m_fspacing{1, 1, 1};
  std::vector<double> m_values;
  bool m_same_grid = false;
};

// Writes a model file in the layout VelocityModel reads (tests, examples), durably and with
// mantissa's checksum.
void write_velocity_file(const std::string& file, const std::string& dataset, const Grid& grid,
                         const std::vector<double>& values);

}  // namespace mantissa::seismic
