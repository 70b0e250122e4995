#pragma once
// Loops in blocks of kLanes that host compilers vectorise, and row reductions in a fixed order
// that vectorises (used by attention and layer normalisation). Device compilers see plain loops.
#include <Kokkos_Core.hpp>

namespace mantissa::surrogates::detail {

// Lanes of register-blocked loops: one AVX-512 register of fp32, two of fp64.
constexpr int kLanes = 16;
// Marks the kLanes loops as the ones to vectorise: GCC otherwise unrolls them completely and
// vectorises the enclosing loop with gathers instead. OpenMP's simd directive where the host
// compiler sees OpenMP; nothing elsewhere (device compilers vectorise across threads).
#if defined(_OPENMP) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define MANTISSA_SURROGATE_SIMD _Pragma("omp simd")
#else
#define MANTISSA_SURROGATE_SIMD
#endif

// Reductions over a row in a fixed order that vectorises: element j goes to partial j % kLanes
// (whole blocks of kLanes first, then the tail), then the partials are combined pairwise. A plain
// left-to-right sum is a serial chain of adds the compiler may not reorder (~4 cycles an element).
template <class T>
KOKKOS_INLINE_FUNCTION T combine_lanes(T* part) {
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) part[l] += part[l + w];
  return part[0];
}
// sum_j a[j] * b[j].
template <class T>
KOKKOS_INLINE_FUNCTION T lane_dot(const T* KOKKOS_RESTRICT a, const T* KOKKOS_RESTRICT b, int n) {
  T part[kLanes];
  for (int l = 0; l < kLanes; ++l) part[l] = T(0);
  int j0 = 0;
  for (; j0 + kLanes <= n; j0 += kLanes) {
    MANTISSA_SURROGATE_SIMD
    for (int l = 0; l < kLanes; ++l) part[l] += a[j0 + l] * b[j0 + l];
  }
  for (int l = 0; l < n - j0; ++l) part[l] += a[j0 + l] * b[j0 + l];
  return combine_lanes(part);
}
// sum_j a[j].
template <class T>
KOKKOS_INLINE_FUNCTION T lane_sum(const T* KOKKOS_RESTRICT a, int n) {
  T part[kLanes];
  for (int l = 0; l < kLanes; ++l) part[l] = T(0);
  int j0 = 0;
  for (; j0 + kLanes <= n; j0 += kLanes) {
    MANTISSA_SURROGATE_SIMD
    for (int l = 0; l < kLanes; ++l) part[l] += a[j0 + l];
  }
  for (int l = 0; l < n - j0; ++l) part[l] += a[j0 + l];
  return combine_lanes(part);
}
// max_j a[j] (exact, so the order does not matter), n >= 1.
template <class T>
KOKKOS_INLINE_FUNCTION T lane_max(const T* KOKKOS_RESTRICT a, int n) {
  T part[kLanes];
  for (int l = 0; l < kLanes; ++l) part[l] = a[0];
  int j0 = 0;
  for (; j0 + kLanes <= n; j0 += kLanes) {
    MANTISSA_SURROGATE_SIMD
    for (int l = 0; l < kLanes; ++l) part[l] = a[j0 + l] > part[l] ? a[j0 + l] : part[l];
  }
  for (int l = 0; l < n - j0; ++l) part[l] = a[j0 + l] > part[l] ? a[j0 + l] : part[l];
  for (int l = 1; l < kLanes; ++l) part[0] = part[l] > part[0] ? part[l] : part[0];
  return part[0];
}

// sum_j (a[j] - mu)^2.
template <class T>
KOKKOS_INLINE_FUNCTION T lane_sum_sq_dev(const T* KOKKOS_RESTRICT a, T mu, int n) {
  T part[kLanes];
  for (int l = 0; l < kLanes; ++l) part[l] = T(0);
  int j0 = 0;
  for (; j0 + kLanes <= n; j0 += kLanes) {
    MANTISSA_SURROGATE_SIMD
    for (int l = 0; l < kLanes; ++l) part[l] += (a[j0 + l] - mu) * (a[j0 + l] - mu);
  }
  for (int l = 0; l < n - j0; ++l) part[l] += (a[j0 + l] - mu) * (a[j0 + l] - mu);
  return combine_lanes(part);
}
// sum_j a[j] * b[j] * (c[j] - mu).
template <class T>
KOKKOS_INLINE_FUNCTION T lane_dot_dev(const T* KOKKOS_RESTRICT a, const T* KOKKOS_RESTRICT b,
                                      const T* KOKKOS_RESTRICT c, T mu, int n) {
  T part[kLanes];
  for (int l = 0; l < kLanes; ++l) part[l] = T(0);
  int j0 = 0;
  for (; j0 + kLanes <= n; j0 += kLanes) {
    MANTISSA_SURROGATE_SIMD
    for (int l = 0; l < kLanes; ++l) part[l] += a[j0 + l] * b[j0 + l] * (c[j0 + l] - mu);
  }
  for (int l = 0; l < n - j0; ++l) part[l] += a[j0 + l] * b[j0 + l] * (c[j0 + l] - mu);
  return combine_lanes(part);
}

}  // namespace mantissa::surrogates::detail
