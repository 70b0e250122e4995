#pragma once
// Stop requests from the batch system. Slurm sends SIGTERM at the time limit and, with
// `--signal=USR1@120`, SIGUSR1 two minutes before it. The handler only sets a flag; the
// campaign polls it between steps and all ranks agree (MPI_Allreduce) before anyone writes a
// checkpoint, so every rank stops at the same step.
#include <mpi.h>

namespace mantissa::workflow {

class StopSignals {
 public:
  // Installs handlers for SIGTERM and SIGUSR1; the previous handlers come back on destruction.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // This process received a signal (no communication).
  static bool received_local();
  // Collective: whether any rank received one.
  static bool received(MPI_Comm comm);
  // The signal number last received, 0 if none.
  static int last_signal();
  // Tests and resume: forget a received signal.
  static void clear();
};

}  // namespace mantissa::workflow
