// Window attention's forward under 16-bit compute against an fp64 reference on the same rounded
// operands, on the portable kernels and, where this build has it, the AVX512-BF16 host kernel,
// for head widths that take every register-tile shape and for ragged windows.
#include <surrogates/WindowAttention.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
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
TEST(Attention, SixteenBitForwardMatchesReferenceOnEveryKernel) {
  const std::vector<Case> cases = {
      {"2D dh16 window 8x8 (64 tokens)", 2, 32, 2, 8, {16, 16, 1}, {{0, 0, 0}}},
      {"2D dh32 ragged", 2, 64, 2, 4, {5, 7, 1}, {{1, 2, 0}, {6, 3, 0}}},
      {"2D dh64 window 10x10 (100 tokens)", 2, 128, 2, 10, {10, 10, 1}, {{0, 0, 0}}},
      {"3D dh16 ragged", 3, 48, 3, 2, {3, 2, 3}, {{0, 1, 1}, {1, 0, 2}}},
      {"2D dh8 (portable only)", 2, 16, 2, 3, {5, 3, 1}, {{0, 0, 0}}},
  };
  const bool had = ms::attention_avx512bf16_enabled();
  std::vector<float> portable;  // the portable kernel's output of the same case, for the fast one
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
          // The two kernels sum the same exact products in another order; they differ where that
          // flips a probability's rounding, so most outputs agree to fp32 rounding.
          if (!fast) {
            portable.assign(got.data(), got.data() + got.size());
          } else {
            std::vector<double> d(portable.size());
            for (std::size_t k = 0; k < d.size(); ++k) d[k] = std::fabs(got.data()[k] - portable[k]) / vmax;
            std::sort(d.begin(), d.end());
            const double p99 = d[d.size() * 99 / 100];
            std::printf("%-60s kernels differ by %.3g max|v| at the 99th percentile\n", what.c_str(), p99);
            EXPECT_LE(p99, 1e-5) << what;
          }
        }
  ms::attention_avx512bf16_enabled() = had;
}
