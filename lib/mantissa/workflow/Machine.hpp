#pragma once
// What the report says about the machine, and the two meters the campaign reads: the memory
// high-water mark (getrusage) and energy (RAPL through /sys/class/powercap when readable).
// No meter, no number: the report then says "not measured".
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mantissa::workflow {

struct MachineInfo {
  std::string hostname;  // rank 0's
  int nodes = 1;
  std::string cpu;      // /proc/cpuinfo "model name" of rank 0
  int cores = 0;        // hardware threads visible to rank 0
  std::string backend;  // Kokkos default execution space
  std::vector<std::string> devices;
  std::string kokkos_version, mpi_version, hdf5_version;
  int ranks = 1;
  int threads_per_rank = 1;  // Kokkos concurrency of the default execution space
};
MachineInfo machine_info(MPI_Comm comm);

// Process peak resident memory in MiB, max over the ranks of comm (collective).
double memory_hwm_mib(MPI_Comm comm);

// Package energy from Intel/AMD RAPL (powercap). One reader per node (the node's first rank)
// so that ranks sharing a package do not count it twice; totals are summed over nodes.
class EnergyMeter {
 public:
  explicit EnergyMeter(MPI_Comm comm);
  bool available() const { return m_available; }
  std::string source() const { return m_source; }
  // Collective. Joules since the last call to start(); negative if not available.
  void start();
  double joules();

 private:
  double read_local() const;  // this node's counter in joules (handles wrap-around)
  MPI_Comm m_comm;
  bool m_is_reader = false, m_available = false;
  std::vector<std::string> m_files;
  std::vector<double> m_max_range;
  mutable std::vector<double> m_last;
  mutable double m_accum = 0.0;
  double m_start = 0.0;
  std::string m_source = "not measured";
};

// The machine's own bounds, measured in the same job as the numbers they bound (STYLE.md #21).
//
// STREAM triad (McCalpin, stream.c): a(i) = b(i) + s c(i) in fp64 on the default execution
// space, 24 bytes per element counted by hand (no write-allocate counted), every rank at once
// between barriers, so the total is what the ranks of one job get together from the memory they
// share. Best of `repeats` (STREAM's convention: the bound is the best the machine did).
struct TriadBound {
  std::size_t elements = 0;  // per array, per rank
  int repeats = 0;
  double seconds = 0.0;           // best repeat, slowest rank
  double total_gbs = 0.0;         // 24 B x elements x ranks / seconds
  double rank_gbs_min = 0.0;      // each rank's own best, min over ranks (GB/s)
  double rank_gbs_max = 0.0;      // and max over ranks
  double median_total_gbs = 0.0;  // the median repeat, for the spread
  int ranks = 1;
  std::string where;  // "OpenMP, 2 ranks x 1 threads"
};
// Collective. elements: per array per rank (3 arrays of fp64: 192 MiB at the default, well
// beyond the last-level caches of today's CPUs; on a GPU also beyond L2).
TriadBound measure_triad(MPI_Comm comm, std::size_t elements = std::size_t(1) << 23, int repeats = 10);

// The fixed cost of one kernel launch followed by a fence on the default execution space (an
// empty parallel_for over one element), median of `launches`, in seconds. What a step pays per
// launch however small its grid; collective only in that every rank measures at once.
double measure_launch_seconds(MPI_Comm comm, int launches = 200);

}  // namespace mantissa::workflow
