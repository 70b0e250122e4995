#include <mantissa/core/Error.hpp>
#include <mantissa/core/Version.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <mantissa/io/TimeSeries.hpp>
#include <mantissa/io/detail/Files.hpp>
#include <mantissa/io/detail/Hdf5.hpp>

#include <filesystem>

namespace mantissa {
namespace io {

namespace fs = std::filesystem;

TimeSeries TimeSeries::from_root(std::string name, std::vector<double> values,
                                 std::vector<double> coordinates, std::int64_t num_receivers,
                                 std::int64_t num_samples, double dt, double t0) {
  TimeSeries s;
  s.name = std::move(name);
  s.values = std::move(values);
  s.coordinates = std::move(coordinates);
  s.num_receivers = num_receivers;
  s.num_samples = num_samples;
  s.dt = dt;
  s.t0 = t0;
  return s;
}

TimeSeries TimeSeries::from_rows(std::string name, std::vector<double> values,
                                 std::vector<double> coordinates, std::int64_t first_receiver,
                                 std::int64_t num_receivers, std::int64_t num_samples, double dt, double t0) {
  TimeSeries s = from_root(std::move(name), std::move(values), std::move(coordinates), num_receivers,
                           num_samples, dt, t0);
  s.first_receiver = first_receiver;
  s.distributed = true;
  return s;
}

std::vector<Dataset> TimeSeries::datasets() const {
  if (name.empty()) throw Error("time series: the name is empty");
  if (!(dt > 0.0))
    throw Error("time series '" + name + "': sampling interval " + std::to_string(dt) + " must be positive");
  Attributes a;
  a.set("sampling_interval", dt)
      .set("start_time", t0)
      .set("quantity", quantity)
      .set("unit", unit)
      .set("axes", "receiver,time");
  const std::vector<std::int64_t> dims{num_receivers, num_samples}, cdims{num_receivers, 3};
  Attributes c;
  c.set("axes", "receiver,xyz");
  if (distributed)
    return {Dataset::rows(name, values, dims, first_receiver, a),
            Dataset::rows(name + "_receivers", coordinates, cdims, first_receiver, c)};
  return {Dataset::whole(name, values, dims, a), Dataset::whole(name + "_receivers", coordinates, cdims, c)};
}

void write_time_series_file(const std::string& path, MPI_Comm comm, const std::vector<TimeSeries>& series,
                            const Attributes& attrs) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string err;
  std::vector<Dataset> all;
  try {
    for (const auto& s : series)
      for (auto& d : s.datasets()) all.push_back(std::move(d));
  } catch (const Error& e) {
    err = e.what();
  }
  detail::collective_check(comm, err);
  const fs::path p(path);
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  const std::string tmp = detail::make_temp_file(comm, dir, ".tmp-" + p.stem().string() + "-");
  const bool collective = use_collective_transfer(IoTransfer::automatic);
  try {
    detail::QuietHdf5 quiet;
    detail::Hid fapl = detail::file_access(comm);
    detail::Hid file(detail::check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
                                   "time series: cannot create '" + tmp + "'"));
    Attributes root = attrs;
    root.set("format", time_series_format_name)
        .set("format_version", std::int64_t(1))
        .set("code_version", MANTISSA_VERSION_STRING)
        .set("git_hash", MANTISSA_GIT_HASH);
    detail::write_attributes(file, root);
    for (const auto& d : all) detail::write_dataset(file, comm, rank, d, collective);
    if (file.reset() < 0) throw Error("time series: closing '" + tmp + "' failed");
  } catch (...) {
    if (rank == 0) {
      std::error_code ec;
      fs::remove(tmp, ec);
    }
    throw;
  }
  MPI_Barrier(comm);
  err.clear();
  if (rank == 0) err = detail::commit_file(tmp, path, /*durable=*/true);
  detail::collective_check(comm, err.empty() ? err : "time series: " + err);
}

}  // namespace io
}  // namespace mantissa
