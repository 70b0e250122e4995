#pragma once
// Stop requests from the batch system. Slurm sends SIGTERM at the time limit and, with
// `--signal=USR1@120`, SIGUSR1 two minutes before it. The handler only stores the signal's
// number in a lock-free atomic (async-signal-safe; it allocates, frees and calls nothing); the
// program polls it at safe points (between steps of every phase, between optimizer steps of
// training, before the run directory is touched, after the report) and all ranks agree
// (MPI_Allreduce) before anyone writes a checkpoint, so every rank stops at the same step.
//
// main() installs the handlers for the whole life of the process (install_for_process, first
// thing, before MPI_Init), so a signal during start-up or while the report is written is
// acted on at the next safe point instead of killing the process. A StopSignals object
// (tests, tools without that main) installs them for its scope when they are not installed.
#include <mpi.h>

#include <string>

namespace mantissa::workflow {

class StopSignals {
 public:
  // Installs handlers for SIGTERM and SIGUSR1 for the rest of the process; idempotent.
  static void install_for_process();
  // Installs the handlers unless install_for_process() did; the previous handlers come back on
  // destruction (then only).
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // This process received a signal (no communication).
  static bool received_local();
  // Collective: whether any rank received one; then last_signal() names it on every rank.
  static bool received(MPI_Comm comm);
  // The same, in the same one reduction, also for a stop reason of the caller's (`local`, e.g.
  // a wall-time limit): *any_local says whether any rank gave one.
  static bool received(MPI_Comm comm, bool local, bool* any_local);
  // The same with two reasons of the caller's (e.g. the wall-time limit and a checkpoint
  // interval that has passed), still one reduction.
  static bool received(MPI_Comm comm, bool local_a, bool* any_a, bool local_b, bool* any_b);
  // The signal number last received, 0 if none.
  static int last_signal();
  // "SIGTERM", "SIGUSR1" (or "signal N").
  static std::string name(int sig);
  // Tests and resume: forget a received signal.
  static void clear();
};

}  // namespace mantissa::workflow
