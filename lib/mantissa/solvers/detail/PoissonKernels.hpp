#pragma once
// Kernels of the cell-centred Poisson multigrid (not part of the interface).
//
// Every level solves L x = f with the scaled 7-point (3D) / 5-point (2D) operator
//   (L x)_i = D x_i - sum_a c_a (x_{i+e_a} + x_{i-e_a}),  D = 2 sum_a c_a,
// c_a = (h_min / h_a)^2, so the coefficients are O(1) in every storage type (the true operator
// is L / h_min^2). Physical boundaries sit on cell faces and are imposed through ghost cells
// by mirroring: ghost = -interior (Dirichlet, value 0 on the face) or +interior (Neumann,
// zero normal derivative); periodic axes get their ghosts from the halo exchange.
//
// Storage T is double, float, bf16 or fp16; arithmetic runs in compute_t<T> (double for
// double, float otherwise) and each value is rounded to T once, when stored.
//
// Transfers: P is cell-centred trilinear interpolation (weights 3/4, 1/4 per axis) and the
// restriction is its transpose over 2^dim (full weighting, 1/8 3/8 3/8 1/8 per axis), so the
// V-cycle with symmetric smoothing is a symmetric preconditioner for CG. Coarse cell I owns
// fine cells 2I and 2I+1; an odd fine axis gives the last coarse cell one child and the
// restriction reads the missing child as zero (a zero ghost).
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/LowPrecision.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <type_traits>

namespace mantissa::solvers::detail {

template <class T>
struct compute_type {
  using type = float;
};
template <>
struct compute_type<double> {
  using type = double;
};
template <class T>
using compute_t = typename compute_type<T>::type;

// Compute type of an operation that reads A and writes B.
template <class A, class B>
using pair_compute_t =
    std::conditional_t<std::is_same<A, double>::value && std::is_same<B, double>::value, double, float>;

template <class T, class M>
using View3 = Kokkos::View<T***, Kokkos::LayoutRight, M>;

// The solvers' fields start every row's first owned point on a cache line (Field's row
// alignment): the 7-point rows then load and store whole lines. Measured at 256^3 doubles, one
// Zen 5 core: a plain residual loop 13-14 GB/s with rows one double off a line, 18-19 aligned.
inline constexpr std::size_t row_align_bytes = 64;

// A box of storage positions [lo, hi) per axis (x, y, z).
struct Box {
  std::array<std::int64_t, 3> lo{0, 0, 0}, hi{1, 1, 1};
  std::int64_t size() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};

// Runs f(k, j, i) over a box. Host back-ends get a loop over rows with the x loop innermost
// (it vectorises); devices get an MDRange.
template <class Exec, class F>
void for_each_cell(const char* label, const Exec& space, const Box& b, const F& f) {
  if (b.size() <= 0) return;
  if constexpr (std::is_same<typename Exec::memory_space, Kokkos::HostSpace>::value) {
    const std::int64_t ny = b.hi[1] - b.lo[1];
    const std::int64_t x0 = b.lo[0], x1 = b.hi[0], y0 = b.lo[1], z0 = b.lo[2];
    Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(space, 0, (b.hi[2] - b.lo[2]) * ny),
                         [=](const std::int64_t row) {
                           const std::int64_t k = z0 + row / ny, j = y0 + row % ny;
                           for (std::int64_t i = x0; i < x1; ++i) f(k, j, i);
                         });
  } else {
    using P = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>;
    using idx = typename P::index_type;
    Kokkos::parallel_for(
        label,
        P(space, {idx(b.lo[2]), idx(b.lo[1]), idx(b.lo[0])}, {idx(b.hi[2]), idx(b.hi[1]), idx(b.hi[0])}), f);
  }
}

// Sum reduction over a box; f(k, j, i, R& acc).
template <class Exec, class R, class F>
void reduce_cells(const char* label, const Exec& space, const Box& b, const F& f, R& result) {
  result = R{};
  if (b.size() <= 0) return;
  if constexpr (std::is_same<typename Exec::memory_space, Kokkos::HostSpace>::value) {
    const std::int64_t ny = b.hi[1] - b.lo[1];
    const std::int64_t x0 = b.lo[0], x1 = b.hi[0], y0 = b.lo[1], z0 = b.lo[2];
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<Exec>(space, 0, (b.hi[2] - b.lo[2]) * ny),
        [=](const std::int64_t row, R& acc) {
          const std::int64_t k = z0 + row / ny, j = y0 + row % ny;
          for (std::int64_t i = x0; i < x1; ++i) f(k, j, i, acc);
        },
        result);
  } else {
    using P = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>;
    using idx = typename P::index_type;
    Kokkos::parallel_reduce(
        label,
        P(space, {idx(b.lo[2]), idx(b.lo[1]), idx(b.lo[0])}, {idx(b.hi[2]), idx(b.hi[1]), idx(b.hi[0])}), f,
        result);
  }
}

// A few sums at once (Kokkos reduces any struct with += and a zero default).
template <int N>
struct Sums {
  double v[N] = {};
  KOKKOS_INLINE_FUNCTION Sums() {
    for (int n = 0; n < N; ++n) v[n] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) {
    for (int n = 0; n < N; ++n) v[n] += o.v[n];
    return *this;
  }
#if MANTISSA_KOKKOS_VOLATILE_JOIN
  // Kokkos 3.x only (core/KokkosCompat.hpp): C++20 deprecates compound assignment to volatile.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sums& o) volatile {
    for (int n = 0; n < N; ++n) v[n] += o.v[n];
  }
#endif
};

// The operator's coefficients in compute type C, and what a smoother needs to find the true
// diagonal of a boundary cell: with a mirrored ghost the row of an outer cell is
// (D - sign c_a) x_0 - c_a x_1, and a Gauss-Seidel or Jacobi update divided by D instead
// would under-relax every boundary cell (at a Neumann corner by half; measured: V-cycle
// contraction 0.8 instead of 0.2 on a 32^3 Neumann box).
template <class C>
struct Stencil {
  C cx, cy, cz, diag, inv_diag;
  bool is3d;
  // global index = storage index + shift; cells 0 and n-1 get sign * c off the diagonal
  std::int64_t shift[3] = {0, 0, 0}, last[3] = {0, 0, 0};
  C lo[3] = {C(0), C(0), C(0)}, hi[3] = {C(0), C(0), C(0)};  // sign * c per face
  // Mirror signs of the x faces this rank touches (0: none). The host row kernels of the
  // 7-point operations set a row's two x ghosts themselves (only that row reads them), so
  // the level's ghost fill skips the x faces, which touch one cache line per row.
  C mlo = C(0), mhi = C(0);
  KOKKOS_INLINE_FUNCTION C diag_at(const std::int64_t k, const std::int64_t j, const std::int64_t i) const {
    const std::int64_t g0 = i + shift[0], g1 = j + shift[1], g2 = k + shift[2];
    C d = diag;
    d -= (g0 == 0 ? lo[0] : C(0)) + (g0 == last[0] ? hi[0] : C(0));
    d -= (g1 == 0 ? lo[1] : C(0)) + (g1 == last[1] ? hi[1] : C(0));
    if (is3d) d -= (g2 == 0 ? lo[2] : C(0)) + (g2 == last[2] ? hi[2] : C(0));
    return d;
  }
  // 1 / diag_at: one division only on boundary cells (measured: a division per cell made the
  // Jacobi sweep half as fast as the residual kernel on the host).
  KOKKOS_INLINE_FUNCTION C inv_diag_at(const std::int64_t k, const std::int64_t j,
                                       const std::int64_t i) const {
    const C d = diag_at(k, j, i);
    return d == diag ? inv_diag : C(1) / d;
  }
};

template <class C>
Stencil<C> make_stencil(const std::array<double, 3>& c, int dim) {
  Stencil<C> s;
  s.cx = C(c[0]);
  s.cy = C(c[1]);
  s.cz = C(dim == 3 ? c[2] : 0.0);
  const double d = 2.0 * (c[0] + c[1] + (dim == 3 ? c[2] : 0.0));
  s.diag = C(d);
  s.inv_diag = C(1.0 / d);
  s.is3d = dim == 3;
  for (int a = 0; a < 3; ++a) s.last[a] = -2;  // no boundary cells unless told
  return s;
}

// Sum of the neighbours of (k, j, i) in compute type.
template <class C, class V>
KOKKOS_INLINE_FUNCTION C neighbour_sum(const V& x, const Stencil<C>& s, const std::int64_t k,
                                       const std::int64_t j, const std::int64_t i) {
  const C xm = C(x(k, j, i - 1)), xp = C(x(k, j, i + 1));
  const C ym = C(x(k, j - 1, i)), yp = C(x(k, j + 1, i));
  C z = C(0);
  if (s.is3d) z = s.cz * (C(x(k - 1, j, i)) + C(x(k + 1, j, i)));
  return s.cx * (xm + xp) + s.cy * (ym + yp) + z;
}

}  // namespace mantissa::solvers::detail

// Host bodies of the kernels below (whole rows, vectorised); they need the names above.
#include <mantissa/solvers/detail/HostKernels.hpp>

namespace mantissa::solvers::detail {

// Boundary ghost filling of one face: the ghost layers d = 1..width outside the face take
// sign * the interior value mirrored across it (sign 0 writes zeros). `slab` covers the ghost
// layers along `axis` and the full storage range (ghosts included) of the other axes, so
// filling x, then y, then z gets edges and corners right.
template <class Exec, class T, class M>
void mirror_face(const Exec& space, const View3<T, M>& v, int axis, bool high, int width,
                 std::int64_t first_owned, std::int64_t last_owned, int sign) {
  Box b;
  const std::int64_t ext[3] = {std::int64_t(v.extent(2)), std::int64_t(v.extent(1)),
                               std::int64_t(v.extent(0))};
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = 0;
    b.hi[a] = ext[a];
  }
  if (high) {
    b.lo[axis] = last_owned + 1;
    b.hi[axis] = last_owned + 1 + width;
  } else {
    b.lo[axis] = first_owned - width;
    b.hi[axis] = first_owned;
  }
  // mirror position of ghost g: high: 2*last+1-g; low: 2*first-1-g
  const std::int64_t pivot = high ? 2 * last_owned + 1 : 2 * first_owned - 1;
  using C = compute_t<T>;
  const C s = C(sign);
  if constexpr (host::is_host<Exec>()) {
    if (axis != 0) {  // whole x rows: the cell loop decoded and encoded 16-bit storage cell by cell
      host::mirror_rows(space, b, v, axis, pivot, s);
      return;
    }
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::boundary", space, b,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        std::int64_t kk = k, jj = j, ii = i;
        if (axis == 0) ii = pivot - i;
        if (axis == 1) jj = pivot - j;
        if (axis == 2) kk = pivot - k;
        v(k, j, i) = T(s * C(v(kk, jj, ii)));
      });
}

// Level-independent data a kernel needs about where the owned box sits.
struct Placement {
  std::array<std::int64_t, 3> ghost{0, 0, 0};   // storage position of owned index 0
  std::array<std::int64_t, 3> offset{0, 0, 0};  // global index of owned index 0
  std::array<std::int64_t, 3> extent{1, 1, 1};
  Box owned() const {
    Box b;
    for (int a = 0; a < 3; ++a) {
      b.lo[a] = ghost[a];
      b.hi[a] = ghost[a] + extent[a];
    }
    return b;
  }
};

// x_out = x_in + w D^-1 (f - L x_in); with zero_initial x_in is taken as 0 (x_out = w f / D).
template <class Exec, class T, class M>
void jacobi(const Exec& space, const Placement& p, const Stencil<compute_t<T>>& s, compute_t<T> w,
            const View3<T, M>& x_in, const View3<T, M>& x_out, const View3<T, M>& f, bool zero_initial) {
  using C = compute_t<T>;
  if (zero_initial) {
    for_each_cell(
        "mantissa::solvers::Multigrid::jacobi_first", space, p.owned(),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
          x_out(k, j, i) = T(w * C(f(k, j, i)) * s.inv_diag_at(k, j, i));
        });
    return;
  }
  if constexpr (host::is_host<Exec>()) {
    host::jacobi(space, p.owned(), s, w, x_in, x_out, f);
    return;
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::jacobi", space, p.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        const C xc = C(x_in(k, j, i));
        const C r = C(f(k, j, i)) - s.diag * xc + neighbour_sum(x_in, s, k, j, i);
        x_out(k, j, i) = T(xc + w * r * s.inv_diag_at(k, j, i));
      });
}

// Chebyshev step (Saad, Iterative Methods, alg. 12.1, on D^-1 L):
//   d = a d + b D^-1 (f - L x_in);  x_out = x_in + d.   first: d = b D^-1 f' with a = 0.
template <class Exec, class T, class M>
void chebyshev_step(const Exec& space, const Placement& p, const Stencil<compute_t<T>>& s, compute_t<T> a,
                    compute_t<T> b, const View3<T, M>& x_in, const View3<T, M>& x_out, const View3<T, M>& f,
                    const View3<T, M>& d, bool zero_initial) {
  using C = compute_t<T>;
  if (zero_initial) {
    for_each_cell(
        "mantissa::solvers::Multigrid::chebyshev_first", space, p.owned(),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
          const C dn = b * C(f(k, j, i)) * s.inv_diag_at(k, j, i);
          d(k, j, i) = T(dn);
          x_out(k, j, i) = T(dn);
        });
    return;
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::chebyshev", space, p.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        const C xc = C(x_in(k, j, i));
        const C r = C(f(k, j, i)) - s.diag * xc + neighbour_sum(x_in, s, k, j, i);
        const C dn = a * C(d(k, j, i)) + b * r * s.inv_diag_at(k, j, i);
        d(k, j, i) = T(dn);
        x_out(k, j, i) = T(xc + dn);
      });
}

// One colour of red-black Gauss-Seidel, colour by the parity of the global index sum so the
// sweep is the same at every rank count. parity_shift: parity of (offset - ghost) summed.
template <class Exec, class T, class M>
void rbgs(const Exec& space, const Placement& p, const Stencil<compute_t<T>>& s, const View3<T, M>& x,
          const View3<T, M>& f, int colour) {
  using C = compute_t<T>;
  const std::int64_t shift =
      (p.offset[0] - p.ghost[0]) + (p.offset[1] - p.ghost[1]) + (p.offset[2] - p.ghost[2]);
  if constexpr (host::is_host<Exec>()) {
    host::rbgs(space, p.owned(), shift, s, x, f, colour);
    return;
  }
  Box rows = p.owned();
  const std::int64_t x0 = rows.lo[0], x1 = rows.hi[0];
  rows.hi[0] = rows.lo[0] + 1;  // one entry per row; the row loop strides by 2
  for_each_cell(
      "mantissa::solvers::Multigrid::rbgs", space, rows,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t) {
        const std::int64_t par = ((k + j + x0 + shift) % 2 + 2) % 2;
        const std::int64_t start = x0 + ((colour + 2 - par) % 2);
        for (std::int64_t i = start; i < x1; i += 2) {
          const C xc = C(x(k, j, i));
          const C r = C(f(k, j, i)) - s.diag * xc + neighbour_sum(x, s, k, j, i);
          x(k, j, i) = T(xc + r * s.inv_diag_at(k, j, i));
        }
      });
}

// The colour passes colours[0], .., colours[m - 1] of red-black Gauss-Seidel in one sweep over
// the planes (host back-ends, 3D, every face of the level a physical one with mirror sign
// mirror[face]; see host::rbgs_passes): the same cells as m calls of rbgs with the ghosts
// filled before each, and x's ghosts filled before the first. tile: rows a tile (0: chosen
// by host::rbgs_passes).
template <class Exec, class T, class M>
void rbgs_passes(const Exec& space, const Placement& p, const Stencil<compute_t<T>>& s, const View3<T, M>& x,
                 const View3<T, M>& f, const int* colours, int m, const std::array<int, 6>& mirror,
                 std::int64_t tile = 0) {
  static_assert(host::is_host<Exec>(), "rbgs_passes: host back-ends only (rbgs per colour elsewhere)");
  const std::int64_t shift =
      (p.offset[0] - p.ghost[0]) + (p.offset[1] - p.ghost[1]) + (p.offset[2] - p.ghost[2]);
  host::rbgs_passes(space, p.owned(), shift, s, x, f, colours, m, mirror, tile);
}

// r = f - L x.
template <class Exec, class T, class M>
void residual(const Exec& space, const Placement& p, const Stencil<compute_t<T>>& s, const View3<T, M>& x,
              const View3<T, M>& f, const View3<T, M>& r) {
  using C = compute_t<T>;
  if constexpr (host::is_host<Exec>()) {
    host::residual(space, p.owned(), s, x, f, r);
    return;
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::residual", space, p.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        r(k, j, i) = T(C(f(k, j, i)) - s.diag * C(x(k, j, i)) + neighbour_sum(x, s, k, j, i));
      });
}

// f_c(I) = scale * sum over the 4^dim fine cells 2I-1 .. 2I+2 of (1 3 3 1)/8 per axis r_f.
// Needs r_f's ghosts (two layers) exchanged and boundary-filled.
template <class Exec, class TF, class TC, class M>
void restrict_full_weighting(const Exec& space, const Placement& fine, const Placement& coarse, int dim,
                             double scale, const View3<TF, M>& rf, const View3<TC, M>& fc) {
  using C = pair_compute_t<TF, TC>;
  const C sc = C(scale);
  // fine storage position of global fine index 2*I: 2*(I_storage - gc + oc) - of + gf
  const std::int64_t base0 = 2 * (coarse.offset[0] - coarse.ghost[0]) - fine.offset[0] + fine.ghost[0];
  const std::int64_t base1 = 2 * (coarse.offset[1] - coarse.ghost[1]) - fine.offset[1] + fine.ghost[1];
  const std::int64_t base2 = 2 * (coarse.offset[2] - coarse.ghost[2]) - fine.offset[2] + fine.ghost[2];
  const bool is3d = dim == 3;
  if constexpr (host::is_host<Exec>()) {
    host::restrict_fw(space, coarse.owned(), base0, base1, base2, is3d, scale, rf, fc);
    return;
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::restrict", space, coarse.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        // per fine column a: the (y, z)-weighted sum of its 16 (2D: 4) cells, then x's weights
        const C w[4] = {C(0.125), C(0.375), C(0.375), C(0.125)};
        const std::int64_t fi = 2 * i + base0 - 1, fj = 2 * j + base1 - 1;
        const std::int64_t fk = is3d ? 2 * k + base2 - 1 : k;
        const int planes = is3d ? 4 : 1;
        C acc = C(0);
        for (int a = 0; a < 4; ++a) {
          C col = C(0);
          for (int c = 0; c < planes; ++c)
            for (int b = 0; b < 4; ++b) col += (is3d ? w[c] * w[b] : w[b]) * C(rf(fk + c, fj + b, fi + a));
          acc += w[a] * col;
        }
        fc(k, j, i) = TC(sc * acc);
      });
}

// x_f += scale P x_c (trilinear, cell-centred). Needs x_c's ghosts (one layer) filled. scale
// undoes a residual scale the coarse level carries (1: the same bits as without it).
template <class Exec, class TC, class TF, class M>
void prolong_add(const Exec& space, const Placement& fine, const Placement& coarse, int dim,
                 const View3<TC, M>& xc, const View3<TF, M>& xf, double scale = 1.0) {
  using C = pair_compute_t<TC, TF>;
  const C ps = C(scale);
  // global fine g = s - gf + of; coarse global G = g >> 1; coarse storage = G - oc + gc
  const std::int64_t fo0 = fine.offset[0] - fine.ghost[0], fo1 = fine.offset[1] - fine.ghost[1],
                     fo2 = fine.offset[2] - fine.ghost[2];
  const std::int64_t co0 = coarse.ghost[0] - coarse.offset[0], co1 = coarse.ghost[1] - coarse.offset[1],
                     co2 = coarse.ghost[2] - coarse.offset[2];
  const bool is3d = dim == 3;
  if constexpr (host::is_host<Exec>()) {
    const std::int64_t fo[3] = {fo0, fo1, fo2}, co[3] = {co0, co1, co2};
    host::prolong(space, fine.owned(), fo, co, is3d, xc, xf, scale);
    return;
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::prolong", space, fine.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        const std::int64_t gi = i + fo0, gj = j + fo1;
        const std::int64_t ci = (gi >> 1) + co0, cj = (gj >> 1) + co1;
        const std::int64_t di = (gi & 1) ? 1 : -1, dj = (gj & 1) ? 1 : -1;
        const C a = C(0.75), b = C(0.25);
        C v;
        if (is3d) {
          const std::int64_t gk = k + fo2;
          const std::int64_t ck = (gk >> 1) + co2, dk = (gk & 1) ? 1 : -1;
          const C p0 = a * (a * C(xc(ck, cj, ci)) + b * C(xc(ck, cj, ci + di))) +
                       b * (a * C(xc(ck, cj + dj, ci)) + b * C(xc(ck, cj + dj, ci + di)));
          const C p1 = a * (a * C(xc(ck + dk, cj, ci)) + b * C(xc(ck + dk, cj, ci + di))) +
                       b * (a * C(xc(ck + dk, cj + dj, ci)) + b * C(xc(ck + dk, cj + dj, ci + di)));
          v = a * p0 + b * p1;
        } else {
          v = a * (a * C(xc(k, cj, ci)) + b * C(xc(k, cj, ci + di))) +
              b * (a * C(xc(k, cj + dj, ci)) + b * C(xc(k, cj + dj, ci + di)));
        }
        xf(k, j, i) = TF(C(xf(k, j, i)) + ps * v);
      });
}

// dst(owned) = scale * src(owned), between fields of any two types and ghost widths.
template <class Exec, class TS, class TD, class M>
void convert(const Exec& space, const Placement& ps, const View3<TS, M>& src, const Placement& pd,
             const View3<TD, M>& dst, double scale) {
  using C = pair_compute_t<TS, TD>;
  const C sc = C(scale);
  const std::int64_t dx = ps.ghost[0] - pd.ghost[0], dy = ps.ghost[1] - pd.ghost[1],
                     dz = ps.ghost[2] - pd.ghost[2];
  if constexpr (host::is_host<Exec>()) {
    host::convert(space, pd.owned(), dx, dy, dz, scale, src, dst);
    return;
  }
  for_each_cell(
      "mantissa::solvers::convert", space, pd.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        dst(k, j, i) = TD(sc * C(src(k + dz, j + dy, i + dx)));
      });
}

// The multigrid's entry written from a Krylov field (placement pl) into level 0 (placement px):
// the index offsets between the two, and per cell f0 = fv and x0 = the red half-sweep from a
// zero guess (red: global index sum even; x = 0 + ((f - D 0) + 0) / D_cell, rbgs's arithmetic
// with every neighbour 0), black cells 0: the point-wise form of host::entry_x_row.
struct EntryAt {
  std::int64_t dx, dy, dz;
  std::int64_t gshift;  // global index sum = storage index sum in pl + gshift
  EntryAt(const Placement& pl, const Placement& px)
      : dx(px.ghost[0] - pl.ghost[0]),
        dy(px.ghost[1] - pl.ghost[1]),
        dz(px.ghost[2] - pl.ghost[2]),
        gshift((pl.offset[0] - pl.ghost[0]) + (pl.offset[1] - pl.ghost[1]) + (pl.offset[2] - pl.ghost[2])) {}
  // the parity of i (counted from i0) of row (k, j)'s red cells
  KOKKOS_INLINE_FUNCTION std::int64_t red(std::int64_t k, std::int64_t j, std::int64_t i0) const {
    return ((i0 + j + k + gshift) % 2 + 2) % 2;
  }
  template <class T, class M, class C>
  KOKKOS_INLINE_FUNCTION void operator()(const Stencil<C>& s, const View3<T, M>& f0, const View3<T, M>& x0,
                                         std::int64_t k, std::int64_t j, std::int64_t i, T fv) const {
    f0(k + dz, j + dy, i + dx) = fv;
    const C res = (C(fv) - s.diag * C(0)) + C(0);
    x0(k + dz, j + dy, i + dx) =
        red(k, j, i) == 0 ? T(C(0) + res * s.inv_diag_at(k + dz, j + dy, i + dx)) : T(0.0f);
  }
};

namespace host {
// One row of the multigrid's entry from an up-to-date residual row rr: fr = T(scale r) with
// detail::convert's arithmetic, then xr = the red half-sweep from zero (host::entry_x_row).
// (k, j, i0): the row's first cell in level 0's storage; red as there.
template <class K, class T, class S>
inline void entry_of_row(const S& s, const K* KOKKOS_RESTRICT rr, const pair_compute_t<K, T> sc,
                         T* KOKKOS_RESTRICT fr, T* KOKKOS_RESTRICT xr, std::int64_t n, std::int64_t k,
                         std::int64_t j, std::int64_t i0, std::int64_t red) {
  using CV = pair_compute_t<K, T>;
  std::int64_t i = 0;
#ifdef MANTISSA_HOST_AVX2_F16C
  if constexpr (fused16<T> && std::is_same<K, double>::value) {
    // float(r) per cell (cvtpd_ps rounds as the conversion does), times scale, encoded
    const __m256 vs = _mm256_set1_ps(sc);
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(rr + i + 4)),
                                       _mm256_cvtpd_ps(_mm256_loadu_pd(rr + i)));
      mantissa::host::encode8(_mm256_mul_ps(vs, v), fr + i);
    }
  }
#endif
  MANTISSA_SOLVERS_IVDEP
  for (; i < n; ++i) fr[i] = T(sc * CV(rr[i]));
  entry_x_row(s, fr, xr, n, k, j, i0, red);
}
}  // namespace host

// The multigrid's entry from a residual r that is already up to date (update_r wrote it), for
// any level-0 storage, 16-bit included: f0 = T(scale r) with detail::convert's arithmetic, and
// x0 = the red half-sweep from a zero guess as update_r_entry writes it. One pass instead of
// three (the conversion, the zeroing of x0 and the first red half-sweep); the cycle then starts
// from Multigrid::cycle(..., entry_done = true). x0's ghosts are left, as there.
template <class Exec, class K, class T, class M>
void load_entry(const Exec& space, const Placement& pl, const View3<K, M>& r, double scale,
                const Placement& px, const Stencil<compute_t<T>>& s, const View3<T, M>& f0,
                const View3<T, M>& x0) {
  using CV = pair_compute_t<K, T>;  // detail::convert's arithmetic
  const CV sc = CV(scale);
  const EntryAt e(pl, px);
  const std::int64_t dx = e.dx, dy = e.dy, dz = e.dz;
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    const K* const rp = r.data();
    T* const fp = f0.data();
    T* const xp = x0.data();
    host::for_rows(
        "mantissa::solvers::Multigrid::load_entry", space, bx.lo[2], bx.hi[2], bx.lo[1], bx.hi[1],
        [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int) {
          const std::int64_t ox = host::at(x0, k + dz, j + dy, i0 + dx);
          host::entry_of_row<K, T>(s, rp + host::at(r, k, j, i0), sc, fp + ox, xp + ox, n, k + dz, j + dy,
                                   i0 + dx, e.red(k, j, i0));
        });
    return;
  }
  for_each_cell(
      "mantissa::solvers::Multigrid::load_entry", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        const T fv = T(sc * CV(r(k, j, i)));
        e(s, f0, x0, k, j, i, fv);
      });
}

template <class Exec, class T, class M>
double sum_owned(const Exec& space, const Placement& p, const View3<T, M>& v) {
  using C = compute_t<T>;
  double sum = 0.0;
  reduce_cells(
      "mantissa::solvers::sum", space, p.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        acc += static_cast<double>(C(v(k, j, i)));
      },
      sum);
  return sum;
}

template <class Exec, class T, class M>
double sum_squares_owned(const Exec& space, const Placement& p, const View3<T, M>& v) {
  using C = compute_t<T>;
  double sum = 0.0;
  reduce_cells(
      "mantissa::solvers::sum_squares", space, p.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double x = static_cast<double>(C(v(k, j, i)));
        acc += x * x;
      },
      sum);
  return sum;
}

template <class Exec, class T, class M>
void add_constant(const Exec& space, const Placement& p, const View3<T, M>& v, double c) {
  using C = compute_t<T>;
  const C cc = C(c);
  for_each_cell(
      "mantissa::solvers::add_constant", space, p.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        v(k, j, i) = T(C(v(k, j, i)) + cc);
      });
}

}  // namespace mantissa::solvers::detail
