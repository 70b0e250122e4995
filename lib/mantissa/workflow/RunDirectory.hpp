#pragma once
// The run directory policy. A run never silently mixes with or destroys an earlier one:
//  - a new run into an existing, non-empty directory is refused unless --resume or
//    --overwrite is given;
//  - --resume needs a checkpoint there (checkpoints/latest);
//  - --overwrite moves the old directory aside first and deletes it only after the new run
//    has finished setting up (commit()), so a failed start leaves the previous results intact.
// Collective: rank 0 touches the file system, every rank gets the same answer or exception.
#include <mpi.h>

#include <string>

namespace mantissa::workflow {

enum class RunMode { fresh, resume, overwrite };

class RunDirectory {
 public:
  RunDirectory(MPI_Comm comm, const std::string& path, RunMode mode);
  // Removes the moved-aside previous run (overwrite mode); call once set-up has succeeded.
  void commit();
  // On a failed start in overwrite mode: put the previous run back.
  ~RunDirectory();

  const std::string& path() const { return m_path; }
  RunMode mode() const { return m_mode; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }

 private:
  MPI_Comm m_comm;
  std::string m_path, m_aside;
  RunMode m_mode;
  bool m_committed = false;
};

}  // namespace mantissa::workflow
