#pragma once
// The one place that knows about Kokkos versions (3.4.01 .. 5.x). Nothing else in mantissa
// tests KOKKOS_VERSION.
#include <Kokkos_Core.hpp>

#include <string>

#if !defined(KOKKOS_VERSION)
#error "Kokkos_Core.hpp did not define KOKKOS_VERSION"
#endif

namespace mantissa {
namespace math {
// Kokkos 3.4-3.6 keep the math functions in Kokkos::Experimental; 3.7+ in Kokkos::.
#if KOKKOS_VERSION >= 30700
using Kokkos::abs;
using Kokkos::cos;
using Kokkos::erf;
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::fmax;
using Kokkos::fmin;
using Kokkos::isfinite;
using Kokkos::isinf;
using Kokkos::isnan;
using Kokkos::log;
using Kokkos::pow;
using Kokkos::sin;
using Kokkos::sqrt;
using Kokkos::tanh;
#else
using Kokkos::Experimental::cos;
using Kokkos::Experimental::erf;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::fmax;
using Kokkos::Experimental::fmin;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::isinf;
using Kokkos::Experimental::isnan;
using Kokkos::Experimental::log;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
using Kokkos::Experimental::tanh;
template <class T>
KOKKOS_INLINE_FUNCTION T abs(T x) {
  return x < T(0) ? -x : x;
}
#endif
}  // namespace math

// Fences with a label where Kokkos supports it (3.6+), so Kokkos Tools show who fenced.
inline void fence(const std::string& label) {
#if KOKKOS_VERSION >= 30600
  Kokkos::fence(label);
#else
  (void)label;
  Kokkos::fence();
#endif
}

template <class ExecSpace>
void fence(const ExecSpace& space, const std::string& label) {
#if KOKKOS_VERSION >= 30600
  space.fence(label);
#else
  (void)label;
  space.fence();
#endif
}

// Number of threads/lanes of an execution space (static in 3.x, a member in 4.x).
template <class ExecSpace>
int concurrency(const ExecSpace& space = ExecSpace()) {
  return static_cast<int>(space.concurrency());
}

inline std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  // 3.x encodes MAJOR*10000 + MINOR*100 + PATCH; so does 4.x and 5.x.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace mantissa

// Device printf: Kokkos::printf exists from 4.2; before that, the IMPL macro.
#if KOKKOS_VERSION >= 40200
#define MANTISSA_DEVICE_PRINTF(...) Kokkos::printf(__VA_ARGS__)
#else
#define MANTISSA_DEVICE_PRINTF(...) KOKKOS_IMPL_DO_NOT_USE_PRINTF(__VA_ARGS__)
#endif

// Custom reducers: Kokkos 3.x may join through volatile references (and needs the overload);
// 4.x joins plain references only (core/ExactSum.hpp).
#if KOKKOS_VERSION < 40000
#define MANTISSA_KOKKOS_VOLATILE_JOIN 1
#else
#define MANTISSA_KOKKOS_VOLATILE_JOIN 0
#endif
