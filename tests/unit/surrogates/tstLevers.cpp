// The rollout levers of issue 12, tested directly:
//  - pushforward: with an exact prediction, the batch a pushforward step learns from is the batch
//    of the sample it chained to (the state after sample i+h, its change as the target), in
//    sample i's amplitude units, for chains of 1 and 2 predictions; training takes pushforward
//    steps only after the first quarter and only where the samples continue each other.
//  - extrapolation = linear: the prediction is the network's plus exactly K (u^n - u^{n-1}).
//  - window_shift: the window grid moves by a whole number of patches (positions stay), and a
//    surrogate with it predicts differently from one prediction to the next, deterministically.
//  - a state at rest stays at rest with amplitude scaling (zero in, zero out, exactly) and the
//    prediction is homogeneous in the state; with dataset scaling it is not (the contrast that
//    shows the test can tell).
#include <surrogates/Extrapolation.hpp>
#include <surrogates/Surrogate.hpp>
#include <surrogates/TokenLayout.hpp>
#include <surrogates/detail/Pushforward.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace ms = mantissa::surrogates;
using mantissa::Field;
using mantissa::Precision;

namespace {

constexpr int n = 32;  // cells per axis
constexpr int K = 2;   // solver steps per sample

// A 2D leapfrog wave (5-point Laplacian, zero outside) sampled every K steps: states[j] =
// (p^{jK}, p^{jK-1}); velocity in two layers.
struct Trajectory {
  std::vector<std::vector<double>> p, p_old;
  std::vector<double> c;
};

Trajectory trajectory(int states) {
  const std::size_t N = std::size_t(n) * n;
  Trajectory t;
  t.c.resize(N);
  std::vector<double> p(N), pm(N), pn(N);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      t.c[y * n + x] = y < 18 ? 0.3 : 0.45;
      const double r2 = (x - 13.0) * (x - 13.0) + (y - 11.0) * (y - 11.0);
      p[y * n + x] = pm[y * n + x] = std::exp(-r2 / 9.0);
    }
  auto step = [&] {
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        auto at = [&](int xx, int yy) {
          return (xx < 0 || yy < 0 || xx >= n || yy >= n) ? 0.0 : p[yy * n + xx];
        };
        const double lap = at(x + 1, y) + at(x - 1, y) + at(x, y + 1) + at(x, y - 1) - 4.0 * p[y * n + x];
        pn[y * n + x] = 2.0 * p[y * n + x] - pm[y * n + x] + t.c[y * n + x] * t.c[y * n + x] * lap;
      }
    pm.swap(p);
    p.swap(pn);
  };
  for (int j = 0; j < states; ++j) {
    if (j > 0)
      for (int k = 0; k < K; ++k) step();
    t.p.push_back(p);
    t.p_old.push_back(pm);
  }
  return t;
}

ms::ModelConfig model_config() {
  ms::ModelConfig c;
  c.dim = 2;
  c.in_channels = 3;
  c.out_channels = 2;
  c.patch = 4;
  c.embed = 16;
  c.heads = 2;
  c.layers = 2;
  c.mlp_hidden = 32;
  c.window = 4;
  c.shifted = true;
  c.position = ms::PositionKind::none;
  c.global_patches = {n / 4, n / 4, 1};
  return c;
}

// Sample i of a trajectory as amplitude scaling stores it: the state (offset by 0.2 so that the
// normalisation's means are not zero) and its change over K steps, both divided by amp[i].
ms::Dataset scaled_samples(const Trajectory& t, const std::vector<double>& amp) {
  const std::size_t N = std::size_t(n) * n;
  ms::Dataset ds(3, 2, {n, n, 1});
  for (std::size_t i = 0; i + 1 < t.p.size(); ++i) {
    std::vector<double> in(3 * N), out(2 * N);
    for (std::size_t k = 0; k < N; ++k) {
      in[k] = (t.p[i][k] + 0.2) / amp[i];
      in[N + k] = (t.p_old[i][k] + 0.2) / amp[i];
      in[2 * N + k] = t.c[k];
      out[k] = (t.p[i + 1][k] - t.p[i][k]) / amp[i];
      out[N + k] = (t.p_old[i + 1][k] - t.p_old[i][k]) / amp[i];
    }
    ds.add(in, out);
  }
  return ds;
}

template <class T>
double max_abs_diff(const ms::Matrix<T>& a, const ms::Matrix<T>& b, int col_from, int col_to) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double m = 0.0;
  for (std::size_t r = 0; r < ha.extent(0); ++r)
    for (int c = col_from; c < col_to; ++c) m = std::max(m, std::abs(double(ha(r, c)) - double(hb(r, c))));
  return m;
}

// Batch i of the samples as pushforward must see it after h exact predictions: the state after
// sample i+h and its change, both divided by amp[i] (not amp[i+h]).
template <class T>
void expected_batch(const Trajectory& t, const std::vector<double>& amp, std::size_t i, int h,
                    const ms::Normalization& nz, const ms::ModelConfig& mc, ms::Matrix<T>& in,
                    ms::Matrix<T>& out) {
  std::vector<double> a(amp);
  a[i + h] = amp[i];  // sample i+h in sample i's units
  const ms::Dataset ds = scaled_samples(t, a);
  ms::TokenLayout layout;
  ds.make_batch<T>({std::int64_t(i + h)}, nz, mc, layout, in, out);
}

template <class T>
void pushforward_with_exact_predictions(double tol) {
  const Trajectory t = trajectory(6);
  const std::vector<double> amp{1.0, 1.7, 0.6, 2.3, 1.1};
  const ms::Dataset ds = scaled_samples(t, amp);
  const auto nz = ds.normalization();
  ASSERT_GT(std::abs(nz.in_mean[0]), 0.05);  // the affine parts are exercised
  ASSERT_GT(std::abs(nz.out_mean[0]), 0.0);
  const ms::ModelConfig mc = model_config();
  const std::size_t i = 1;
  ms::TokenLayout layout, layout1;
  ms::Matrix<T> in, out, in1, out1;
  ds.make_batch<T>({std::int64_t(i)}, nz, mc, layout, in, out);
  const int pc = mc.patch_cells();
  for (int h = 1; h <= 2; ++h) {
    // The exact prediction from the current state is the current target.
    ms::Matrix<T> pred = ms::make_matrix<T>("pred", out.extent(0), out.extent(1));
    Kokkos::deep_copy(pred, out);
    ds.make_batch<T>({std::int64_t(i + h)}, nz, mc, layout1, in1, out1);
    ms::detail::pushforward_batch(in, out, out1, pred, {amp[i + h] / amp[i]}, layout.tokens_per_tile(), mc,
                                  nz);
    ms::Matrix<T> want_in, want_out;
    expected_batch<T>(t, amp, i, h, nz, mc, want_in, want_out);
    // The state channels are sample i+h's input, the velocity channel is untouched, the target
    // is sample i+h's change (all in sample i's units).
    EXPECT_LE(max_abs_diff(in, want_in, 0, 2 * pc), tol) << "state after " << h << " predictions";
    EXPECT_EQ(max_abs_diff(in, want_in, 2 * pc, 3 * pc), 0.0) << "velocity after " << h << " predictions";
    EXPECT_LE(max_abs_diff(out, want_out, 0, 2 * pc), tol) << "target after " << h << " predictions";
    // The test can tell: sample i+h's own batch (its own amplitude units) is not the answer.
    EXPECT_GT(max_abs_diff(in1, want_in, 0, 2 * pc), 100.0 * tol + 0.01);
  }
}

mantissa::Grid grid() {
  mantissa::Grid g;
  g.dim = 2;
  g.n = {n, n, 1};
  return g;
}

ms::SurrogateConfig surrogate_config(ms::InputScaling scaling) {
  ms::SurrogateConfig c;
  c.model = model_config();
  c.batch_size = 2;
  c.steps_per_prediction = K;
  c.scaling = scaling;
  c.optimizer.learning_rate = 3e-3;
  c.optimizer.warmup_steps = 1;
  c.optimizer.total_steps = 12;
  return c;
}

Field<double> field(const mantissa::Decomposition& d, const std::vector<double>& v, double scale = 1.0) {
  Field<double> f("tstLevers::field", d, 1);
  auto h = Kokkos::create_mirror_view(f.view());
  Kokkos::deep_copy(h, 0.0);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) h(0, y + 1, x + 1) = scale * v[y * n + x];
  Kokkos::deep_copy(f.view(), h);
  return f;
}

std::vector<double> values(const Field<double>& f) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.view());
  std::vector<double> v(std::size_t(n) * n);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) v[y * n + x] = h(0, y + 1, x + 1);
  return v;
}

// Adds the trajectory's samples to s in the order `order` (indices of the samples).
void add_samples(ms::Surrogate& s, const mantissa::Decomposition& d, const Trajectory& t,
                 const std::vector<int>& order) {
  const Field<double> c = field(d, t.c);
  for (int i : order) {
    const Field<double> p = field(d, t.p[i]), pm = field(d, t.p_old[i]);
    std::vector<double> dp(t.p[i].size()), dpm(dp.size());
    for (std::size_t k = 0; k < dp.size(); ++k) {
      dp[k] = t.p[i + 1][k] - t.p[i][k];
      dpm[k] = t.p_old[i + 1][k] - t.p_old[i][k];
    }
    const Field<double> a = field(d, dp), b = field(d, dpm);
    s.add_sample({&p, &pm, &c}, {&a, &b});
  }
}

std::vector<double> train_losses(ms::SurrogateConfig c, const std::vector<int>& order) {
  mantissa::Decomposition d(MPI_COMM_SELF, grid());
  ms::Surrogate s(c, d);
  add_samples(s, d, trajectory(10), order);
  return s.train(c.optimizer.total_steps).loss;
}

std::vector<double> predict(ms::Surrogate& s, const mantissa::Decomposition& d, const Trajectory& t, int i,
                            double scale, int channel) {
  const Field<double> p = field(d, t.p[i], scale), pm = field(d, t.p_old[i], scale), c = field(d, t.c);
  Field<double> a("a", d, 1), b("b", d, 1);
  s.predict({&p, &pm, &c}, {&a, &b}, Precision::fp64);
  return values(channel == 0 ? a : b);
}

}  // namespace

TEST(SurrogateLevers, PushforwardBatchWithExactPredictionsIsTheChainedSampleFp64) {
  pushforward_with_exact_predictions<double>(1e-11);
}
// fp32 tokens: the batch is rounded to fp32 after each update (values of order 1-10).
TEST(SurrogateLevers, PushforwardBatchWithExactPredictionsIsTheChainedSampleFp32) {
  pushforward_with_exact_predictions<float>(2e-5);
}

// Training takes pushforward steps only from the first quarter on (the losses of steps 0-2 of
// 12 are those of training without it, bit for bit; later ones differ) and only where sample i+1
// continues sample i: with the samples added out of order no pair chains, and pushforward 1
// trains exactly as pushforward 0.
TEST(SurrogateLevers, PushforwardIsUsedAfterTheFirstQuarterWhereSamplesChain) {
  for (auto scaling : {ms::InputScaling::dataset, ms::InputScaling::amplitude}) {
    auto plain = surrogate_config(scaling), pf = plain;
    pf.pushforward = 1.0;
    pf.pushforward_steps = 2;
    const std::vector<int> chained{0, 1, 2, 3, 4, 5, 6, 7}, shuffled{0, 2, 4, 6, 1, 3, 5, 7};
    const auto a = train_losses(plain, chained), b = train_losses(pf, chained);
    ASSERT_EQ(a.size(), 12u);
    ASSERT_EQ(b.size(), 12u);
    for (int s = 0; s < 3; ++s) EXPECT_EQ(a[s], b[s]) << "step " << s;
    int differ = 0;
    for (int s = 3; s < 12; ++s) differ += a[s] != b[s] ? 1 : 0;
    EXPECT_EQ(differ, 9) << "every step after the first quarter is a pushforward step";
    const auto c = train_losses(plain, shuffled), e = train_losses(pf, shuffled);
    for (int s = 0; s < 12; ++s) EXPECT_EQ(c[s], e[s]) << "step " << s << " (no chained pairs)";
  }
}

// extrapolation = linear adds K (p^n - p^{n-1}) to the network's prediction (same weights: the
// same seed), to rounding, in both predicted channels; trained, it still predicts at rest nothing.
TEST(SurrogateLevers, LinearExtrapolationAddsKTimesTheLastStep) {
  mantissa::Decomposition d(MPI_COMM_SELF, grid());
  const Trajectory t = trajectory(10);
  for (auto scaling : {ms::InputScaling::dataset, ms::InputScaling::amplitude}) {
    auto c0 = surrogate_config(scaling), c1 = c0;
    c1.extrapolation = ms::TimeExtrapolation::linear;
    ms::Surrogate s0(c0, d), s1(c1, d);
    add_samples(s0, d, t, {0, 1, 2, 3});
    add_samples(s1, d, t, {0, 1, 2, 3});
    s0.train(0);  // normalisation only: the weights stay the seed's, equal in both
    s1.train(0);
    for (int ch = 0; ch < 2; ++ch) {
      const auto a = predict(s0, d, t, 5, 1.0, ch), b = predict(s1, d, t, 5, 1.0, ch);
      double err = 0.0, scale = 0.0;
      for (std::size_t k = 0; k < a.size(); ++k) {
        const double want = K * (t.p[5][k] - t.p_old[5][k]);
        err = std::max(err, std::abs(b[k] - a[k] - want));
        scale = std::max(scale, std::abs(want));
      }
      EXPECT_GT(scale, 1e-3);
      EXPECT_LE(err, 1e-12 * scale + 1e-14) << "channel " << ch;
    }
  }
}

// A state at rest stays at rest under amplitude scaling, exactly, extrapolation or not, trained
// or not; the prediction scales with the state (f(3x) = 3 f(x) to rounding). Dataset scaling
// predicts a change from rest (the drift) and is not homogeneous.
TEST(SurrogateLevers, AmplitudeScalingKeepsAStateAtRestAtRest) {
  mantissa::Decomposition d(MPI_COMM_SELF, grid());
  const Trajectory t = trajectory(10);
  for (auto ex : {ms::TimeExtrapolation::none, ms::TimeExtrapolation::linear})
    for (auto scaling : {ms::InputScaling::dataset, ms::InputScaling::amplitude}) {
      auto c = surrogate_config(scaling);
      c.extrapolation = ex;
      ms::Surrogate s(c, d);
      add_samples(s, d, t, {0, 1, 2, 3, 4, 5});
      s.train(4);
      const auto rest = predict(s, d, t, 5, 0.0, 0);
      const auto x1 = predict(s, d, t, 5, 1.0, 0), x3 = predict(s, d, t, 5, 3.0, 0);
      double at_rest = 0.0, homog = 0.0, scale = 0.0;
      for (std::size_t k = 0; k < rest.size(); ++k) {
        at_rest = std::max(at_rest, std::abs(rest[k]));
        homog = std::max(homog, std::abs(x3[k] - 3.0 * x1[k]));
        scale = std::max(scale, std::abs(x3[k]));
      }
      const bool amplitude = scaling == ms::InputScaling::amplitude;
      if (amplitude) {
        EXPECT_EQ(at_rest, 0.0);
        EXPECT_LE(homog, 1e-12 * scale);
      } else {
        EXPECT_GT(at_rest, 1e-6) << "dataset scaling drifts from rest";
        EXPECT_GT(homog, 1e-6 * scale) << "dataset scaling is not homogeneous";
      }
    }
}

// The window origin moves the windows as if the tiles started `origin` patches further on, and
// leaves the positions where they are.
TEST(SurrogateLevers, WindowOriginMovesTheWindowsNotThePositions) {
  const ms::TokenLayout a(2, {8, 6, 1}, {{4, 0, 0}, {0, 6, 0}}, 4);
  ms::TokenLayout b(2, {8, 6, 1}, {{4, 0, 0}, {0, 6, 0}}, 4);
  const ms::TokenLayout moved(2, {8, 6, 1}, {{5, 3, 0}, {1, 9, 0}}, 4);
  b.set_window_origin({1, 3, 0});
  auto same = [](const ms::Windows& x, const ms::Windows& y) {
    if (x.count != y.count) return false;
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.members);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.members);
    auto ox = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.offsets);
    auto oy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.offsets);
    for (std::size_t i = 0; i < hx.size(); ++i)
      if (hx(i) != hy(i)) return false;
    for (std::size_t i = 0; i < ox.size(); ++i)
      if (ox(i) != oy(i)) return false;
    return true;
  };
  for (bool shifted : {false, true}) {
    EXPECT_TRUE(same(b.windows(shifted), moved.windows(shifted))) << "shifted " << shifted;
    EXPECT_FALSE(same(a.windows(shifted), b.windows(shifted))) << "shifted " << shifted;
  }
  auto ca = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.coords());
  auto cb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.coords());
  for (std::size_t i = 0; i < ca.size(); ++i) EXPECT_EQ(ca.data()[i], cb.data()[i]);
}

// The windows are the groups of tokens with the same key floor((coordinate + shift + origin) /
// window), in order of the key's first appearance on a row-major walk over each tile, and each
// window's tokens in token order: the layout's counting sort against that definition, written
// here with a map, for 2D and 3D tiles, windows of 1-4 patches, plain and shifted, all origins.
TEST(SurrogateLevers, WindowsAreTheTokensOfEachKeyInOrderOfFirstAppearance) {
  auto floor_div = [](std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  int checked = 0;
  for (int dim : {2, 3})
    for (int w = 1; w <= 4; ++w) {
      const std::array<std::int64_t, 3> ext{5, 3, dim == 3 ? 4 : 1};
      const std::vector<std::array<std::int64_t, 3>> offs{{0, 0, 0}, {7, 2, dim == 3 ? 3 : 0}, {3, 9, 0}};
      for (int ox = 0; ox < w; ++ox)
        for (int oy = 0; oy < w; ++oy) {
          ms::TokenLayout layout(dim, ext, offs, w);
          layout.set_window_origin({ox, oy, dim == 3 ? (ox + oy) % w : 0});
          const auto org = layout.window_origin();
          auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.coords());
          for (bool shifted : {false, true}) {
            const int s = shifted ? w / 2 : 0;
            std::vector<int> offsets{0}, members;
            int max_size = 0;
            const std::int64_t per = layout.tokens_per_tile();
            for (std::int64_t b = 0; b < layout.num_tiles(); ++b) {
              std::map<std::array<std::int64_t, 3>, std::vector<int>> groups;
              std::vector<std::array<std::int64_t, 3>> order;
              for (std::int64_t k = 0; k < per; ++k) {
                const std::int64_t t = b * per + k;
                std::array<std::int64_t, 3> key{0, 0, 0};
                for (int a = 0; a < dim; ++a) key[a] = floor_div(c(t, a) + s + org[a], w);
                if (groups[key].empty()) order.push_back(key);
                groups[key].push_back(int(t));
              }
              for (const auto& key : order) {
                members.insert(members.end(), groups[key].begin(), groups[key].end());
                offsets.push_back(int(members.size()));
                max_size = std::max(max_size, int(groups[key].size()));
              }
            }
            const auto& win = layout.windows(shifted);
            auto hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.members);
            auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.offsets);
            ASSERT_EQ(win.count, int(offsets.size()) - 1) << "dim " << dim << " window " << w;
            EXPECT_EQ(win.max_size, max_size);
            ASSERT_EQ(hm.extent(0), members.size());
            for (std::size_t i = 0; i < members.size(); ++i) ASSERT_EQ(hm(i), members[i]) << "member " << i;
            for (std::size_t i = 0; i < offsets.size(); ++i) ASSERT_EQ(ho(i), offsets[i]) << "offset " << i;
            ++checked;
          }
        }
    }
  EXPECT_EQ(checked, 2 * 2 * (1 + 4 + 9 + 16));
}

// With window_shift the same state predicts differently from one prediction to the next (the
// windows moved), the sequence is the same for every surrogate built alike, and without it a
// prediction does not depend on the ones before.
TEST(SurrogateLevers, WindowShiftChangesThePredictionFromStepToStep) {
  mantissa::Decomposition d(MPI_COMM_SELF, grid());
  const Trajectory t = trajectory(8);
  for (bool shift : {false, true}) {
    auto c = surrogate_config(ms::InputScaling::amplitude);
    c.window_shift = shift;
    ms::Surrogate s1(c, d), s2(c, d);
    for (auto* s : {&s1, &s2}) {
      add_samples(*s, d, t, {0, 1, 2, 3});
      s->train(2);
    }
    std::vector<std::vector<double>> p1, p2;
    for (int k = 0; k < 4; ++k) {
      p1.push_back(predict(s1, d, t, 5, 1.0, 0));
      p2.push_back(predict(s2, d, t, 5, 1.0, 0));
    }
    int differ = 0;
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(p1[k], p2[k]) << "prediction " << k;
      if (k > 0) differ += p1[k] != p1[0] ? 1 : 0;
    }
    if (shift)
      EXPECT_GE(differ, 2) << "the windows moved between predictions";
    else
      EXPECT_EQ(differ, 0);
  }
}
