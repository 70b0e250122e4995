#pragma once
// Point-wise math of the acoustic solver (STYLE #7): free functions that a kernel calls at one
// point, so each can be tested on the host. Nothing here launches anything.
//
// Scheme: p^{n+1} = 2 p^n - p^{n-1} + (c dt)^2 (L p^n + s), leapfrog in time, L the centred
// finite-difference Laplacian of order 2R (Fornberg 1988 coefficients). In a convolutional PML
// the second-order form of Pasalic and McGarry (2010, SEG Expanded Abstracts 29, 2925) of the
// Komatitsch and Martin (2007, Geophysics 72, SM155) CPML is used: per axis a,
//   psi_a  <- b_a psi_a  + a_a dp/dx_a
//   zeta_a <- b_a zeta_a + a_a (d2p/dx_a^2 + dpsi_a/dx_a)
//   p_tt    = c^2 (sum_a d2p/dx_a^2 + dpsi_a/dx_a + zeta_a)
// with b = exp(-(d + alpha) dt), a = d (b - 1) / (d + alpha) (kappa = 1).
#include <Kokkos_Core.hpp>

namespace mantissa::seismic {

// Centred coefficients of the second derivative (c0, c1, ..., cR) and of the first
// derivative (0, d1, ..., dR) on a unit grid, for radius R = order / 2 (Fornberg 1988,
// Math. Comp. 51, 699). Host and device.
KOKKOS_INLINE_FUNCTION double second_derivative_coefficient(int radius, int m) {
  switch (radius) {
    case 1: {
      const double c[2] = {-2.0, 1.0};
      return c[m];
    }
    case 2: {
      const double c[3] = {-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0};
      return c[m];
    }
    case 3: {
      const double c[4] = {-49.0 / 18.0, 3.0 / 2.0, -3.0 / 20.0, 1.0 / 90.0};
      return c[m];
    }
    default: {
      const double c[5] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0};
      return c[m];
    }
  }
}

KOKKOS_INLINE_FUNCTION double first_derivative_coefficient(int radius, int m) {
  switch (radius) {
    case 1: {
      const double c[2] = {0.0, 1.0 / 2.0};
      return c[m];
    }
    case 2: {
      const double c[3] = {0.0, 2.0 / 3.0, -1.0 / 12.0};
      return c[m];
    }
    case 3: {
      const double c[4] = {0.0, 3.0 / 4.0, -3.0 / 20.0, 1.0 / 60.0};
      return c[m];
    }
    default: {
      const double c[5] = {0.0, 4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0};
      return c[m];
    }
  }
}

// Stencil weights already divided by the spacing: d2[a][m] = c_m / h_a^2, d1[a][m] = d_m / h_a;
// center = sum over the used axes of d2[a][0]. Copied by value into kernels.
template <class T, int R>
struct StencilWeights {
  T d2[3][R + 1];
  T d1[3][R + 1];
  T center;
  int dim;
};

template <class T, int R>
StencilWeights<T, R> make_stencil_weights(int dim, const double spacing[3]) {
  StencilWeights<T, R> w{};
  w.dim = dim;
  double center = 0.0;
  for (int a = 0; a < 3; ++a) {
    for (int m = 0; m <= R; ++m) {
      const bool used = a < dim;
      w.d2[a][m] = used ? T(second_derivative_coefficient(R, m) / (spacing[a] * spacing[a])) : T(0);
      w.d1[a][m] = used ? T(first_derivative_coefficient(R, m) / spacing[a]) : T(0);
    }
    if (a < dim) center += second_derivative_coefficient(R, 0) / (spacing[a] * spacing[a]);
  }
  w.center = T(center);
  return w;
}

// Second derivative along one axis (0 = x, 1 = y, 2 = z) at storage point (k, j, i).
template <int R, class T, class View>
KOKKOS_INLINE_FUNCTION T second_derivative(const View& v, int axis, int k, int j, int i,
                                           const StencilWeights<T, R>& w) {
  T s = w.d2[axis][0] * T(v(k, j, i));
  for (int m = 1; m <= R; ++m) {
    const T pair = axis == 0   ? T(v(k, j, i - m)) + T(v(k, j, i + m))
                   : axis == 1 ? T(v(k, j - m, i)) + T(v(k, j + m, i))
                               : T(v(k - m, j, i)) + T(v(k + m, j, i));
    s += w.d2[axis][m] * pair;
  }
  return s;
}

// First derivative along one axis at storage point (k, j, i).
template <int R, class T, class View>
KOKKOS_INLINE_FUNCTION T first_derivative(const View& v, int axis, int k, int j, int i,
                                          const StencilWeights<T, R>& w) {
  T s = T(0);
  for (int m = 1; m <= R; ++m) {
    const T diff = axis == 0   ? T(v(k, j, i + m)) - T(v(k, j, i - m))
                   : axis == 1 ? T(v(k, j + m, i)) - T(v(k, j - m, i))
                               : T(v(k + m, j, i)) - T(v(k - m, j, i));
    s += w.d1[axis][m] * diff;
  }
  return s;
}

// The Laplacian at (k, j, i). Every form of it in the code (this one, laplacian_flat below and
// the host row kernel in detail/HostStencil.hpp) adds the same terms in the same order: the
// centre, then the x pairs for m = 1..R, the y pairs, the z pairs, one rounding per addition.
// So a point's value does not depend on which kernel computed it or on the decomposition.
template <int R, class T, class View>
KOKKOS_INLINE_FUNCTION T laplacian(const View& v, int k, int j, int i, const StencilWeights<T, R>& w) {
  T s = w.center * T(v(k, j, i));
  for (int m = 1; m <= R; ++m) s = s + w.d2[0][m] * (T(v(k, j, i - m)) + T(v(k, j, i + m)));
  for (int m = 1; m <= R; ++m) s = s + w.d2[1][m] * (T(v(k, j - m, i)) + T(v(k, j + m, i)));
  if (w.dim == 3)
    for (int m = 1; m <= R; ++m) s = s + w.d2[2][m] * (T(v(k - m, j, i)) + T(v(k + m, j, i)));
  return s;
}

// The Laplacian on a flat array (x contiguous, strides sy and sz), for the device's interior
// kernel: the same arithmetic, in the same order, as laplacian() above, without View index
// arithmetic in the inner loop.
template <int R, int Dim, class T, class S>
KOKKOS_INLINE_FUNCTION T laplacian_flat(const S* p, long x, long sy, long sz, const StencilWeights<T, R>& w) {
  T s = w.center * T(p[x]);
  for (int m = 1; m <= R; ++m) s = s + w.d2[0][m] * (T(p[x - m]) + T(p[x + m]));
  for (int m = 1; m <= R; ++m) s = s + w.d2[1][m] * (T(p[x - m * sy]) + T(p[x + m * sy]));
  if (Dim == 3)
    for (int m = 1; m <= R; ++m) s = s + w.d2[2][m] * (T(p[x - m * sz]) + T(p[x + m * sz]));
  return s;
}

// Leapfrog update of one point: returns p^{n+1} from p^n, p^{n-1}, (c dt)^2 and the
// (PML-corrected) Laplacian.
template <class T>
KOKKOS_INLINE_FUNCTION T leapfrog(T p, T p_old, T c2dt2, T lap) {
  return T(2) * p - p_old + c2dt2 * lap;
}

// One CPML memory-variable update: m <- b m + a q.
template <class T>
KOKKOS_INLINE_FUNCTION T cpml_memory(T memory, T a, T b, T q) {
  return b * memory + a * q;
}

// Where each axis's CPML memory variables can be non-zero, so that each axis's psi and zeta work
// is done only in its own slab (issue 11: with CPML on every face the 3D step did all three axes'
// work at every CPML point and ran at a third of the rigid-wall rate).
//
// Along axis a, a storage index s is *inactive* when the profile there is a_a(s) = 0 (either
// sign) and 0 < b_a(s) < inf: outside the axis's own slab (cpml_coefficients gives a = 0, b = 1
// there). There psi_a and zeta_a stay exactly +0, since they start at +0 (initialize; a checkpoint
// holds values of the same run) and every update gives b (+0) + a q = +0 + (+-0) = +0 for a finite
// q. CpmlSlabs holds one run [lo[a], hi[a]) of inactive owned indices per axis (empty: all active,
// the default). The kernels then
// - skip the psi_a update at inactive s (memory): it would store +0 over +0;
// - replace axis a's term of the p update, where all psi_a it reads (s - R .. s + R) and zeta_a(s)
//   are +0 (s in [lo + R, hi - R)), by (d2p/dx_a^2 + 0): the full term is
//   (d2p + f) + z with f = sum d1 (+0 - +0) = +0 and z = b (+0) + a (d2p + f) = +0, which is
//   (d2p + 0) + 0 = d2p + 0 (d2p + 0 is never -0, so the second + 0 changes nothing), and zeta_a
//   keeps its +0.
// So a finite field gets the same bits either way (tstHostCpml checks restricted against full
// kernels bitwise; a non-finite field is flagged by the diagnostics whichever values it
// spreads). Indices outside the run are treated as active, which is always exact, so each rank
// may find its own run and the results stay independent of the decomposition.
struct CpmlSlabs {
  int lo[3] = {0, 0, 0};
  int hi[3] = {0, 0, 0};
  // psi_a must be updated at storage index s of axis a.
  KOKKOS_INLINE_FUNCTION bool memory(int a, int s) const { return s < lo[a] || s >= hi[a]; }
  // axis a's term of the p update must be the full one at s (radius R).
  KOKKOS_INLINE_FUNCTION bool update(int a, int s, int radius) const {
    return s < lo[a] + radius || s >= hi[a] - radius;
  }
};

// The longest run of inactive indices of one axis within [first, last) from its profile (host
// values a, b in the compute type, indexed by storage index): sets slabs.lo[axis], hi[axis].
template <class C>
void find_inactive_run(const C* a, const C* b, int first, int last, int axis, CpmlSlabs& slabs) {
  int best_lo = first, best_hi = first;
  for (int s = first; s < last;) {
    const auto inactive = [&](int t) {
      const double bt = double(b[t]);
      return double(a[t]) == 0.0 && bt > 0.0 && bt < 1e300;
    };
    if (!inactive(s)) {
      ++s;
      continue;
    }
    int e = s;
    while (e < last && inactive(e)) ++e;
    if (e - s > best_hi - best_lo) best_lo = s, best_hi = e;
    s = e;
  }
  slabs.lo[axis] = best_lo;
  slabs.hi[axis] = best_hi;
}

// CPML damping profile at a normalised depth x in [0, 1] into the layer (0 at its inner edge):
// d = d0 x^N with d0 = -(N + 1) v ln(R) / (2 L) (Collino and Tsogka 2001, K&M 2007 eq. 28),
// alpha = alpha_max (1 - x) with alpha_max = pi f (K&M 2007 section 3). Returns {a, b} for a
// step dt. Host only (profiles are tabulated once).
struct CpmlCoefficients {
  double a;
  double b;
};
CpmlCoefficients cpml_coefficients(double x, double thickness, double v_max, double reflection,
                                   double frequency, double dt);

// Lagrange interpolation weights of `count` consecutive grid points starting at index `first`
// for the fractional index s (host). Exact 1 / 0 when s is a grid index.
void lagrange_weights(double s, long first, int count, double* weights);

}  // namespace mantissa::seismic
