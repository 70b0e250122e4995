// Finite-difference checks of every hand-written backward pass, in fp64: for a random
// projection R, L(theta) = sum(R * f(theta)); the analytic dL/dtheta must match the central
// difference (L(theta + h) - L(theta - h)) / 2h.
//
// Tolerance: the central difference has truncation error O(h^2 f''') ~ 1e-12 for h = 1e-6 and
// rounding error ~ eps * |L| / h ~ 1e-9 for |L| up to 10 (the whole model); we accept 1e-6
// relative to max(|analytic|, 1e-2), i.e. at least 1e-8, ten times both, far below the size of
// any real error (a missing term or a wrong index changes the gradient at O(1)).
#include <surrogates/Model.hpp>
#include <surrogates/Patches.hpp>

#include "ModelGradientCheck.hpp"
#include "TestMatrices.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace ms = mantissa::surrogates;
using T = double;

namespace {

ms::Matrix<T> random_matrix(std::int64_t r, std::int64_t c, unsigned seed, double scale = 1.0) {
  return ms::test::random_matrix<T>(r, c, seed, scale);
}
using ms::test::dot;

// Compares the analytic gradient `grad` (flat, host-readable after the call) of `loss` with
// respect to the flat array `x` at up to `samples` entries.
void check(const std::string& what, T* x_host_dev, std::int64_t n, const std::function<double()>& loss,
           const std::function<double(std::int64_t)>& analytic, int samples = 25) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  const double h = 1e-6;
  int checked = 0;
  for (int s = 0; s < samples && s < n * 2; ++s) {
    const std::int64_t i = n <= samples ? s % n : pick(gen);
    if (n <= samples && s >= n) break;
    const T keep = x_host_dev[i];
    x_host_dev[i] = keep + h;
    const double lp = loss();
    x_host_dev[i] = keep - h;
    const double lm = loss();
    x_host_dev[i] = keep;
    const double fd = (lp - lm) / (2 * h);
    const double an = analytic(i);
    EXPECT_NEAR(an, fd, 1e-6 * std::max(std::abs(an), 1e-2)) << what << " entry " << i;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace

TEST(SurrogateGradients, Linear) {
  ms::Linear<T> lin("lin", 5, 7);
  std::mt19937_64 gen(1);
  lin.initialize(gen);
  auto x = random_matrix(6, 5, 2);
  auto R = random_matrix(6, 7, 3);
  ms::Context ctx{mantissa::Precision::fp64};
  ms::Matrix<T> y, dx;
  auto loss = [&] {
    lin.forward(ctx, x, y);
    return dot(y, R);
  };
  loss();
  std::vector<ms::Parameter<T>> params;
  lin.parameters(params);
  for (auto& p : params) Kokkos::deep_copy(p.grad, 0.0);
  lin.backward(ctx, R, dx);
  Kokkos::fence();
  check("dx", x.data(), x.size(), loss, [&](std::int64_t i) { return dx.data()[i]; });
  for (auto& p : params)
    check(p.name, p.value.data(), p.size(), loss, [&](std::int64_t i) { return p.grad(i); });
}

TEST(SurrogateGradients, LayerNorm) {
  ms::LayerNorm<T> ln("ln", 9);
  std::vector<ms::Parameter<T>> params;
  ln.parameters(params);
  // Non-trivial gamma and beta so their gradients and their use in dx are both exercised.
  auto g = random_matrix(1, 9, 11);
  for (int j = 0; j < 9; ++j) params[0].value(j) = 1.0 + 0.5 * g(0, j), params[1].value(j) = 0.3 * g(0, j);
  auto x = random_matrix(4, 9, 4, 2.0);
  auto R = random_matrix(4, 9, 5);
  ms::Matrix<T> y, dx;
  auto loss = [&] {
    ln.forward(x, y);
    return dot(y, R);
  };
  loss();
  for (auto& p : params) Kokkos::deep_copy(p.grad, 0.0);
  ln.backward(R, dx);
  Kokkos::fence();
  check("dx", x.data(), x.size(), loss, [&](std::int64_t i) { return dx.data()[i]; });
  for (auto& p : params)
    check(p.name, p.value.data(), p.size(), loss, [&](std::int64_t i) { return p.grad(i); });
}

TEST(SurrogateGradients, Gelu) {
  ms::Gelu<T> gelu;
  auto x = random_matrix(3, 8, 6, 3.0);
  auto R = random_matrix(3, 8, 7);
  ms::Matrix<T> y, dx;
  auto loss = [&] {
    gelu.forward(x, y);
    return dot(y, R);
  };
  loss();
  gelu.backward(R, dx);
  Kokkos::fence();
  check(
      "dx", x.data(), x.size(), loss, [&](std::int64_t i) { return dx.data()[i]; }, 24);
}

TEST(SurrogateGradients, WindowAttentionPlainAndShifted) {
  // Two tiles of 5x3 patches with window 2: plain windows cut by the tile edges, shifted
  // windows cut on both sides, so windows of 1, 2 and 4 tokens all occur.
  ms::TokenLayout layout(2, {5, 3, 1}, {{0, 0, 0}, {5, 3, 0}}, 2);
  for (bool shifted : {false, true}) {
    const auto& win = layout.windows(shifted);
    ms::WindowAttention<T> attn(8, 2);
    auto qkv = random_matrix(layout.num_tokens(), 24, 8, 1.5);
    auto R = random_matrix(layout.num_tokens(), 8, 9);
    ms::Matrix<T> y, dqkv;
    auto loss = [&] {
      attn.forward(mantissa::Precision::fp64, win, qkv, y);
      return dot(y, R);
    };
    loss();
    attn.backward(R, dqkv);
    Kokkos::fence();
    check(
        shifted ? "dqkv shifted" : "dqkv", qkv.data(), qkv.size(), loss,
        [&](std::int64_t i) { return dqkv.data()[i]; }, 60);
  }
}

TEST(SurrogateGradients, WindowsPartitionEveryTile) {
  ms::TokenLayout layout(2, {5, 3, 1}, {{0, 0, 0}, {5, 3, 0}}, 2);
  for (bool shifted : {false, true}) {
    const auto& w = layout.windows(shifted);
    auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w.offsets);
    auto mem = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w.members);
    std::vector<int> seen(layout.num_tokens(), 0);
    for (int k = 0; k < w.count; ++k) {
      EXPECT_LE(off(k + 1) - off(k), 4);
      for (int i = off(k); i < off(k + 1); ++i) {
        seen[mem(i)]++;
        EXPECT_EQ(mem(i) / 15, mem(off(k)) / 15) << "a window crosses tiles";
      }
    }
    for (int s : seen) EXPECT_EQ(s, 1);
  }
  // Tile 0 (x 0..4, y 0..2) plain windows of 2: 3 x 2 = 6; shifted (boundaries at odd x, y): 3 x 2 = 6.
  EXPECT_EQ(layout.windows(false).count, 12);
  EXPECT_EQ(layout.windows(true).count, 12);
}

TEST(SurrogateGradients, LearnedPositionEncoding) {
  ms::PositionEncoding<T> pos(ms::PositionKind::learned, 2, 4, {4, 4, 1});
  std::mt19937_64 gen(3);
  pos.initialize(gen);
  // Overlapping tiles: two tokens share a table row, so the gradient must sum both.
  ms::TokenLayout layout(2, {2, 2, 1}, {{0, 0, 0}, {1, 1, 0}}, 2);
  auto R = random_matrix(layout.num_tokens(), 4, 10);
  std::vector<ms::Parameter<T>> params;
  pos.parameters(params);
  ms::Matrix<T> x;
  auto loss = [&] {
    x = ms::make_matrix<T>("x", layout.num_tokens(), 4);
    pos.forward(layout, x);
    return dot(x, R);
  };
  loss();
  Kokkos::deep_copy(params[0].grad, 0.0);
  pos.backward(layout, R);
  Kokkos::fence();
  check(
      "pos.table", params[0].value.data(), params[0].size(), loss,
      [&](std::int64_t i) { return params[0].grad(i); }, 64);
}

TEST(SurrogateGradients, WholeModel) {
  for (bool shifted : {false, true}) {
    ms::ModelConfig c;
    c.dim = 2;
    c.in_channels = 3;
    c.out_channels = 2;
    c.patch = 2;
    c.embed = 8;
    c.heads = 2;
    c.layers = 2;
    c.mlp_hidden = 12;
    c.window = 2;
    c.shifted = shifted;
    c.position = shifted ? ms::PositionKind::learned : ms::PositionKind::sinusoidal;
    c.global_patches = {6, 6, 1};
    ms::Model<T> model(c);
    ms::TokenLayout layout(2, {3, 3, 1}, {{0, 0, 0}, {3, 2, 0}}, c.window);
    const auto counts = ms::test::check_model_gradients(
        model, layout, ms::FieldBatch<T>("fields", 2, 3, 1, 6, 6), 12, 13, 6, shifted ? "shifted" : "plain");
    EXPECT_GT(counts.checked, 0);
  }
}
