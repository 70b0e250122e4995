#pragma once
// What a deck will cost before anything is allocated: memory per rank (the physics on the
// device, what the campaign keeps on the host per sample and per step, what rank 0 gathers),
// the files it writes and the work. `mantissa check` prints it; `mantissa run` refuses, naming
// the keys and the estimate, what cannot fit on the ranks' hosts or in the run directory's
// file system, before the first allocation. Step counts from run.end_time are overflow-checked.
//
// A physics says its bytes per grid point here (physics_footprint, keyed by the deck's physics
// name like the registry); an unknown physics is estimated at 16 fp64 fields per point.
#include <mantissa/core/Deck.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::app {

struct EstimateLine {
  std::string what;  // "reference snapshots (host)"
  std::string keys;  // the deck keys that set it
  double bytes = 0.0;
};

struct RunEstimate {
  int ranks = 1;
  double local_points = 0.0;         // the largest rank's points including ghost cells
  double global_points = 0.0;        // without ghosts
  std::int64_t steps = 0;            // physics steps of the reference (0: set by run.end_time at run time)
  std::vector<EstimateLine> device;  // per rank, the largest phase: one model at a time
  std::vector<EstimateLine> host;    // per rank, kept on the host by the campaign
  std::vector<EstimateLine> root;    // rank 0 in addition
  double disk_bytes = 0.0;           // the run directory at most (checkpoints kept + report)
  double cell_updates = 0.0;         // grid point updates of all phases
  bool device_is_host = true;        // the default memory space is host memory

  double device_bytes() const;
  double host_bytes() const;
  double root_bytes() const;
  // Lines for `mantissa check` ("  memory ...", "  disk ...", "  work ...").
  std::string summary() const;
};

// ranks: the ranks the run will have; steps: the reference's steps (0 when run.end_time sets
// them and the time step is not known yet: the per-step items are then left out).
RunEstimate estimate_run(const Deck& deck, int ranks, std::int64_t steps);

// Collective: refuses (mantissa::Error naming the keys and the numbers) an estimate that does
// not fit in the memory available on the ranks' hosts (MemAvailable and the cgroup limit,
// shared by the ranks of a host).
void check_memory(const RunEstimate& e, MPI_Comm comm);

// Collective: refuses an estimate whose files do not fit in the free space of dir's file system.
void check_disk(const RunEstimate& e, const std::string& dir, MPI_Comm comm);

// ceil(end_time / dt) as a step count, refusing (naming run.end_time) a count that is not
// finite or beyond what the physics counts (2^31 - 1 steps).
std::int64_t checked_steps(double end_time, double dt);

// Bytes of host memory this process may still use: min(MemAvailable, cgroup limit - usage).
double available_host_bytes();

}  // namespace mantissa::app
