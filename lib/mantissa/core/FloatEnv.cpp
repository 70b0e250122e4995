#include <mantissa/core/Error.hpp>
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64) || (defined(__i386__) && defined(__SSE2__))
#include <xmmintrin.h>
#define MANTISSA_FLOATENV_MXCSR 1
#elif defined(__aarch64__)
#define MANTISSA_FLOATENV_FPCR 1
#endif

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace mantissa {

namespace {
#if defined(MANTISSA_FLOATENV_MXCSR)
constexpr unsigned mxcsr_ftz = 1u << 15;
constexpr unsigned mxcsr_daz = 1u << 6;
#elif defined(MANTISSA_FLOATENV_FPCR)
constexpr std::uint64_t fpcr_fz = std::uint64_t(1) << 24;
constexpr std::uint64_t fpcr_fz16 = std::uint64_t(1) << 19;
std::uint64_t read_fpcr() {
  std::uint64_t v = 0;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void write_fpcr(std::uint64_t v) {
  __asm__ __volatile__("msr fpcr, %0" : : "r"(v));
}
#endif

const char* host_mechanism() {
#if defined(MANTISSA_FLOATENV_MXCSR)
  return "MXCSR FTZ+DAZ";
#elif defined(MANTISSA_FLOATENV_FPCR)
  return "FPCR.FZ+FZ16";
#else
  return "none on this CPU";
#endif
}

using HostExec = Kokkos::DefaultHostExecutionSpace;
constexpr bool kernels_on_host = std::is_same<Kokkos::DefaultExecutionSpace, HostExec>::value;

// Work items per pool thread for the set and read-back launches: enough that a static or
// dynamic schedule gives every thread some.
constexpr int items_per_thread = 64;

void set_pool(SubnormalMode mode) {
  const int n = concurrency(HostExec());
#if defined(KOKKOS_ENABLE_OPENMP)
  if (std::is_same<HostExec, Kokkos::OpenMP>::value) {
    // Kokkos' OpenMP back-end runs its kernels on the OpenMP runtime's team of this size, which
    // the runtime keeps and reuses: a region of the same size reaches every one of its threads.
#pragma omp parallel num_threads(n)
    set_this_thread_float_env(mode);
  }
#endif
  // And through Kokkos itself, so that any thread Kokkos hands work to (a non-OpenMP pool too)
  // sets it.
  Kokkos::parallel_for("mantissa::core::FloatEnv::set",
                       Kokkos::RangePolicy<HostExec>(0, items_per_thread * n),
                       [=](const int) { set_this_thread_float_env(mode); });
  fence(HostExec(), "mantissa::core::FloatEnv::set");
}

// The pool's threads read back: (threads seen, threads flushing). On OpenMP each thread is
// identified by its OpenMP thread number; elsewhere the work items are counted and a pool
// counts as flushing only if every item ran flushing.
std::pair<int, int> read_pool() {
  const int n = concurrency(HostExec());
#if defined(KOKKOS_ENABLE_OPENMP)
  if (std::is_same<HostExec, Kokkos::OpenMP>::value) {
    std::vector<int> seen(static_cast<std::size_t>(n), 0), flushing(static_cast<std::size_t>(n), 0);
    int* const s = seen.data();
    int* const f = flushing.data();
    Kokkos::parallel_for("mantissa::core::FloatEnv::read",
                         Kokkos::RangePolicy<HostExec>(0, items_per_thread * n), [=](const int) {
                           const int t = omp_get_thread_num();
                           if (t < 0 || t >= n) return;
                           s[t] = 1;  // each thread writes only its own slots
                           f[t] = this_thread_float_env().flushing() ? 1 : 0;
                         });
    fence(HostExec(), "mantissa::core::FloatEnv::read");
    int threads = 0, flush = 0;
    for (int t = 0; t < n; ++t) {
      threads += seen[static_cast<std::size_t>(t)];
      flush += seen[static_cast<std::size_t>(t)] && flushing[static_cast<std::size_t>(t)];
    }
    return {threads, flush};
  }
#endif
  int items_flushing = 0;
  const int items = items_per_thread * n;
  Kokkos::parallel_reduce(
      "mantissa::core::FloatEnv::read", Kokkos::RangePolicy<HostExec>(0, items),
      [=](const int, int& acc) { acc += this_thread_float_env().flushing() ? 1 : 0; }, items_flushing);
  if (n == 1) return {1, items_flushing == items ? 1 : 0};
  return {n, items_flushing == items ? n : (items_flushing == 0 ? 0 : n - 1)};
}

FloatEnvReport make_report(SubnormalMode requested) {
  FloatEnvReport r;
  r.requested = requested;
  const auto pool = read_pool();
  // The calling thread is one of the pool's on OpenMP (thread 0) and Serial; count it once.
  r.threads = pool.first;
  r.threads_flushing = pool.second;
  if (!std::is_same<HostExec, Kokkos::Serial>::value
#if defined(KOKKOS_ENABLE_OPENMP)
      && !std::is_same<HostExec, Kokkos::OpenMP>::value
#endif
  ) {
    r.threads += 1;
    r.threads_flushing += this_thread_float_env().flushing() ? 1 : 0;
  }
  if constexpr (kernels_on_host) {
    r.kernels_on = "host";
    if (!host_float_env_controllable()) {
      r.control = "none";
      r.mechanism = host_mechanism();
      r.in_force = "keep";
      return r;
    }
    r.control = "run-time";
    r.mechanism = host_mechanism();
    r.in_force = r.threads_flushing == r.threads ? "flush" : (r.threads_flushing == 0 ? "keep" : "mixed");
  } else {
    r.kernels_on = Kokkos::DefaultExecutionSpace::name();
    r.control = "compile-time";
#if defined(MANTISSA_DEVICE_FLUSH_DENORMALS) && MANTISSA_DEVICE_FLUSH_DENORMALS
    r.in_force = "flush";
#if defined(KOKKOS_ENABLE_CUDA)
    r.mechanism = "nvcc -ftz=true (fp32 only; fp64 keeps subnormals)";
#else
    r.mechanism = "-fgpu-flush-denormals-to-zero (fp32 only; fp64 keeps subnormals)";
#endif
#else
    r.in_force = "keep";
#if defined(KOKKOS_ENABLE_CUDA)
    r.mechanism = "compiled without -ftz (IEEE subnormals, at full speed on NVIDIA GPUs)";
#else
    r.mechanism = "compiled without -fgpu-flush-denormals-to-zero (IEEE subnormals)";
#endif
#endif
  }
  return r;
}
}  // namespace

std::string_view to_string(SubnormalMode m) {
  return m == SubnormalMode::flush ? "flush" : "keep";
}

SubnormalMode parse_subnormal_mode(std::string_view text, std::string_view where) {
  if (text == "flush") return SubnormalMode::flush;
  if (text == "keep") return SubnormalMode::keep;
  throw Error(std::string(where.empty() ? "subnormals" : where) + ": '" + std::string(text) +
              "' is not a subnormal mode; choose flush (flush-to-zero and denormals-are-zero) or keep "
              "(IEEE subnormals)");
}

bool host_float_env_controllable() {
#if defined(MANTISSA_FLOATENV_MXCSR) || defined(MANTISSA_FLOATENV_FPCR)
  return true;
#else
  return false;
#endif
}

ThreadFloatEnv this_thread_float_env() {
  ThreadFloatEnv e;
#if defined(MANTISSA_FLOATENV_MXCSR)
  const unsigned csr = _mm_getcsr();
  e.flush_to_zero = (csr & mxcsr_ftz) != 0;
  e.denormals_are_zero = (csr & mxcsr_daz) != 0;
#elif defined(MANTISSA_FLOATENV_FPCR)
  const bool fz = (read_fpcr() & fpcr_fz) != 0;  // FZ flushes inputs and results alike
  e.flush_to_zero = fz;
  e.denormals_are_zero = fz;
#endif
  return e;
}

void set_this_thread_float_env(SubnormalMode mode) {
#if defined(MANTISSA_FLOATENV_MXCSR)
  unsigned csr = _mm_getcsr();
  csr = mode == SubnormalMode::flush ? (csr | mxcsr_ftz | mxcsr_daz) : (csr & ~(mxcsr_ftz | mxcsr_daz));
  _mm_setcsr(csr);
#elif defined(MANTISSA_FLOATENV_FPCR)
  std::uint64_t v = read_fpcr();
  v = mode == SubnormalMode::flush ? (v | fpcr_fz | fpcr_fz16) : (v & ~(fpcr_fz | fpcr_fz16));
  write_fpcr(v);
#else
  (void)mode;
#endif
}

bool FloatEnvReport::as_requested() const {
  return in_force == to_string(requested);
}

std::string FloatEnvReport::describe() const {
  std::string s = in_force + " (" + control;
  if (control == "run-time")
    s += ", " + mechanism + " on " + std::to_string(threads_flushing) + " of " + std::to_string(threads) +
         " host threads";
  else
    s += ", " + mechanism;
  s += ")";
  if (!as_requested()) s += "; the deck asked for " + std::string(to_string(requested));
  return s;
}

FloatEnvReport apply_float_env(SubnormalMode mode) {
  set_this_thread_float_env(mode);
  set_pool(mode);
  return make_report(mode);
}

FloatEnvReport query_float_env(SubnormalMode requested) {
  return make_report(requested);
}

ScopedFloatEnv::ScopedFloatEnv(SubnormalMode mode)
    : m_previous(this_thread_float_env().flushing() ? SubnormalMode::flush : SubnormalMode::keep),
      m_report(apply_float_env(mode)) {}

ScopedFloatEnv::~ScopedFloatEnv() {
  set_this_thread_float_env(m_previous);
  set_pool(m_previous);
}

}  // namespace mantissa
