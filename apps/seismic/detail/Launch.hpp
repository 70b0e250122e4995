#pragma once
// The one place that chooses how a point-wise kernel is launched (STYLE #4): on host back-ends
// one thread takes whole x rows, so the innermost loop is contiguous and the compiler
// vectorises it; on device back-ends a 3D MDRange gives one point per thread.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

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
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace>(space, 0, nz * ny), KOKKOS_LAMBDA(const int r) {
          const int k = z0 + r / ny, j = y0 + r % ny;
          for (int i = x0; i < x1; ++i) f(k, j, i);
        });
  } else {
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>;
    using idx = typename Policy::index_type;
    Kokkos::parallel_for(
        label, Policy(space, {idx(z0), idx(y0), idx(x0)}, {idx(z0 + nz), idx(y0 + ny), idx(x1)}),
        KOKKOS_LAMBDA(const int k, const int j, const int i) { f(k, j, i); });
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

}  // namespace mantissa::seismic::detail
