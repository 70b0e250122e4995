// Flushing subnormals changes what the solver's host kernel computes, on every thread of the
// pool: the interior row kernel (detail/HostStencil.hpp, as Solver::step launches it) on fields
// whose every value is subnormal in the storage type. With flush-to-zero and denormals-are-zero
// every output is exactly zero (the inputs read as zero); with IEEE subnormals the outputs are
// the subnormal results. Registered with OMP_NUM_THREADS=2, and the grid gives each thread work
// items of its own, so a mode set on the master thread only leaves nonzero points (checked by
// the last test, which sets it that way on purpose).
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/LowPrecision.hpp>
#include <seismic/detail/SolverKernels.hpp>

#include "HostKernelCompare.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace {

using namespace mantissa;
using namespace mantissa::seismic;
using Space = Kokkos::DefaultHostExecutionSpace;
namespace sk = mantissa::seismic::detail;
using test::HostView;

constexpr int R = 4, n = 40, g = R, e = n + 2 * g;

template <class S>
S subnormal(std::uint32_t k) {
  if constexpr (std::is_same<S, float>::value) {
    const std::uint32_t u = 0x00000100u + k % 0x3000u;  // 2^-141 .. 2^-135: subnormal fp32
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  } else {
    return S::from_bits(std::uint16_t(0x0001u + k % 0x007Eu));  // subnormal bf16
  }
}

struct Outcome {
  long zero = 0, nonzero = 0;
};

// One interior update of an e^3 grid (40^3 points, 4 ghosts) whose p and p_old are subnormal;
// counts the box's outputs that are exactly zero.
template <class S>
Outcome run_kernel() {
  using M = float;
  HostView<S> p("p", e, e, e), q("q", e, e, e);
  HostView<M> m("m", e, e, e);
  for (int k = 0; k < e; ++k)
    for (int j = 0; j < e; ++j)
      for (int i = 0; i < e; ++i) {
        const std::uint32_t idx = std::uint32_t((k * e + j) * e + i);
        p(k, j, i) = subnormal<S>(3u * idx + 7u);
        q(k, j, i) = subnormal<S>(idx);
        m(k, j, i) = 0.1f;
      }
  const double spacing[3] = {1.0, 1.0, 1.0};
  const auto w = make_stencil_weights<float, R>(3, spacing);
  sk::Box box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = g;
    box.hi[a] = g + n;
  }
  sk::interior_update<R>(Space(), box, p, q, m, w);
  Space().fence();
  Outcome o;
  for (int k = g; k < g + n; ++k)
    for (int j = g; j < g + n; ++j)
      for (int i = g; i < g + n; ++i) {
        // On the bits: comparing with 0.0f here would read a subnormal as zero under DAZ.
        if ((test::bits_of(q(k, j, i)) & (sizeof(S) == 4 ? 0x7FFFFFFFu : 0x7FFFu)) == 0)
          ++o.zero;
        else
          ++o.nonzero;
      }
  return o;
}

bool usable() {
  return std::is_same<Kokkos::DefaultExecutionSpace, Space>::value && host_float_env_controllable();
}

template <class S>
void flush_changes_the_kernel() {
  if (!usable()) GTEST_SKIP() << "kernels not on a settable host CPU";
#if defined(KOKKOS_ENABLE_OPENMP)
  ASSERT_GE(concurrency(Space()), 2) << "registered with OMP_NUM_THREADS=2";
#endif
  const long points = long(n) * n * n;
  {
    ScopedFloatEnv env(SubnormalMode::keep);
    const auto o = run_kernel<S>();
    // IEEE subnormals: 2 p - p_old is at least 2^8 units of the last place and the Laplacian's
    // contribution is smaller, so (almost) no point cancels to zero.
    EXPECT_GT(o.nonzero, points * 99 / 100) << "zero: " << o.zero;
  }
  {
    ScopedFloatEnv env(SubnormalMode::flush);
    ASSERT_TRUE(env.report().as_requested()) << env.report().describe();
    const auto o = run_kernel<S>();
    EXPECT_EQ(o.nonzero, 0) << "points computed with subnormals under " << env.report().describe();
    EXPECT_EQ(o.zero, points);
  }
}

TEST(Subnormals, FlushChangesTheFp32InteriorKernelOnEveryThread) {
  flush_changes_the_kernel<float>();
}
TEST(Subnormals, FlushChangesTheBf16InteriorKernelOnEveryThread) {
  flush_changes_the_kernel<bf16>();
}

// The control: the mode on the calling thread alone. The other pool thread's work items still
// produce subnormal results, which the flush test above would report.
TEST(Subnormals, MasterThreadAloneLeavesNonzeroPoints) {
  if (!usable()) GTEST_SKIP() << "kernels not on a settable host CPU";
#if !defined(KOKKOS_ENABLE_OPENMP)
  GTEST_SKIP() << "no OpenMP pool";
#else
  if (!std::is_same<Space, Kokkos::OpenMP>::value) GTEST_SKIP() << "host pool is not OpenMP";
  ASSERT_GE(concurrency(Space()), 2);
  ScopedFloatEnv env(SubnormalMode::keep);
  set_this_thread_float_env(SubnormalMode::flush);
  const auto o = run_kernel<float>();
  EXPECT_GT(o.nonzero, 0);
  EXPECT_GT(o.zero, 0);
#endif
}

}  // namespace
