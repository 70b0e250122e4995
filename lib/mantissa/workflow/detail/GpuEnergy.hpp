#pragma once
// Energy of the node's GPUs from the vendor's own meter, read through the management library
// loaded at run time (dlopen), so that a build or a machine without it still runs:
//   NVIDIA: NVML (libnvidia-ml.so.1) nvmlDeviceGetTotalEnergyConsumption, mJ since driver load
//           (Volta and newer);
//   AMD:    AMD SMI (libamd_smi.so) amdsmi_get_energy_count, counts x resolution in uJ.
// Every GPU the library sees on the node is summed (it does not know which ones this job's
// ranks use; on a node lent whole that is the same). Used by EnergyMeter (Machine.cpp).
#include <string>
#include <vector>

namespace mantissa::workflow::detail {

class GpuEnergy {
 public:
  // Library names or paths to try; empty: the defaults above (tests pass a fake NVML).
  GpuEnergy(const std::string& nvml_library, const std::string& amdsmi_library);
  GpuEnergy(const GpuEnergy&) = delete;
  GpuEnergy& operator=(const GpuEnergy&) = delete;
  ~GpuEnergy();

  bool available() const { return m_available; }
  // What is measured ("NVML total energy of 1 GPU(s): NVIDIA H200"), or why nothing is
  // ("not measured: libnvidia-ml.so.1 not loadable (...); libamd_smi.so not loadable (...)").
  const std::string& source() const { return m_source; }
  // Joules since construction, summed over the GPUs; -1 if not available or a read failed.
  double joules() const;

 private:
  bool open_nvml(const std::string& lib, std::string& why);
  bool open_amdsmi(const std::string& lib, std::string& why);
  double read_total_joules() const;  // the counters' sum now, in joules; < 0 on failure

  void* m_lib = nullptr;
  enum class Kind { none, nvml, amdsmi } m_kind = Kind::none;
  std::vector<void*> m_devices;
  void* m_read = nullptr;      // nvmlDeviceGetTotalEnergyConsumption / amdsmi_get_energy_count
  void* m_shutdown = nullptr;  // nvmlShutdown / amdsmi_shut_down
  bool m_available = false;
  double m_start = 0.0;
  std::string m_source = "not measured";
};

// The process's meter with the default libraries, made on first use.
GpuEnergy& gpu_energy();

}  // namespace mantissa::workflow::detail
