#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/detail/GpuEnergy.hpp>

#include <hdf5.h>
#include <sys/resource.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

namespace mantissa::workflow {

MachineInfo machine_info(MPI_Comm comm) {
  MachineInfo m;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  m.hostname = host;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos) m.cpu = line.substr(c + 2);
      break;
    }
  }
  m.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  m.backend = Kokkos::DefaultExecutionSpace::name();
  m.devices.push_back(m.backend == std::string("OpenMP") || m.backend == std::string("Serial")
                          ? (m.cpu.empty() ? std::string("host CPU") : m.cpu)
                          : m.backend + " device (see Kokkos::print_configuration)");
  m.kokkos_version = kokkos_version_string();
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  m.mpi_version = std::string(lib, static_cast<std::size_t>(len));
  while (!m.mpi_version.empty() && (m.mpi_version.back() == '\n' || m.mpi_version.back() == '\0'))
    m.mpi_version.pop_back();
  const auto comma = m.mpi_version.find(',');
  if (comma != std::string::npos) m.mpi_version.resize(comma);
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  m.hdf5_version = std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
  MPI_Comm_size(comm, &m.ranks);
  m.threads_per_rank = concurrency(Kokkos::DefaultExecutionSpace());
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0, leaders = 0;
  MPI_Comm_rank(node, &node_rank);
  int leader = node_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, comm);
  m.nodes = leaders;
  MPI_Comm_free(&node);
  return m;
}

double memory_hwm_mib(MPI_Comm comm) {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double local = static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
  double global = 0.0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
  return global;
}

namespace {
bool read_number(const std::string& file, double& v) {
  std::ifstream in(file);
  return static_cast<bool>(in >> v);
}
}  // namespace

EnergyMeter::EnergyMeter(MPI_Comm comm) : m_comm(comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  m_is_reader = node_rank == 0;
  int ok = 1;
  if (m_is_reader) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // Top-level packages only (intel-rapl:0, intel-rapl:1; not the sub-zones intel-rapl:0:0,
    // which the package already contains).
    for (const auto& e : fs::directory_iterator("/sys/class/powercap", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("intel-rapl:", 0) != 0 || name.find(':', 11) != std::string::npos) continue;
      double v = 0.0, range = 0.0;
      if (read_number((e.path() / "energy_uj").string(), v) &&
          read_number((e.path() / "max_energy_range_uj").string(), range)) {
        m_files.push_back((e.path() / "energy_uj").string());
        m_max_range.push_back(range);
        m_last.push_back(v);
      }
    }
    ok = m_files.empty() && !detail::gpu_energy().available() ? 0 : 1;
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  m_available = all != 0;
  // The GPUs' own meter (NVML / AMD SMI, detail/GpuEnergy.cpp) adds to RAPL where it exists.
  std::string gpu = m_is_reader ? detail::gpu_energy().source() : std::string();
  int len = static_cast<int>(gpu.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  gpu.resize(static_cast<std::size_t>(len));
  MPI_Bcast(gpu.data(), len, MPI_CHAR, 0, comm);
  const bool gpu_ok = gpu.rfind("not measured", 0) != 0;
  if (m_available && !m_files.empty() && gpu_ok)
    m_source = "RAPL package counters (/sys/class/powercap) + " + gpu + ", summed over nodes";
  else if (m_available && gpu_ok)
    m_source = gpu + ", summed over nodes";
  else if (m_available)
    m_source = "RAPL package counters (/sys/class/powercap), summed over nodes (GPU " + gpu + ")";
  else
    m_source = "not measured (no readable RAPL counter; GPU " + gpu + ")";
}

double EnergyMeter::read_local() const {
  for (std::size_t i = 0; i < m_files.size(); ++i) {
    double v = 0.0;
    if (!read_number(m_files[i], v)) continue;
    double d = v - m_last[i];
    if (d < 0) d += m_max_range[i];  // the counter wrapped
    m_accum += d * 1e-6;
    m_last[i] = v;
  }
  const double gpu = detail::gpu_energy().joules();
  return m_accum + (gpu > 0.0 ? gpu : 0.0);
}

void EnergyMeter::start() {
  if (!m_available) return;
  double local = m_is_reader ? read_local() : 0.0;
  MPI_Allreduce(&local, &m_start, 1, MPI_DOUBLE, MPI_SUM, m_comm);
}

double EnergyMeter::joules() {
  if (!m_available) return -1.0;
  double local = m_is_reader ? read_local() : 0.0, total = 0.0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, m_comm);
  return total - m_start;
}

namespace {
double wall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

TriadBound measure_triad(MPI_Comm comm, std::size_t elements, int repeats) {
  TriadBound t;
  t.elements = std::max<std::size_t>(elements, 1024);
  t.repeats = std::max(repeats, 1);
  MPI_Comm_size(comm, &t.ranks);
  using Space = Kokkos::DefaultExecutionSpace;
  using View = Kokkos::View<double*, Space::memory_space>;
  const auto n = static_cast<std::int64_t>(t.elements);
  View a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::workflow::Machine::triad_a"), t.elements);
  View b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::workflow::Machine::triad_b"), t.elements);
  View c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::workflow::Machine::triad_c"), t.elements);
  using Policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
  // First touch by the threads that run the triad (the pages land on their memory).
  Kokkos::parallel_for(
      "mantissa::workflow::Machine::triad_init", Policy(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        a(i) = 0.0;
        b(i) = 1.0;
        c(i) = 2.0;
      });
  fence("mantissa::workflow::Machine::triad_init");
  const double scalar = 3.0;
  std::vector<double> slowest;
  double own_best = 1e300;
  for (int r = 0; r < t.repeats + 1; ++r) {  // the first repeat is a warm-up
    MPI_Barrier(comm);
    const double t0 = wall();
    Kokkos::parallel_for(
        "mantissa::workflow::Machine::triad", Policy(0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { a(i) = b(i) + scalar * c(i); });
    fence("mantissa::workflow::Machine::triad");
    double local = wall() - t0, global = 0.0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (r == 0) continue;
    slowest.push_back(global);
    own_best = std::min(own_best, local);
  }
  std::sort(slowest.begin(), slowest.end());
  const double bytes = 24.0 * double(t.elements);
  t.seconds = slowest.front();
  t.total_gbs = bytes * t.ranks / t.seconds / 1e9;
  t.median_total_gbs = bytes * t.ranks / slowest[slowest.size() / 2] / 1e9;
  const double own = bytes / own_best / 1e9;
  MPI_Allreduce(&own, &t.rank_gbs_min, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&own, &t.rank_gbs_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  t.where = std::string(Space::name()) + ", " + std::to_string(t.ranks) + " rank(s) x " +
            std::to_string(concurrency(Space())) + " thread(s)";
  return t;
}

double measure_launch_seconds(MPI_Comm comm, int launches) {
  using Space = Kokkos::DefaultExecutionSpace;
  Kokkos::View<int*, Space::memory_space> v("mantissa::workflow::Machine::launch", 1);
  std::vector<double> s;
  s.reserve(static_cast<std::size_t>(std::max(launches, 1)));
  MPI_Barrier(comm);
  for (int l = 0; l < std::max(launches, 1) + 10; ++l) {
    const double t0 = wall();
    Kokkos::parallel_for(
        "mantissa::workflow::Machine::launch", Kokkos::RangePolicy<Space>(0, 1),
        KOKKOS_LAMBDA(const int i) { v(i) += 1; });
    fence("mantissa::workflow::Machine::launch");
    if (l >= 10) s.push_back(wall() - t0);  // the first ten warm the pool up
  }
  std::sort(s.begin(), s.end());
  double local = s[s.size() / 2], global = 0.0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
  return global;
}

}  // namespace mantissa::workflow
