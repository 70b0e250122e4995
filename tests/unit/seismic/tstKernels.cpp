// Point-wise kernels on the host in fp32 and fp64 (STYLE #7, #9): stencil exactness on
// polynomials, interpolation weights, CPML coefficients, the CFL bound and its refusal, the
// points-per-wavelength warning, wavelets.
#include <mantissa/core/Error.hpp>
#include <seismic/Config.hpp>
#include <seismic/Solver.hpp>
#include <seismic/Wavelet.hpp>
#include <seismic/stencil_kernels.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace {

using namespace mantissa::seismic;
using mantissa::Grid;

template <class T>
class SeismicKernels : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SeismicKernels, Types);

// A centred stencil of order 2R differentiates polynomials of degree <= 2R + 1 exactly; the
// tolerance is the rounding of the sum: ~ (sum |c_m| / h^2) * max|p| * eps * (terms).
template <int R, class T>
void check_polynomial_exact() {
  using View = Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::HostSpace>;
  const int n = 2 * R + 3;
  View v("mantissa::seismic::test::poly", n, n, n);
  const double h[3] = {0.5, 0.25, 0.75};
  const int deg = 2 * R;  // highest even degree the stencil is exact for
  auto f = [&](int k, int j, int i) {
    const double x = (i - n / 2) * h[0], y = (j - n / 2) * h[1], z = (k - n / 2) * h[2];
    return std::pow(x, deg) / 4.0 + 2.0 * y * y * y + 3.0 * z * z;
  };
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) v(k, j, i) = T(f(k, j, i));
  const auto w = make_stencil_weights<T, R>(3, h);
  const int c = n / 2;
  for (int di = -1; di <= 1; ++di) {
    const int i = c + di;
    const double x = di * h[0];
    const double expect = deg * (deg - 1) / 4.0 * std::pow(x, deg - 2) + 12.0 * 0.0 + 6.0;  // y = 0 at j = c
    const double got = double(laplacian<R>(v, c, c, i, w));
    double scale = 0.0;
    for (int m = 0; m <= R; ++m) scale += std::fabs(second_derivative_coefficient(R, m)) / (h[1] * h[1]);
    const double tol =
        64.0 * scale * std::numeric_limits<T>::epsilon() * (1.0 + std::pow((R + 1) * h[0], deg));
    EXPECT_NEAR(got, expect, tol) << "R " << R << " i " << i;
    // The per-axis second derivatives sum to the Laplacian (PML kernel vs interior kernel).
    const double split =
        double(second_derivative<R>(v, 0, c, c, i, w) + second_derivative<R>(v, 1, c, c, i, w) +
               second_derivative<R>(v, 2, c, c, i, w));
    EXPECT_NEAR(split, expect, tol);
  }
  // First derivative of y^3 at y = 0 is 0 and of x^deg at 0 is 0; of z^2 at z = h is 2h.
  const double d1 = double(first_derivative<R>(v, 2, c + 1, c, c, w));
  EXPECT_NEAR(d1, 6.0 * h[2], 64.0 * std::numeric_limits<T>::epsilon() * 10.0 / h[2]);
}

TYPED_TEST(SeismicKernels, StencilsAreExactOnPolynomials) {
  check_polynomial_exact<1, TypeParam>();
  check_polynomial_exact<2, TypeParam>();
  check_polynomial_exact<3, TypeParam>();
  check_polynomial_exact<4, TypeParam>();
}

TYPED_TEST(SeismicKernels, LeapfrogAndMemoryUpdate) {
  using T = TypeParam;
  // p^{n+1} = 2 p - p_old + c2dt2 * lap: small integers and powers of two are exact.
  EXPECT_EQ(leapfrog<T>(T(3), T(1), T(0.25), T(8)), T(7));
  EXPECT_EQ(cpml_memory<T>(T(2), T(0.5), T(0.25), T(4)), T(2.5));
}

TEST(SeismicKernels, LagrangeWeightsInterpolatePolynomialsAndHitGridPoints) {
  double w[8];
  lagrange_weights(5.0, 2, 8, w);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(w[j], j == 3 ? 1.0 : 0.0);  // exact on a grid point
  lagrange_weights(5.37, 2, 8, w);
  double sum = 0.0, cubic = 0.0;
  for (int j = 0; j < 8; ++j) {
    sum += w[j];
    const double x = 2.0 + j;
    cubic += w[j] * (x * x * x - 2.0 * x);
  }
  // Degree-7 interpolation reproduces constants and cubics up to rounding (~8 terms of
  // size |w| * x^3 ~ 1e3 each): 1e-10.
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_NEAR(cubic, 5.37 * 5.37 * 5.37 - 2.0 * 5.37, 1e-10);
}

TEST(SeismicKernels, PointStencilShiftsInsideAndSumsToOne) {
  Grid g;
  g.dim = 2;
  g.n = {20, 10, 1};
  g.spacing = {2.0, 2.0, 1.0};
  const auto st = point_stencil({0.5, 17.3, 0.0}, g, 8);  // next to x = 0, near y = max
  double sum = 0.0;
  for (std::size_t e = 0; e < st.index.size(); ++e) {
    EXPECT_GE(st.index[e][0], 0);
    EXPECT_LT(st.index[e][1], 10);
    EXPECT_EQ(st.index[e][2], 0);
    sum += st.weight[e];
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);  // partition of unity, up to rounding of 64 products
  EXPECT_EQ(point_stencil({4.0, 6.0, 0.0}, g, 8).index.size(), 1u);  // a grid point: one entry
}

TEST(SeismicKernels, CpmlCoefficientsDecayInsideTheLayer) {
  const double dt = 1e-3;
  const auto outside = cpml_coefficients(0.0, 100.0, 2000.0, 1e-3, 10.0, dt);
  EXPECT_EQ(outside.a, 0.0);
  const auto mid = cpml_coefficients(0.5, 100.0, 2000.0, 1e-3, 10.0, dt);
  const auto edge = cpml_coefficients(1.0, 100.0, 2000.0, 1e-3, 10.0, dt);
  EXPECT_LT(edge.b, mid.b);  // stronger damping towards the outer edge
  EXPECT_LT(edge.a, 0.0);
  EXPECT_GT(edge.b, 0.0);
  // d0 = -3 v ln R / (2 L) = 3 * 2000 * 6.9078 / 200 at x = 1, alpha = 0 there.
  const double d0 = -3.0 * 2000.0 * std::log(1e-3) / 200.0;
  EXPECT_NEAR(edge.b, std::exp(-d0 * dt), 1e-14);
  EXPECT_NEAR(edge.a, edge.b - 1.0, 1e-14);
}

TEST(SeismicKernels, StableDtMatchesKnownBounds) {
  Grid g;
  g.dim = 2;
  g.spacing = {1.0, 1.0, 1.0};
  // Order 2: dt <= h / (c sqrt(dim)) (classic CFL of the 5-point Laplacian).
  EXPECT_NEAR(stable_dt(2, g, 1.0), 1.0 / std::sqrt(2.0), 1e-14);
  g.dim = 3;
  EXPECT_NEAR(stable_dt(2, g, 2.0), 0.5 / std::sqrt(3.0), 1e-14);
  // Higher orders have a larger Nyquist symbol, so a smaller bound (order 4: s = 16/3).
  EXPECT_NEAR(stable_dt(4, g, 1.0), 2.0 / std::sqrt(3.0 * 16.0 / 3.0), 1e-14);
  EXPECT_LT(stable_dt(8, g, 1.0), stable_dt(4, g, 1.0));
}

Config small_config(int order) {
  Config c;
  c.order = order;
  c.quiet = true;
  Source s;
  s.position = {50.0, 50.0, 0.0};
  s.frequency = 10.0;
  c.shots = {Shot{{s}}};
  return c;
}

TEST(SeismicKernels, CflViolationIsRefusedWithTheLargestStableDt) {
  Grid g;
  g.dim = 2;
  g.n = {101, 101, 1};
  g.spacing = {5.0, 5.0, 1.0};
  Config c = small_config(8);
  const double dt_max = stable_dt(8, g, 3000.0);
  c.dt = 1.01 * dt_max;
  try {
    check_config(c, g, 1500.0, 3000.0);
    FAIL() << "a dt above the CFL bound was accepted";
  } catch (const mantissa::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("seismic.dt"), std::string::npos) << msg;
    EXPECT_NE(msg.find("largest stable dt"), std::string::npos) << msg;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", dt_max);
    EXPECT_NE(msg.find(buf), std::string::npos) << msg << " should quote " << buf;
  }
  c.dt = 0.99 * dt_max;
  EXPECT_NO_THROW(check_config(c, g, 1500.0, 3000.0));
}

TEST(SeismicKernels, FewPointsPerWavelengthWarnsWithTheNumbers) {
  Grid g;
  g.dim = 2;
  g.n = {101, 101, 1};
  g.spacing = {5.0, 5.0, 1.0};
  Config c = small_config(8);
  // v_min / f_max / h = 1500 / 25 / 5 = 12 points: fine for order 8.
  EXPECT_TRUE(check_config(c, g, 1500.0, 3000.0).empty());
  // 150 / 25 / 5 = 1.2 points: a warning that quotes the count and the remedy.
  const auto w = check_config(c, g, 150.0, 3000.0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("1.2 points per minimum wavelength"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("h <="), std::string::npos) << w[0];
}

TEST(SeismicKernels, BadOrderAndOutsideReceiverAreRefused) {
  Grid g;
  g.dim = 2;
  g.n = {101, 101, 1};
  g.spacing = {5.0, 5.0, 1.0};
  Config c = small_config(3);
  EXPECT_THROW(check_config(c, g, 1500.0, 3000.0), mantissa::Error);
  c = small_config(4);
  c.receivers = {{1000.0, 10.0, 0.0}};
  EXPECT_THROW(check_config(c, g, 1500.0, 3000.0), mantissa::Error);
}

TEST(SeismicKernels, WaveletsPeakWhereExpected) {
  EXPECT_DOUBLE_EQ(ricker(0.15, 10.0, 0.15), 1.0);
  // Ricker zero crossings at t0 +- 1 / (pi f sqrt(2)).
  EXPECT_NEAR(ricker(0.15 + 1.0 / (3.14159265358979323846 * 10.0 * std::sqrt(2.0)), 10.0, 0.15), 0.0, 1e-15);
  // Gaussian derivative: unit peak at tau = -1 / (pi f sqrt 2).
  const double tau = 1.0 / (3.14159265358979323846 * 10.0 * std::sqrt(2.0));
  EXPECT_NEAR(gaussian_derivative(0.15 - tau, 10.0, 0.15), 1.0, 1e-14);
  // File wavelet: linear interpolation between samples, zero outside.
  const std::string file = "seismic_test_wavelet.txt";
  {
    std::ofstream out(file);
    out << "# time value\n0.0 0.0\n0.1 2.0\n0.2 0.0\n";
  }
  Source s;
  s.wavelet = WaveletKind::file;
  s.file = file;
  Wavelet w(s);
  EXPECT_DOUBLE_EQ(w(0.05), 1.0);
  EXPECT_DOUBLE_EQ(w(0.3), 0.0);
  s.file = "does_not_exist.txt";
  EXPECT_THROW(Wavelet bad(s), mantissa::Error);
}

}  // namespace
