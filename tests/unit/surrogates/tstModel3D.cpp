// The surrogate in 3D: windows of w^3 patches (plain and shifted) partition every tile, the
// patch (un)embedding of p^3 cells follows the documented feature order, the sinusoidal
// encoding uses the z coordinate in its third channel group, and the whole model's hand-written
// backward matches central differences in fp64 with plain and shifted windows.
#include <surrogates/Checkpoint.hpp>
#include <surrogates/Model.hpp>
#include <surrogates/Patches.hpp>

#include "ModelGradientCheck.hpp"
#include "TestMatrices.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

namespace ms = mantissa::surrogates;
using T = double;

namespace {

ms::Matrix<T> random_matrix(std::int64_t r, std::int64_t c, unsigned seed, double scale = 1.0) {
  return ms::test::random_matrix<T>(r, c, seed, scale);
}
using ms::test::dot;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Two tiles of 3 x 2 x 3 patches (x, y, z) at different global offsets: with w = 2 every axis
// has windows cut by the tile edge, and the shifted windows (boundaries moved by 1) are cut on
// both sides, so windows of 1, 2, 4 and 8 tokens occur.
const std::vector<std::array<std::int64_t, 3>> kOffsets{{0, 0, 0}, {1, 2, 1}};
const std::array<std::int64_t, 3> kExtent{3, 2, 3};

}  // namespace

TEST(SurrogateModel3D, WindowsPartitionEveryTileAlongAllThreeAxes) {
  const int w = 2;
  ms::TokenLayout layout(3, kExtent, kOffsets, w);
  ASSERT_EQ(layout.num_tokens(), 2 * 3 * 2 * 3);
  auto coords = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.coords());
  // Token order: tile by tile, row-major (z, y, x).
  for (std::int64_t b = 0, t = 0; b < 2; ++b)
    for (std::int64_t z = 0; z < kExtent[2]; ++z)
      for (std::int64_t y = 0; y < kExtent[1]; ++y)
        for (std::int64_t x = 0; x < kExtent[0]; ++x, ++t) {
          EXPECT_EQ(coords(t, 0), kOffsets[b][0] + x);
          EXPECT_EQ(coords(t, 1), kOffsets[b][1] + y);
          EXPECT_EQ(coords(t, 2), kOffsets[b][2] + z);
        }
  for (bool shifted : {false, true}) {
    const int shift = shifted ? w / 2 : 0;
    const auto& win = layout.windows(shifted);
    auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.offsets);
    auto mem = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.members);
    // Expected windows, built independently: (tile, block x, block y, block z) of every token.
    std::set<std::array<std::int64_t, 4>> keys;
    auto key_of = [&](int t) {
      return std::array<std::int64_t, 4>{t / layout.tokens_per_tile(), floor_div(coords(t, 0) + shift, w),
                                         floor_div(coords(t, 1) + shift, w),
                                         floor_div(coords(t, 2) + shift, w)};
    };
    for (int t = 0; t < layout.num_tokens(); ++t) keys.insert(key_of(t));
    EXPECT_EQ(win.count, int(keys.size())) << (shifted ? "shifted" : "plain");
    std::vector<int> seen(layout.num_tokens(), 0);
    std::set<std::array<std::int64_t, 4>> window_keys;
    int largest = 0;
    for (int k = 0; k < win.count; ++k) {
      ASSERT_LT(off(k), off(k + 1)) << "empty window " << k;
      largest = std::max(largest, off(k + 1) - off(k));
      const auto key = key_of(mem(off(k)));
      window_keys.insert(key);
      for (int i = off(k); i < off(k + 1); ++i) {
        seen[mem(i)]++;
        EXPECT_EQ(key_of(mem(i)), key) << "window " << k << " mixes blocks (axis z ignored?)";
        if (i > off(k)) {
          EXPECT_LT(mem(i - 1), mem(i)) << "window members not in token order";
        }
      }
    }
    EXPECT_EQ(window_keys.size(), keys.size()) << "two windows share one block";
    EXPECT_EQ(largest, win.max_size);
    // Plain: tile 0 holds the full block x 0..1, y 0..1, z 0..1 (8 tokens). Shifted: the tiles
    // are 2 patches tall in y and the y boundary moves to 1 (tile 0) or 3 (tile 1), so every
    // shifted window is 1 patch tall: at most 2 x 1 x 2 = 4 tokens.
    EXPECT_EQ(win.max_size, shifted ? 4 : 8);
    for (int s : seen) EXPECT_EQ(s, 1);
  }
  // Counted by hand, independently of the code above. Plain blocks of 2: tile 0 (x 0..2, y 0..1,
  // z 0..2) has 2 x 1 x 2 = 4 windows, tile 1 (x 1..3, y 2..3, z 1..3) also 2 x 1 x 2 = 4.
  // Shifted (boundaries at odd coordinates): tile 0 has 2 x 2 x 2 = 8, tile 1 2 x 2 x 2 = 8.
  EXPECT_EQ(layout.windows(false).count, 8);
  EXPECT_EQ(layout.windows(true).count, 16);
}

TEST(SurrogateModel3D, PatchifyFollowsTheDocumentedFeatureOrderAndInverts) {
  // fields [B=2, C=2, nz=6, ny=4, nx=6] with value = a unique code of (b, c, z, y, x), so every
  // entry of the token matrix says where it came from.
  const int p = 2;
  ms::FieldBatch<T> fields("fields", 2, 2, 6, 4, 6);
  auto code = [](std::int64_t b, std::int64_t c, std::int64_t z, std::int64_t y, std::int64_t x) {
    return double((((b * 2 + c) * 6 + z) * 4 + y) * 6 + x);
  };
  auto hf = Kokkos::create_mirror_view(fields);
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 2; ++c)
      for (int z = 0; z < 6; ++z)
        for (int y = 0; y < 4; ++y)
          for (int x = 0; x < 6; ++x) hf(b, c, z, y, x) = code(b, c, z, y, x);
  Kokkos::deep_copy(fields, hf);
  const std::int64_t Pz = 3, Py = 2, Px = 3, feat = 2 * p * p * p;
  auto tokens = ms::make_matrix<T>("tokens", 2 * Pz * Py * Px, feat);
  ms::patchify(fields, p, p, tokens);
  auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tokens);
  // Token (b, pz, py, px), feature (c, dz, dy, dx): PyTorch's
  // x.reshape(B, C, Pz, p, Py, p, Px, p).permute(0, 2, 4, 6, 1, 3, 5, 7).
  int mismatches = 0;
  for (int b = 0; b < 2; ++b)
    for (int pz = 0; pz < Pz; ++pz)
      for (int py = 0; py < Py; ++py)
        for (int px = 0; px < Px; ++px)
          for (int c = 0; c < 2; ++c)
            for (int dz = 0; dz < p; ++dz)
              for (int dy = 0; dy < p; ++dy)
                for (int dx = 0; dx < p; ++dx) {
                  const std::int64_t t = ((b * Pz + pz) * Py + py) * Px + px;
                  const std::int64_t f = ((c * p + dz) * p + dy) * p + dx;
                  mismatches += ht(t, f) != code(b, c, pz * p + dz, py * p + dy, px * p + dx);
                }
  EXPECT_EQ(mismatches, 0);
  ms::FieldBatch<T> back("back", 2, 2, 6, 4, 6);
  ms::unpatchify(tokens, p, p, back);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for (std::size_t i = 0; i < hb.size(); ++i) ASSERT_EQ(hb.data()[i], hf.data()[i]) << "entry " << i;
}

TEST(SurrogateModel3D, SinusoidalEncodingUsesEachAxisInItsOwnChannelGroup) {
  // D = 12 in 3D: groups of Dg = 4 channels for x, y, z; channel 2i / 2i+1 of a group holds
  // sin / cos(g_a * 10000^(-2i/Dg)) (Vaswani et al. 2017, per axis).
  const int D = 12, dg = D / 3;
  ms::PositionEncoding<T> pos(ms::PositionKind::sinusoidal, 3, D, {1, 1, 1});
  ms::TokenLayout layout(3, {2, 3, 4}, {{5, 1, 7}}, 2);
  auto x = ms::make_matrix<T>("x", layout.num_tokens(), D);
  pos.forward(layout, x);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto coords = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.coords());
  double worst = 0.0;
  for (std::int64_t t = 0; t < layout.num_tokens(); ++t)
    for (int c = 0; c < D; ++c) {
      const int a = c / dg, i = (c % dg) / 2;
      const double arg = double(coords(t, a)) * std::pow(10000.0, -2.0 * i / dg);
      const double want = c % 2 == 0 ? std::sin(arg) : std::cos(arg);
      worst = std::max(worst, std::abs(hx(t, c) - want));
    }
  // The kernel computes the frequency as exp(-2i/Dg * log 10000) rather than pow: a few ulps of
  // arguments up to 10 (coordinates < 11), i.e. ~1e-14; 1e-12 leaves room and is far below the
  // O(1) error of a wrong axis or channel.
  EXPECT_LT(worst, 1e-12);
  // Tokens that differ only in z (token 0 at z = 7, token 2 * 3 at z = 8, same x and y) get
  // different encodings in the z group: the third axis is not dropped.
  const std::int64_t next_z = 2 * 3;
  ASSERT_EQ(coords(next_z, 2), coords(0, 2) + 1);
  EXPECT_NE(hx(0, 2 * dg), hx(next_z, 2 * dg));
}

TEST(SurrogateModel3D, WholeModelGradientsMatchCentralDifferences) {
  // Tolerance as in tstGradients.cpp: central difference with h = 1e-6, truncation ~1e-12,
  // rounding ~eps |L| / h ~ 1e-9 for |L| up to 10; accept 1e-6 relative to
  // max(|analytic|, 1e-2), at least ten times both, far below any real error (O(1)).
  for (bool shifted : {false, true}) {
    ms::ModelConfig c;
    c.dim = 3;
    c.in_channels = 2;
    c.out_channels = 1;
    c.patch = 2;   // 8 cells per patch: 16 input, 8 output features
    c.embed = 12;  // divisible by 2 * dim for the sinusoidal encoding and by heads
    c.heads = 2;
    c.layers = 2;
    c.mlp_hidden = 10;
    c.window = 2;
    c.shifted = shifted;
    c.position = shifted ? ms::PositionKind::learned : ms::PositionKind::sinusoidal;
    c.global_patches = {4, 4, 4};
    ms::Model<T> model(c);
    ASSERT_EQ(c.in_features(), 16);
    ASSERT_EQ(c.out_features(), 8);
    ms::TokenLayout layout(3, kExtent, kOffsets, c.window);
    const auto counts =
        ms::test::check_model_gradients(model, layout,
                                        ms::FieldBatch<T>("fields", 2, c.in_channels, kExtent[2] * c.patch,
                                                          kExtent[1] * c.patch, kExtent[0] * c.patch),
                                        31, 37, 6, shifted ? "shifted" : "plain");
    const int checked = counts.checked, nonzero = counts.nonzero;
    EXPECT_GT(checked, 6 * 10);
    // Most sampled entries carry a gradient (the key bias and a few learned-table rows outside
    // the tiles have none), so the comparison is not a comparison of zeros.
    EXPECT_GT(nonzero, checked / 2);
  }
}

TEST(SurrogateModel3D, ShiftedWindowsChangeTheResultOnlyThroughTheOddBlocks) {
  // With one layer, shifted = true still uses plain windows (only odd blocks shift), so the
  // outputs agree bitwise; with two layers the shifted model differs: the windows really move
  // in 3D.
  auto run = [](int layers, bool shifted) {
    ms::ModelConfig c;
    c.dim = 3;
    c.in_channels = 1;
    c.out_channels = 1;
    c.patch = 1;
    c.embed = 6;
    c.heads = 1;
    c.layers = layers;
    c.mlp_hidden = 8;
    c.window = 2;
    c.shifted = shifted;
    ms::Model<T> model(c);
    ms::TokenLayout layout(3, {4, 4, 4}, {{0, 0, 0}}, c.window);
    auto tokens = random_matrix(layout.num_tokens(), 1, 41);
    ms::Matrix<T> out;
    model.forward(ms::Context{mantissa::Precision::fp64}, layout, tokens, out);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    return std::vector<double>(h.data(), h.data() + h.size());
  };
  EXPECT_EQ(run(1, false), run(1, true));
  const auto a = run(2, false), b = run(2, true);
  double diff = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
  EXPECT_GT(diff, 1e-6) << "shifting the windows of block 1 in 3D changed nothing";
}

TEST(SurrogateModel3D, CheckpointRoundTripGivesTheSameOutputsAndRefusesA2DModel) {
  // A 3D model with learned positions (a table over the 3D patch grid) saved and loaded into a
  // model built with another seed: the outputs must then agree bitwise (fp64 weights stored as
  // fp64), and before loading they must differ (the test would otherwise prove nothing).
  ms::ModelConfig c;
  c.dim = 3;
  c.in_channels = 2;
  c.out_channels = 1;
  c.patch = 2;
  c.embed = 12;
  c.heads = 2;
  c.layers = 2;
  c.mlp_hidden = 10;
  c.window = 2;
  c.shifted = true;
  c.position = ms::PositionKind::learned;
  c.global_patches = {4, 4, 4};
  ms::Model<T> a(c);
  ms::ModelConfig c2 = c;
  c2.seed = c.seed + 1;
  ms::Model<T> b(c2);
  ms::TokenLayout layout(3, kExtent, kOffsets, c.window);
  auto tokens = random_matrix(layout.num_tokens(), c.in_features(), 43);
  const ms::Context ctx{mantissa::Precision::fp64};
  auto run = [&](ms::Model<T>& m) {
    ms::Matrix<T> out;
    m.forward(ctx, layout, tokens, out);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    return std::vector<double>(h.data(), h.data() + h.size());
  };
  const auto ya = run(a);
  EXPECT_NE(ya, run(b));
  const std::string file =
      testing::TempDir() + "mantissa_tstModel3D_" + std::to_string(::getpid()) + "_checkpoint.h5";
  ms::save_surrogate<T>(file, {&a, nullptr, nullptr, nullptr});
  ms::load_surrogate<T>(file, {&b, nullptr, nullptr, nullptr});
  EXPECT_EQ(ya, run(b));
  // The same model in 2D: refused, naming the key that differs.
  ms::ModelConfig c2d = c;
  c2d.dim = 2;
  c2d.global_patches = {4, 4, 1};
  ms::Model<T> flat(c2d);
  try {
    ms::load_surrogate<T>(file, {&flat, nullptr, nullptr, nullptr});
    ADD_FAILURE() << "a 3D checkpoint was loaded into a 2D model";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("surrogate.dim is 3 in the file but 2"), std::string::npos)
        << e.what();
  }
  std::remove(file.c_str());
}
