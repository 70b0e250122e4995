#include <mantissa/io/detail/Files.hpp>
#include <mantissa/io/detail/Hdf5.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace mantissa {
namespace io {
namespace detail {

namespace fs = std::filesystem;

std::string step_path(const std::string& dir, const std::string& prefix, std::int64_t step) {
  char num[32];
  std::snprintf(num, sizeof num, "%010lld", static_cast<long long>(step));
  return (fs::path(dir) / (prefix + "-" + num + ".h5")).string();
}

std::vector<std::int64_t> list_steps(const std::string& dir, const std::string& prefix) {
  std::vector<std::int64_t> steps;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return steps;
  const std::string head = prefix + "-";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= head.size() + 3 || name.compare(0, head.size(), head) != 0) continue;
    if (name.compare(name.size() - 3, 3, ".h5") != 0) continue;
    const std::string digits = name.substr(head.size(), name.size() - head.size() - 3);
    if (digits.empty() ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    steps.push_back(std::stoll(digits));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::string make_temp_file(MPI_Comm comm, const std::string& dir, const std::string& stem) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string err, name;
  if (rank == 0) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      err = "cannot create directory '" + dir + "': " + ec.message() + "; check the path and its permissions";
    } else {
      std::string templ = (fs::path(dir) / (stem + "XXXXXX.h5")).string();
      const int fd = mkstemps(templ.data(), 3);
      if (fd < 0)
        err = "cannot create a temporary file in '" + dir + "': " + std::strerror(errno) +
              "; check free space and permissions";
      else {
        close(fd);
        name = templ;
      }
    }
  }
  collective_check(comm, err);
  int len = int(name.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  name.resize(std::size_t(len));
  MPI_Bcast(name.data(), len, MPI_CHAR, 0, comm);
  return name;
}

namespace {
bool fsync_path(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags);
  if (fd < 0) return false;
  const bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}
}  // namespace

std::string commit_file(const std::string& tmp, const std::string& final_path, bool durable) {
  if (durable) {
    try {
      commit_temp_file(tmp, final_path);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  std::string err;
  if (durable && !fsync_path(tmp, O_RDONLY))
    err = "cannot flush '" + tmp + "' to disk: " + std::strerror(errno);
  if (err.empty() && std::rename(tmp.c_str(), final_path.c_str()) != 0)
    err = "cannot rename '" + tmp + "' to '" + final_path + "': " + std::strerror(errno);
  if (!err.empty()) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return err;
  }
  // The rename itself is durable only once the directory entry is on disk.
  if (durable)
    fsync_path(fs::path(final_path).parent_path().empty() ? "." : fs::path(final_path).parent_path().string(),
               O_RDONLY | O_DIRECTORY);
  return err;
}

}  // namespace detail
}  // namespace io
}  // namespace mantissa
