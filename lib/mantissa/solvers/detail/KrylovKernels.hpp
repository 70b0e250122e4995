#pragma once
// Fused vector kernels of the preconditioned conjugate gradient (not part of the interface).
// K is the Krylov precision (double, or float inside iterative refinement); every reduction
// accumulates in double. Each kernel makes one pass over the owned cells.
#include <mantissa/solvers/detail/PoissonKernels.hpp>

namespace mantissa::solvers::detail {

// Sum of squares and maximum magnitude (and the plain sum) in one pass.
struct NormMax {
  double sum2 = 0.0, max = 0.0, sum = 0.0;
  KOKKOS_INLINE_FUNCTION NormMax() {}
  KOKKOS_INLINE_FUNCTION NormMax& operator+=(const NormMax& o) {
    sum2 += o.sum2;
    sum += o.sum;
    if (o.max > max) max = o.max;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile NormMax& o) volatile {
    sum2 += o.sum2;
    sum += o.sum;
    if (o.max > max) max = o.max;
  }
  KOKKOS_INLINE_FUNCTION void add(const double v) {
    sum2 += v * v;
    sum += v;
    const double a = v < 0 ? -v : v;
    if (a > max) max = a;
  }
};

// Ap = L p; returns (p, Ap).
template <class Exec, class K, class M>
double apply_dot(const Exec& space, const Placement& pl, const Stencil<K>& s, const View3<K, M>& p,
                 const View3<K, M>& ap) {
  double dot = 0.0;
  reduce_cells(
      "mantissa::solvers::Krylov::apply", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const K pc = p(k, j, i);
        const K v = s.diag * pc - neighbour_sum(p, s, k, j, i);
        ap(k, j, i) = v;
        acc += double(pc) * double(v);
      },
      dot);
  return dot;
}

// r = b - L x (x's ghosts filled); returns the norms of r.
template <class Exec, class K, class M>
NormMax residual_norms(const Exec& space, const Placement& pl, const Stencil<K>& s, const View3<K, M>& x,
                       const View3<K, M>& b, const View3<K, M>& r) {
  NormMax nm;
  reduce_cells(
      "mantissa::solvers::Krylov::residual", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, NormMax& acc) {
        const K v = b(k, j, i) - s.diag * x(k, j, i) + neighbour_sum(x, s, k, j, i);
        r(k, j, i) = v;
        acc.add(double(v));
      },
      nm);
  return nm;
}

// v -= c on the owned cells; returns the norms of the result.
template <class Exec, class K, class M>
NormMax shift_norms(const Exec& space, const Placement& pl, const View3<K, M>& v, double c) {
  NormMax nm;
  const K cc = K(c);
  reduce_cells(
      "mantissa::solvers::Krylov::shift", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, NormMax& acc) {
        const K t = v(k, j, i) - cc;
        v(k, j, i) = t;
        acc.add(double(t));
      },
      nm);
  return nm;
}

// x += a p; r -= a Ap; returns the norms of the new r.
template <class Exec, class K, class M>
NormMax update_xr(const Exec& space, const Placement& pl, double alpha, const View3<K, M>& x,
                  const View3<K, M>& p, const View3<K, M>& r, const View3<K, M>& ap) {
  NormMax nm;
  const K a = K(alpha);
  reduce_cells(
      "mantissa::solvers::Krylov::update", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, NormMax& acc) {
        x(k, j, i) += a * p(k, j, i);
        const K t = r(k, j, i) - a * ap(k, j, i);
        r(k, j, i) = t;
        acc.add(double(t));
      },
      nm);
  return nm;
}

// (z, r), (z, Ap), sum z, sum r, sum Ap.
template <class Exec, class K, class M>
Sums<5> precond_dots(const Exec& space, const Placement& pl, const View3<K, M>& z, const View3<K, M>& r,
                     const View3<K, M>& ap) {
  Sums<5> s;
  reduce_cells(
      "mantissa::solvers::Krylov::dots", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, Sums<5>& acc) {
        const double zv = double(z(k, j, i)), rv = double(r(k, j, i)), av = double(ap(k, j, i));
        acc.v[0] += zv * rv;
        acc.v[1] += zv * av;
        acc.v[2] += zv;
        acc.v[3] += rv;
        acc.v[4] += av;
      },
      s);
  return s;
}

// p = (z - m) + beta p.
template <class Exec, class K, class M>
void update_p(const Exec& space, const Placement& pl, double m, double beta, const View3<K, M>& z,
              const View3<K, M>& p) {
  const K mm = K(m), b = K(beta);
  for_each_cell(
      "mantissa::solvers::Krylov::direction", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        p(k, j, i) = (z(k, j, i) - mm) + b * p(k, j, i);
      });
}

// x += scale * e (e in another precision).
template <class Exec, class K, class E, class M>
void add_scaled(const Exec& space, const Placement& pl, const View3<K, M>& x, const Placement& pe,
                const View3<E, M>& e, double scale) {
  const K sc = K(scale);
  const std::int64_t dx = pe.ghost[0] - pl.ghost[0], dy = pe.ghost[1] - pl.ghost[1],
                     dz = pe.ghost[2] - pl.ghost[2];
  for_each_cell(
      "mantissa::solvers::Krylov::correct", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        x(k, j, i) += sc * K(e(k + dz, j + dy, i + dx));
      });
}

}  // namespace mantissa::solvers::detail
