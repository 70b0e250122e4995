#pragma once
// The one place that chooses how a point-wise kernel is launched (STYLE #4): on host back-ends
// one thread takes whole x rows, so the innermost loop is contiguous and the compiler
// vectorises it; on device back-ends a flat range gives one point per thread, x fastest.
#include <mantissa/core/ExactSum.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

// Tells the compiler that a loop's iterations are independent (the rows read never alias the
// points written), so it vectorises without run-time overlap checks. Every point function
// launched through for_each_point writes only its own point (or, for the mirror fill, ghosts
// it never reads), so its x loop qualifies.
#if defined(__clang__)
#define MANTISSA_HOST_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__INTEL_COMPILER)
#define MANTISSA_HOST_IVDEP _Pragma("GCC ivdep")
#else
#define MANTISSA_HOST_IVDEP
#endif

namespace mantissa::seismic::detail {

// Half-open box of storage indices, (x, y, z) order.
struct Box {
  int lo[3] = {0, 0, 0};
  int hi[3] = {0, 0, 0};
  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  std::int64_t size() const {
    return empty() ? 0 : std::int64_t(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  }
};

template <class ExecSpace>
constexpr bool is_host_space() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}

// Calls f(k, j, i) for every point of the box.
template <class ExecSpace, class F>
void for_each_point(const std::string& label, const ExecSpace& space, const Box& b, const F& f) {
  if (b.empty()) return;
  const int x0 = b.lo[0], x1 = b.hi[0], y0 = b.lo[1], z0 = b.lo[2];
  const int ny = b.hi[1] - b.lo[1], nz = b.hi[2] - b.lo[2];
  if constexpr (is_host_space<ExecSpace>()) {
    // Whole planes per work item when there are enough of them (no index division per row,
    // which dominated short rows such as the 4-point ghost rows of an x side), else rows.
    if (nz >= 4 * int(space.concurrency())) {
      const int y1 = b.hi[1];
      Kokkos::parallel_for(
          label, Kokkos::RangePolicy<ExecSpace>(space, z0, b.hi[2]), KOKKOS_LAMBDA(const int k) {
            for (int j = y0; j < y1; ++j) {
              MANTISSA_HOST_IVDEP
              for (int i = x0; i < x1; ++i) f(k, j, i);
            }
          });
    } else {
      Kokkos::parallel_for(
          label, Kokkos::RangePolicy<ExecSpace>(space, 0, nz * ny), KOKKOS_LAMBDA(const int r) {
            const int k = z0 + r / ny, j = y0 + r % ny;
            MANTISSA_HOST_IVDEP
            for (int i = x0; i < x1; ++i) f(k, j, i);
          });
    }
  } else {
    // One point per thread with x fastest, so a warp reads consecutive x. Measured on an H200
    // (docs/performance.md): 59 Gpts/s for the 3D 8th-order fp64 update, against 8.5 with
    // Kokkos' default rank-3 MDRange tiles and 37 with 1x4x64 tiles.
    const int nx = x1 - x0;
    const std::int64_t nxy = std::int64_t(nx) * ny;
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, nxy * nz),
        KOKKOS_LAMBDA(const std::int64_t p) {
          const int k = z0 + int(p / nxy), j = y0 + int((p % nxy) / nx), i = x0 + int(p % nx);
          f(k, j, i);
        });
  }
}

// Reduces f(k, j, i, acc) over the box (sum).
template <class ExecSpace, class F>
double sum_over_points(const std::string& label, const ExecSpace& space, const Box& b, const F& f) {
  double total = 0.0;
  if (b.empty()) return total;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>;
  using idx = typename Policy::index_type;
  Kokkos::parallel_reduce(
      label,
      Policy(space, {idx(b.lo[2]), idx(b.lo[1]), idx(b.lo[0])}, {idx(b.hi[2]), idx(b.hi[1]), idx(b.hi[0])}),
      KOKKOS_LAMBDA(const int k, const int j, const int i, double& acc) { f(k, j, i, acc); }, total);
  return total;
}

// Reduces f(k, j, i, acc) over the box into an exact accumulator (core/ExactSum.hpp): the
// sum's bits do not depend on the decomposition or the thread count (the report's energy).
template <class ExecSpace, class F>
ExactAccumulator exact_sum_over_points(const std::string& label, const ExecSpace& space, const Box& b,
                                       const F& f) {
  ExactAccumulator total;
  if (b.empty()) return total;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>;
  using idx = typename Policy::index_type;
  Kokkos::parallel_reduce(
      label,
      Policy(space, {idx(b.lo[2]), idx(b.lo[1]), idx(b.lo[0])}, {idx(b.hi[2]), idx(b.hi[1]), idx(b.hi[0])}),
      KOKKOS_LAMBDA(const int k, const int j, const int i, ExactAccumulator& acc) { f(k, j, i, acc); },
      ExactSum<>(total));
  return total;
}

}  // namespace mantissa::seismic::detail
