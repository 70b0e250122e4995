// A stand-in for NVML (libnvidia-ml.so.1) exporting the entry points detail::GpuEnergy loads,
// so that the measured path is tested on machines without an NVIDIA driver. Its state is set
// by the test through mantissa_fake_nvml_set (found with dlsym on the same library).
#include <cstring>

namespace {
int g_init_rc = 0, g_energy_rc = 0, g_count = 1;
unsigned long long g_mj = 0;
int g_devices[8];
}  // namespace

extern "C" {
// init_rc / energy_rc: what nvmlInit_v2 / nvmlDeviceGetTotalEnergyConsumption return; device i
// reports (i + 1) * mj millijoules.
void mantissa_fake_nvml_set(int init_rc, int count, int energy_rc, unsigned long long mj) {
  g_init_rc = init_rc;
  g_count = count;
  g_energy_rc = energy_rc;
  g_mj = mj;
}
int nvmlInit_v2() {
  return g_init_rc;
}
int nvmlShutdown() {
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = static_cast<unsigned int>(g_count);
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** dev) {
  if (i >= 8) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *dev = &g_devices[i];
  return 0;
}
int nvmlDeviceGetName(void* dev, char* name, unsigned int len) {
  const int i = static_cast<int>(static_cast<int*>(dev) - g_devices);
  std::strncpy(name, i == 0 ? "Fake H200" : "Fake H200 (second)", len - 1);
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void* dev, unsigned long long* mj) {
  const int i = static_cast<int>(static_cast<int*>(dev) - g_devices);
  *mj = static_cast<unsigned long long>(i + 1) * g_mj;
  return g_energy_rc;
}
const char* nvmlErrorString(int rc) {
  if (rc == 3) return "Not Supported";
  if (rc == 9) return "Driver Not Loaded";
  return "Unknown Error";
}
}
