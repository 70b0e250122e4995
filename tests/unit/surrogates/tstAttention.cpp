// Window attention's forward and backward under 16-bit compute against an fp64 reference on the same rounded
// operands, on the portable kernels and, where this build has it, the AVX512-BF16 host kernel,
// for head widths that take every register-tile shape and for ragged windows.
#include <surrogates/Gemm.hpp>
#include <surrogates/WindowAttention.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

ms::Matrix<float> random_qkv(std::int64_t n, int D, unsigned seed) {
  auto m = ms::make_matrix<float>("test::qkv", n, 3 * D);
  auto h = Kokkos::create_mirror_view(m);
  std::mt19937 gen(seed);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  for (std::size_t i = 0; i < h.size(); ++i) h.data()[i] = nd(gen);
  Kokkos::deep_copy(m, h);
  return m;
}

float round16(Precision p, float x) {
  return p == Precision::fp16 ? float(mantissa::fp16(x)) : float(mantissa::bf16(x));
}

// out [N, D] in fp64 from q, k, v rounded to the compute precision, with an exact softmax.
std::vector<double> reference(Precision p, const ms::Windows& win, const ms::Matrix<float>& qkv_d, int H,
                              int D) {
  auto qkv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), qkv_d);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.offsets);
  auto mem = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.members);
  const int dh = D / H;
  std::vector<double> out(qkv.extent(0) * D, 0.0);
  auto at = [&](int t, int c) { return double(round16(p, qkv(t, c))); };
  for (int w = 0; w < win.count; ++w) {
    const int size = off(w + 1) - off(w);
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < size; ++i) {
        const int ti = mem(off(w) + i);
        std::vector<double> s(size);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < size; ++j) {
          const int tj = mem(off(w) + j);
          double d = 0;
          for (int c = 0; c < dh; ++c) d += at(ti, h * dh + c) * at(tj, D + h * dh + c);
          s[j] = d / std::sqrt(double(dh));
          mx = std::max(mx, s[j]);
        }
        for (int j = 0; j < size; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int j = 0; j < size; ++j) {
          const int tj = mem(off(w) + j);
          for (int c = 0; c < dh; ++c) out[ti * D + h * dh + c] += s[j] / sum * at(tj, 2 * D + h * dh + c);
        }
      }
  }
  return out;
}

// dqkv [N, 3D] in fp64 for an output gradient dout, from q, k, v and dout rounded to the compute
// precision, with exact probabilities.
std::vector<double> reference_backward(Precision p, const ms::Windows& win, const ms::Matrix<float>& qkv_d,
                                       const ms::Matrix<float>& dout_d, int H, int D) {
  auto qkv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), qkv_d);
  auto dout = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dout_d);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.offsets);
  auto mem = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), win.members);
  const int dh = D / H;
  const double s = 1.0 / std::sqrt(double(dh));
  std::vector<double> g(qkv.extent(0) * 3 * D, 0.0);
  auto at = [&](int t, int c) { return double(round16(p, qkv(t, c))); };
  auto dO = [&](int t, int c) { return double(round16(p, dout(t, c))); };
  for (int w = 0; w < win.count; ++w) {
    const int n = off(w + 1) - off(w);
    auto tok = [&](int i) { return mem(off(w) + i); };
    for (int h = 0; h < H; ++h) {
      std::vector<double> P(n * n), dS(n * n);
      for (int i = 0; i < n; ++i) {
        double mx = -1e300, sum = 0;
        for (int j = 0; j < n; ++j) {
          double d = 0;
          for (int c = 0; c < dh; ++c) d += at(tok(i), h * dh + c) * at(tok(j), D + h * dh + c);
          P[i * n + j] = d * s;
          mx = std::max(mx, P[i * n + j]);
        }
        for (int j = 0; j < n; ++j) sum += (P[i * n + j] = std::exp(P[i * n + j] - mx));
        for (int j = 0; j < n; ++j) P[i * n + j] /= sum;
        double rowdot = 0;
        for (int j = 0; j < n; ++j) {
          double d = 0;
          for (int c = 0; c < dh; ++c) d += dO(tok(i), h * dh + c) * at(tok(j), 2 * D + h * dh + c);
          dS[i * n + j] = d;
          rowdot += P[i * n + j] * d;
        }
        for (int j = 0; j < n; ++j) dS[i * n + j] = P[i * n + j] * (dS[i * n + j] - rowdot);
      }
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          for (int c = 0; c < dh; ++c) {
            g[tok(i) * 3 * D + h * dh + c] += s * dS[i * n + j] * at(tok(j), D + h * dh + c);
            g[tok(j) * 3 * D + D + h * dh + c] += s * dS[i * n + j] * at(tok(i), h * dh + c);
            g[tok(j) * 3 * D + 2 * D + h * dh + c] += P[i * n + j] * dO(tok(i), h * dh + c);
          }
    }
  }
  return g;
}

struct Case {
  std::string name;
  int dim, D, H, window;
  std::array<std::int64_t, 3> tile;
  std::vector<std::array<std::int64_t, 3>> offsets;
};

}  // namespace

// Error sources: the probabilities rounded to the compute type before P V (relative u = 2^-9 for
// bf16, 2^-12 for fp16, on weights that sum to 1, so at most u * max|v| on an output) plus fp32
// sums (~1e-6). Bound: 2u * max|v|. A kernel that pairs the wrong channels or tokens, drops a
// block or a tail, or misplaces a row is off by O(max|v|).
TEST(Attention, SixteenBitForwardAndBackwardMatchReferenceOnEveryKernel) {
  const std::vector<Case> cases = {
      {"2D dh16 window 8x8 (64 tokens)", 2, 32, 2, 8, {16, 16, 1}, {{0, 0, 0}}},
      {"2D dh32 ragged", 2, 64, 2, 4, {5, 7, 1}, {{1, 2, 0}, {6, 3, 0}}},
      {"2D dh64 window 10x10 (100 tokens)", 2, 128, 2, 10, {10, 10, 1}, {{0, 0, 0}}},
      {"3D dh16 ragged", 3, 48, 3, 2, {3, 2, 3}, {{0, 1, 1}, {1, 0, 2}}},
      {"2D dh8 (portable only)", 2, 16, 2, 3, {5, 3, 1}, {{0, 0, 0}}},
  };
  const bool had = ms::attention_avx512bf16_enabled();
  std::vector<float> portable, portable_grad;  // the portable kernel's results of the same case
  for (const auto& cs : cases)
    for (Precision p : {Precision::bf16, Precision::fp16})
      for (bool shifted : {false, true})
        for (bool fast : {false, true}) {
          if (fast &&
              (p != Precision::bf16 || !ms::attention_avx512bf16_compiled() || (cs.D / cs.H) % 16 != 0))
            continue;
          ms::attention_avx512bf16_enabled() = fast;
          ms::TokenLayout layout(cs.dim, cs.tile, cs.offsets, cs.window);
          const auto& win = layout.windows(shifted);
          auto qkv = random_qkv(layout.num_tokens(), cs.D, 17);
          ms::WindowAttention<float> attn(cs.D, cs.H);
          ms::Matrix<float> out;
          attn.forward(p, win, qkv, out);
          auto dout = random_qkv(layout.num_tokens(), cs.D / 3 + 1, 23);  // [N, >= D/3 + 1] random numbers
          auto dO = ms::make_matrix<float>("test::dout", layout.num_tokens(), cs.D);
          {
            auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dout);
            auto ho = Kokkos::create_mirror_view(dO);
            for (std::size_t k = 0; k < ho.size(); ++k)
              ho.data()[k] = hd.data()[k % hd.size()] * (1.0f + 0.01f * float(k % 7));
            Kokkos::deep_copy(dO, ho);
          }
          ms::Matrix<float> dqkv;
          attn.backward(dO, dqkv);
          auto gotg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dqkv);
          const auto refg = reference_backward(p, win, qkv, dO, cs.H, cs.D);
          auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
          const auto ref = reference(p, win, qkv, cs.H, cs.D);
          auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), qkv);
          double vmax = 0, err = 0;
          for (std::int64_t t = 0; t < layout.num_tokens(); ++t)
            for (int c = 0; c < cs.D; ++c) vmax = std::max(vmax, std::fabs(double(hq(t, 2 * cs.D + c))));
          for (std::size_t k = 0; k < ref.size(); ++k) err = std::max(err, std::fabs(got.data()[k] - ref[k]));
          const double u = p == Precision::bf16 ? std::ldexp(1.0, -9) : std::ldexp(1.0, -12);
          const std::string what = cs.name + ", " + std::string(mantissa::to_string(p)) +
                                   (shifted ? ", shifted" : "") +
                                   (fast ? ", AVX512-BF16 kernel" : ", portable kernel");
          std::printf("%-60s max error %.3g max|v| (bound %.3g)\n", what.c_str(), err / vmax, 2 * u);
          EXPECT_LE(err, 2 * u * vmax) << what;
          // Backward: the rounded probabilities and score gradients (relative u each) against exact
          // ones, on sums of up to a window of terms; measured 1-3u of the largest gradient of each
          // of dq, dk, dv; bound 8u. A wrong pairing or scale is off by O(1).
          double gerr[3] = {0, 0, 0}, gmax[3] = {0, 0, 0};
          for (std::int64_t t = 0; t < layout.num_tokens(); ++t)
            for (int c = 0; c < 3 * cs.D; ++c) {
              const std::size_t k = std::size_t(t) * 3 * cs.D + c;
              gmax[c / cs.D] = std::max(gmax[c / cs.D], std::fabs(refg[k]));
              gerr[c / cs.D] = std::max(gerr[c / cs.D], std::fabs(gotg.data()[k] - refg[k]));
            }
          std::printf("%-60s gradient errors dq %.3g dk %.3g dv %.3g of their max (bound %.3g)\n",
                      what.c_str(), gerr[0] / gmax[0], gerr[1] / gmax[1], gerr[2] / gmax[2], 8 * u);
          for (int m = 0; m < 3; ++m) EXPECT_LE(gerr[m], 8 * u * gmax[m]) << what << " gradient block " << m;
          // The two kernels sum the same exact products in another order; they differ where that
          // flips a probability's rounding, so most outputs agree to fp32 rounding.
          if (!fast) {
            portable.assign(got.data(), got.data() + got.size());
            portable_grad.assign(gotg.data(), gotg.data() + gotg.size());
          } else {
            std::vector<double> d(portable.size());
            for (std::size_t k = 0; k < d.size(); ++k) d[k] = std::fabs(got.data()[k] - portable[k]) / vmax;
            std::sort(d.begin(), d.end());
            const double p99 = d[d.size() * 99 / 100];
            std::printf("%-60s kernels differ by %.3g max|v| at the 99th percentile\n", what.c_str(), p99);
            EXPECT_LE(p99, 1e-5) << what;
            double gm = 0;
            for (double v : refg) gm = std::max(gm, std::fabs(v));
            std::vector<double> dg(portable_grad.size());
            for (std::size_t k = 0; k < dg.size(); ++k)
              dg[k] = std::fabs(gotg.data()[k] - portable_grad[k]) / gm;
            std::sort(dg.begin(), dg.end());
            const double g99 = dg[dg.size() * 99 / 100];
            std::printf("%-60s gradients differ by %.3g of the largest at the 99th percentile\n",
                        what.c_str(), g99);
            EXPECT_LE(g99, 1e-5) << what;
          }
        }
  ms::attention_avx512bf16_enabled() = had;
}

TEST(Attention, BackendsNameTheAttentionKernel) {
  const std::string text = ms::gemm_backends();
  const bool host = std::is_same<ms::ExecSpace, Kokkos::DefaultHostExecutionSpace>::value;
  EXPECT_NE(
      text.find(ms::attention_avx512bf16_compiled() && host ? "AVX512-BF16 host kernel" : "portable kernel"),
      std::string::npos)
      << text;
}
