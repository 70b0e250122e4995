#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/RunDirectory.hpp>

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace mantissa::workflow {

namespace {
// Rank 0 decides; the message (empty = fine) is broadcast so that every rank throws the same.
void broadcast_error(MPI_Comm comm, std::string& msg) {
  int n = static_cast<int>(msg.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  msg.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(msg.data(), n, MPI_CHAR, 0, comm);
}
}  // namespace

RunDirectory::RunDirectory(MPI_Comm comm, const std::string& path, RunMode mode)
    : m_comm(comm), m_path(path), m_mode(mode) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string err;
  if (rank == 0) {
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    const bool nonempty = exists && fs::is_directory(path, ec) && !fs::is_empty(path, ec);
    if (exists && !fs::is_directory(path, ec)) {
      err = "run directory '" + path + "' exists and is not a directory; choose another run.output_dir";
    } else if (mode == RunMode::fresh && nonempty) {
      err = "run directory '" + path +
            "' already holds a run; pass --resume to continue it or --overwrite to replace it "
            "(or choose another run.output_dir)";
    } else if (mode == RunMode::resume && !fs::exists(fs::path(path) / "checkpoints" / "latest", ec)) {
      err =
          "--resume: '" + path + "' has no checkpoint (checkpoints/latest is missing); run without --resume";
    } else {
      if (mode == RunMode::overwrite && nonempty) {
        m_aside = path + ".previous";
        fs::remove_all(m_aside, ec);
        fs::rename(path, m_aside, ec);
        if (ec) err = "--overwrite: cannot move '" + path + "' aside: " + ec.message();
      }
      if (err.empty()) {
        fs::create_directories(fs::path(path) / "checkpoints", ec);
        if (ec) err = "cannot create run directory '" + path + "': " + ec.message();
      }
    }
  }
  broadcast_error(comm, err);
  if (!err.empty()) throw Error(err);
  MPI_Barrier(comm);
}

void RunDirectory::commit() {
  int rank = 0;
  MPI_Comm_rank(m_comm, &rank);
  if (rank == 0 && !m_aside.empty()) {
    std::error_code ec;
    fs::remove_all(m_aside, ec);
  }
  m_committed = true;
}

RunDirectory::~RunDirectory() {
  if (m_committed || m_aside.empty()) return;
  int rank = 0, finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_rank(m_comm, &rank);
  if (rank != 0) return;
  std::error_code ec;
  fs::remove_all(m_path, ec);
  fs::rename(m_aside, m_path, ec);
}

}  // namespace mantissa::workflow
