// Domain-decomposed inference (subdomain + halo patches gathered from the owners) gives the
// one-rank result: every rank also runs the whole domain on MPI_COMM_SELF and compares its part.
#include <surrogates/Surrogate.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

// 2D: 3 -> 2 channels, patches of 2^2, 3 blocks; 3D: patches and windows of 2^3, 2 blocks.
ms::SurrogateConfig config(int dim, bool shifted) {
  ms::SurrogateConfig c;
  c.model.dim = dim;
  c.model.in_channels = 3;
  c.model.out_channels = 2;
  c.model.patch = 2;
  c.model.embed = dim == 3 ? 12 : 16;  // divisible by 2 * dim (sinusoidal encoding) and by the heads
  c.model.heads = 2;
  c.model.layers = dim == 3 ? 2 : 3;
  c.model.mlp_hidden = dim == 3 ? 16 : 32;
  c.model.window = 2;
  c.model.shifted = shifted;
  c.model.position = shifted ? ms::PositionKind::learned : ms::PositionKind::sinusoidal;
  return c;
}

double value(int c, std::int64_t x, std::int64_t y, std::int64_t z) {
  return std::sin(0.3 * double(x) + 0.7 * c) * std::cos(0.2 * double(y) - 0.1 * c) *
             std::cos(0.25 * double(z) + 0.3 * c) +
         0.1 * c;
}

void fill(mantissa::Field<double>& f, int c) {
  auto h = Kokkos::create_mirror_view(f.view());
  const auto& e = f.extent();
  const auto& o = f.offset();
  for (std::int64_t z = 0; z < e[2]; ++z)
    for (std::int64_t y = 0; y < e[1]; ++y)
      for (std::int64_t x = 0; x < e[0]; ++x)
        h(z + f.ghost(2), y + f.ghost(1), x + f.ghost(0)) = value(c, o[0] + x, o[1] + y, o[2] + z);
  Kokkos::deep_copy(f.view(), h);
}

struct Run {
  std::vector<mantissa::Field<double>> in, out;
};

Run predict(const mantissa::Decomposition& d, int dim, bool shifted, Precision p) {
  ms::Surrogate s(config(dim, shifted), d);
  s.set_normalization({{0.0, 0.1, 0.2}, {1.0, 1.0, 2.0}, {0.0, 0.5}, {1.0, 0.5}});
  Run r;
  for (int c = 0; c < 3; ++c) {
    r.in.emplace_back("in", d, 1);
    fill(r.in.back(), c);
  }
  for (int c = 0; c < 2; ++c) r.out.emplace_back("out", d, 1);
  s.predict({&r.in[0], &r.in[1], &r.in[2]}, {&r.out[0], &r.out[1]}, p);
  return r;
}

// Runs the grid distributed over MPI_COMM_WORLD (process grid `dims`, {} = MPI_Dims_create) and
// whole on MPI_COMM_SELF; every rank compares its part with the whole-domain result.
void compare(const mantissa::Grid& g, const std::array<int, 3>& dims, bool shifted, Precision p, double tol,
             const std::string& what = "") {
  mantissa::Decomposition dist(MPI_COMM_WORLD, g, dims);
  mantissa::Decomposition whole(MPI_COMM_SELF, g);
  const Run a = predict(dist, g.dim, shifted, p);
  const Run b = predict(whole, g.dim, shifted, p);
  double err = 0.0, scale = 0.0;
  for (int c = 0; c < 2; ++c) {
    const auto& fa = a.out[c];
    const auto& fb = b.out[c];
    auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fa.view());
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fb.view());
    const auto& e = fa.extent();
    const auto& o = fa.offset();
    for (std::int64_t z = 0; z < e[2]; ++z)
      for (std::int64_t y = 0; y < e[1]; ++y)
        for (std::int64_t x = 0; x < e[0]; ++x) {
          const double va = ha(z + fa.ghost(2), y + fa.ghost(1), x + fa.ghost(0));
          const double vb = hb(o[2] + z + fb.ghost(2), o[1] + y + fb.ghost(1), o[0] + x + fb.ghost(0));
          err = std::max(err, std::abs(va - vb));
          scale = std::max(scale, std::abs(vb));
        }
  }
  // Every rank must see a result (no empty subdomain hides a comparison) that is not trivially 0.
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(err, tol * scale) << (shifted ? "shifted" : "plain") << " " << mantissa::to_string(p) << what;
}

void compare2d(bool shifted, Precision p, double tol) {
  mantissa::Grid g;
  g.dim = 2;
  g.n = {32, 24, 1};
  compare(g, {}, shifted, p, tol);
}

}  // namespace

// Tolerances: the same windows hold the same tokens in the same order on every rank count, so
// the only difference is BLAS blocking for a different number of rows: a few ulps per GEMM
// through 3 blocks, 1e-12 (fp64) and 1e-5 (fp32) relative to the largest output.
TEST(SurrogateInference, PlainWindowsFp64) {
  compare2d(false, Precision::fp64, 1e-12);
}
TEST(SurrogateInference, ShiftedWindowsFp64) {
  compare2d(true, Precision::fp64, 1e-12);
}
TEST(SurrogateInference, ShiftedWindowsFp32) {
  compare2d(true, Precision::fp32, 1e-5);
}

TEST(SurrogateInference, PatchMisalignedSubdomainIsRefused) {
  mantissa::Grid g;
  g.dim = 2;
  g.n = {30, 24, 1};  // 15 cells per rank at 2 ranks along x: not whole patches of 2
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mantissa::Decomposition d(MPI_COMM_WORLD, g, {size, 1, 1});
  if (d.extent()[0] % 2 == 0) GTEST_SKIP() << "every subdomain is whole patches at this rank count";
  try {
    ms::Surrogate s(config(2, false), d);
    FAIL() << "no error";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of surrogate.patch"), std::string::npos) << e.what();
  }
}

// 3D: windows of 2^3 patches of 2^3 cells, halos gathered along x, y and z. The process grid
// is chosen by MPI_Dims_create ({2,1,1} at 2 ranks, {2,2,1} at 4: x and y cut) or forced to
// {1,1,size} so that z is cut too; 8 x 8 x 16 cells are whole patches in every one of these.
namespace {

void compare3d(bool shifted, Precision p, bool cut_z, double tol) {
  mantissa::Grid g;
  g.dim = 3;
  g.n = {8, 8, 16};
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  compare(g, cut_z ? std::array<int, 3>{1, 1, size} : std::array<int, 3>{}, shifted, p, tol,
          cut_z ? ", z cut" : "");
}

}  // namespace

// Tolerances as for 2D above (same windows, same token order; only BLAS blocking differs).
TEST(SurrogateInference3D, PlainWindowsFp64) {
  compare3d(false, Precision::fp64, false, 1e-12);
}
TEST(SurrogateInference3D, ShiftedWindowsFp64) {
  compare3d(true, Precision::fp64, false, 1e-12);
}
TEST(SurrogateInference3D, ShiftedWindowsFp64CutAlongZ) {
  compare3d(true, Precision::fp64, true, 1e-12);
}
TEST(SurrogateInference3D, ShiftedWindowsFp32CutAlongZ) {
  compare3d(true, Precision::fp32, true, 1e-5);
}
