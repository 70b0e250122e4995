#pragma once
// The CPML updates on host back-ends (Serial, OpenMP, Threads): the same arithmetic as the
// point kernels pml_memory_update_dim / pml_update_dim in SolverKernels.hpp (second_derivative,
// first_derivative, cpml_memory and leapfrog of stencil_kernels.hpp, the same operations in the
// same order per point, so results are bitwise identical; tests/unit/seismic/tstHostCpml.cpp
// checks it), organised for a CPU core the way HostStencil.hpp organises the interior:
//
// - Rows of x inside a PML box, one pass per axis, so no per-point test of the axis and every
//   inner loop is contiguous in x and vectorises. The x profile (a, b) is read as a contiguous
//   row; the y and z profiles are constants of a row, loaded once.
// - The y and z passes of the p update are split in two (second derivative of p into a row
//   buffer, then the derivative of psi, the zeta update and the sum), so no loop walks more
//   than 2R + 3 rows at once (the point kernel's one pass over 4R + 3 rows spilled pointers).
// - 16-bit (or other non-compute) storage of p is decoded once per row read, through the
//   branch-free row conversions of HostStencil.hpp, instead of once per stencil term.
// - Each axis's psi and zeta work only in that axis's slab (CpmlSlabs, stencil_kernels.hpp): in
//   the x range of a row, and for whole rows by their y and z, elsewhere the memory update
//   skips the axis and the p update adds only its second derivative (+ 0, the same bits). With
//   CPML on every face of a 3D grid most CPML points are in one or two slabs, not three.
// - Work items are blocks of rows of one plane, enough of them to keep every thread busy even
//   for the thin boxes of a 2D deck.
//
// Host only: nothing here is compiled for or called from device code.
#include <seismic/detail/HostStencil.hpp>
#include <seismic/detail/Launch.hpp>
#include <seismic/stencil_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

namespace mantissa::seismic::detail::host {

// The rows of p one CPML row reads, in the compute type: the centre row (valid from -R to
// n + R), and the rows +-s in y and z (valid on [0, n)).
template <class C, int R>
struct CpmlRows {
  const C* c;
  const C* ym[R];
  const C* yp[R];
  const C* zm[R];
  const C* zp[R];
};

// Scratch of one thread: decoded rows of p (storage other than the compute type), the row sum,
// a row of second derivatives, and p_old in and out in the compute type.
template <class C>
struct CpmlScratch {
  std::vector<C> rows, acc, d2, old, out;
  void reserve(int n, int rows_needed, int radius) {
    const std::size_t len = std::size_t(n + 2 * radius);
    if (rows.size() < len * std::size_t(rows_needed)) rows.resize(len * std::size_t(rows_needed));
    if (acc.size() < std::size_t(n)) {
      acc.resize(std::size_t(n));
      d2.resize(std::size_t(n));
      old.resize(std::size_t(n));
      out.resize(std::size_t(n));
    }
  }
};

// Pointers to the rows of p around storage offset x (the row's first point), decoded into the
// scratch when the storage is not the compute type.
template <int R, int Dim, class C, class S>
inline CpmlRows<C, R> cpml_rows(const S* p, long x, long sy, long sz, int n, CpmlScratch<C>& scratch) {
  CpmlRows<C, R> r{};
  if constexpr (std::is_same<S, C>::value) {
    r.c = p + x;
    for (int s = 1; s <= R; ++s) {
      r.ym[s - 1] = p + x - s * sy;
      r.yp[s - 1] = p + x + s * sy;
      if constexpr (Dim == 3) {
        r.zm[s - 1] = p + x - s * sz;
        r.zp[s - 1] = p + x + s * sz;
      }
    }
  } else {
    const long len = n + 2 * R;
    C* buf = scratch.rows.data();
    decode<C>(p + x - R, buf, int(len));
    r.c = buf + R;
    C* next = buf + len;
    auto row = [&](long at) {
      decode<C>(p + at, next, n);
      const C* out = next;
      next += len;
      return out;
    };
    for (int s = 1; s <= R; ++s) {
      r.ym[s - 1] = row(x - s * sy);
      r.yp[s - 1] = row(x + s * sy);
      if constexpr (Dim == 3) {
        r.zm[s - 1] = row(x - s * sz);
        r.zp[s - 1] = row(x + s * sz);
      }
    }
  }
  return r;
}

// Which parts of a row of n points starting at storage x index x0 need axis a's full CPML
// work (CpmlSlabs): [0, lo) and [hi, n); [lo, hi) may be skipped. `radius` 0: the memory
// update's rule, R: the p update's.
struct RowSplit {
  int lo, hi;
};
inline RowSplit split_row(const CpmlSlabs& slabs, int axis, int x0, int n, int radius) {
  const int lo = std::clamp(slabs.lo[axis] + radius - x0, 0, n);
  const int hi = std::clamp(slabs.hi[axis] - radius - x0, 0, n);
  return {lo, std::max(lo, hi)};
}

// psi_a[i] <- b_a psi_a[i] + a_a dp/dx_a[i] for one row (first_derivative + cpml_memory), on the
// parts of the row in axis a's own slab (x: [0, x.lo) and [x.hi, n); y and z: the whole row when
// do_y / do_z, else none; elsewhere psi_a stays +0, CpmlSlabs). a0/b0 point at the row's first
// point of the x profile; (a1, b1), (a2, b2) are the row's y and z coefficients.
template <int R, int Dim, class C>
inline void memory_row(const CpmlRows<C, R>& pr, C* psi0, C* psi1, C* psi2, const C* a0, const C* b0, C a1,
                       C b1, C a2, C b2, int n, RowSplit x, bool do_y, bool do_z,
                       const StencilWeights<C, R>& w) {
  C d1[3][R + 1];  // local copies: stores to psi may alias w as far as the compiler knows
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s <= R; ++s) d1[a][s] = w.d1[a][s];
  const auto x_part = [&](int i0, int i1) {
    const C* KOKKOS_RESTRICT c = pr.c;
    const C* KOKKOS_RESTRICT ar = a0;
    const C* KOKKOS_RESTRICT br = b0;
    C* KOKKOS_RESTRICT out = psi0;
    MANTISSA_HOST_IVDEP
    for (int i = i0; i < i1; ++i) {
      C d = C(0);
      for (int s = 1; s <= R; ++s) d += d1[0][s] * (c[i + s] - c[i - s]);
      out[i] = cpml_memory<C>(out[i], ar[i], br[i], d);
    }
  };
  x_part(0, x.lo);
  x_part(x.hi, n);
  if (do_y) {
    C* KOKKOS_RESTRICT out = psi1;
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) {
      C d = C(0);
      for (int s = 1; s <= R; ++s) d += d1[1][s] * (pr.yp[s - 1][i] - pr.ym[s - 1][i]);
      out[i] = cpml_memory<C>(out[i], a1, b1, d);
    }
  }
  if constexpr (Dim == 3) {
    if (do_z) {
      C* KOKKOS_RESTRICT out = psi2;
      MANTISSA_HOST_IVDEP
      for (int i = 0; i < n; ++i) {
        C d = C(0);
        for (int s = 1; s <= R; ++s) d += d1[2][s] * (pr.zp[s - 1][i] - pr.zm[s - 1][i]);
        out[i] = cpml_memory<C>(out[i], a2, b2, d);
      }
    }
  } else {
    (void)psi2;
    (void)a2;
    (void)b2;
    (void)do_z;
  }
}

// One y or z pass of the p update: with d2 = second derivative of p along the axis (given in
// d2p) + first derivative of psi along it (psi rows +-s*stride around psi), zeta <- b zeta + a d2
// and acc <- acc + (d2 + zeta).
template <int R, class C>
inline void zeta_pass(const C* d2p, const C* psi, long stride, C* zeta, C a, C b, C* acc, int n,
                      const C (&d1)[R + 1]) {
  const C* KOKKOS_RESTRICT dr = d2p;
  C* KOKKOS_RESTRICT zr = zeta;
  C* KOKKOS_RESTRICT ac = acc;
  const C* pm[R];
  const C* pp[R];
  for (int s = 1; s <= R; ++s) {
    pm[s - 1] = psi - s * stride;
    pp[s - 1] = psi + s * stride;
  }
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    C f = C(0);
    for (int s = 1; s <= R; ++s) f += d1[s] * (pp[s - 1][i] - pm[s - 1][i]);
    const C d2 = dr[i] + f;
    const C z = cpml_memory<C>(zr[i], a, b, d2);
    zr[i] = z;
    ac[i] += d2 + z;
  }
}

// Second derivative of p along y or z from the rows -s (m[s-1]) and +s (p[s-1]).
template <int R, class C>
inline void second_derivative_row(const C* c, const C* const* m, const C* const* p, C* out, int n,
                                  const C (&d2)[R + 1]) {
  const C* KOKKOS_RESTRICT cr = c;
  C* KOKKOS_RESTRICT o = out;
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    C s = d2[0] * cr[i];
    for (int r = 1; r <= R; ++r) s += d2[r] * (m[r - 1][i] + p[r - 1][i]);
    o[i] = s;
  }
}

// acc <- acc + (second derivative of p along y or z + 0): the term of an axis whose psi and zeta
// are +0 around the row (CpmlSlabs), the same bits as second_derivative_row + zeta_pass there.
template <int R, class C>
inline void second_derivative_add_row(const C* c, const C* const* m, const C* const* p, C* acc, int n,
                                      const C (&d2)[R + 1]) {
  const C* KOKKOS_RESTRICT cr = c;
  C* KOKKOS_RESTRICT ac = acc;
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    C s = d2[0] * cr[i];
    for (int r = 1; r <= R; ++r) s += d2[r] * (m[r - 1][i] + p[r - 1][i]);
    ac[i] += s + C(0);
  }
}

// The CPML update of one row: zeta_a updated, q <- leapfrog(p, q, m, sum_a d2_a + zeta_a).
// psi[a] / zeta[a] point at the row's first point of each memory field, psi_stride[a] is the
// stride of axis a in that field. Axis a's full term only where CpmlSlabs says (x: [0, x.lo) and
// [x.hi, n); y, z: the whole row when do_y / do_z), elsewhere its second derivative + 0.
template <int R, int Dim, class C, class S, class M>
inline void update_cpml_row(const CpmlRows<C, R>& pr, C* const* psi, const long* psi_stride, C* const* zeta,
                            const C* a0, const C* b0, C a1, C b1, C a2, C b2, S* q, const M* m, int n,
                            RowSplit x, bool do_y, bool do_z, const StencilWeights<C, R>& w,
                            CpmlScratch<C>& scratch) {
  C d2w[3][R + 1], d1w[3][R + 1];
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s <= R; ++s) {
      d2w[a][s] = w.d2[a][s];
      d1w[a][s] = w.d1[a][s];
    }
  C* KOKKOS_RESTRICT acc = scratch.acc.data();
  {  // x, where psi_x and zeta_x are +0 around the point: sum = 0 + (d2 + 0)
    const C* KOKKOS_RESTRICT c = pr.c;
    MANTISSA_HOST_IVDEP
    for (int i = x.lo; i < x.hi; ++i) {
      C s = d2w[0][0] * c[i];
      for (int r = 1; r <= R; ++r) s += d2w[0][r] * (c[i - r] + c[i + r]);
      C sum = C(0);
      sum += s + C(0);
      acc[i] = sum;
    }
  }
  const auto x_part = [&](int i0, int i1) {  // x: sum = 0 + (d2 + zeta)
    const C* KOKKOS_RESTRICT c = pr.c;
    const C* KOKKOS_RESTRICT ps = psi[0];
    const C* KOKKOS_RESTRICT ar = a0;
    const C* KOKKOS_RESTRICT br = b0;
    C* KOKKOS_RESTRICT zr = zeta[0];
    MANTISSA_HOST_IVDEP
    for (int i = i0; i < i1; ++i) {
      C s = d2w[0][0] * c[i];
      for (int r = 1; r <= R; ++r) s += d2w[0][r] * (c[i - r] + c[i + r]);
      C f = C(0);
      for (int r = 1; r <= R; ++r) f += d1w[0][r] * (ps[i + r] - ps[i - r]);
      const C d2 = s + f;
      const C z = cpml_memory<C>(zr[i], ar[i], br[i], d2);
      zr[i] = z;
      C sum = C(0);
      sum += d2 + z;
      acc[i] = sum;
    }
  };
  x_part(0, x.lo);
  x_part(x.hi, n);
  C* KOKKOS_RESTRICT d2 = scratch.d2.data();
  if (do_y) {
    second_derivative_row<R>(pr.c, pr.ym, pr.yp, d2, n, d2w[1]);
    zeta_pass<R>(d2, psi[1], psi_stride[1], zeta[1], a1, b1, acc, n, d1w[1]);
  } else {
    second_derivative_add_row<R>(pr.c, pr.ym, pr.yp, acc, n, d2w[1]);
  }
  if constexpr (Dim == 3) {
    if (do_z) {
      second_derivative_row<R>(pr.c, pr.zm, pr.zp, d2, n, d2w[2]);
      zeta_pass<R>(d2, psi[2], psi_stride[2], zeta[2], a2, b2, acc, n, d1w[2]);
    } else {
      second_derivative_add_row<R>(pr.c, pr.zm, pr.zp, acc, n, d2w[2]);
    }
  } else {
    (void)a2;
    (void)b2;
    (void)do_z;
  }
  const C* KOKKOS_RESTRICT c = pr.c;
  const M* KOKKOS_RESTRICT mr = m;
  if constexpr (std::is_same<S, C>::value) {
    S* KOKKOS_RESTRICT qr = q;
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) qr[i] = leapfrog<C>(c[i], qr[i], C(mr[i]), acc[i]);
  } else {
    C* KOKKOS_RESTRICT old = scratch.old.data();
    C* KOKKOS_RESTRICT out = scratch.out.data();
    decode<C>(q, old, n);
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) out[i] = leapfrog<C>(c[i], old[i], C(mr[i]), acc[i]);
    encode<S>(out, q, n);
  }
}

// Calls f(k, j0, j1) for blocks of rows [j0, j1) of plane k covering the box, in parallel: up to
// tile_rows rows per block, fewer when the box has few rows, so that every thread gets work.
template <class ExecSpace, class F>
void for_each_row_block(const char* label, const ExecSpace& space, const Box& box, const F& f) {
  if (box.empty()) return;
  const int ny = box.hi[1] - box.lo[1], nz = box.hi[2] - box.lo[2];
  const int want = 8 * std::max(int(space.concurrency()), 1);
  const int block = std::max(1, std::min(tile_rows, ny * nz / want));
  const int blocks = (ny + block - 1) / block;
  const int y0 = box.lo[1], y1 = box.hi[1], z0 = box.lo[2];
  // A plain host lambda (no KOKKOS_LAMBDA): this code is never compiled for a device.
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, nz * blocks), [=](const int task) {
    const int k = z0 + task / blocks, j0 = y0 + (task % blocks) * block;
    f(k, j0, std::min(y1, j0 + block));
  });
}

// The three axes' memory fields (psi or zeta) as base pointers (the third null in 2D) with their
// plane and row strides, and the three axes' profiles a, b as pointers: what both updates take
// from their arguments.
template <class C, int Dim>
struct AxisFields {
  C* f[3];
  long sz, sy;
  template <class MemField>
  explicit AxisFields(const std::array<MemField, 3>& m)
      : f{m[0].view().data(), m[1].view().data(), Dim == 3 ? m[2].view().data() : nullptr},
        sz(long(m[0].view().stride(0))),
        sy(long(m[0].view().stride(1))) {}
};
template <class C>
struct AxisProfiles {
  const C* a[3];
  const C* b[3];
  template <class Profile>
  AxisProfiles(const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb)
      : a{pa[0].data(), pa[1].data(), pa[2].data()}, b{pb[0].data(), pb[1].data(), pb[2].data()} {}
};

template <int R, int Dim, class ExecSpace, class PView, class MemField, class Profile, class C>
void pml_memory_update(const ExecSpace& space, const Box& box, const PView& p,
                       const std::array<MemField, 3>& psi, const std::array<Profile, 3>& pa,
                       const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                       const StencilWeights<C, R>& w) {
  using S = typename PView::value_type;
  static_assert(is_host_space<ExecSpace>(), "host::pml_memory_update runs on host back-ends only");
  const S* const pp = p.data();
  const long sz = long(p.stride(0)), sy = long(p.stride(1));
  const AxisFields<C, Dim> ps(psi);
  const AxisProfiles<C> pr(pa, pb);
  const int x0 = box.lo[0], nx = box.hi[0] - box.lo[0];
  const RowSplit xs = split_row(slabs, 0, x0, nx, 0);
  for_each_row_block("mantissa::seismic::Solver::step::pml_memory", space, box,
                     [=](const int k, const int j0, const int j1) {
                       thread_local CpmlScratch<C> scratch;
                       scratch.reserve(nx, 1 + 2 * R * (Dim - 1), R);
                       const C ca2 = Dim == 3 ? pr.a[2][k] : C(0), cb2 = Dim == 3 ? pr.b[2][k] : C(0);
                       const bool do_z = Dim == 3 && slabs.memory(2, k);
                       for (int j = j0; j < j1; ++j) {
                         const bool do_y = slabs.memory(1, j);
                         if (xs.lo == 0 && xs.hi == nx && !do_y && !do_z) continue;  // nothing to update
                         const long x = k * sz + j * sy + x0, mx = k * ps.sz + j * ps.sy + x0;
                         const auto rows = cpml_rows<R, Dim>(pp, x, sy, sz, nx, scratch);
                         memory_row<R, Dim>(rows, ps.f[0] + mx, ps.f[1] + mx,
                                            Dim == 3 ? ps.f[2] + mx : nullptr, pr.a[0] + x0, pr.b[0] + x0,
                                            pr.a[1][j], pr.b[1][j], ca2, cb2, nx, xs, do_y, do_z, w);
                       }
                     });
}

// p is the storage field or its compute-type copy (decode_box); q is the storage field.
template <int R, int Dim, class ExecSpace, class PView, class QView, class MView, class MemField,
          class Profile, class C>
void pml_update(const ExecSpace& space, const Box& box, const PView& p, const QView& q, const MView& m,
                const std::array<MemField, 3>& psi, const std::array<MemField, 3>& zeta,
                const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                const StencilWeights<C, R>& w) {
  using P = typename PView::value_type;
  using S = typename QView::value_type;
  using M = typename MView::value_type;
  static_assert(is_host_space<ExecSpace>(), "host::pml_update runs on host back-ends only");
  const P* const pp = p.data();
  S* const qp = q.data();
  const M* const mp = m.data();
  const long sz = long(p.stride(0)), sy = long(p.stride(1));
  const AxisFields<C, Dim> ps(psi), zs(zeta);
  const AxisProfiles<C> pr(pa, pb);
  const int x0 = box.lo[0], nx = box.hi[0] - box.lo[0];
  const RowSplit xs = split_row(slabs, 0, x0, nx, R);
  for_each_row_block(
      "mantissa::seismic::Solver::step::pml", space, box, [=](const int k, const int j0, const int j1) {
        thread_local CpmlScratch<C> scratch;
        scratch.reserve(nx, 1 + 2 * R * (Dim - 1), R);
        const C ca2 = Dim == 3 ? pr.a[2][k] : C(0), cb2 = Dim == 3 ? pr.b[2][k] : C(0);
        const long psi_stride[3] = {1, ps.sy, ps.sz};
        const bool do_z = Dim == 3 && slabs.update(2, k, R);
        for (int j = j0; j < j1; ++j) {
          const bool do_y = slabs.update(1, j, R);
          const long x = k * sz + j * sy + x0, mx = k * ps.sz + j * ps.sy + x0;
          const auto rows = cpml_rows<R, Dim>(pp, x, sy, sz, nx, scratch);
          C* const psi_row[3] = {ps.f[0] + mx, ps.f[1] + mx, Dim == 3 ? ps.f[2] + mx : nullptr};
          C* const zeta_row[3] = {zs.f[0] + mx, zs.f[1] + mx, Dim == 3 ? zs.f[2] + mx : nullptr};
          update_cpml_row<R, Dim>(rows, psi_row, psi_stride, zeta_row, pr.a[0] + x0, pr.b[0] + x0, pr.a[1][j],
                                  pr.b[1][j], ca2, cb2, qp + x, mp + x, nx, xs, do_y, do_z, w, scratch);
        }
      });
}

// out <- C(p) on a box, rows of x through decode() (detail::decode_box's host form).
template <class ExecSpace, class PView, class CView>
void decode_box(const ExecSpace& space, const Box& box, const PView& p, const CView& out) {
  using S = typename PView::value_type;
  using C = typename CView::value_type;
  static_assert(is_host_space<ExecSpace>(), "host::decode_box runs on host back-ends only");
  const S* const pp = p.data();
  C* const op = out.data();
  const long sz = long(p.stride(0)), sy = long(p.stride(1));
  const long osz = long(out.stride(0)), osy = long(out.stride(1));
  const int x0 = box.lo[0], nx = box.hi[0] - box.lo[0];
  for_each_row_block("mantissa::seismic::Solver::step::pml_decode", space, box,
                     [=](const int k, const int j0, const int j1) {
                       for (int j = j0; j < j1; ++j)
                         decode<C>(pp + k * sz + j * sy + x0, op + k * osz + j * osy + x0, nx);
                     });
}

}  // namespace mantissa::seismic::detail::host
