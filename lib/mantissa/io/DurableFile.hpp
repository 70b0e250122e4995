#pragma once
// Durable replacement of files: every file mantissa writes (HDF5 or text) is written under a
// temporary name in its own directory, flushed to the device (fsync), renamed over the final
// name and the directory flushed, so that a reader (or a crash, or a full disk) sees either
// the previous complete file or the new complete one, never half of one. On failure the
// temporary is removed, the previous file is left as it was, and a FileError names the file,
// the cause (disk full, quota, permission, read-only file system, ...) and the remedy.
//
//   io::write_file_durably(dir + "/report.json", text);       // text files, one call
//
//   io::PendingFile out(dir + "/report.h5");                   // any writer that takes a path
//   { auto f = io::H5File::create(out.temp_path()); ...; f.close(); }
//   out.commit();                                              // or, collectively:
//   io::PendingFile out(path, comm);  ... H5File::create(out.temp_path(), comm) ...  out.commit();
#include <mantissa/io/FileError.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace mantissa {
namespace io {

// Writes `content` to `path` durably (temporary, fsync, rename, fsync of the directory). The
// directory must exist. Throws FileError; the previous file stays intact.
void write_file_durably(const std::string& path, std::string_view content);

class PendingFile {
 public:
  // Serial: this process creates an empty temporary beside `path` (its directory must exist).
  explicit PendingFile(std::string path);
  // Collective over comm: rank 0 creates the temporary, every rank gets its name; a failure
  // is thrown on every rank.
  PendingFile(std::string path, MPI_Comm comm);
  // Not committed: removes the temporary (rank 0 when collective); the previous file stays.
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  const std::string& path() const { return m_path; }
  const std::string& temp_path() const { return m_tmp; }
  bool committed() const { return m_done; }

  // Flushes the temporary to the device, renames it to path() and flushes the directory.
  // Collective when constructed with a communicator (after every rank closed the file).
  // Throws FileError (on every rank) and removes the temporary when any step fails.
  void commit();
  // Removes the temporary now (as the destructor would).
  void abandon() noexcept;

 private:
  std::string m_path, m_tmp;
  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0;
  bool m_done = false;
};

// Whether a directory can take the files of a run, found by creating (and removing) a probe
// file in it, or in its nearest existing ancestor when it does not exist yet (it will be
// created), and by statvfs for the free space.
struct DirectoryCheck {
  std::string dir;      // the directory asked about
  std::string checked;  // the directory actually probed (dir or its nearest existing ancestor)
  bool writable = false;
  FileProblem problem = FileProblem::other;  // why not, when !writable or too little space
  std::uint64_t free_bytes = 0;              // available to unprivileged users
  std::string message;                       // empty when fine, else what and the remedy
  bool ok() const { return message.empty(); }
};
// bytes_needed: the estimate of what will be written there (0: only writability).
DirectoryCheck check_directory(const std::string& dir, std::uint64_t bytes_needed = 0);
// Throws FileError with check_directory's message when it is not ok. `purpose` names what
// goes there ("run directory", "checkpoint directory").
void require_directory(const std::string& dir, std::uint64_t bytes_needed, const std::string& purpose);

// Human-readable byte count ("1.5 GiB").
std::string bytes_text(std::uint64_t bytes);

}  // namespace io
}  // namespace mantissa
