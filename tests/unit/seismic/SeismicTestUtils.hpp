#pragma once
// Shared helpers of the seismic tests: analytic solutions in the solver's normalisation and
// trace misfits. The solver integrates p_tt = c^2 (lap p + f(t) delta(x - x_s)), so
//   3D: p = f(t - r/c) / (4 pi r)
//   2D: p = (f * G2)(t), G2(t) = H(t - r/c) / (2 pi sqrt(t^2 - r^2/c^2)).
#include <seismic/Solver.hpp>
#include <seismic/Wavelet.hpp>

#include <cmath>
#include <vector>

namespace seismic_test {

constexpr double pi = 3.14159265358979323846;

inline double analytic_3d(const mantissa::seismic::Wavelet& f, double r, double c, double t) {
  return f(t - r / c) / (4.0 * pi * r);
}

// 2D: with tau = (r/c) cosh(u) the singular kernel becomes smooth,
// p(t) = 1/(2 pi) int_0^{acosh(c t / r)} f(t - (r/c) cosh u) du; composite Simpson in u.
inline double analytic_2d(const mantissa::seismic::Wavelet& f, double r, double c, double t) {
  if (t <= r / c) return 0.0;
  const double umax = std::acosh(c * t / r);
  const int n = 4000;  // even; the integrand is smooth, Simpson's error is far below 1e-8 here
  const double h = umax / n;
  double s = f(t - r / c) + f(t - (r / c) * std::cosh(umax));
  for (int i = 1; i < n; ++i) s += (i % 2 ? 4.0 : 2.0) * f(t - (r / c) * std::cosh(i * h));
  return s * h / 3.0 / (2.0 * pi);
}

// ||a - b|| / ||b|| over the samples.
inline double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

inline double distance(const std::array<double, 3>& a, const std::array<double, 3>& b, int dim) {
  double s = 0.0;
  for (int i = 0; i < dim; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

inline mantissa::seismic::Config rigid_config(int dim, int order) {
  mantissa::seismic::Config c;
  c.order = order;
  for (auto& axis : c.boundary)
    axis = {mantissa::seismic::Boundary::rigid, mantissa::seismic::Boundary::rigid};
  (void)dim;
  c.quiet = true;
  return c;
}

}  // namespace seismic_test
