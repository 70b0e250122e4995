#include "Info.hpp"

#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/PrecisionSupport.hpp>
#include <mantissa/core/Version.hpp>

#include <fmt/format.h>
#include <hdf5.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <string>
#include <vector>

// The GEMM back-end table comes from the surrogates library when it is part of the build.
#if __has_include(<surrogates/Gemm.hpp>)
#include <surrogates/Gemm.hpp>
#define MANTISSA_INFO_HAS_GEMM 1
#endif

namespace mantissa::app {

namespace {

bool g_default_binding_applied = false;

#if defined(KOKKOS_ENABLE_OPENMP)
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string(fallback);
}
#endif

std::string yes_no(bool b) {
  return b ? "yes" : "no";
}

std::vector<std::string> kokkos_backends() {
  std::vector<std::string> b;
#if defined(KOKKOS_ENABLE_SERIAL)
  b.emplace_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  b.emplace_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  b.emplace_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  b.emplace_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  b.emplace_back("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  b.emplace_back("SYCL");
#endif
#if defined(KOKKOS_ENABLE_OPENMPTARGET)
  b.emplace_back("OpenMPTarget");
#endif
  return b;
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  (void)len;  // Open MPI counts the terminating NUL in len; the text is NUL-terminated anyway
  std::string s(text);
  const std::size_t nl = s.find_first_of("\r\n");
  if (nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == ',')) s.pop_back();
  return s;
}

}  // namespace

bool apply_default_openmp_binding() {
  if (std::getenv("OMP_PROC_BIND") == nullptr && std::getenv("OMP_PLACES") == nullptr) {
    g_default_binding_applied = setenv("OMP_PROC_BIND", "false", 0) == 0;
  }
  return g_default_binding_applied;
}

void print_info(std::ostream& os, bool verbose) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) return;

  os << fmt::format("mantissa {} (git {})\n", MANTISSA_VERSION_STRING, MANTISSA_GIT_HASH);

  std::string backends;
  for (const auto& b : kokkos_backends()) backends += (backends.empty() ? "" : ", ") + b;
  os << fmt::format("\nKokkos {}\n  back-ends enabled:  {}\n  default space:      {} (concurrency {})\n",
                    kokkos_version_string(), backends, Kokkos::DefaultExecutionSpace::name(),
                    concurrency<Kokkos::DefaultExecutionSpace>());
  os << fmt::format("  host space:         {} (concurrency {})\n", Kokkos::DefaultHostExecutionSpace::name(),
                    concurrency<Kokkos::DefaultHostExecutionSpace>());

#if defined(KOKKOS_ENABLE_OPENMP)
  os << fmt::format("  OpenMP binding:     OMP_PROC_BIND={} OMP_PLACES={}{}\n",
                    env_or("OMP_PROC_BIND", "(unset)"), env_or("OMP_PLACES", "(unset)"),
                    g_default_binding_applied
                        ? " (mantissa's default: threads are not pinned; with ranks bound to their own "
                          "cores, OMP_PROC_BIND=spread OMP_PLACES=threads pins them)"
                        : "");
#endif

  int mpi_major = 0, mpi_minor = 0;
  MPI_Get_version(&mpi_major, &mpi_minor);
  os << fmt::format("\nMPI {}.{}: {}\n  ranks: {}\n", mpi_major, mpi_minor, mpi_library(), size);

  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  H5get_libversion(&h5_major, &h5_minor, &h5_release);
#if defined(H5_HAVE_PARALLEL)
  const bool h5_parallel = true;
#else
  const bool h5_parallel = false;
#endif
  os << fmt::format("\nHDF5 {}.{}.{} (parallel: {})\n", h5_major, h5_minor, h5_release, yes_no(h5_parallel));

  const CpuFeatures cpu = cpu_features();
  os << fmt::format("\nCPU features: avx2 {}, avx512f {}, avx512_bf16 {}, avx512_fp16 {}, f16c {}\n",
                    yes_no(cpu.avx2), yes_no(cpu.avx512f), yes_no(cpu.avx512_bf16), yes_no(cpu.avx512_fp16),
                    yes_no(cpu.f16c));

  os << fmt::format("\nPrecision support on {}:\n", default_execution_space_name());
  os << fmt::format("  {:<10} {:<9} {:<11} {:<9} {}\n", "precision", "storage", "arithmetic", "hardware",
                    "note");
  for (const PrecisionSupport& p : precision_support()) {
    os << fmt::format("  {:<10} {:<9} {:<11} {:<9} {}\n", to_string(p.precision),
                      p.storage_native ? "native" : "emulated", p.arithmetic_native ? "native" : "emulated",
                      yes_no(p.hardware_available), p.note);
  }

  // GEMM back-ends per precision (surrogates/Gemm.hpp).
#if defined(MANTISSA_INFO_HAS_GEMM)
  os << "\nGEMM back-ends:\n";
  std::string gemm = surrogates::gemm_backends();
  if (!gemm.empty() && gemm.back() != '\n') gemm += '\n';
  for (std::size_t pos = 0; pos < gemm.size();) {
    const std::size_t nl = gemm.find('\n', pos);
    os << "  " << gemm.substr(pos, nl - pos) << "\n";
    pos = nl + 1;
  }
#else
  os << "\nGEMM back-ends: (the surrogates library is not part of this build)\n";
#endif

  if (verbose) {
    os << "\nKokkos configuration:\n";
    Kokkos::print_configuration(os, true);
  }
  os.flush();
}

}  // namespace mantissa::app
