// What the default execution space (a GPU where Kokkos has one) gives mantissa's kernels,
// measured in one run beside the device's own limit:
//   1. STREAM copy and triad (fp64) on the device: the bandwidth ceiling;
//   2. the seismic 3D 8th-order leapfrog update (interior, the solver's own point functions
//      from apps/seismic/stencil_kernels.hpp) with storage fp64, fp32, bf16, fp16: points per
//      second and effective bandwidth (compulsory bytes: read p, p_old, c^2 dt^2; write p_new);
//   3. correctness of mantissa's low-precision conversions on the device: every bf16/fp16/fp8
//      bit pattern decoded, and a large sample of floats encoded, bit-identical to the host.
// Usage: mantissa_device_check [N (grid edge, default 512)] [repeats (default 20)]
#include <mantissa/core/LowPrecision.hpp>
#include <seismic/stencil_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

template <class F>
double median_seconds(int repeats, F&& f) {
  std::vector<double> t;
  f();  // warm-up
  Kokkos::fence();
  for (int r = 0; r < repeats; ++r) {
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double stream(int repeats, double& copy_gbs) {
  const std::int64_t n = std::int64_t(1) << 27;  // 1 GiB per array: far beyond any cache
  Kokkos::View<double*, Mem> a("mantissa::bench::device::a", n), b("mantissa::bench::device::b", n),
      c("mantissa::bench::device::c", n);
  Kokkos::parallel_for(
      "mantissa::bench::device::init", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        b(i) = 1.0 + 1e-9 * double(i % 1000);
        c(i) = 2.0 - 1e-9 * double(i % 777);
      });
  const double s = 3.0;
  const double tc = median_seconds(repeats, [&] {
    Kokkos::parallel_for(
        "mantissa::bench::device::copy", Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { a(i) = b(i); });
  });
  const double tt = median_seconds(repeats, [&] {
    Kokkos::parallel_for(
        "mantissa::bench::device::triad", Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { a(i) = b(i) + s * c(i); });
  });
  copy_gbs = 2.0 * 8.0 * double(n) / tc / 1e9;
  return 3.0 * 8.0 * double(n) / tt / 1e9;
}

template <class Storage, class Compute>
void stencil(const char* name, int n, int repeats, double triad_gbs) {
  constexpr int R = 4;  // 8th order
  const int e = n + 2 * R;
  using V = Kokkos::View<Storage***, Kokkos::LayoutRight, Mem>;
  V p("mantissa::bench::device::p", e, e, e), p_old("mantissa::bench::device::p_old", e, e, e),
      p_new("mantissa::bench::device::p_new", e, e, e), vel("mantissa::bench::device::c2dt2", e, e, e);
  Kokkos::parallel_for(
      "mantissa::bench::device::fill", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>({0, 0, 0}, {e, e, e}),
      KOKKOS_LAMBDA(int k, int j, int i) {
        const float x = float((i * 7 + j * 13 + k * 17) % 101) / 101.0f;
        p(k, j, i) = Storage(x);
        p_old(k, j, i) = Storage(0.5f * x);
        vel(k, j, i) = Storage(0.2f);
      });
  const double spacing[3] = {1.0, 1.0, 1.0};
  const auto w = mantissa::seismic::make_stencil_weights<Compute, R>(3, spacing);
  // Three launch shapes of the same point update: the solver's MDRange with Kokkos' default
  // tiles, MDRange with tiles chosen so a warp reads 32 consecutive x, and a flat range with
  // x fastest (coalesced by construction).
  const auto update = KOKKOS_LAMBDA(int k, int j, int i) {
    const Compute lap = mantissa::seismic::laplacian<R, Compute>(p, k, j, i, w);
    p_new(k, j, i) = Storage(mantissa::seismic::leapfrog<Compute>(
        Compute(p(k, j, i)), Compute(p_old(k, j, i)), Compute(vel(k, j, i)), lap));
  };
  using MD = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>;
  const double t_default = median_seconds(repeats, [&] {
    Kokkos::parallel_for("mantissa::bench::device::leapfrog_mdrange", MD({R, R, R}, {R + n, R + n, R + n}),
                         update);
  });
  const double t_tiled = median_seconds(repeats, [&] {
    Kokkos::parallel_for("mantissa::bench::device::leapfrog_tiled",
                         MD({R, R, R}, {R + n, R + n, R + n}, {1, 4, 64}), update);
  });
  const std::int64_t nn = n;
  const double t_flat = median_seconds(repeats, [&] {
    Kokkos::parallel_for(
        "mantissa::bench::device::leapfrog_flat", Kokkos::RangePolicy<Exec>(0, nn * nn * nn),
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const int i = int(idx % nn) + R, j = int((idx / nn) % nn) + R, k = int(idx / (nn * nn)) + R;
          update(k, j, i);
        });
  });
  for (auto [variant, t] : {std::pair<const char*, double>{"mdrange", t_default},
                            {"mdrange 1x4x64", t_tiled},
                            {"flat", t_flat}}) {
    const double pts = double(n) * n * n / t;
    const double gbs = 4.0 * sizeof(Storage) * pts / 1e9;
    std::printf("| %-12s | %-15s | %9.2f | %10.1f | %5.0f%% |\n", name, variant, pts / 1e9, gbs,
                100.0 * gbs / triad_gbs);
  }
}

template <class T>
int check_decode_all(const char* name) {
  using bits_t = decltype(T().bits());
  const int count = 1 << (8 * sizeof(bits_t));
  Kokkos::View<float*, Mem> d("mantissa::bench::device::decoded", count);
  Kokkos::parallel_for(
      "mantissa::bench::device::decode", Kokkos::RangePolicy<Exec>(0, count),
      KOKKOS_LAMBDA(const int b) { d(b) = float(T::from_bits(bits_t(b))); });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  int bad = 0;
  for (int b = 0; b < count; ++b) {
    const float ref = float(T::from_bits(bits_t(b)));
    const bool both_nan = ref != ref && h(b) != h(b);
    std::uint32_t x, y;
    std::memcpy(&x, &ref, 4);
    std::memcpy(&y, &h(b), 4);
    if (!both_nan && x != y) ++bad;
  }
  std::printf("decode all %6d %-9s patterns on the device: %s\n", count, name,
              bad ? "MISMATCH" : "identical to host");
  return bad;
}

template <class T>
int check_encode_sample(const char* name) {
  const std::int64_t count = std::int64_t(1) << 24;  // every 256th float bit pattern
  Kokkos::View<std::uint32_t*, Mem> d("mantissa::bench::device::encoded", count);
  Kokkos::parallel_for(
      "mantissa::bench::device::encode", Kokkos::RangePolicy<Exec>(0, count),
      KOKKOS_LAMBDA(const std::int64_t s) {
        const std::uint32_t u = std::uint32_t(s) * 256u + std::uint32_t(s % 251);
        float f;
        std::memcpy(&f, &u, 4);
        d(s) = std::uint32_t(T(f).bits());
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  std::int64_t bad = 0;
  for (std::int64_t s = 0; s < count; ++s) {
    const std::uint32_t u = std::uint32_t(s) * 256u + std::uint32_t(s % 251);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::uint32_t(T(f).bits()) != h(s)) ++bad;
  }
  std::printf("encode %lld sampled floats to %-9s on the device: %s (%lld differ)\n", (long long)count, name,
              bad ? "MISMATCH" : "identical to host", (long long)bad);
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 512;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  Kokkos::print_configuration(std::cout, false);
  int bad = 0;
  bad += check_decode_all<mantissa::bf16>("bf16");
  bad += check_decode_all<mantissa::fp16>("fp16");
  bad += check_decode_all<mantissa::fp8_e4m3>("fp8_e4m3");
  bad += check_decode_all<mantissa::fp8_e5m2>("fp8_e5m2");
  bad += check_encode_sample<mantissa::bf16>("bf16");
  bad += check_encode_sample<mantissa::fp16>("fp16");
  bad += check_encode_sample<mantissa::fp8_e4m3>("fp8_e4m3");
  bad += check_encode_sample<mantissa::fp8_e5m2>("fp8_e5m2");
  double copy_gbs = 0.0;
  const double triad_gbs = stream(repeats, copy_gbs);
  std::printf("\nSTREAM on %s: copy %.1f GB/s, triad %.1f GB/s (1 GiB arrays, median of %d)\n", Exec::name(),
              copy_gbs, triad_gbs, repeats);
  std::printf("\nseismic 3D 8th-order leapfrog, %d^3 interior points, median of %d\n", n, repeats);
  std::printf("| %-12s | %-15s | %9s | %10s | %6s |\n", "storage/comp", "launch", "Gpts/s", "eff. GB/s",
              "triad");
  std::printf("|--------------|-----------------|-----------|------------|--------|\n");
  stencil<double, double>("fp64 / fp64", n, repeats, triad_gbs);
  stencil<float, float>("fp32 / fp32", n, repeats, triad_gbs);
  stencil<mantissa::bf16, float>("bf16 / fp32", n, repeats, triad_gbs);
  stencil<mantissa::fp16, float>("fp16 / fp32", n, repeats, triad_gbs);
  std::printf("\nconversion checks: %s\n", bad ? "FAILED" : "all identical to host");
  return bad ? 1 : 0;
}
