#pragma once
// What went wrong with a file, in words a user can act on. Every failure of mantissa's I/O
// layer (HDF5 or plain text, read or write) is thrown as a FileError: a mantissa::Error whose
// message names the file (and the dataset or attribute when there is one), the cause (disk
// full, quota, permission, read-only file system, damaged, truncated, not an HDF5 file, ...)
// and the remedy; problem() tells callers the cause without parsing the text.
#include <mantissa/core/Error.hpp>

#include <string>

namespace mantissa {
namespace io {

enum class FileProblem : int {
  other = 0,
  disk_full,        // ENOSPC
  quota,            // EDQUOT
  permission,       // EACCES, EPERM
  read_only,        // EROFS
  missing,          // ENOENT (the file or a directory on its path)
  not_a_directory,  // ENOTDIR
  io_error,         // EIO: the device failed
  not_hdf5,         // no HDF5 signature: some other kind of file
  truncated,        // shorter than the HDF5 superblock says
  damaged,          // HDF5 metadata or a checksum does not check out
  wrong_format,     // an HDF5 file, but not the mantissa format (or version) that was asked for
  missing_object,   // a group, dataset or attribute the reader needs is absent
  invalid_content,  // the values are there but unusable (NaN, out of range, wrong shape)
};

// "disk_full", "quota", ... (stable names, for logs and tests).
const char* to_string(FileProblem p);
// The problem an errno value stands for (other for values without a specific remedy).
FileProblem problem_from_errno(int err);
// The cause in words ("the file system is full (No space left on device)").
std::string cause_text(FileProblem p, int err = 0);
// What the user can do about it, for a file in `dir` ("free space in '/scratch/run' ...").
std::string remedy_text(FileProblem p, const std::string& dir);

class FileError : public Error {
 public:
  FileError(FileProblem problem, std::string path, const std::string& message)
      : Error(message), m_problem(problem), m_path(std::move(path)) {}
  FileProblem problem() const { return m_problem; }
  const std::string& path() const { return m_path; }

 private:
  FileProblem m_problem;
  std::string m_path;
};

// A FileError with the message "<action> '<path>': <cause>; <remedy>", e.g.
// "cannot write 'run/report.json': the file system is full (No space left on device); free
// space on the file system of 'run' or set run.output_dir to another one".
[[noreturn]] void throw_file_error(const std::string& action, const std::string& path, FileProblem p,
                                   int err = 0, const std::string& detail = {});
// The same from an errno value.
[[noreturn]] void throw_errno(const std::string& action, const std::string& path, int err);

}  // namespace io
}  // namespace mantissa
