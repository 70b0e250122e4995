// The host row kernel of the interior update (detail/HostStencil.hpp) against the point-wise
// kernel (laplacian_flat + leapfrog, the device form), bitwise: every storage/compute pair the
// solver is instantiated with, 2D and 3D, orders 2 to 8, boxes whose sizes are not multiples of
// the vector width or of the tile, and a ghost layer wider than the radius. Bitwise because the
// solver's promise that results do not depend on the decomposition or the back-end's kernel
// rests on both computing every point with the same operations in the same order.
// Also: the branch-free bf16/fp16 row conversions against LowPrecisionFloat's, bit for bit.
#include <mantissa/core/LowPrecision.hpp>
#include <seismic/detail/SolverKernels.hpp>

#include "HostKernelCompare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace mantissa;
using namespace mantissa::seismic;
using Space = Kokkos::DefaultHostExecutionSpace;
namespace sk = mantissa::seismic::detail;

using test::bits_of;
using test::HostView;

// Runs both kernels on the same random state and compares every stored value (ghosts
// included, which neither kernel may touch).
template <class S, class C, int R>
void compare_kernels(int dim, int nx, int ny, int nz, int ghost) {
  const int gz = dim == 3 ? ghost : 0;
  const int ex = nx + 2 * ghost, ey = ny + 2 * ghost, ez = (dim == 3 ? nz : 1) + 2 * gz;
  std::mt19937_64 rng(1234 + 97 * R + dim);
  const test::RandomFields<S> f(ez, ey, ex, rng);
  const HostView<S>&p = f.p, &q1 = f.q;
  const auto& m = f.m;
  const HostView<S> q2 = test::copy_of(q1, "q2"), q0 = test::copy_of(q1, "q0");
  const double spacing[3] = {1.0, 0.8, 1.25};
  const auto w = make_stencil_weights<C, R>(dim, spacing);
  sk::Box box;
  box.lo[0] = ghost;
  box.lo[1] = ghost;
  box.lo[2] = gz;
  box.hi[0] = ghost + nx;
  box.hi[1] = ghost + ny;
  box.hi[2] = gz + (dim == 3 ? nz : 1);
  const Space space;
  sk::interior_update<R>(space, box, p, q1, m, w, /*point_kernel=*/false);
  sk::interior_update<R>(space, box, p, q2, m, w, /*point_kernel=*/true);
  space.fence();
  const long mismatches = test::count_mismatches(
      q1, q2, "order " + std::to_string(2 * R) + ", " + std::to_string(dim) + "D, p_old");
  long changed = 0;  // points the update changed (inside the box)
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j)
      for (int i = box.lo[0]; i < box.hi[0]; ++i) changed += bits_of(q1(k, j, i)) != bits_of(q0(k, j, i));
  EXPECT_EQ(mismatches, 0) << "order " << 2 * R << ", " << dim << "D, " << nx << "x" << ny << "x" << nz;
  EXPECT_GT(changed, 0);
}

template <class S, class C>
void compare_all() {
  // 3D: sizes off every power of two and off the 16-row tile; 2D: a tall box (many tiles).
  compare_kernels<S, C, 4>(3, 37, 21, 19, 4);
  compare_kernels<S, C, 3>(3, 13, 35, 9, 4);
  compare_kernels<S, C, 2>(3, 8, 16, 17, 3);
  compare_kernels<S, C, 1>(3, 5, 3, 7, 2);
  compare_kernels<S, C, 4>(2, 41, 53, 1, 4);
  compare_kernels<S, C, 1>(2, 3, 2, 1, 1);
}

MANTISSA_TEST_EVERY_STORAGE_COMPUTE_PAIR(HostStencil)

// Row conversions: every bf16/fp16 pattern decodes to what operator float gives; a sweep of
// floats (every 2^8-th pattern: all exponents, both signs, rounding ties, Inf, NaN) encodes to
// the constructor's bits (NaN: any NaN, the kernels never produce one from finite input).
template <class S>
void check_conversions() {
  std::vector<S> in(1 << 16);
  for (std::uint32_t b = 0; b < (1u << 16); ++b) in[b] = S::from_bits(std::uint16_t(b));
  std::vector<float> dec(in.size());
  sk::host::decode<float>(in.data(), dec.data(), int(in.size()));
  for (std::uint32_t b = 0; b < (1u << 16); ++b) {
    const float want = float(in[b]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(dec[b])) << b;
    else
      ASSERT_EQ(bits_of(dec[b]), bits_of(want)) << "pattern " << b;
  }
  std::vector<float> f;
  for (std::uint64_t b = 0; b < (std::uint64_t(1) << 32); b += 251) {  // odd step: all low bits
    const std::uint32_t u = std::uint32_t(b);
    float x;
    std::memcpy(&x, &u, sizeof x);
    f.push_back(x);
  }
  // ties of both kinds: exactly half an ulp of the 16-bit format above even and odd values
  for (float x : {1.0f, 1.5f, 3.0f, 1000.0f, 65504.0f, 6.1e-5f, 3.0e-8f}) {
    for (int d = -3; d <= 3; ++d) {
      std::uint32_t u;
      std::memcpy(&u, &x, sizeof u);
      u += std::uint32_t(d) << (std::is_same<S, bf16>::value ? 15 : 12);
      float y;
      std::memcpy(&y, &u, sizeof y);
      f.push_back(y);
      f.push_back(-y);
    }
  }
  std::vector<S> enc(f.size());
  sk::host::encode<S>(f.data(), enc.data(), int(f.size()));
  long bad = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const S want(f[i]);
    if (std::isnan(f[i])) {
      EXPECT_TRUE(std::isnan(float(enc[i])));
    } else if (enc[i].bits() != want.bits()) {
      if (bad++ < 5)
        ADD_FAILURE() << "float " << f[i] << ": row " << enc[i].bits() << ", constructor " << want.bits();
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(f.size(), std::size_t(1) << 24);
#ifdef MANTISSA_SEISMIC_HOST_AVX2
  // The eight-wide forms the fused 2D sweep uses: the same bits as the row conversions.
  std::vector<float> dec8(in.size());
  for (std::size_t b = 0; b < in.size(); b += 8)
    _mm256_storeu_ps(dec8.data() + b, sk::host::decode8(in.data() + b));
  for (std::size_t b = 0; b < in.size(); ++b)
    ASSERT_EQ(bits_of(dec8[b]), bits_of(dec[b])) << "decode8, pattern " << b;
  std::vector<S> enc8(f.size() / 8 * 8);
  for (std::size_t b = 0; b < enc8.size(); b += 8)
    sk::host::encode8(_mm256_loadu_ps(f.data() + b), enc8.data() + b);
  long bad8 = 0;
  for (std::size_t i = 0; i < enc8.size(); ++i) bad8 += enc8[i].bits() != enc[i].bits();
  EXPECT_EQ(bad8, 0) << "encode8 against the row encode (NaN payloads included)";
#endif
}

TEST(HostStencil, Bf16RowConversions) {
  check_conversions<bf16>();
}
TEST(HostStencil, Fp16RowConversions) {
  check_conversions<fp16>();
}

}  // namespace
