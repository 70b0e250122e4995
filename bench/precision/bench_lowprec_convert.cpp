// Throughput of float -> {bf16, fp16, fp8_e4m3, fp8_e5m2} -> float round trips with mantissa's
// portable value types, in a Kokkos kernel on the default execution space, next to peers
// measured in the same run: a plain float copy (memory-bound ceiling) and, on x86 CPUs that
// have them, the F16C (fp16) and AVX-512 BF16 (bf16) hardware converters on the same data.
//   bench_lowprec_convert [n=16777216] [repeats=10]
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/core/PrecisionSupport.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
#include <immintrin.h>
#define MANTISSA_BENCH_X86 1
#endif

namespace {

using Clock = std::chrono::steady_clock;

// Wall time and process CPU time (all threads) of the fastest repeat. On a shared machine the
// wall time includes time stolen by other processes; CPU time per value does not.
struct Timing {
  double wall = 1e30;
  double cpu = 1e30;
};
template <class F>
Timing best_seconds(int repeats, F&& f) {
  Timing best;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    f();
    Kokkos::fence();
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
    if (wall < best.wall) best = Timing{wall, cpu};
  }
  return best;
}

void report(const std::string& what, std::size_t n, Timing t) {
  std::printf("%-44s %9.3f ms wall %8.3f Gvalues/s   %6.2f ns CPU/value\n", what.c_str(), t.wall * 1e3,
              double(n) / t.wall * 1e-9, t.cpu / double(n) * 1e9);
}

template <class T>
Timing round_trip(const Kokkos::View<float*>& in, const Kokkos::View<float*>& out, int repeats) {
  const std::size_t n = in.extent(0);
  return best_seconds(repeats, [&] {
    Kokkos::parallel_for(
        "mantissa::bench::lowprec_round_trip", Kokkos::RangePolicy<>(0, n),
        KOKKOS_LAMBDA(const std::size_t i) { out(i) = float(T(in(i))); });
  });
}

#if defined(MANTISSA_BENCH_X86)
__attribute__((target("f16c,avx2"))) void f16c_round_trip(const float* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
}
#if (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10) || \
    (defined(__clang__) && __clang_major__ >= 11)
#define MANTISSA_BENCH_AVX512BF16 1
__attribute__((target("avx512bf16,avx512f"))) void bf16_hw_round_trip(const float* in, float* out,
                                                                      std::size_t n) {
  for (std::size_t i = 0; i + 16 <= n; i += 16) {
    const __m256bh b = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
    alignas(32) std::uint16_t bits[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(bits), reinterpret_cast<const __m256i&>(b));
    // widen: bf16 is the upper half of a float
    for (int k = 0; k < 16; ++k) out[i + k] = mantissa::detail::bits_to_float(std::uint32_t(bits[k]) << 16);
  }
}
#endif
#endif

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t(1) << 24);
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 10;
  Kokkos::View<float*> in("mantissa::bench::in", n), out("mantissa::bench::out", n);
  auto h = Kokkos::create_mirror_view(in);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  for (std::size_t i = 0; i < n; ++i) h(i) = dist(rng);
  Kokkos::deep_copy(in, h);

  std::printf(
      "mantissa low-precision conversion: %zu floats, best of %d, execution space %s (concurrency %d)\n", n,
      repeats, Kokkos::DefaultExecutionSpace::name(), Kokkos::DefaultExecutionSpace().concurrency());
  report("peer: float copy (Kokkos kernel)", n, best_seconds(repeats, [&] {
           Kokkos::parallel_for(
               "mantissa::bench::copy", Kokkos::RangePolicy<>(0, n),
               KOKKOS_LAMBDA(const std::size_t i) { out(i) = in(i); });
         }));
  report("mantissa::bf16 round trip (portable)", n, round_trip<mantissa::bf16>(in, out, repeats));
  report("mantissa::fp16 round trip (portable)", n, round_trip<mantissa::fp16>(in, out, repeats));
  report("mantissa::fp8_e4m3 round trip (portable)", n, round_trip<mantissa::fp8_e4m3>(in, out, repeats));
  report("mantissa::fp8_e5m2 round trip (portable)", n, round_trip<mantissa::fp8_e5m2>(in, out, repeats));
#if defined(MANTISSA_BENCH_X86)
  const auto f = mantissa::cpu_features();
  auto ho = Kokkos::create_mirror_view(out);
  // The hardware peers run on one thread; compare with the portable kernels at
  // OMP_NUM_THREADS=1 for a per-core figure.
  if (f.f16c && f.avx2)
    report("peer: F16C VCVTPS2PH/VCVTPH2PS (1 thread)", n,
           best_seconds(repeats, [&] { f16c_round_trip(h.data(), ho.data(), n); }));
#if defined(MANTISSA_BENCH_AVX512BF16)
  if (f.avx512_bf16)
    report("peer: AVX-512 BF16 VCVTNEPS2BF16 (1 thread)", n,
           best_seconds(repeats, [&] { bf16_hw_round_trip(h.data(), ho.data(), n); }));
#endif
#endif
  return 0;
}
