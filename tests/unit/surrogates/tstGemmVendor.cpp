// The vendor tensor-core GEMM (cuBLASLt / hipBLASLt, surrogates/detail/GemmVendor.hpp).
//
// Every build: gemm_backends() says whether a vendor library is compiled in, gemm_path() selects
// GemmPath::vendor_lt exactly when one is and the memory is a device's, and a build without one
// refuses a direct call with a clear message.
//
// Builds with a vendor library (CUDA + cuBLASLt), on a GPU: the vendor GEMM agrees with the
// portable Kokkos kernel on the same bf16 / fp16 / fp8 operands, for all four transpose
// combinations (fp8 also exercises the transposition into the "TN" layout and the per-tensor
// scale pointers), and a Linear layer's bf16 GEMMs are counted under vendor_lt. These skip where
// no vendor library is compiled in (no GPU was at hand when this was written: they have compiled
// for CUDA sm_90 but never run).
//
// Tolerance of the comparisons: both sides multiply the same 16/8-bit values exactly and
// accumulate in fp32-like arithmetic, in different orders. An fp32 sum of k products is within
// gamma_k * sum_l |a_il b_lj| of the exact one, gamma_k ~ k u (Higham, Accuracy and Stability
// of Numerical Algorithms, 2002, eq. 3.5). Tensor cores do not round every inner addition to
// nearest: for fp8 on Hopper about 14 significand bits survive the accumulation inside one MMA
// (DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv:2412.19437, sec. 3.3.2), which cuBLASLt
// promotes to fp32 periodically. So u = 2^-13 for fp8 and 2^-22 (two bits of margin on fp32's
// 2^-24) for bf16/fp16, applied to both sides (2 gamma_k), plus the epilogue's roundings
// 4 * 2^-24 (|alpha| sum |a b| + |beta C|). A wrong transpose, scale or operand swap errs by
// O(sum |a b|), which is 2^13 / k = 128 times these bounds for fp8 at k = 64.
#include <surrogates/Linear.hpp>
#include <surrogates/detail/GemmVendor.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

constexpr bool device_memory = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, ms::MemSpace>::accessible;

bool vendor_compiled() {
  return !ms::detail::vendor_gemm_library().empty();
}

// rows x cols of format T, random values in +-range rounded to T.
template <class T>
ms::Matrix<T> random_matrix(std::int64_t rows, std::int64_t cols, unsigned seed, double range) {
  ms::Matrix<T> m("test::m", rows, cols);
  auto h = Kokkos::create_mirror_view(m);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-range, range);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) h(i, j) = T(u(gen));
  Kokkos::deep_copy(m, h);
  return m;
}

template <class T>
Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> host_float(const ms::Matrix<T>& m) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> f("test::f", m.extent(0), m.extent(1));
  for (std::size_t i = 0; i < m.extent(0); ++i)
    for (std::size_t j = 0; j < m.extent(1); ++j) f(i, j) = float(h(i, j));
  return f;
}

// Vendor vs portable on the same operands; the portable side gets the scales folded into its
// operands (powers of two, so exactly).
template <class TA, class TB>
void compare(char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k, float a_scale, float b_scale,
             double range, bool must_run) {
  const bool at = ta == 'T', bt = tb == 'T';
  auto A = random_matrix<TA>(at ? k : m, at ? m : k, 1, range);
  auto B = random_matrix<TB>(bt ? n : k, bt ? k : n, 2, range);
  auto C0 = random_matrix<float>(m, n, 3, 1.0);
  ms::Matrix<float> Cv("test::Cv", m, n), Cp("test::Cp", m, n);
  Kokkos::deep_copy(Cv, C0);
  Kokkos::deep_copy(Cp, C0);
  const float alpha = 0.75f, beta = 0.5f;
  ms::reset_gemm_counters();
  const bool ran = ms::detail::gemm_vendor<TA, TB>(ta, tb, alpha, A, a_scale, B, b_scale, beta, Cv);
  const std::string what = std::string(1, ta) + std::string(1, tb) + " " + std::to_string(m) + "x" +
                           std::to_string(n) + "x" + std::to_string(k);
  if (must_run) {
    ASSERT_TRUE(ran) << "the vendor library declined " << what;
  }
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Cv);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C0);
  if (!ran) {
    for (std::size_t i = 0; i < hv.size(); ++i)
      ASSERT_EQ(hv.data()[i], hc.data()[i]) << "declined but wrote C";
    EXPECT_EQ(ms::gemm_counter(ms::GemmPath::vendor_lt).calls, 0);
    return;
  }
  EXPECT_EQ(ms::gemm_counter(ms::GemmPath::vendor_lt).calls, 1);
  // Portable reference on fp32 copies of the scaled operands.
  auto fa = host_float(A), fb = host_float(B);
  ms::Matrix<float> As("test::As", fa.extent(0), fa.extent(1)), Bs("test::Bs", fb.extent(0), fb.extent(1));
  auto has = Kokkos::create_mirror_view(As);
  auto hbs = Kokkos::create_mirror_view(Bs);
  for (std::size_t i = 0; i < fa.size(); ++i) has.data()[i] = a_scale * fa.data()[i];
  for (std::size_t i = 0; i < fb.size(); ++i) hbs.data()[i] = b_scale * fb.data()[i];
  Kokkos::deep_copy(As, has);
  Kokkos::deep_copy(Bs, hbs);
  ms::gemm_portable<float>(ta, tb, alpha, As, Bs, beta, Cp);
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Cp);
  constexpr bool fp8 = sizeof(TA) == 1 && sizeof(TB) == 1;
  const double u = std::ldexp(1.0, fp8 ? -13 : -22);
  const double gamma = double(k) * u / (1.0 - double(k) * u);
  int bad = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double abs_sum = 0.0;
      for (std::int64_t l = 0; l < k; ++l)
        abs_sum += std::abs(double(has(at ? l : i, at ? i : l)) * double(hbs(bt ? j : l, bt ? l : j)));
      const double bound = 2.0 * gamma * std::abs(alpha) * abs_sum +
                           4.0 * std::ldexp(std::abs(alpha) * abs_sum + std::abs(beta * hc(i, j)), -24);
      bad += std::abs(double(hv(i, j)) - double(hp(i, j))) > bound;
    }
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace

TEST(SurrogateGemmVendor, BackendsReportWhatIsCompiled) {
  const std::string text = ms::gemm_backends();
  EXPECT_NE(text.find("vendor tensor-core GEMM:"), std::string::npos) << text;
  if (vendor_compiled()) {
    EXPECT_NE(text.find(ms::detail::vendor_gemm_library() + " compiled in"), std::string::npos) << text;
  } else {
    EXPECT_NE(text.find("none compiled in"), std::string::npos) << text;
  }
  for (Precision p : mantissa::all_precisions()) {
    const bool vendor = device_memory && vendor_compiled() && p != Precision::fp32 && p != Precision::fp64;
    EXPECT_EQ(ms::gemm_path(p) == ms::GemmPath::vendor_lt, vendor) << mantissa::to_string(p);
    EXPECT_EQ(ms::detail::vendor_gemm_handles(p),
              vendor_compiled() && p != Precision::fp32 && p != Precision::fp64)
        << mantissa::to_string(p);
  }
  EXPECT_EQ(ms::to_string(ms::GemmPath::vendor_lt), "vendor_lt");
}

TEST(SurrogateGemmVendor, WithoutALibraryADirectCallIsRefused) {
  if (vendor_compiled()) GTEST_SKIP() << "a vendor library is compiled in";
  ms::Matrix<mantissa::bf16> A("A", 2, 2), B("B", 2, 2);
  ms::Matrix<float> C("C", 2, 2);
  try {
    ms::detail::gemm_vendor<mantissa::bf16, mantissa::bf16>('N', 'N', 1.0f, A, 1.0f, B, 1.0f, 0.0f, C);
    FAIL() << "no error";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no cuBLASLt / hipBLASLt"), std::string::npos) << e.what();
  }
  // Matmul's entry declines instead, so the portable path runs.
  ms::Matrix<float> Af("Af", 2, 2), Bf("Bf", 2, 2);
  EXPECT_FALSE(ms::detail::gemm_vendor_rounded(Precision::bf16, false, false, 'N', 'N', 1.0f, Af, 1.0f, Bf,
                                               1.0f, 0.0f, C));
}

TEST(SurrogateGemmVendor, Bf16AndFp16AgreeWithThePortableKernel) {
  if (!vendor_compiled() || !device_memory) GTEST_SKIP() << "no vendor GEMM in this build";
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'}) {
      compare<mantissa::bf16, mantissa::bf16>(ta, tb, 40, 24, 72, 1.0f, 1.0f, 2.0, true);
      compare<mantissa::fp16, mantissa::fp16>(ta, tb, 40, 24, 72, 1.0f, 1.0f, 2.0, true);
      // Odd sizes and leading dimensions: the library runs them or declines (then Matmul takes
      // the portable path); either way C must be right or untouched.
      compare<mantissa::bf16, mantissa::bf16>(ta, tb, 7, 5, 3, 1.0f, 1.0f, 2.0, false);
    }
}

TEST(SurrogateGemmVendor, Fp8WithScalePointersAgreesWithThePortableKernel) {
  if (!vendor_compiled() || !device_memory) GTEST_SKIP() << "no vendor GEMM in this build";
  // Sizes multiples of 16 (fp8 kernels need 16-byte aligned leading dimensions). Whether the GPU
  // has fp8 tensor cores (sm_89+) decides whether the library runs or declines; both are checked.
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'}) {
      compare<mantissa::fp8_e4m3, mantissa::fp8_e4m3>(ta, tb, 32, 48, 64, 0.5f, 4.0f, 200.0, false);
      compare<mantissa::fp8_e5m2, mantissa::fp8_e4m3>(ta, tb, 32, 48, 64, 2.0f, 0.25f, 200.0, false);
      compare<mantissa::fp8_e4m3, mantissa::fp8_e5m2>(ta, tb, 32, 48, 64, 1.0f, 0.5f, 200.0, false);
    }
  // No E5M2 x E5M2 kernel: declined, C untouched.
  compare<mantissa::fp8_e5m2, mantissa::fp8_e5m2>('N', 'T', 32, 48, 64, 1.0f, 1.0f, 200.0, false);
}

TEST(SurrogateGemmVendor, LinearLayerBf16RunsOnTheVendorPath) {
  if (!vendor_compiled() || !device_memory) GTEST_SKIP() << "no vendor GEMM in this build";
  ms::Linear<float> lin("lin", 64, 32);
  std::mt19937_64 gen(5);
  lin.initialize(gen);
  auto x = random_matrix<float>(48, 64, 6, 1.0);
  ms::Matrix<float> y, dx;
  ms::Context ctx{Precision::bf16};
  ms::reset_gemm_counters();
  lin.forward(ctx, x, y);
  lin.backward(ctx, y, dx);
  Kokkos::fence();
  EXPECT_GE(ms::gemm_counter(ms::GemmPath::vendor_lt).calls, 3) << "forward, dx and dW";
  EXPECT_EQ(ms::gemm_counter(ms::GemmPath::portable).calls, 0);
}
