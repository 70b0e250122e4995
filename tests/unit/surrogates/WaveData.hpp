#pragma once
// A tiny 2D acoustic wave (second-order leapfrog, 5-point Laplacian, zero boundaries) to make
// surrogate training data without depending on apps/seismic: samples are
//   input  = (p^n, p^{n-1}, c)   target = (p^{n+K} - p^n, p^{n+K-1} - p^{n-1}).
#include <surrogates/Dataset.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace wave_test {

inline void make_wave_samples(mantissa::surrogates::Dataset& ds, int n, int K, int trajectories,
                              int samples_per, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.25, 0.75);
  const std::size_t N = std::size_t(n) * n;
  for (int tr = 0; tr < trajectories; ++tr) {
    // Two-layer velocity with a random interface; Courant number c dt / h <= 0.5 keeps it stable.
    const double iface = u(gen) * n, c1 = 0.3 + 0.2 * u(gen), c2 = 0.3 + 0.2 * u(gen);
    std::vector<double> c(N), p(N, 0.0), pm(N, 0.0), pn(N);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) c[y * n + x] = y < iface ? c1 : c2;
    const double x0 = u(gen) * n, y0 = u(gen) * n, w = 2.0 + 2.0 * u(gen);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const double r2 = (x - x0) * (x - x0) + (y - y0) * (y - y0);
        p[y * n + x] = pm[y * n + x] = std::exp(-r2 / (w * w));
      }
    auto step = [&] {
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          auto at = [&](int xx, int yy) {
            return (xx < 0 || yy < 0 || xx >= n || yy >= n) ? 0.0 : p[yy * n + xx];
          };
          const double lap = at(x + 1, y) + at(x - 1, y) + at(x, y + 1) + at(x, y - 1) - 4.0 * p[y * n + x];
          const double cc = c[y * n + x];
          pn[y * n + x] = 2.0 * p[y * n + x] - pm[y * n + x] + cc * cc * lap;
        }
      pm.swap(p);
      p.swap(pn);
    };
    for (int s = 0; s < samples_per; ++s) {
      for (int k = 0; k < 3; ++k) step();  // decorrelate consecutive samples
      std::vector<double> in(3 * N), target(2 * N);
      for (std::size_t i = 0; i < N; ++i) in[i] = p[i], in[N + i] = pm[i], in[2 * N + i] = c[i];
      std::vector<double> p0 = p, pm0 = pm;
      for (int k = 0; k < K; ++k) step();
      for (std::size_t i = 0; i < N; ++i) target[i] = p[i] - p0[i], target[N + i] = pm[i] - pm0[i];
      ds.add(in, target);
      // continue the trajectory from where the K steps left it
    }
  }
}

}  // namespace wave_test
