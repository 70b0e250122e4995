// The GEMM interface against a naive reference, on every path this build has.
#include <surrogates/Gemm.hpp>

#include <KokkosKernels_config.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace ms = mantissa::surrogates;

namespace {

std::vector<std::string> g_regions;
void record_region(const char* name) {
  g_regions.emplace_back(name);
}

template <class T>
ms::Matrix<T> random_matrix(std::int64_t r, std::int64_t c, unsigned seed, bool small_integers = false) {
  auto m = ms::make_matrix<T>("test::A", r, c);
  auto h = Kokkos::create_mirror_view(m);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> iu(-8, 8);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) h(i, j) = small_integers ? T(iu(gen)) : T(u(gen));
  Kokkos::deep_copy(m, h);
  return m;
}

template <class TA, class TC>
std::vector<double> reference(char ta, char tb, double alpha, const ms::Matrix<TA>& A,
                              const ms::Matrix<TA>& B, double beta, const ms::Matrix<TC>& C0, std::int64_t m,
                              std::int64_t n, std::int64_t k) {
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C0);
  std::vector<double> r(m * n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (std::int64_t l = 0; l < k; ++l)
        s += double(ta == 'T' ? a(l, i) : a(i, l)) * double(tb == 'T' ? b(j, l) : b(l, j));
      r[i * n + j] = alpha * s + beta * double(c(i, j));
    }
  return r;
}

template <class T>
void check_blas(double tol) {
  const std::int64_t m = 37, n = 29, k = 41;  // odd sizes: no accidental alignment
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'})
      for (double beta : {0.0, 1.0, 0.5}) {
        auto A = ta == 'T' ? random_matrix<T>(k, m, 1) : random_matrix<T>(m, k, 1);
        auto B = tb == 'T' ? random_matrix<T>(n, k, 2) : random_matrix<T>(k, n, 2);
        auto C = random_matrix<T>(m, n, 3);
        const auto ref = reference(ta, tb, 0.75, A, B, beta, C, m, n, k);
        ms::gemm<T>(ta, tb, T(0.75), A, B, T(beta), C);
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
        double err = 0.0;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            err = std::max(err, std::abs(double(h(i, j)) - ref[i * n + j]));
        EXPECT_LT(err, tol) << "trans " << ta << tb << " beta " << beta;
      }
}

}  // namespace

// Tolerance: |entries| <= 1, k = 41 terms; a dot product's rounding error is below k * eps
// times the sum of |terms| (Higham 2002, eq. 3.5): 41 * 41 * eps, with a factor 10 margin.
TEST(SurrogateGemm, BlasDoubleMatchesReference) {
  check_blas<double>(41.0 * 41.0 * 1.1e-16 * 10.0);
}
TEST(SurrogateGemm, BlasFloatMatchesReference) {
  check_blas<float>(41.0 * 41.0 * 6e-8 * 10.0);
}

TEST(SurrogateGemm, BlasCallsTheTplOnHost) {
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, ms::MemSpace>::accessible)
    GTEST_SKIP() << "device build";
#ifndef KOKKOSKERNELS_ENABLE_TPL_BLAS
  // scripts/device/run.sh builds Kokkos Kernels without a BLAS (a bare node has none): gemm
  // then takes Kokkos Kernels' own kernel on the host, which the other tests here check.
  GTEST_SKIP() << "Kokkos Kernels was built without the BLAS TPL";
#endif
  g_regions.clear();
  Kokkos::Tools::Experimental::set_push_region_callback(record_region);
  auto A = random_matrix<double>(8, 8, 1);
  auto B = random_matrix<double>(8, 8, 2);
  auto C = random_matrix<double>(8, 8, 3);
  ms::gemm<double>('N', 'T', 1.0, A, B, 0.0, C);
  auto Af = random_matrix<float>(8, 8, 1);
  auto Cf = random_matrix<float>(8, 8, 3);
  ms::gemm<float>('T', 'N', 1.0f, Af, Af, 0.0f, Cf);
  Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  bool d = false, f = false;
  for (const auto& r : g_regions) {
    d = d || r.find("TPL_BLAS,double") != std::string::npos;
    f = f || r.find("TPL_BLAS,float") != std::string::npos;
  }
  EXPECT_TRUE(d) << "KokkosBlas::gemm did not take the BLAS TPL for double";
  EXPECT_TRUE(f) << "KokkosBlas::gemm did not take the BLAS TPL for float";
}

TEST(SurrogateGemm, PortableKernelMatchesReference) {
  const std::int64_t m = 13, n = 22, k = 9;
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'}) {
      auto A = ta == 'T' ? random_matrix<float>(k, m, 4) : random_matrix<float>(m, k, 4);
      auto B = tb == 'T' ? random_matrix<float>(n, k, 5) : random_matrix<float>(k, n, 5);
      auto C = random_matrix<float>(m, n, 6);
      const auto ref = reference(ta, tb, 2.0, A, B, 1.0, C, m, n, k);
      ms::gemm_portable<float>(ta, tb, 2.0f, A, B, 1.0f, C);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          // fp32 accumulation of 9 terms of size <= 2: 9 * 2 * 6e-8 * 2, rounded up to 1e-5.
          EXPECT_NEAR(double(h(i, j)), ref[i * n + j], 1e-5) << ta << tb << " " << i << "," << j;
    }
}

TEST(SurrogateGemm, OneDnnBf16IsExactOnSmallIntegers) {
  if (!ms::onednn_bf16_available())
    GTEST_SKIP() << "no oneDNN bf16 matmul here (built without oneDNN, or a CPU without AVX512)";
  // Small integers are exact in bf16 and their products and sums (< 2^24) exact in fp32, so
  // the oneDNN result must equal the reference exactly: any transposition or layout slip shows.
  const std::int64_t m = 19, n = 33, k = 64;
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'})
      for (float beta : {0.0f, 1.0f}) {
        auto Af = ta == 'T' ? random_matrix<float>(k, m, 7, true) : random_matrix<float>(m, k, 7, true);
        auto Bf = tb == 'T' ? random_matrix<float>(n, k, 8, true) : random_matrix<float>(k, n, 8, true);
        auto C = random_matrix<float>(m, n, 9, true);
        const auto ref = reference(ta, tb, 0.5, Af, Bf, beta, C, m, n, k);
        auto to_bf16 = [](const ms::Matrix<float>& x) {
          auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
          ms::Matrix<std::uint16_t> y("test::bf16", x.extent(0), x.extent(1));
          auto hy = Kokkos::create_mirror_view(y);
          for (std::size_t i = 0; i < x.extent(0); ++i)
            for (std::size_t j = 0; j < x.extent(1); ++j) {
              std::uint32_t bits;
              std::memcpy(&bits, &hx(i, j), 4);
              hy(i, j) = std::uint16_t(bits >> 16);  // exact: the low half is zero for these values
            }
          Kokkos::deep_copy(y, hy);
          return y;
        };
        ms::reset_gemm_counters();
        ms::gemm_onednn_bf16(ta, tb, 0.5f, to_bf16(Af), to_bf16(Bf), beta, C);
        EXPECT_EQ(ms::gemm_counter(ms::GemmPath::onednn_bf16).calls, 1);
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(double(h(i, j)), ref[i * n + j]) << ta << tb << beta;
      }
}

TEST(SurrogateGemm, ShapeMismatchIsRefused) {
  auto A = random_matrix<double>(3, 4, 1);
  auto B = random_matrix<double>(5, 6, 2);
  auto C = random_matrix<double>(3, 6, 3);
  try {
    ms::gemm<double>('N', 'N', 1.0, A, B, 0.0, C);
    FAIL() << "no error";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("op(A) is 3x4, op(B) is 5x6"), std::string::npos) << e.what();
  }
}

TEST(SurrogateGemm, BackendsDescribeEveryPrecision) {
  const std::string d = ms::gemm_backends();
  for (auto p : mantissa::all_precisions())
    EXPECT_NE(d.find(std::string(mantissa::to_string(p)) + ":"), std::string::npos);
}
