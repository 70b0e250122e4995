#pragma once
// What the report says about the machine, and the two meters the campaign reads: the memory
// high-water mark (getrusage) and energy (RAPL through /sys/class/powercap when readable).
// No meter, no number: the report then says "not measured".
#include <mpi.h>

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

}  // namespace mantissa::workflow
