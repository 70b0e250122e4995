#pragma once
// Time series such as seismograms: a 2D dataset (receivers x samples) with the sampling and
// the receivers' coordinates, written either into a checkpoint (as extra datasets) or into a
// file of its own. The values come from rank 0 (from_root) or from the ranks that own the
// receivers (from_rows: each rank its block of consecutive receivers).
//
// Datasets: <name> (receivers x samples, fp64) with attributes sampling_interval, start_time,
// quantity, unit, axes = "receiver,time"; <name>_receivers (receivers x 3: x, y, z).
#include <mantissa/io/Attributes.hpp>
#include <mantissa/io/Dataset.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {
namespace io {

inline constexpr const char* time_series_format_name = "mantissa-timeseries";

struct TimeSeries {
  std::string name;
  std::string quantity;  // e.g. "pressure"
  std::string unit;      // e.g. "Pa"
  double dt = 0.0;       // sampling interval
  double t0 = 0.0;       // time of the first sample
  std::int64_t num_samples = 0;
  std::int64_t num_receivers = 0;   // global
  std::int64_t first_receiver = 0;  // of the block held here (from_rows)
  bool distributed = false;
  std::vector<double> values;       // receivers held here x num_samples, row major
  std::vector<double> coordinates;  // receivers held here x 3

  static TimeSeries from_root(std::string name, std::vector<double> values, std::vector<double> coordinates,
                              std::int64_t num_receivers, std::int64_t num_samples, double dt,
                              double t0 = 0.0);
  static TimeSeries from_rows(std::string name, std::vector<double> values, std::vector<double> coordinates,
                              std::int64_t first_receiver, std::int64_t num_receivers,
                              std::int64_t num_samples, double dt, double t0 = 0.0);

  // The two datasets, for CheckpointWriter::write(..., extra) or write_time_series_file.
  std::vector<Dataset> datasets() const;
};

// Collective: writes the series into a new file (temporary name, renamed when complete) with
// root attributes format = "mantissa-timeseries", format_version = 1 and `attrs`.
void write_time_series_file(const std::string& path, MPI_Comm comm, const std::vector<TimeSeries>& series,
                            const Attributes& attrs = {});

}  // namespace io
}  // namespace mantissa
