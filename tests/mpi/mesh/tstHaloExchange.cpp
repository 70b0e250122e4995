// Halo exchange against a global reference: every point holds a function of its global
// index; after the exchange each ghost must hold the value of the global point it mirrors
// (wrapped when periodic), and ghosts outside a non-periodic boundary stay untouched.
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/mesh/HaloExchange.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

namespace {

using mantissa::Decomposition;
using mantissa::Field;
using mantissa::Grid;
using mantissa::HaloExchange;
using mantissa::HaloPattern;

template <class T>
T reference_value(std::int64_t gx, std::int64_t gy, std::int64_t gz, int field) {
  // Small integers are exact in every type tested (bf16 has 8 significant bits).
  return T(float((gx * 7 + gy * 3 + gz * 5 + field * 11) % 97));
}

template <class T>
void check_exchange(int dim, bool periodic, int width, HaloPattern pattern) {
  Grid grid;
  grid.dim = dim;
  grid.n = {13, 11, dim == 3 ? 9 : 1};
  grid.periodic = {periodic, periodic, periodic && dim == 3};
  Decomposition decomp(MPI_COMM_WORLD, grid);
  const int nf = 2;
  Field<T> f0("f0", decomp, width), f1("f1", decomp, width);
  const T sentinel = T(-1.0f);
  for (int f = 0; f < nf; ++f) {
    auto& field = f == 0 ? f0 : f1;
    auto h = Kokkos::create_mirror_view(field.view());
    const auto g = field.ghosts();
    const auto off = field.offset();
    for (std::size_t k = 0; k < h.extent(0); ++k)
      for (std::size_t j = 0; j < h.extent(1); ++j)
        for (std::size_t i = 0; i < h.extent(2); ++i) {
          const bool owned = std::int64_t(i) >= g[0] && std::int64_t(i) < g[0] + field.extent()[0] &&
                             std::int64_t(j) >= g[1] && std::int64_t(j) < g[1] + field.extent()[1] &&
                             std::int64_t(k) >= g[2] && std::int64_t(k) < g[2] + field.extent()[2];
          h(k, j, i) = owned ? reference_value<T>(off[0] + i - g[0], off[1] + j - g[1], off[2] + k - g[2], f)
                             : sentinel;
        }
    Kokkos::deep_copy(field.view(), h);
  }
  HaloExchange<T> halo(decomp, width, nf, pattern);
  halo.exchange({&f0, &f1});
  int errors = 0;
  for (int f = 0; f < nf; ++f) {
    auto& field = f == 0 ? f0 : f1;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field.view());
    const auto g = field.ghosts();
    const auto off = field.offset();
    for (std::size_t k = 0; k < h.extent(0); ++k)
      for (std::size_t j = 0; j < h.extent(1); ++j)
        for (std::size_t i = 0; i < h.extent(2); ++i) {
          std::array<std::int64_t, 3> gi{off[0] + std::int64_t(i) - g[0], off[1] + std::int64_t(j) - g[1],
                                         off[2] + std::int64_t(k) - g[2]};
          int outside_axes = 0, ghost_axes = 0;
          bool outside_domain = false;
          for (int a = 0; a < 3; ++a) {
            const std::int64_t s = a == 0 ? i : a == 1 ? j : k;
            if (s < g[a] || s >= g[a] + field.extent()[a]) ++ghost_axes;
            if (gi[a] < 0 || gi[a] >= grid.n[a]) {
              ++outside_axes;
              if (grid.periodic[a])
                gi[a] = (gi[a] + grid.n[a]) % grid.n[a];
              else
                outside_domain = true;
            }
          }
          (void)outside_axes;
          const bool filled = !outside_domain && (pattern == HaloPattern::full || ghost_axes <= 1);
          const T expect = filled ? reference_value<T>(gi[0], gi[1], gi[2], f) : sentinel;
          if (float(h(k, j, i)) != float(expect)) ++errors;
        }
  }
  EXPECT_EQ(errors, 0) << "dim " << dim << " periodic " << periodic << " width " << width;
}

class HaloTest : public ::testing::TestWithParam<std::tuple<int, bool, int>> {};

TEST_P(HaloTest, MatchesGlobalReferenceFp64) {
  auto [dim, periodic, width] = GetParam();
  check_exchange<double>(dim, periodic, width, HaloPattern::faces);
  check_exchange<double>(dim, periodic, width, HaloPattern::full);
}
TEST_P(HaloTest, MatchesGlobalReferenceFp32) {
  auto [dim, periodic, width] = GetParam();
  check_exchange<float>(dim, periodic, width, HaloPattern::full);
}
TEST_P(HaloTest, MatchesGlobalReferenceBf16) {
  auto [dim, periodic, width] = GetParam();
  check_exchange<mantissa::bf16>(dim, periodic, width, HaloPattern::full);
}

INSTANTIATE_TEST_SUITE_P(Mesh, HaloTest,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Bool(),
                                            ::testing::Values(1, 2, 3, 4)));

TEST(Decomposition, UnevenSplitCoversEveryPointOnce) {
  for (int parts = 1; parts <= 7; ++parts) {
    std::int64_t next = 0;
    for (int p = 0; p < parts; ++p) {
      auto s = Decomposition::split(23, parts, p);
      EXPECT_EQ(s[0], next);
      EXPECT_GE(s[1], 23 / parts);
      EXPECT_LE(s[1], 23 / parts + 1);
      next += s[1];
    }
    EXPECT_EQ(next, 23);
  }
}

}  // namespace
