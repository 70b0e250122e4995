#include <mantissa/io/FileError.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mantissa {
namespace io {

const char* to_string(FileProblem p) {
  switch (p) {
    case FileProblem::other:
      return "other";
    case FileProblem::disk_full:
      return "disk_full";
    case FileProblem::quota:
      return "quota";
    case FileProblem::permission:
      return "permission";
    case FileProblem::read_only:
      return "read_only";
    case FileProblem::missing:
      return "missing";
    case FileProblem::not_a_directory:
      return "not_a_directory";
    case FileProblem::io_error:
      return "io_error";
    case FileProblem::not_hdf5:
      return "not_hdf5";
    case FileProblem::truncated:
      return "truncated";
    case FileProblem::damaged:
      return "damaged";
    case FileProblem::wrong_format:
      return "wrong_format";
    case FileProblem::missing_object:
      return "missing_object";
    case FileProblem::invalid_content:
      return "invalid_content";
  }
  return "other";
}

FileProblem problem_from_errno(int err) {
  switch (err) {
    case ENOSPC:
      return FileProblem::disk_full;
#ifdef EDQUOT
    case EDQUOT:
      return FileProblem::quota;
#endif
    case EACCES:
    case EPERM:
      return FileProblem::permission;
    case EROFS:
      return FileProblem::read_only;
    case ENOENT:
      return FileProblem::missing;
    case ENOTDIR:
      return FileProblem::not_a_directory;
    case EIO:
      return FileProblem::io_error;
    default:
      return FileProblem::other;
  }
}

std::string cause_text(FileProblem p, int err) {
  const std::string sys = err != 0 ? std::string(" (") + std::strerror(err) + ")" : std::string();
  switch (p) {
    case FileProblem::disk_full:
      return "the file system is full" + sys;
    case FileProblem::quota:
      return "your disk quota is exhausted" + sys;
    case FileProblem::permission:
      return "permission denied" + sys;
    case FileProblem::read_only:
      return "the file system is read-only" + sys;
    case FileProblem::missing:
      return "it does not exist" + sys;
    case FileProblem::not_a_directory:
      return "a component of the path is not a directory" + sys;
    case FileProblem::io_error:
      return "the storage device reported an I/O error" + sys;
    case FileProblem::not_hdf5:
      return "it is not an HDF5 file";
    case FileProblem::truncated:
      return "the file is truncated (shorter than its HDF5 header says; an interrupted copy or write?)";
    case FileProblem::damaged:
      return "the file is damaged";
    case FileProblem::wrong_format:
      return "it is not a file of the expected kind";
    case FileProblem::missing_object:
      return "an expected object is missing";
    case FileProblem::invalid_content:
      return "its content is invalid";
    case FileProblem::other:
      break;
  }
  return err != 0 ? std::string(std::strerror(err)) : std::string("unknown cause");
}

std::string remedy_text(FileProblem p, const std::string& dir) {
  const std::string where = "'" + (dir.empty() ? std::string(".") : dir) + "'";
  switch (p) {
    case FileProblem::disk_full:
      return "free space on the file system of " + where + " or write to another one (run.output_dir)";
    case FileProblem::quota:
      return "free space within your quota (check it with 'quota -s' or your centre's tool) or write "
             "to a file system with more quota (run.output_dir)";
    case FileProblem::permission:
      return "check the permissions of " + where + " (ls -ld) or write somewhere you own";
    case FileProblem::read_only:
      return where + " is on a read-only file system; write to a writable one (run.output_dir)";
    case FileProblem::missing:
      return "check the path";
    case FileProblem::not_a_directory:
      return "check the path: a file stands where a directory is expected";
    case FileProblem::io_error:
      return "check the storage device (dmesg) and retry on healthy storage";
    case FileProblem::not_hdf5:
      return "give the path of an HDF5 file (h5dump -H shows whether a file is one)";
    case FileProblem::truncated:
    case FileProblem::damaged:
      return "use an intact copy (an earlier checkpoint, or the file re-copied or re-written)";
    case FileProblem::wrong_format:
      return "give a file written by this mantissa for this purpose";
    case FileProblem::missing_object:
    case FileProblem::invalid_content:
      return "fix or re-create the file";
    case FileProblem::other:
      break;
  }
  return "check the file and its directory";
}

void throw_file_error(const std::string& action, const std::string& path, FileProblem p, int err,
                      const std::string& detail) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::string msg = action + " '" + path + "': " + cause_text(p, err);
  if (!detail.empty()) msg += " [" + detail + "]";
  msg += "; " + remedy_text(p, dir);
  throw FileError(p, path, msg);
}

void throw_errno(const std::string& action, const std::string& path, int err) {
  throw_file_error(action, path, problem_from_errno(err), err);
}

}  // namespace io
}  // namespace mantissa
