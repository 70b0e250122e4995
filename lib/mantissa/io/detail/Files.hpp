#pragma once
// File-system side of mantissa::io (internal): numbered file names, temporary files and the
// commit (fsync + rename) that makes a file appear under its final name only when complete.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {
namespace io {
namespace detail {

// <dir>/<prefix>-<step, 10 digits>.h5
std::string step_path(const std::string& dir, const std::string& prefix, std::int64_t step);
// Steps of the files <prefix>-<digits>.h5 in dir, ascending; none when dir does not exist.
std::vector<std::int64_t> list_steps(const std::string& dir, const std::string& prefix);
// Collective: rank 0 creates dir (with parents) and a unique empty file <dir>/<stem>XXXXXX.h5;
// every rank gets its name. Throws mantissa::Error on every rank when that fails.
std::string make_temp_file(MPI_Comm comm, const std::string& dir, const std::string& stem);
// Rank 0 only: fsync tmp (when durable), rename it to final_path, fsync the directory. Returns
// an error message, empty on success; tmp is removed on failure.
std::string commit_file(const std::string& tmp, const std::string& final_path, bool durable);
// fsync + rename + fsync(dir) (DurableFile.cpp); throws FileError naming final_path and the
// cause, tmp removed.
void commit_temp_file(const std::string& tmp, const std::string& final_path);

}  // namespace detail
}  // namespace io
}  // namespace mantissa
