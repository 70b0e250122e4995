#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/detail/Collective.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>

namespace mantissa {
namespace io {

namespace fs = std::filesystem;

namespace {

std::string parent_of(const std::string& path) {
  const fs::path p = fs::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

// The directory of `path` must exist: a missing one is more often a wrong path than a wish.
void require_parent(const std::string& path) {
  struct stat st {};
  const std::string dir = parent_of(path);
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    const FileProblem p = problem_from_errno(err);
    throw FileError(
        p, path,
        "cannot write '" + path + "': its directory '" + dir + "' " +
            (err == ENOENT ? std::string("does not exist; create it or check the path")
                           : "cannot be reached: " + cause_text(p, err) + "; " + remedy_text(p, dir)));
  }
  if (!S_ISDIR(st.st_mode))
    throw FileError(FileProblem::not_a_directory, path,
                    "cannot write '" + path + "': '" + dir + "' is not a directory; check the path");
}

// Opens a new temporary beside `path` (O_EXCL, mode 0666 & ~umask like an ordinary file).
int open_temp(const std::string& path, std::string& tmp) {
  static std::atomic<unsigned> counter{0};
  const fs::path p(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" +
                              std::to_string(counter++)))
              .string();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

int fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  // Directories on some file systems do not support fsync (EINVAL): nothing to flush there.
  return rc == EINVAL ? 0 : rc;
}

// fsync(tmp), rename(tmp, path), fsync(dir). Removes tmp and throws on failure.
void commit_temp(const std::string& tmp, const std::string& path) {
  int err = fsync_path(tmp, O_RDONLY);
  // Some MPI-IO implementations lose the ENOSPC of a collective write (Open MPI's OMPIO with
  // fcoll/dynamic_gen2 returns success on a full tmpfs): a file system left with no free
  // block at all is taken as a write that did not fit rather than renamed into place.
  struct statvfs st {};
  if (err == 0 && ::statvfs(parent_of(path).c_str(), &st) == 0 && st.f_bavail == 0 && st.f_blocks > 0) {
    ::unlink(tmp.c_str());
    throw_file_error("cannot write", path, FileProblem::disk_full, ENOSPC,
                     "no free block was left after writing it, so it may be incomplete");
  }
  std::string action = "cannot flush the new contents of";
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    action = "cannot rename the completed temporary onto";
  }
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw_errno(action, path, err);
  }
  // The rename is durable once the directory entry is on the device.
  err = fsync_path(parent_of(path), O_RDONLY | O_DIRECTORY);
  if (err != 0) throw_errno("cannot flush the directory entry of", path, err);
}

}  // namespace

namespace detail {
void commit_temp_file(const std::string& tmp, const std::string& path) {
  commit_temp(tmp, path);
}
}  // namespace detail

void write_file_durably(const std::string& path, std::string_view content) {
  require_parent(path);
  std::string tmp;
  const int fd = open_temp(path, tmp);
  if (fd < 0) throw_errno("cannot create a temporary file to write", path, errno);
  int err = 0;
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0 && err == 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno != EINTR) err = errno;
    } else {
      p += n;
      left -= std::size_t(n);
    }
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw_errno("cannot write", path, err);
  }
  commit_temp(tmp, path);
}

PendingFile::PendingFile(std::string path) : m_path(std::move(path)) {
  require_parent(m_path);
  const int fd = open_temp(m_path, m_tmp);
  if (fd < 0) throw_errno("cannot create a temporary file to write", m_path, errno);
  ::close(fd);
}

PendingFile::PendingFile(std::string path, MPI_Comm comm) : m_path(std::move(path)), m_comm(comm) {
  MPI_Comm_rank(comm, &m_rank);
  detail::CollectiveError err;
  if (m_rank == 0) {
    try {
      require_parent(m_path);
      const int fd = open_temp(m_path, m_tmp);
      if (fd < 0) throw_errno("cannot create a temporary file to write", m_path, errno);
      ::close(fd);
    } catch (const FileError& e) {
      err.set(e);
    }
  }
  err.raise(comm);
  m_tmp = detail::broadcast_string(comm, m_tmp);
}

PendingFile::~PendingFile() {
  if (!m_done) abandon();
}

void PendingFile::abandon() noexcept {
  if (m_done || m_tmp.empty()) return;
  if (m_rank == 0) ::unlink(m_tmp.c_str());
  m_done = true;
}

void PendingFile::commit() {
  if (m_done) return;
  if (m_comm == MPI_COMM_NULL) {
    m_done = true;  // commit_temp removes the temporary itself on failure
    commit_temp(m_tmp, m_path);
    return;
  }
  MPI_Barrier(m_comm);  // every rank has closed the file
  detail::CollectiveError err;
  if (m_rank == 0) {
    try {
      commit_temp(m_tmp, m_path);
    } catch (const FileError& e) {
      err.set(e);
    }
  }
  m_done = true;
  err.raise(m_comm);
}

std::string bytes_text(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

DirectoryCheck check_directory(const std::string& dir, std::uint64_t bytes_needed) {
  DirectoryCheck c;
  c.dir = dir.empty() ? std::string(".") : dir;
  // The nearest existing ancestor: a directory that does not exist yet will be created there.
  fs::path probe_dir = fs::absolute(c.dir);
  std::error_code ec;
  while (!fs::exists(probe_dir, ec) && probe_dir.has_parent_path() && probe_dir != probe_dir.parent_path())
    probe_dir = probe_dir.parent_path();
  c.checked = probe_dir.string();
  if (!fs::is_directory(probe_dir, ec)) {
    c.problem = FileProblem::not_a_directory;
    c.message = "'" + c.dir + "' cannot be created: '" + c.checked + "' is not a directory; " +
                remedy_text(c.problem, c.checked);
    return c;
  }
  const std::string probe = (probe_dir / (".mantissa-write-probe-" + std::to_string(getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST) {
    const int err = errno;
    c.problem = problem_from_errno(err);
    c.message = "cannot write in '" + c.checked + "'" +
                (c.checked != c.dir ? " (to create '" + c.dir + "')" : "") + ": " +
                cause_text(c.problem, err) + "; " + remedy_text(c.problem, c.checked);
    return c;
  }
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
  c.writable = true;
  struct statvfs st {};
  if (::statvfs(c.checked.c_str(), &st) == 0)
    c.free_bytes = std::uint64_t(st.f_bavail) * std::uint64_t(st.f_frsize);
  if (bytes_needed > 0 && c.free_bytes < bytes_needed) {
    c.problem = FileProblem::disk_full;
    c.message = "'" + c.dir + "' has " + bytes_text(c.free_bytes) + " free but the run will write about " +
                bytes_text(bytes_needed) + " there; " + remedy_text(c.problem, c.checked);
  }
  return c;
}

void require_directory(const std::string& dir, std::uint64_t bytes_needed, const std::string& purpose) {
  const DirectoryCheck c = check_directory(dir, bytes_needed);
  if (!c.ok()) throw FileError(c.problem, c.dir, purpose + ": " + c.message);
}

}  // namespace io
}  // namespace mantissa
