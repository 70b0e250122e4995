// The fp32 elementary functions the surrogate's GELU and softmax use (detail/FastMath.hpp)
// against double-precision libm, evaluated in the default execution space (device code on GPU
// builds), on a sweep of float bit patterns through each range.
#include <surrogates/Gelu.hpp>
#include <surrogates/detail/FastMath.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace ms = mantissa::surrogates;

namespace {

// Every `stride`-th float from lo to hi (same sign), in order of their bit patterns.
std::vector<float> sweep(float lo, float hi, std::uint32_t stride) {
  std::vector<float> v;
  std::uint32_t a, b;
  std::memcpy(&a, &lo, 4);
  std::memcpy(&b, &hi, 4);
  if (a > b) std::swap(a, b);
  for (std::uint64_t u = a; u <= b; u += stride) {
    float f;
    const std::uint32_t w = std::uint32_t(u);
    std::memcpy(&f, &w, 4);
    v.push_back(f);
  }
  return v;
}

enum class Fn { exp, erf, gelu, gelu_derivative };

std::vector<float> evaluate(Fn fn, const std::vector<float>& x) {
  Kokkos::View<float*, ms::MemSpace> in("test::x", x.size()), out("test::y", x.size());
  auto h = Kokkos::create_mirror_view(in);
  for (std::size_t i = 0; i < x.size(); ++i) h(i) = x[i];
  Kokkos::deep_copy(in, h);
  Kokkos::parallel_for(
      "test::fast_math", Kokkos::RangePolicy<ms::ExecSpace>(0, std::int64_t(x.size())),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const float a = in(i);
        out(i) = fn == Fn::exp    ? ms::detail::exp_nonpositive(a)
                 : fn == Fn::erf  ? ms::detail::erf_fast(a)
                 : fn == Fn::gelu ? ms::gelu<float>(a)
                                  : ms::gelu_derivative<float>(a);
      });
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  return std::vector<float>(r.data(), r.data() + r.size());
}

// Distance in units of the last place of the float nearest the exact value.
double ulps(float got, double exact) {
  const float near = float(exact);
  const float up = std::nextafter(near, std::numeric_limits<float>::infinity());
  const double ulp = up == near ? std::numeric_limits<float>::epsilon() : double(up) - double(near);
  return std::fabs(double(got) - exact) / ulp;
}

double exact_gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double exact_gelu_derivative(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

}  // namespace

TEST(FastMath, ExpWithinOneUlpOnItsRange) {
  const auto x = sweep(-0.0f, -87.0f, 307);
  const auto y = evaluate(Fn::exp, x);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], std::exp(double(x[i]))));
  std::printf("exp_nonpositive: worst %.3f ulp over %zu points\n", worst, x.size());
  EXPECT_LE(worst, 1.0);
  // Below the range: clamped to exp(-87), never zero or negative; NaN stays NaN.
  const auto z = evaluate(Fn::exp, {-88.0f, -1000.0f, -std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::quiet_NaN()});
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(z[i], std::exp(-87.0f));
  EXPECT_TRUE(std::isnan(z[3]));
}

TEST(FastMath, ErfWithinTwoUlps) {
  double worst = 0;
  for (float sign : {1.0f, -1.0f}) {
    const auto x = sweep(sign * 1e-30f, sign * 10.0f, 257);
    const auto y = evaluate(Fn::erf, x);
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], std::erf(double(x[i]))));
  }
  std::printf("erf_fast: worst %.3f ulp\n", worst);
  EXPECT_LE(worst, 2.0);
}

// GELU in fp32 as PyTorch computes it (x/2 (1 + erf(x/sqrt2)) in float) loses relative accuracy
// where 1 + erf cancels (x << 0), so the bound is absolute there: a few float epsilons times
// max(1, |x|), the size of the terms being added.
TEST(FastMath, GeluAndDerivativeCloseToExact) {
  double worst_g = 0, worst_d = 0;
  for (float sign : {1.0f, -1.0f}) {
    const auto x = sweep(sign * 1e-30f, sign * 12.0f, 509);
    const auto g = evaluate(Fn::gelu, x);
    const auto d = evaluate(Fn::gelu_derivative, x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double scale = std::numeric_limits<float>::epsilon() * std::max(1.0, std::fabs(double(x[i])));
      worst_g = std::max(worst_g, std::fabs(g[i] - exact_gelu(x[i])) / scale);
      worst_d = std::max(worst_d, std::fabs(d[i] - exact_gelu_derivative(x[i])) / scale);
    }
  }
  std::printf("gelu: worst %.3f, derivative %.3f (float eps x max(1, |x|))\n", worst_g, worst_d);
  EXPECT_LE(worst_g, 2.0);
  EXPECT_LE(worst_d, 2.0);
}
