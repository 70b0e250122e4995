#pragma once
// What the bitwise row-kernel-against-point-kernel tests share (tstHostStencil.cpp,
// tstHostCpml.cpp): host views of the three-dimensional field layout, bit patterns, a bitwise
// comparison that reports the first mismatches, and the random p, p_old and model of a test grid.
#include <mantissa/core/LowPrecision.hpp>

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>

namespace mantissa::seismic::test {

template <class T>
using HostView = Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::HostSpace>;

template <class T>
std::uint64_t bits_of(const T& v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

// A deep copy of v.
template <class T>
HostView<T> copy_of(const HostView<T>& v, const std::string& label) {
  HostView<T> c(label, v.extent(0), v.extent(1), v.extent(2));
  Kokkos::deep_copy(c, v);
  return c;
}

// Points where x and y differ in any bit; the first three are reported as failures.
template <class A, class B>
long count_mismatches(const HostView<A>& x, const HostView<B>& y, const std::string& what) {
  long bad = 0;
  for (std::size_t k = 0; k < x.extent(0); ++k)
    for (std::size_t j = 0; j < x.extent(1); ++j)
      for (std::size_t i = 0; i < x.extent(2); ++i)
        if (bits_of(x(k, j, i)) != bits_of(y(k, j, i))) {
          if (bad < 3)
            ADD_FAILURE() << what << " at (" << k << "," << j << "," << i << "): row kernel "
                          << double(float(x(k, j, i))) << ", point kernel " << double(float(y(k, j, i)));
          ++bad;
        }
  return bad;
}

// p and p_old uniform in [-1, 1], the model (c^2 dt^2 / h^2, in fp32 for 16-bit storage as the
// solver keeps it) in [0.05, 0.3], on ez x ey x ex points ghosts included.
template <class S>
struct RandomFields {
  using M = std::conditional_t<(sizeof(S) >= 4), S, float>;
  HostView<S> p, q;
  HostView<M> m;
  RandomFields(int ez, int ey, int ex, std::mt19937_64& rng)
      : p("p", ez, ey, ex), q("q", ez, ey, ex), m("m", ez, ey, ex) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), c2(0.05, 0.3);
    for (int k = 0; k < ez; ++k)
      for (int j = 0; j < ey; ++j)
        for (int i = 0; i < ex; ++i) {
          p(k, j, i) = S(u(rng));
          q(k, j, i) = S(u(rng));
          m(k, j, i) = M(c2(rng));
        }
  }
};

}  // namespace mantissa::seismic::test

// One test per storage/compute pair the solver is instantiated with, each calling the including
// file's compare_all<Storage, Compute>().
#define MANTISSA_TEST_EVERY_STORAGE_COMPUTE_PAIR(Suite) \
  TEST(Suite, Fp64) {                                   \
    compare_all<double, double>();                      \
  }                                                     \
  TEST(Suite, Fp64StorageFp32Compute) {                 \
    compare_all<double, float>();                       \
  }                                                     \
  TEST(Suite, Fp32StorageFp64Compute) {                 \
    compare_all<float, double>();                       \
  }                                                     \
  TEST(Suite, Fp32) {                                   \
    compare_all<float, float>();                        \
  }                                                     \
  TEST(Suite, Bf16Storage) {                            \
    compare_all<mantissa::bf16, float>();               \
  }                                                     \
  TEST(Suite, Fp16Storage) {                            \
    compare_all<mantissa::fp16, float>();               \
  }
