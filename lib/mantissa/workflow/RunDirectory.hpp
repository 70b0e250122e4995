#pragma once
// The run directory policy. A run never silently mixes with, destroys or runs beside another:
//  - the run directory is output_dir/name and must stay inside output_dir (a name such as
//    "../../sandbox" or "/tmp/x" is refused);
//  - mantissa marks every run directory it creates with a marker file (.mantissa-run); nothing
//    unmarked is ever moved or deleted (--overwrite refuses it). Directories of earlier
//    versions, which hold nothing but the files mantissa writes, are recognised and marked;
//  - a lock (run.lock, flock(2) held by rank 0 for the life of the run, its text naming the
//    holder's host, pid and start time) refuses a second run, --resume or --overwrite while a
//    run is live; a lock left by a process that died is stale and taken over with a note;
//  - a new run into an existing run directory is refused unless --resume or --overwrite is
//    given, except when that directory holds nothing to keep (a run stopped before its first
//    checkpoint, no report): then a plain run and --resume both start it over, so that neither
//    sends the user to the other;
//  - --resume continues from the checkpoint there (<checkpoint.dir>/latest); where there is
//    nothing to continue (no directory yet, or no checkpoint and no report) it starts the run
//    from the beginning with a note, so a job script may always pass --resume; a finished run
//    without a checkpoint is refused (pass --overwrite to run it again);
//  - --overwrite moves the old directory aside first and deletes it only after the new run
//    has finished setting up (commit()), so a failed start leaves the previous results intact.
// Collective: rank 0 touches the file system, every rank gets the same answer or exception.
#include <mpi.h>

#include <string>
#include <vector>

namespace mantissa::workflow {

enum class RunMode { fresh, resume, overwrite };

class RunDirectory {
 public:
  // The run directory output_dir/name; name must not leave output_dir. checkpoint_dir: the
  // campaign's checkpoint directory relative to it (checkpoint.dir; CampaignCheckpoint writes
  // its `latest` there).
  RunDirectory(MPI_Comm comm, const std::string& output_dir, const std::string& name, RunMode mode,
               const std::string& checkpoint_dir = "checkpoints");
  // A run directory given as one path (tests, tools): the same policy without the name check.
  RunDirectory(MPI_Comm comm, const std::string& path, RunMode mode,
               const std::string& checkpoint_dir = "checkpoints");
  // Removes the moved-aside previous run (overwrite mode); call once set-up has succeeded.
  void commit();
  // On a failed start in overwrite mode: put the previous run back. Releases the lock.
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return m_path; }
  RunMode mode() const { return m_mode; }
  // Whether the campaign continues from a checkpoint (false when --resume found nothing to
  // resume and the run starts over).
  bool resume() const { return m_mode == RunMode::resume; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }
  // What the policy decided beyond the plain case (a stale lock taken over, a run started
  // over), for the run log; the same on every rank.
  const std::vector<std::string>& notes() const { return m_notes; }

  // The marker file and the lock file inside a run directory.
  static constexpr const char* marker_name = ".mantissa-run";
  static constexpr const char* lock_name = "run.lock";
  // Checks that name keeps output_dir/name inside output_dir; throws naming run.name.
  static std::string join(const std::string& output_dir, const std::string& name);

 private:
  void open(RunMode requested);
  MPI_Comm m_comm;
  std::string m_path, m_ckpt, m_aside;
  RunMode m_mode;
  bool m_committed = false;
  int m_lock_fd = -1, m_aside_lock_fd = -1;
  std::vector<std::string> m_notes;
};

}  // namespace mantissa::workflow
