#pragma once
// Hierarchical named timers. A ScopedTimer opens a region whose path is the path of the
// enclosing region plus its name ("run/seismic::step/halo"), pushes a Kokkos profiling region
// (so Kokkos Tools show the same tree) and, when fencing is on, fences the device before
// start and stop so that asynchronous device work is charged to the region that launched it.
// summary() reduces over ranks (count, and min/avg/max of each region's total time) and
// prints as a table or JSON. Timers are for the host thread that drives the run; they are
// not thread-safe.
//
//   { mantissa::ScopedTimer t("seismic::step"); ... }
#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mantissa {

class Timers {
 public:
  // Local (this rank's) record of one region.
  struct Entry {
    std::string path;
    std::int64_t count = 0;
    double total = 0.0, min = 0.0, max = 0.0;  // seconds; min/max per call
  };
  // One region over all ranks.
  struct Row {
    std::string path, name;
    int depth = 0;
    int ranks = 0;                                             // ranks that entered the region
    std::int64_t count = 0;                                    // calls, summed over ranks
    double total_min = 0.0, total_avg = 0.0, total_max = 0.0;  // a rank's total, over ranks
    double call_min = 0.0, call_max = 0.0;                     // one call, over ranks
  };

  // The process-wide timers every ScopedTimer uses by default.
  static Timers& global();

  void set_fence(bool fence) { m_fence = fence; }
  bool fence() const { return m_fence; }

  void start(const std::string& name);
  // Stops the innermost open region, which must be `name`.
  void stop(const std::string& name);
  // Forgets all records; no region may be open.
  void reset();

  // Regions in the order they were first entered (parents before children).
  std::vector<Entry> entries() const;
  const std::string& current_path() const { return m_path; }

  // Collective over comm: every rank gets all rows, in the order of first entry on the lowest
  // rank that has them, regions only some ranks have included.
  std::vector<Row> summary(MPI_Comm comm = MPI_COMM_WORLD) const;
  static std::string table(const std::vector<Row>& rows);
  // {"ranks": N, "fenced": b, "regions": [{"path": ..., "count": ..., ...}, ...]}
  std::string json(const std::vector<Row>& rows, int ranks) const;

 private:
  struct Open {
    std::string name;
    double start;
  };
  bool m_fence = false;
  std::string m_path;
  std::vector<Open> m_open;
  std::vector<std::string> m_order;
  std::map<std::string, Entry> m_entries;
};

class ScopedTimer {
 public:
  explicit ScopedTimer(const std::string& name, Timers& timers = Timers::global());
  ~ScopedTimer();
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Timers& m_timers;
  std::string m_name;
};

}  // namespace mantissa
