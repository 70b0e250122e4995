// Domain-decomposed inference (subdomain + halo patches gathered from the owners) gives the
// one-rank result: every rank also runs the whole domain on MPI_COMM_SELF and compares its part.
#include <surrogates/Surrogate.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

ms::SurrogateConfig config(bool shifted) {
  ms::SurrogateConfig c;
  c.model.dim = 2;
  c.model.in_channels = 3;
  c.model.out_channels = 2;
  c.model.patch = 2;
  c.model.embed = 16;
  c.model.heads = 2;
  c.model.layers = 3;
  c.model.mlp_hidden = 32;
  c.model.window = 2;
  c.model.shifted = shifted;
  c.model.position = shifted ? ms::PositionKind::learned : ms::PositionKind::sinusoidal;
  return c;
}

double value(int c, std::int64_t x, std::int64_t y) {
  return std::sin(0.3 * double(x) + 0.7 * c) * std::cos(0.2 * double(y) - 0.1 * c) + 0.1 * c;
}

void fill(mantissa::Field<double>& f, int c) {
  auto h = Kokkos::create_mirror_view(f.view());
  const auto& e = f.extent();
  const auto& o = f.offset();
  for (std::int64_t y = 0; y < e[1]; ++y)
    for (std::int64_t x = 0; x < e[0]; ++x)
      h(0, y + f.ghost(1), x + f.ghost(0)) = value(c, o[0] + x, o[1] + y);
  Kokkos::deep_copy(f.view(), h);
}

struct Run {
  std::vector<mantissa::Field<double>> in, out;
};

Run predict(const mantissa::Decomposition& d, bool shifted, Precision p) {
  ms::Surrogate s(config(shifted), d);
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

void compare(bool shifted, Precision p, double tol) {
  mantissa::Grid g;
  g.dim = 2;
  g.n = {32, 24, 1};
  mantissa::Decomposition dist(MPI_COMM_WORLD, g);
  mantissa::Decomposition whole(MPI_COMM_SELF, g);
  const Run a = predict(dist, shifted, p);
  const Run b = predict(whole, shifted, p);
  double err = 0.0, scale = 0.0;
  for (int c = 0; c < 2; ++c) {
    auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.out[c].view());
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.out[c].view());
    const auto& e = a.out[c].extent();
    const auto& o = a.out[c].offset();
    for (std::int64_t y = 0; y < e[1]; ++y)
      for (std::int64_t x = 0; x < e[0]; ++x) {
        const double va = ha(0, y + 1, x + 1), vb = hb(0, o[1] + y + 1, o[0] + x + 1);
        err = std::max(err, std::abs(va - vb));
        scale = std::max(scale, std::abs(vb));
      }
  }
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(err, tol * scale) << (shifted ? "shifted" : "plain") << " " << mantissa::to_string(p);
}

}  // namespace

// Tolerances: the same windows hold the same tokens in the same order on every rank count, so
// the only difference is BLAS blocking for a different number of rows: a few ulps per GEMM
// through 3 blocks, 1e-12 (fp64) and 1e-5 (fp32) relative to the largest output.
TEST(SurrogateInference, PlainWindowsFp64) {
  compare(false, Precision::fp64, 1e-12);
}
TEST(SurrogateInference, ShiftedWindowsFp64) {
  compare(true, Precision::fp64, 1e-12);
}
TEST(SurrogateInference, ShiftedWindowsFp32) {
  compare(true, Precision::fp32, 1e-5);
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
    ms::Surrogate s(config(false), d);
    FAIL() << "no error";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of surrogate.patch"), std::string::npos) << e.what();
  }
}

// 3D: windows of 2^3 patches of 2^3 cells, halos gathered along x, y and z. The process grid
// is chosen by MPI_Dims_create ({2,1,1} at 2 ranks, {2,2,1} at 4: x and y cut) or forced to
// {1,1,size} so that z is cut too; 8 x 8 x 16 cells are whole patches in every one of these.
namespace {

double value3d(int c, std::int64_t x, std::int64_t y, std::int64_t z) {
  return std::sin(0.3 * double(x) + 0.7 * c) * std::cos(0.2 * double(y) - 0.1 * c) *
             std::cos(0.25 * double(z) + 0.3 * c) +
         0.1 * c;
}

Run predict3d(const mantissa::Decomposition& d, bool shifted, Precision p) {
  ms::SurrogateConfig c = config(shifted);
  c.model.dim = 3;
  c.model.embed = 12;  // divisible by 2 * dim (sinusoidal encoding) and by the 2 heads
  c.model.layers = 2;
  c.model.mlp_hidden = 16;
  ms::Surrogate s(c, d);
  s.set_normalization({{0.0, 0.1, 0.2}, {1.0, 1.0, 2.0}, {0.0, 0.5}, {1.0, 0.5}});
  Run r;
  for (int ch = 0; ch < 3; ++ch) {
    r.in.emplace_back("in", d, 1);
    auto& f = r.in.back();
    auto h = Kokkos::create_mirror_view(f.view());
    const auto& e = f.extent();
    const auto& o = f.offset();
    for (std::int64_t z = 0; z < e[2]; ++z)
      for (std::int64_t y = 0; y < e[1]; ++y)
        for (std::int64_t x = 0; x < e[0]; ++x)
          h(z + f.ghost(2), y + f.ghost(1), x + f.ghost(0)) = value3d(ch, o[0] + x, o[1] + y, o[2] + z);
    Kokkos::deep_copy(f.view(), h);
  }
  for (int ch = 0; ch < 2; ++ch) r.out.emplace_back("out", d, 1);
  s.predict({&r.in[0], &r.in[1], &r.in[2]}, {&r.out[0], &r.out[1]}, p);
  return r;
}

void compare3d(bool shifted, Precision p, bool cut_z, double tol) {
  mantissa::Grid g;
  g.dim = 3;
  g.n = {8, 8, 16};
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mantissa::Decomposition dist(MPI_COMM_WORLD, g,
                               cut_z ? std::array<int, 3>{1, 1, size} : std::array<int, 3>{});
  mantissa::Decomposition whole(MPI_COMM_SELF, g);
  const Run a = predict3d(dist, shifted, p);
  const Run b = predict3d(whole, shifted, p);
  double err = 0.0, scale = 0.0;
  for (int c = 0; c < 2; ++c) {
    auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.out[c].view());
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.out[c].view());
    const auto& e = a.out[c].extent();
    const auto& o = a.out[c].offset();
    for (std::int64_t z = 0; z < e[2]; ++z)
      for (std::int64_t y = 0; y < e[1]; ++y)
        for (std::int64_t x = 0; x < e[0]; ++x) {
          const double va = ha(z + 1, y + 1, x + 1), vb = hb(o[2] + z + 1, o[1] + y + 1, o[0] + x + 1);
          err = std::max(err, std::abs(va - vb));
          scale = std::max(scale, std::abs(vb));
        }
  }
  // Every rank must see a result (no empty subdomain hides a comparison) that is not trivially 0.
  EXPECT_GT(scale, 0.0);
  EXPECT_LE(err, tol * scale) << (shifted ? "shifted" : "plain") << " " << mantissa::to_string(p)
                              << (cut_z ? ", z cut" : "");
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
