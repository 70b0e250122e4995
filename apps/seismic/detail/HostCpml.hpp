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
// - 16-bit (or other non-compute) storage of p is decoded through the branch-free row conversions
//   of HostStencil.hpp into a ring of decoded planes per thread (CpmlRing), which follows the
//   thread's block of rows along z as the interior's ring does: each point about once per block
//   that reads it, and in cache, instead of once per stencil term or through a box-wide copy in
//   memory.
// - Each axis's psi and zeta work only in that axis's slab (CpmlSlabs, stencil_kernels.hpp): in
//   the x range of a row, and for whole rows by their y and z, elsewhere the memory update
//   skips the axis and the p update adds only its second derivative (+ 0, the same bits). With
//   CPML on every face of a 3D grid most CPML points are in one or two slabs, not three.
// - Work items are blocks of rows of one plane, enough of them to keep every thread busy even
//   for the thin boxes of a 2D deck, each swept along z by its thread. What does not change from
//   row to row (the weights' local copy, the profiles' row pointers) is set up once per block:
//   most CPML rows are short (the x slabs' rows are the layer's width), so per-row set-up costs
//   as much as the arithmetic there.
// - Short rows (the x slabs' rows: the layer's width) ask for the lines of the row two ahead
//   before they start: such rows jump to a new address at every row, the hardware prefetchers
//   do not follow them, and without it the x slabs of a 3D deck took 37 ns a point (the z slabs,
//   with whole rows, 13) and fp32 gained nothing there over fp64 (docs/performance.md).
// - The last axis's pass of the p update also does the leapfrog (no separate loop), in place on
//   p_old, or on its row decoded into the compute type and encoded after it.
// - The x slabs' rows continue the interior's rows, so their p update (and, where no other rank
//   reads their psi, their memory update) runs inside the interior's sweep (PmlRows, after each
//   block of the interior's rows): the interior's streams have just brought in the lines of p,
//   p_old and the model beside those rows. Alone, those short rows waited for memory one row at a
//   time: 27 ns a point in 3D, against 11 for the z slabs' whole rows (docs/performance.md).
//
// Host only: nothing here is compiled for or called from device code.
#include <seismic/detail/HostStencil.hpp>
#include <seismic/detail/Launch.hpp>
#include <seismic/stencil_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
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

// The launch a ring's planes were decoded in (CpmlRing::at): p does not change during a launch,
// but may between two (the next step's p is this one's p_old), so a ring is reused only within
// the launch that filled it.
inline long next_ring_epoch() {
  static std::atomic<long> epoch{0};
  return ++epoch;
}

// The rows of p a thread's block of CPML rows reads, decoded into the compute type (storage other
// than it): the block's rows [j0 - R, j1 + R) of points [x0 - R, x0 + nx + R) in the planes
// k - R .. k + R (plane k only in 2D), as the 3D interior's ring of decoded slabs
// (HostStencil.hpp). The block's thread sweeps it along z (for_each_row_block, PmlRows), so
// moving to plane k + 1 decodes only plane k + 1 + R, and every point of p is decoded about
// (rows + 2R) / rows times (x slabs: (nx + 2R) / nx times more) instead of 4R + 1 times (once for
// each row that reads it), and without the box-wide compute-type copy of p that the CPML kernels
// read before (decode_box: written to memory and read back, 12 % of a bf16 3D CPML step).
template <class C, int R, int Dim>
class CpmlRing {
 public:
  static constexpr int planes = Dim == 3 ? 2 * R + 1 : 1;

  // Makes the ring hold the block's planes around k, decoded from p (strides sz, sy) in launch
  // `epoch`: nothing to do for the plane the ring holds, one plane for the next one, all of them
  // otherwise.
  template <class S>
  void at(const S* p, long sz, long sy, long epoch, int x0, int nx, int k, int j0, int j1) {
    const bool same = epoch == m_epoch && static_cast<const void*>(p) == m_src && x0 == m_x0 && nx == m_nx &&
                      j0 == m_j0 && j1 == m_j1;
    if (same && k == m_k) return;
    m_len = nx + 2 * R;
    m_rows = j1 - j0 + 2 * R;
    m_slab = long(m_rows) * m_len;
    if (m_buf.size() < std::size_t(planes * m_slab)) m_buf.resize(std::size_t(planes * m_slab));
    const auto load = [&](int kk) {
      C* dst = slot(kk);
      const S* src = p + kk * sz + (j0 - R) * sy + (x0 - R);
      for (int r = 0; r < m_rows; ++r) decode<C>(src + r * sy, dst + r * m_len, int(m_len));
    };
    constexpr int dz = Dim == 3 ? R : 0;
    if (same && Dim == 3 && k == m_k + 1) {
      load(k + dz);
    } else {
      for (int kk = k - dz; kk <= k + dz; ++kk) load(kk);
    }
    m_epoch = epoch;
    m_src = p;
    m_x0 = x0;
    m_nx = nx;
    m_j0 = j0;
    m_j1 = j1;
    m_k = k;
  }

  // The rows row j of plane k reads (at() called for plane k and j's block).
  CpmlRows<C, R> rows(int k, int j) const {
    CpmlRows<C, R> r{};
    const long off = long(j - m_j0 + R) * m_len + R;
    r.c = slot(k) + off;
    for (int s = 1; s <= R; ++s) {
      r.ym[s - 1] = r.c - s * m_len;
      r.yp[s - 1] = r.c + s * m_len;
      if constexpr (Dim == 3) {
        r.zm[s - 1] = slot(k - s) + off;
        r.zp[s - 1] = slot(k + s) + off;
      }
    }
    return r;
  }

 private:
  C* slot(int kk) const { return const_cast<C*>(m_buf.data()) + ((kk % planes) + planes) % planes * m_slab; }
  std::vector<C> m_buf;
  long m_epoch = 0;
  const void* m_src = nullptr;
  int m_x0 = 0, m_nx = 0, m_j0 = 0, m_j1 = 0, m_k = 0;
  long m_len = 0, m_slab = 0;
  int m_rows = 0;
};

// Scratch of one thread: the ring of decoded rows of p (storage other than the compute type),
// the row sum, a row of second derivatives, and p_old's row in the compute type (storage other
// than it).
template <class C, int R, int Dim>
struct CpmlScratch {
  CpmlRing<C, R, Dim> ring;
  std::vector<C> acc, d2, old;
  void reserve(int n) {
    if (acc.size() < std::size_t(n)) {
      acc.resize(std::size_t(n));
      d2.resize(std::size_t(n));
      old.resize(std::size_t(n));
    }
  }
};

// Pointers to the rows of p around storage offset x (the row's first point) when p is in the
// compute type.
template <int R, int Dim, class C>
inline CpmlRows<C, R> cpml_rows(const C* p, long x, long sy, long sz) {
  CpmlRows<C, R> r{};
  r.c = p + x;
  axis_neighbours<R>(p + x, sy, r.ym, r.yp);
  if constexpr (Dim == 3) axis_neighbours<R>(p + x, sz, r.zm, r.zp);
  return r;
}

// The rows of p that row j of plane k (storage offset x) reads: p's own rows in the compute type,
// else the ring's (CpmlRing::at called for the row's block and plane).
template <int R, int Dim, class C, class P>
inline CpmlRows<C, R> rows_of(const P* p, long x, long sy, long sz, const CpmlRing<C, R, Dim>& ring, int k,
                              int j) {
  if constexpr (std::is_same<P, C>::value) {
    (void)ring;
    (void)k;
    (void)j;
    return cpml_rows<R, Dim>(p, x, sy, sz);
  } else {
    return ring.rows(k, j);
  }
}

// Short rows (the x slabs' rows are the layer's width plus the stencil's reach, two or three
// cache lines) jump to a new address at every row, so the hardware prefetchers do not follow
// them and each row's lines arrive one miss at a time. prefetch_span asks for the lines of
// [p, p + n) ahead of use (a hint: no fault, no change to any value); short_row says when a row
// is short enough for that to matter (whole rows stream and are prefetched by the hardware).
// Two rows ahead: one was too few and four or six were slower (the row blocks are tile_rows
// long, and the hint is not given past a block's end). In 3D only the row's newest z neighbour
// (plane + R) is asked for: the sweep along z (for_each_row_block) brought the others in for the
// planes before.
template <class T>
inline void prefetch_span(const T* p, long n) {
  const char* a = reinterpret_cast<const char*>(p);
  const char* e = reinterpret_cast<const char*>(p + n);
  for (; a < e; a += 64) __builtin_prefetch(a, 0, 3);
  __builtin_prefetch(e - 1, 0, 3);
}
template <class C>
inline bool short_row(int n) {
  return std::size_t(n) * sizeof(C) <= 256;
}
inline constexpr int prefetch_rows_ahead = 2;

// Which parts of a row of n points starting at storage x index x0 need axis a's full CPML
// work (CpmlSlabs): [0, lo) and [hi, n); [lo, hi) may be skipped. `radius` 0: the memory
// update's rule, R: the p update's. The skipped part is shrunk so that lo and n - hi are
// multiples of split_points<C> (64 bytes: one AVX-512 vector, two AVX2 ones), or the whole row
// gets the full work ({n, n}) when nothing would be left to skip: the full work is exact at every
// point, the skip only inside [lo, hi), so shrinking it changes no bit; the x parts then run whole
// vectors instead of a scalar remainder each (20 points of the p update: fp32 had 4 left over).
struct RowSplit {
  int lo, hi;
};
template <class C>
inline constexpr int split_points = int(64 / sizeof(C));
template <class C>
inline RowSplit split_row(const CpmlSlabs& slabs, int axis, int x0, int n, int radius) {
  constexpr int v = split_points<C>;
  const int lo = std::clamp(slabs.lo[axis] + radius - x0, 0, n);
  const int hi = std::clamp(slabs.hi[axis] - radius - x0, 0, n);
  const int lo_up = std::min(n, (lo + v - 1) / v * v);
  const int hi_down = n - std::min(n, (n - hi + v - 1) / v * v);
  if (hi_down <= lo_up) return {n, n};
  return {lo_up, hi_down};
}

// The weights of the CPML kernels as arrays local to the function that loops over a block's
// rows: stores to psi, zeta and p_old may alias a StencilWeights reached through a reference as
// far as the compiler knows, a local copy it can keep in registers. Copied once per block of rows
// (it was once per row, about 60 instructions a row: issue 11's callgrind profile).
template <class C, int R>
struct LocalWeights {
  C d2[3][R + 1];
  C d1[3][R + 1];
  explicit LocalWeights(const StencilWeights<C, R>& w) {
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s <= R; ++s) {
        d2[a][s] = w.d2[a][s];
        d1[a][s] = w.d1[a][s];
      }
  }
};

// The three axes' memory fields (psi or zeta) as base pointers (the third null in 2D) with their
// plane and row strides, and the three axes' profiles a, b as pointers: what both updates take
// from their arguments.
template <class C, int Dim>
struct AxisFields {
  C* f[3] = {};
  long sz = 0, sy = 0;
  AxisFields() = default;
  template <class MemField>
  explicit AxisFields(const std::array<MemField, 3>& m)
      : f{m[0].view().data(), m[1].view().data(), Dim == 3 ? m[2].view().data() : nullptr},
        sz(long(m[0].view().stride(0))),
        sy(long(m[0].view().stride(1))) {}
};
template <class C>
struct AxisProfiles {
  const C* a[3] = {};
  const C* b[3] = {};
  AxisProfiles() = default;
  template <class Profile>
  AxisProfiles(const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb)
      : a{pa[0].data(), pa[1].data(), pa[2].data()}, b{pb[0].data(), pb[1].data(), pb[2].data()} {}
};

// What the memory update of one box reads and writes: p (compute type or storage), its strides,
// psi, the profiles, the box's x range and its split (radius 0), the slabs.
template <class C, int Dim, class P>
struct MemoryBox {
  const P* p;
  long sz, sy;
  AxisFields<C, Dim> psi;
  AxisProfiles<C> prof;
  int x0, nx;
  RowSplit xs;
  CpmlSlabs slabs;
  long epoch;  // the launch, for the ring of decoded rows (CpmlRing)
};

// The MemoryBox of one box (p: the storage field or its compute-type copy).
template <int Dim, class C, class PView, class MemField, class Profile>
MemoryBox<C, Dim, typename PView::value_type> memory_box(const Box& box, const PView& p,
                                                         const std::array<MemField, 3>& psi,
                                                         const std::array<Profile, 3>& pa,
                                                         const std::array<Profile, 3>& pb,
                                                         const CpmlSlabs& slabs) {
  const int x0 = box.lo[0], nx = box.hi[0] - box.lo[0];
  return {p.data(),
          long(p.stride(0)),
          long(p.stride(1)),
          AxisFields<C, Dim>(psi),
          AxisProfiles<C>(pa, pb),
          x0,
          nx,
          split_row<C>(slabs, 0, x0, nx, 0),
          slabs,
          next_ring_epoch()};
}

// psi_a <- b_a psi_a + a_a dp/dx_a (first_derivative + cpml_memory) for the rows [j0, j1) of
// plane k, on the parts of each row in axis a's own slab (x: [0, xs.lo) and [xs.hi, n); y and z:
// the whole row when the row's y / the plane's z is in the slab; elsewhere psi_a stays +0,
// CpmlSlabs).
template <int R, int Dim, class C, class P>
void memory_rows(const MemoryBox<C, Dim, P>& b, const StencilWeights<C, R>& weights, int k, int j0, int j1,
                 CpmlScratch<C, R, Dim>& scratch) {
  constexpr bool decoded = !std::is_same<P, C>::value;
  if constexpr (decoded) scratch.ring.at(b.p, b.sz, b.sy, b.epoch, b.x0, b.nx, k, j0, j1);
  const LocalWeights<C, R> w(weights);
  const int n = b.nx;
  const RowSplit x = b.xs;
  const C a2 = Dim == 3 ? b.prof.a[2][k] : C(0), b2 = Dim == 3 ? b.prof.b[2][k] : C(0);
  const bool do_z = Dim == 3 && b.slabs.memory(2, k);
  const C* const a0 = b.prof.a[0] + b.x0;
  const C* const b0 = b.prof.b[0] + b.x0;
  const bool prefetch = short_row<C>(n);
  for (int j = j0; j < j1; ++j) {
    const bool do_y = b.slabs.memory(1, j);
    const long xo = k * b.sz + j * b.sy + b.x0, mx = k * b.psi.sz + j * b.psi.sy + b.x0;
    if (prefetch && j + prefetch_rows_ahead < j1) {
      if constexpr (!decoded) prefetch_span(b.p + xo + prefetch_rows_ahead * b.sy - R, n + 2 * R);
      prefetch_span(b.psi.f[0] + mx + prefetch_rows_ahead * b.psi.sy, n);
    }
    if (!prefetch && Dim == 3) {  // whole rows: as in update_rows
      const auto [ka, ja] = row_ahead(k, j, j0, j1);
      const long pa = ka * b.sz + ja * b.sy + b.x0, ma = ka * b.psi.sz + ja * b.psi.sy + b.x0;
      prefetch_lines(b.p + pa + R * b.sz, n, false);
      if (b.slabs.memory(2, ka)) prefetch_lines(b.psi.f[2] + ma, n, true);
      if (b.slabs.memory(1, ja)) prefetch_lines(b.psi.f[1] + ma, n, true);
    }
    if (x.lo == 0 && x.hi == n && !do_y && !do_z) continue;  // nothing to update
    const auto pr = rows_of<R, Dim>(b.p, xo, b.sy, b.sz, scratch.ring, k, j);
    const auto x_part = [&](int i0, int i1) {
      const C* KOKKOS_RESTRICT c = pr.c;
      const C* KOKKOS_RESTRICT ar = a0;
      const C* KOKKOS_RESTRICT br = b0;
      C* KOKKOS_RESTRICT out = b.psi.f[0] + mx;
      MANTISSA_HOST_IVDEP
      for (int i = i0; i < i1; ++i) {
        C d = C(0);
        for (int s = 1; s <= R; ++s) d += w.d1[0][s] * (c[i + s] - c[i - s]);
        out[i] = cpml_memory<C>(out[i], ar[i], br[i], d);
      }
    };
    x_part(0, x.lo);
    x_part(x.hi, n);
    if (do_y) {
      const C a1 = b.prof.a[1][j], b1 = b.prof.b[1][j];
      C* KOKKOS_RESTRICT out = b.psi.f[1] + mx;
      MANTISSA_HOST_IVDEP
      for (int i = 0; i < n; ++i) {
        C d = C(0);
        for (int s = 1; s <= R; ++s) d += w.d1[1][s] * (pr.yp[s - 1][i] - pr.ym[s - 1][i]);
        out[i] = cpml_memory<C>(out[i], a1, b1, d);
      }
    }
    if constexpr (Dim == 3) {
      if (do_z) {
        C* KOKKOS_RESTRICT out = b.psi.f[2] + mx;
        MANTISSA_HOST_IVDEP
        for (int i = 0; i < n; ++i) {
          C d = C(0);
          for (int s = 1; s <= R; ++s) d += w.d1[2][s] * (pr.zp[s - 1][i] - pr.zm[s - 1][i]);
          out[i] = cpml_memory<C>(out[i], a2, b2, d);
        }
      }
    } else {
      (void)a2;
      (void)b2;
    }
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

// First derivative of psi at point i of a row from its rows -s (m[s-1]) and +s (p[s-1]).
template <int R, class C>
inline C psi_derivative(const C* const (&m)[R], const C* const (&p)[R], int i, const C (&d1)[R + 1]) {
  C f = C(0);
  for (int s = 1; s <= R; ++s) f += d1[s] * (p[s - 1][i] - m[s - 1][i]);
  return f;
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
  axis_neighbours<R>(psi, stride, pm, pp);
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    const C d2 = dr[i] + psi_derivative<R>(pm, pp, i, d1);
    const C z = cpml_memory<C>(zr[i], a, b, d2);
    zr[i] = z;
    ac[i] += d2 + z;
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

// second_derivative_add_row and the leapfrog in one loop, for the last axis (q: p_old's row in the
// compute type, updated in place): q <- leapfrog(c, q, m, acc + (d2p + 0)), the same operations
// in the same order as the two loops, without the row sum's store and reload and one loop's
// control.
template <int R, class C, class M>
inline void second_derivative_leapfrog_row(const C* c, const C* const* m, const C* const* p, const C* acc,
                                           C* q, const M* model, int n, const C (&d2)[R + 1]) {
  const C* KOKKOS_RESTRICT cr = c;
  const C* KOKKOS_RESTRICT ac = acc;
  C* KOKKOS_RESTRICT qr = q;
  const M* KOKKOS_RESTRICT mr = model;
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    C s = d2[0] * cr[i];
    for (int r = 1; r <= R; ++r) s += d2[r] * (m[r - 1][i] + p[r - 1][i]);
    qr[i] = leapfrog<C>(cr[i], qr[i], C(mr[i]), ac[i] + (s + C(0)));
  }
}

// zeta_pass and the leapfrog in one loop (q as above): zeta updated as there and
// q <- leapfrog(c, q, m, acc + (d2 + zeta)).
template <int R, class C, class M>
inline void zeta_leapfrog_pass(const C* d2p, const C* psi, long stride, C* zeta, C a, C b, const C* acc,
                               const C* c, C* q, const M* model, int n, const C (&d1)[R + 1]) {
  const C* KOKKOS_RESTRICT dr = d2p;
  C* KOKKOS_RESTRICT zr = zeta;
  const C* KOKKOS_RESTRICT ac = acc;
  const C* KOKKOS_RESTRICT cr = c;
  C* KOKKOS_RESTRICT qr = q;
  const M* KOKKOS_RESTRICT mr = model;
  const C* pm[R];
  const C* pp[R];
  axis_neighbours<R>(psi, stride, pm, pp);
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    const C d2 = dr[i] + psi_derivative<R>(pm, pp, i, d1);
    const C z = cpml_memory<C>(zr[i], a, b, d2);
    zr[i] = z;
    qr[i] = leapfrog<C>(cr[i], qr[i], C(mr[i]), ac[i] + (d2 + z));
  }
}

// What the p update of one box reads and writes: p (compute type or storage), p_old (q) and the
// model (m) with p's strides, psi and zeta, the profiles, the box's x range and its split
// (radius R), the slabs.
template <class C, int Dim, class P, class S, class M>
struct UpdateBox {
  const P* p;
  S* q;
  const M* m;
  long sz, sy;
  AxisFields<C, Dim> psi, zeta;
  AxisProfiles<C> prof;
  int x0, nx;
  RowSplit xs;
  CpmlSlabs slabs;
  long epoch;  // the launch, for the ring of decoded rows (CpmlRing)
};

// The UpdateBox of one box (p: the storage field or its compute-type copy; q: the storage field).
template <int R, int Dim, class C, class PView, class QView, class MView, class MemField, class Profile>
UpdateBox<C, Dim, typename PView::value_type, typename QView::value_type, typename MView::value_type>
update_box(const Box& box, const PView& p, const QView& q, const MView& m, const std::array<MemField, 3>& psi,
           const std::array<MemField, 3>& zeta, const std::array<Profile, 3>& pa,
           const std::array<Profile, 3>& pb, const CpmlSlabs& slabs) {
  const int x0 = box.lo[0], nx = box.hi[0] - box.lo[0];
  return {p.data(),
          q.data(),
          m.data(),
          long(p.stride(0)),
          long(p.stride(1)),
          AxisFields<C, Dim>(psi),
          AxisFields<C, Dim>(zeta),
          AxisProfiles<C>(pa, pb),
          x0,
          nx,
          split_row<C>(slabs, 0, x0, nx, R),
          slabs,
          next_ring_epoch()};
}

// The CPML update of the rows [j0, j1) of plane k: zeta_a updated, q <- leapfrog(p, q, m,
// sum_a d2_a + zeta_a). Axis a's full term only where CpmlSlabs says (x: [0, xs.lo) and
// [xs.hi, n); y, z: the whole row when its y / the plane's z needs it), elsewhere its second
// derivative + 0. Per row: the x term into the row sum (the middle and the two x parts), then y,
// then z, whose loop also does the leapfrog, in place on p_old (storage in the compute type) or
// on its decoded row, encoded after it.
template <int R, int Dim, class C, class P, class S, class M>
void update_rows(const UpdateBox<C, Dim, P, S, M>& b, const StencilWeights<C, R>& weights, int k, int j0,
                 int j1, CpmlScratch<C, R, Dim>& scratch) {
  constexpr bool decoded = !std::is_same<P, C>::value;
  if constexpr (decoded) scratch.ring.at(b.p, b.sz, b.sy, b.epoch, b.x0, b.nx, k, j0, j1);
  const LocalWeights<C, R> w(weights);
  const int n = b.nx;
  const RowSplit x = b.xs;
  const C a2 = Dim == 3 ? b.prof.a[2][k] : C(0), b2 = Dim == 3 ? b.prof.b[2][k] : C(0);
  const bool do_z = Dim == 3 && b.slabs.update(2, k, R);
  const C* const a0 = b.prof.a[0] + b.x0;
  const C* const b0 = b.prof.b[0] + b.x0;
  C* KOKKOS_RESTRICT acc = scratch.acc.data();
  C* KOKKOS_RESTRICT d2 = scratch.d2.data();
  const bool prefetch = short_row<C>(n);
  for (int j = j0; j < j1; ++j) {
    const bool do_y = b.slabs.update(1, j, R);
    const long xo = k * b.sz + j * b.sy + b.x0, mx = k * b.psi.sz + j * b.psi.sy + b.x0;
    if (prefetch && j + prefetch_rows_ahead < j1) {
      const long po = xo + prefetch_rows_ahead * b.sy, pm = mx + prefetch_rows_ahead * b.psi.sy;
      if constexpr (!decoded) {
        prefetch_span(b.p + po + R * b.sy - R, n + 2 * R);
        if constexpr (Dim == 3) prefetch_span(b.p + po + R * b.sz, n);
      }
      prefetch_span(b.q + po, n);
      prefetch_span(b.m + po, n);
      prefetch_span(b.psi.f[0] + pm - R, n + 2 * R);
      prefetch_span(b.zeta.f[0] + pm, n);
    }
    if (!prefetch && Dim == 3) {
      // Whole rows: the streams from memory of the row stream_rows_ahead rows on in the block's
      // sweep along z (past j1: the next plane's first rows), as the 16-bit interior does
      // (HostStencil.hpp): q, m, p's newest plane and the full axes' zeta and newest psi.
      const auto [ka, ja] = row_ahead(k, j, j0, j1);
      const long pa = ka * b.sz + ja * b.sy + b.x0, ma = ka * b.psi.sz + ja * b.psi.sy + b.x0;
      prefetch_lines(b.q + pa, n, true);
      prefetch_lines(b.m + pa, n, false);
      prefetch_lines(b.p + pa + R * b.sz, n, false);
      if (b.slabs.update(2, ka, R)) {
        prefetch_lines(b.zeta.f[2] + ma, n, true);
        prefetch_lines(b.psi.f[2] + ma + R * b.psi.sz, n, false);
      }
      if (b.slabs.update(1, ja, R)) {
        prefetch_lines(b.zeta.f[1] + ma, n, true);
        prefetch_lines(b.psi.f[1] + ma + R * b.psi.sy, n, false);
      }
    }
    const auto pr = rows_of<R, Dim>(b.p, xo, b.sy, b.sz, scratch.ring, k, j);
    S* const q = b.q + xo;
    const M* const m = b.m + xo;
    // p_old's row in the compute type, updated in place by the last pass.
    C* qc = nullptr;
    if constexpr (std::is_same<S, C>::value) {
      qc = q;
    } else {
      qc = scratch.old.data();
      decode<C>(q, qc, n);
    }
    {  // x, where psi_x and zeta_x are +0 around the point: sum = 0 + (d2 + 0)
      const C* KOKKOS_RESTRICT c = pr.c;
      MANTISSA_HOST_IVDEP
      for (int i = x.lo; i < x.hi; ++i) {
        C s = w.d2[0][0] * c[i];
        for (int r = 1; r <= R; ++r) s += w.d2[0][r] * (c[i - r] + c[i + r]);
        C sum = C(0);
        sum += s + C(0);
        acc[i] = sum;
      }
    }
    const auto x_part = [&](int i0, int i1) {  // x: sum = 0 + (d2 + zeta)
      const C* KOKKOS_RESTRICT c = pr.c;
      const C* KOKKOS_RESTRICT ps = b.psi.f[0] + mx;
      const C* KOKKOS_RESTRICT ar = a0;
      const C* KOKKOS_RESTRICT br = b0;
      C* KOKKOS_RESTRICT zr = b.zeta.f[0] + mx;
      MANTISSA_HOST_IVDEP
      for (int i = i0; i < i1; ++i) {
        C s = w.d2[0][0] * c[i];
        for (int r = 1; r <= R; ++r) s += w.d2[0][r] * (c[i - r] + c[i + r]);
        C f = C(0);
        for (int r = 1; r <= R; ++r) f += w.d1[0][r] * (ps[i + r] - ps[i - r]);
        const C dd = s + f;
        const C z = cpml_memory<C>(zr[i], ar[i], br[i], dd);
        zr[i] = z;
        C sum = C(0);
        sum += dd + z;
        acc[i] = sum;
      }
    };
    x_part(0, x.lo);
    x_part(x.hi, n);
    // Axis a (1 = y, 2 = z) into the row sum; the last one does the leapfrog instead.
    const auto axis_pass = [&](int a, bool full, const C* const* rm, const C* const* rp, C ca, C cb,
                               bool last) {
      const long stride = a == 1 ? b.psi.sy : b.psi.sz;
      if (full) {
        second_derivative_row<R>(pr.c, rm, rp, d2, n, w.d2[a]);
        if (last)
          zeta_leapfrog_pass<R>(d2, b.psi.f[a] + mx, stride, b.zeta.f[a] + mx, ca, cb, acc, pr.c, qc, m, n,
                                w.d1[a]);
        else
          zeta_pass<R>(d2, b.psi.f[a] + mx, stride, b.zeta.f[a] + mx, ca, cb, acc, n, w.d1[a]);
      } else if (last) {
        second_derivative_leapfrog_row<R>(pr.c, rm, rp, acc, qc, m, n, w.d2[a]);
      } else {
        second_derivative_add_row<R>(pr.c, rm, rp, acc, n, w.d2[a]);
      }
    };
    axis_pass(1, do_y, pr.ym, pr.yp, b.prof.a[1][j], b.prof.b[1][j], Dim == 2);
    if constexpr (Dim == 3) {
      axis_pass(2, do_z, pr.zm, pr.zp, a2, b2, true);
    } else {
      (void)a2;
      (void)b2;
      (void)do_z;
    }
    if constexpr (!std::is_same<S, C>::value) encode<S>(qc, q, n);
  }
}

// Calls f(k, j0, j1) for blocks of rows [j0, j1) of plane k covering the box, in parallel: up to
// tile_rows rows per block, fewer when the box has few rows, so that every thread gets work.
// Consecutive work items are the same block in consecutive planes (z fastest), so a thread sweeps
// a block along z and the 2R + 1 planes of its rows stay in L2 from one plane to the next, as in
// the interior's tiles; plane-major order reread the z neighbours from L3 or memory for every row
// (the z slabs' whole planes do not fit in L2): 5-8 % of the 3D CPML step (docs/performance.md).
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
    const int k = z0 + task % nz, j0 = y0 + (task / nz) * block;
    f(k, j0, std::min(y1, j0 + block));
  });
}

template <int R, int Dim, class ExecSpace, class PView, class MemField, class Profile, class C>
void pml_memory_update(const ExecSpace& space, const Box& box, const PView& p,
                       const std::array<MemField, 3>& psi, const std::array<Profile, 3>& pa,
                       const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                       const StencilWeights<C, R>& w) {
  static_assert(is_host_space<ExecSpace>(), "host::pml_memory_update runs on host back-ends only");
  const auto b = memory_box<Dim, C>(box, p, psi, pa, pb, slabs);
  const int nx = b.nx;
  for_each_row_block("mantissa::seismic::Solver::step::pml_memory", space, box,
                     [=](const int k, const int j0, const int j1) {
                       thread_local CpmlScratch<C, R, Dim> scratch;
                       scratch.reserve(nx);
                       memory_rows<R, Dim>(b, w, k, j0, j1, scratch);
                     });
}

// p is the storage field or its compute-type copy (decode_box); q is the storage field.
template <int R, int Dim, class ExecSpace, class PView, class QView, class MView, class MemField,
          class Profile, class C>
void pml_update(const ExecSpace& space, const Box& box, const PView& p, const QView& q, const MView& m,
                const std::array<MemField, 3>& psi, const std::array<MemField, 3>& zeta,
                const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                const StencilWeights<C, R>& w) {
  static_assert(is_host_space<ExecSpace>(), "host::pml_update runs on host back-ends only");
  const auto b = update_box<R, Dim, C>(box, p, q, m, psi, zeta, pa, pb, slabs);
  const int nx = b.nx;
  for_each_row_block("mantissa::seismic::Solver::step::pml", space, box,
                     [=](const int k, const int j0, const int j1) {
                       thread_local CpmlScratch<C, R, Dim> scratch;
                       scratch.reserve(nx);
                       update_rows<R, Dim>(b, w, k, j0, j1, scratch);
                     });
}

// The CPML p update of up to two boxes as interior_update's `after` (HostStencil.hpp): the rows
// [j0, j1) of plane k of each box that has them, right after the interior's same rows. For the x
// slabs, whose rows continue the interior's on either side: the interior's streams have just
// brought in the lines of p, p_old and the model around them, which the x slabs' short rows
// otherwise wait for one row at a time (docs/performance.md).
// With `memory`, the rows' memory update (memory_rows) first: the caller has made sure that no
// other rank needs these psi values this step and that the rows' p update reads psi only on
// these rows (Solver: m_pml_rows_memory).
template <int R, int Dim, class C, class P, class S, class M>
struct PmlRows {
  UpdateBox<C, Dim, P, S, M> box[2];
  MemoryBox<C, Dim, P> mem[2];
  Box extent[2];
  int count = 0;
  bool memory = false;
  StencilWeights<C, R> w;
  void operator()(const int k, const int j0, const int j1) const {
    // One scratch a box: each box's ring follows its own rows along z.
    thread_local CpmlScratch<C, R, Dim> scratch[2];
    for (int i = 0; i < count; ++i) {
      const Box& e = extent[i];
      const int a = std::max(j0, e.lo[1]), z = std::min(j1, e.hi[1]);
      if (k < e.lo[2] || k >= e.hi[2] || a >= z) continue;
      scratch[i].reserve(box[i].nx);
      if (memory) {
        // The block's lines of psi_x and zeta_x first: whole-grid arrays of which each of these
        // short rows touches two or three lines, so without the hint each row waits for them
        // (the rows' own hint, two rows ahead, leaves the first rows of every block waiting):
        // the 3D CPML step 3 % (fp64) and 8 % (fp32) faster (docs/performance.md).
        const auto& b = box[i];
        for (int j = a; j < z; ++j) {
          const long mx = k * b.psi.sz + j * b.psi.sy + b.x0;
          prefetch_span(b.psi.f[0] + mx - R, b.nx + 2 * R);
          prefetch_span(b.zeta.f[0] + mx, b.nx);
        }
        memory_rows<R, Dim>(mem[i], w, k, a, z, scratch[i]);
      }
      update_rows<R, Dim>(box[i], w, k, a, z, scratch[i]);
    }
  }
};

// The interior update (interior_update) and the CPML p update of `rows` (at most two boxes,
// each of whose rows is a row of the interior's y and z range) in one sweep, with `memory` their
// memory update too (PmlRows); false, with nothing done, when the boxes do not fit that (the
// caller then runs the kernels one after the other).
template <int R, int Dim, class ExecSpace, class PView, class CView, class MView, class MemField,
          class Profile, class C>
bool interior_and_pml_rows_update(const ExecSpace& space, const Box& interior, const std::vector<Box>& rows,
                                  const PView& p, const CView& pc, const PView& q, const MView& m,
                                  const std::array<MemField, 3>& psi, const std::array<MemField, 3>& zeta,
                                  const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb,
                                  const CpmlSlabs& slabs, const StencilWeights<C, R>& w, bool memory) {
  if (interior.empty() || rows.size() > 2) return false;
  PmlRows<R, Dim, C, typename CView::value_type, typename PView::value_type, typename MView::value_type> f;
  f.w = w;
  f.memory = memory;
  for (const Box& b : rows) {
    for (int a = 1; a < 3; ++a)
      if (b.lo[a] < interior.lo[a] || b.hi[a] > interior.hi[a]) return false;
    if (b.empty()) continue;
    f.box[f.count] = update_box<R, Dim, C>(b, pc, q, m, psi, zeta, pa, pb, slabs);
    f.mem[f.count] = memory_box<Dim, C>(b, pc, psi, pa, pb, slabs);
    f.mem[f.count].epoch = f.box[f.count].epoch;  // one ring for both: p is the same
    f.extent[f.count++] = b;
  }
  interior_update<R, Dim>(space, interior, p, q, m, w, f);
  return true;
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
