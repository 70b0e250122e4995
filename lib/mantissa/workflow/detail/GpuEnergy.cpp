#include <mantissa/workflow/detail/GpuEnergy.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <string>

namespace mantissa::workflow::detail {

namespace {
// The few entry points used, declared as the vendors' C headers declare them (no header needed
// at build time: nvml.h / amdsmi.h are not on every build machine).
using nvml_return = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using nvml_init_fn = nvml_return (*)();
using nvml_count_fn = nvml_return (*)(unsigned int*);
using nvml_handle_fn = nvml_return (*)(unsigned int, void**);
using nvml_name_fn = nvml_return (*)(void*, char*, unsigned int);
using nvml_energy_fn = nvml_return (*)(void*, unsigned long long*);
using nvml_error_fn = const char* (*)(nvml_return);
using nvml_shutdown_fn = nvml_return (*)();

using amdsmi_status = int;  // amdsmi_status_t; 0 is AMDSMI_STATUS_SUCCESS
using amdsmi_init_fn = amdsmi_status (*)(std::uint64_t);
using amdsmi_sockets_fn = amdsmi_status (*)(std::uint32_t*, void**);
using amdsmi_procs_fn = amdsmi_status (*)(void*, std::uint32_t*, void**);
using amdsmi_energy_fn = amdsmi_status (*)(void*, std::uint64_t*, float*, std::uint64_t*);
using amdsmi_shutdown_fn = amdsmi_status (*)();
constexpr std::uint64_t amdsmi_init_amd_gpus = 1u << 1;  // AMDSMI_INIT_AMD_GPUS

template <class Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

std::string dl_reason() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dlopen error");
}
}  // namespace

GpuEnergy::GpuEnergy(const std::string& nvml_library, const std::string& amdsmi_library) {
  std::string why_nvml, why_amd;
  const std::string nvml = nvml_library.empty() ? "libnvidia-ml.so.1" : nvml_library;
  const std::string amd = amdsmi_library.empty() ? "libamd_smi.so" : amdsmi_library;
  if (!open_nvml(nvml, why_nvml) && !open_amdsmi(amd, why_amd)) {
    m_source = "not measured: " + why_nvml + "; " + why_amd;
    return;
  }
  m_start = read_total_joules();
  if (m_start < 0.0) {
    m_available = false;
    m_source = "not measured: the GPU energy counter could not be read at start";
    return;
  }
  m_available = true;
}

bool GpuEnergy::open_nvml(const std::string& lib, std::string& why) {
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    why = lib + " not loadable (" + dl_reason() + ")";
    return false;
  }
  auto init = symbol<nvml_init_fn>(h, "nvmlInit_v2");
  auto count = symbol<nvml_count_fn>(h, "nvmlDeviceGetCount_v2");
  auto handle = symbol<nvml_handle_fn>(h, "nvmlDeviceGetHandleByIndex_v2");
  auto name = symbol<nvml_name_fn>(h, "nvmlDeviceGetName");
  auto energy = symbol<nvml_energy_fn>(h, "nvmlDeviceGetTotalEnergyConsumption");
  auto error = symbol<nvml_error_fn>(h, "nvmlErrorString");
  auto shutdown = symbol<nvml_shutdown_fn>(h, "nvmlShutdown");
  if (!init || !count || !handle || !energy || !shutdown) {
    why = lib + " lacks the NVML entry points (nvmlInit_v2, nvmlDeviceGetTotalEnergyConsumption, ...)";
    dlclose(h);
    return false;
  }
  auto err = [&](nvml_return r) { return error ? std::string(error(r)) : "NVML error " + std::to_string(r); };
  if (const nvml_return r = init(); r != 0) {
    why = "NVML init failed (" + err(r) + ")";
    dlclose(h);
    return false;
  }
  unsigned int n = 0;
  if (const nvml_return r = count(&n); r != 0 || n == 0) {
    why = r != 0 ? "NVML device count failed (" + err(r) + ")" : "NVML sees no GPU";
    shutdown();
    dlclose(h);
    return false;
  }
  std::string names;
  for (unsigned int i = 0; i < n; ++i) {
    void* dev = nullptr;
    unsigned long long mj = 0;
    nvml_return r = handle(i, &dev);
    if (r == 0) r = energy(dev, &mj);
    if (r != 0) {
      why = "NVML GPU " + std::to_string(i) + " has no energy counter (" + err(r) +
            "; nvmlDeviceGetTotalEnergyConsumption needs Volta or newer)";
      shutdown();
      dlclose(h);
      return false;
    }
    char buf[96] = {};
    if (name && name(dev, buf, sizeof(buf)) == 0) names += (names.empty() ? "" : ", ") + std::string(buf);
    m_devices.push_back(dev);
  }
  m_lib = h;
  m_kind = Kind::nvml;
  m_read = reinterpret_cast<void*>(energy);
  m_shutdown = reinterpret_cast<void*>(shutdown);
  m_source = "NVML total energy (nvmlDeviceGetTotalEnergyConsumption) of " + std::to_string(n) +
             " GPU(s) of the node" + (names.empty() ? "" : ": " + names);
  return true;
}

bool GpuEnergy::open_amdsmi(const std::string& lib, std::string& why) {
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    why = lib + " not loadable (" + dl_reason() + ")";
    return false;
  }
  auto init = symbol<amdsmi_init_fn>(h, "amdsmi_init");
  auto sockets = symbol<amdsmi_sockets_fn>(h, "amdsmi_get_socket_handles");
  auto procs = symbol<amdsmi_procs_fn>(h, "amdsmi_get_processor_handles");
  auto energy = symbol<amdsmi_energy_fn>(h, "amdsmi_get_energy_count");
  auto shutdown = symbol<amdsmi_shutdown_fn>(h, "amdsmi_shut_down");
  if (!init || !sockets || !procs || !energy || !shutdown) {
    why = lib + " lacks the AMD SMI entry points (amdsmi_init, amdsmi_get_energy_count, ...)";
    dlclose(h);
    return false;
  }
  if (const amdsmi_status s = init(amdsmi_init_amd_gpus); s != 0) {
    why = "AMD SMI init failed (status " + std::to_string(s) + ")";
    dlclose(h);
    return false;
  }
  std::uint32_t ns = 0;
  std::vector<void*> socks;
  if (sockets(&ns, nullptr) == 0 && ns > 0) {
    socks.resize(ns);
    if (sockets(&ns, socks.data()) != 0) socks.clear();
  }
  for (void* s : socks) {
    std::uint32_t np = 0;
    if (procs(s, &np, nullptr) != 0 || np == 0) continue;
    std::vector<void*> p(np);
    if (procs(s, &np, p.data()) != 0) continue;
    for (std::uint32_t i = 0; i < np; ++i) {
      std::uint64_t acc = 0, ts = 0;
      float res = 0.0f;
      if (energy(p[i], &acc, &res, &ts) == 0) m_devices.push_back(p[i]);
    }
  }
  if (m_devices.empty()) {
    why = "AMD SMI sees no GPU with an energy counter";
    shutdown();
    dlclose(h);
    return false;
  }
  m_lib = h;
  m_kind = Kind::amdsmi;
  m_read = reinterpret_cast<void*>(energy);
  m_shutdown = reinterpret_cast<void*>(shutdown);
  m_source = "AMD SMI energy counter (amdsmi_get_energy_count) of " + std::to_string(m_devices.size()) +
             " GPU(s) of the node";
  return true;
}

double GpuEnergy::read_total_joules() const {
  double total = 0.0;
  for (void* dev : m_devices) {
    if (m_kind == Kind::nvml) {
      unsigned long long mj = 0;
      if (reinterpret_cast<nvml_energy_fn>(m_read)(dev, &mj) != 0) return -1.0;
      total += static_cast<double>(mj) * 1e-3;
    } else {
      std::uint64_t acc = 0, ts = 0;
      float res = 0.0f;
      if (reinterpret_cast<amdsmi_energy_fn>(m_read)(dev, &acc, &res, &ts) != 0) return -1.0;
      total += static_cast<double>(acc) * static_cast<double>(res) * 1e-6;
    }
  }
  return total;
}

double GpuEnergy::joules() const {
  if (!m_available) return -1.0;
  const double now = read_total_joules();
  return now < 0.0 ? -1.0 : now - m_start;
}

GpuEnergy::~GpuEnergy() {
  if (m_lib == nullptr) return;
  if (m_kind == Kind::nvml) reinterpret_cast<nvml_shutdown_fn>(m_shutdown)();
  if (m_kind == Kind::amdsmi) reinterpret_cast<amdsmi_shutdown_fn>(m_shutdown)();
  dlclose(m_lib);
}

GpuEnergy& gpu_energy() {
  static GpuEnergy meter("", "");
  return meter;
}

}  // namespace mantissa::workflow::detail
