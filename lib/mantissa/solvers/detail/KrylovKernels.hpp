#pragma once
// Fused vector kernels of the preconditioned conjugate gradient (not part of the interface).
// K is the Krylov precision (double, or float inside iterative refinement); every reduction
// accumulates in double. Each kernel makes one pass over the owned cells.
#include <mantissa/solvers/detail/PoissonKernels.hpp>

#include <array>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <immintrin.h>
#define MANTISSA_SOLVERS_APPLY_STREAM 1
#endif

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
#if MANTISSA_KOKKOS_VOLATILE_JOIN
  // Kokkos 3.x only (core/KokkosCompat.hpp): C++20 deprecates compound assignment to volatile.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile NormMax& o) volatile {
    sum2 += o.sum2;
    sum += o.sum;
    if (o.max > max) max = o.max;
  }
#endif
  KOKKOS_INLINE_FUNCTION void add(const double v) {
    sum2 += v * v;
    sum += v;
    const double a = v < 0 ? -v : v;
    if (a > max) max = a;
  }
};

namespace host {

// Kokkos reduction over chunks of rows (as for_rows); body(k, j, scratch, acc).
template <class Exec, class R, class Make, class Body>
void reduce_rows(const char* label, const Exec& space, const Box& b, const Make& make, const Body& body,
                 R& result) {
  result = R{};
  const std::int64_t z0 = b.lo[2], y0 = b.lo[1], ny = b.hi[1] - b.lo[1], rows = (b.hi[2] - b.lo[2]) * ny;
  if (rows <= 0 || b.hi[0] <= b.lo[0]) return;
  const std::int64_t chunks = std::min<std::int64_t>(rows, 4 * std::max(1, int(space.concurrency())));
  const std::int64_t per = (rows + chunks - 1) / chunks;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<Exec>(space, 0, chunks),
      [=](const std::int64_t c, R& acc) {
        auto scratch = make();
        const std::int64_t end = std::min(rows, (c + 1) * per);
        for (std::int64_t row = c * per; row < end; ++row) body(z0 + row / ny, y0 + row % ny, scratch, acc);
      },
      result);
}

// The same over the work items of for_rows_tiled (tiles of `tile` rows along y, each swept
// along a segment of z), for a reduction whose rows read a stencil's three planes.
template <class Exec, class R, class Make, class Body>
void reduce_rows_tiled(const char* label, const Exec& space, const Box& b, std::int64_t tile,
                       const Make& make, const Body& body, R& result) {
  result = R{};
  const RowTiles rt(b, tile, int(space.concurrency()));
  if (rt.items == 0) return;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<Exec>(space, 0, rt.items),
      [=](const std::int64_t item, R& acc) {
        auto scratch = make();
        rt.rows_of(item, [&](std::int64_t k, std::int64_t j) { body(k, j, scratch, acc); });
      },
      result);
}

// A vector written whole in one pass and not read again before several others of its size have
// been through the caches (the CG's A p: read by the r update, the preconditioner in between)
// is stored past the caches from this size on: a store that misses first reads the line (read
// for ownership), half again the traffic of the write. Smaller vectors stay in the caches.
inline constexpr std::size_t stream_store_bytes = std::size_t(8) << 20;

// Lane-wise partial sums of a row (8 lanes: one AVX-512 or two AVX2 vectors of doubles), so the
// row's reduction vectorises without reassociation flags; lanes are added once per row.
constexpr int lanes = 8;

#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(__HIP__)
// GCC's vector extension (Clang has it too) for the norms: GCC 12 does not vectorise the lane
// arrays below once a running maximum is among the sums (the select defeats its SLP pass), and
// the scalar form costs 3.5x (double) to 6x (float) the vector one in L1 (docs/performance.md).
// Each vector lane is the array's lane with the same operations in the same order, so the bits
// are those of the array form, which device compilers (and any other host compiler) use.
// The eight lanes are two vectors of four: a single vector of eight doubles is wider than an
// AVX2 register, and GCC 12 splits its selects into scalar compares and stack spills (3.5 ns a
// value against 0.38 for two halves on a Zen 3 core, docs/performance.md, 2026-12-05).
#define MANTISSA_SOLVERS_VECTOR_LANES 1
typedef double LaneVector __attribute__((vector_size(lanes / 2 * sizeof(double))));

// out = v[0..lanes / 2) as doubles (by reference, as GCC's ABI notes prefer for vectors).
template <class K>
inline void load_lanes(const K* v, LaneVector& out) {
  if constexpr (std::is_same<K, double>::value) {
    __builtin_memcpy(&out, v, sizeof out);
  } else if constexpr (std::is_same<K, float>::value) {
    typedef float Narrow __attribute__((vector_size(lanes / 2 * sizeof(float))));
    Narrow f;
    __builtin_memcpy(&f, v, sizeof f);
    out = __builtin_convertvector(f, LaneVector);
  } else {
    for (int l = 0; l < lanes / 2; ++l) out[l] = double(v[l]);
  }
}

// out = double(zs * x[l]) for l in [0, lanes / 2), the product in C: z as the CG reads it from
// the multigrid's level-0 row (ZFrom; a float converts to the Krylov type exactly).
template <class C>
inline void z_lanes(const C* x, const C zs, LaneVector& out) {
  if constexpr (std::is_same<C, double>::value) {
    __builtin_memcpy(&out, x, sizeof out);
    out = zs * out;
  } else {
    typedef float Narrow __attribute__((vector_size(lanes / 2 * sizeof(float))));
    Narrow f;
    __builtin_memcpy(&f, x, sizeof f);
    f = zs * f;
    out = __builtin_convertvector(f, LaneVector);
  }
}
#endif

// sum2, sum and max of v[0..n) into nm.
template <class K>
inline void norms_of_row(const K* KOKKOS_RESTRICT v, std::int64_t n, NormMax& nm) {
#ifdef MANTISSA_SOLVERS_VECTOR_LANES
  constexpr int h = lanes / 2;
  LaneVector s2a = {}, s2b = {}, s1a = {}, s1b = {}, mxa = {}, mxb = {};  // lanes 0-3, 4-7
  std::int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    LaneVector ta, tb;
    load_lanes(v + i, ta);
    load_lanes(v + i + h, tb);
    s2a += ta * ta;
    s2b += tb * tb;
    s1a += ta;
    s1b += tb;
    const LaneVector aa = ta < 0 ? -ta : ta, ab = tb < 0 ? -tb : tb;
    mxa = aa > mxa ? aa : mxa;
    mxb = ab > mxb ? ab : mxb;
  }
  double s2[lanes], s1[lanes], mx[lanes];
  for (int l = 0; l < h; ++l) {
    s2[l] = s2a[l];
    s2[l + h] = s2b[l];
    s1[l] = s1a[l];
    s1[l + h] = s1b[l];
    mx[l] = mxa[l];
    mx[l + h] = mxb[l];
  }
#else
  double s2[lanes] = {}, s1[lanes] = {}, mx[lanes] = {};
  std::int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (int l = 0; l < lanes; ++l) {
      const double t = double(v[i + l]);
      s2[l] += t * t;
      s1[l] += t;
      const double a = t < 0 ? -t : t;
      mx[l] = a > mx[l] ? a : mx[l];
    }
#endif
  for (; i < n; ++i) {
    const double t = double(v[i]);
    s2[0] += t * t;
    s1[0] += t;
    const double a = t < 0 ? -t : t;
    mx[0] = a > mx[0] ? a : mx[0];
  }
  for (int l = 0; l < lanes; ++l) {
    nm.sum2 += s2[l];
    nm.sum += s1[l];
    if (mx[l] > nm.max) nm.max = mx[l];
  }
}

// sum of a[i] * b[i].
template <class A, class B>
inline double dot_of_row(const A* KOKKOS_RESTRICT a, const B* KOKKOS_RESTRICT b, std::int64_t n) {
  double s[lanes] = {};
  std::int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (int l = 0; l < lanes; ++l) s[l] += double(a[i + l]) * double(b[i + l]);
  for (; i < n; ++i) s[0] += double(a[i]) * double(b[i]);
  double t = 0.0;
  for (int l = 0; l < lanes; ++l) t += s[l];
  return t;
}

#ifdef MANTISSA_SOLVERS_APPLY_STREAM
// A 3D row of out = L p (out[i] = d c[i] - (cx (c[i-1] + c[i+1]) + cy (ym[i] + yp[i]) + cz (zm[i]
// + zp[i]))) and its dot with c, bitwise what apply_dot's row loop and dot_of_row give: the
// values are computed in blocks of eight from the row's start and their products summed in the
// same eight lanes, in the same order. Only the stores differ: every whole 64-byte line of out
// is written past the caches (_mm512_stream_pd), two blocks joined by one permute where the row
// does not start on a line; the ends of the row are plain stores. The caller fences
// (_mm_sfence) before the values are read elsewhere.
inline double apply_row_stream(const double* c, const double* ym, const double* yp, const double* zm,
                               const double* zp, double* out, std::int64_t n, double d, double cx, double cy,
                               double cz) {
  const __m512d vd = _mm512_set1_pd(d), vx = _mm512_set1_pd(cx), vy = _mm512_set1_pd(cy),
                vz = _mm512_set1_pd(cz);
  // cells before the first 64-byte boundary of out (rows start on 8-byte boundaries)
  const int h = int(((64 - (reinterpret_cast<std::uintptr_t>(out) & 63)) & 63) / 8);
  __m512i idx = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  idx = _mm512_add_epi64(idx, _mm512_set1_epi64(h));
  __m512d acc = _mm512_setzero_pd(), prev = _mm512_setzero_pd();
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d cc = _mm512_loadu_pd(c + i);
    const __m512d t1 =
        _mm512_mul_pd(vx, _mm512_add_pd(_mm512_loadu_pd(c + i - 1), _mm512_loadu_pd(c + i + 1)));
    const __m512d t2 = _mm512_mul_pd(vy, _mm512_add_pd(_mm512_loadu_pd(ym + i), _mm512_loadu_pd(yp + i)));
    const __m512d t3 = _mm512_mul_pd(vz, _mm512_add_pd(_mm512_loadu_pd(zm + i), _mm512_loadu_pd(zp + i)));
    const __m512d v = _mm512_sub_pd(_mm512_mul_pd(vd, cc), _mm512_add_pd(_mm512_add_pd(t1, t2), t3));
    acc = _mm512_add_pd(acc, _mm512_mul_pd(cc, v));
    if (i == 0)
      _mm512_mask_storeu_pd(out, __mmask8((1u << h) - 1u), v);  // cells [0, h)
    else
      _mm512_stream_pd(out + i - 8 + h, _mm512_permutex2var_pd(prev, idx, v));  // cells [i - 8 + h, i + h)
    prev = v;
  }
  if (i > 0)
    _mm512_mask_storeu_pd(out + i - 8 + h, __mmask8(0xFFu >> h), _mm512_permutex2var_pd(prev, idx, prev));
  alignas(64) double s[8];
  _mm512_store_pd(s, acc);
  for (; i < n; ++i) {
    const double v = d * c[i] - (cx * (c[i - 1] + c[i + 1]) + cy * (ym[i] + yp[i]) + cz * (zm[i] + zp[i]));
    out[i] = v;
    s[0] += c[i] * v;
  }
  double t = 0.0;
  for (int l = 0; l < 8; ++l) t += s[l];
  return t;
}
#endif

}  // namespace host

namespace host {

// One 3D or 2D row of out = L p from c (the row's first owned cell; sy, sz the strides of y and
// z) and its dot with c: apply_dot's row, and update_p_apply's. stream: out's whole lines go past
// the caches (apply_row_stream; fp64 3D rows only), the caller fences (_mm_sfence).
template <class K>
inline double apply_row(const Stencil<K>& s, const K* KOKKOS_RESTRICT c, std::int64_t sy, std::int64_t sz,
                        K* KOKKOS_RESTRICT out, std::int64_t n, bool stream) {
  const K* KOKKOS_RESTRICT ym = c - sy;
  const K* KOKKOS_RESTRICT yp = c + sy;
  const K cx = s.cx, cy = s.cy, cz = s.cz, d = s.diag;
#ifdef MANTISSA_SOLVERS_APPLY_STREAM
  if constexpr (std::is_same<K, double>::value) {
    if (stream && s.is3d) return apply_row_stream(c, ym, yp, c - sz, c + sz, out, n, d, cx, cy, cz);
  }
#else
  (void)stream;
#endif
  if (s.is3d) {
    const K* KOKKOS_RESTRICT zm = c - sz;
    const K* KOKKOS_RESTRICT zp = c + sz;
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = d * c[i] - (cx * (c[i - 1] + c[i + 1]) + cy * (ym[i] + yp[i]) + cz * (zm[i] + zp[i]));
  } else {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = d * c[i] - (cx * (c[i - 1] + c[i + 1]) + cy * (ym[i] + yp[i]) + K(0));
  }
  return dot_of_row(c, out, n);
}

// One 3D or 2D row of (c, L c) with c stored in P (float: the compressed search direction,
// SolverOptions::krylov_storage) and L c computed in K from it into the scratch row a, not
// stored: stencil_dot's row, and update_p_apply's for a compressed p. L c's row first, then the
// dot (dot_of_row's lanes): GCC 12 left the two in one loop scalar (perf, 2026-12-05).
template <class K, class P>
inline double stencil_dot_row(const Stencil<K>& s, const P* KOKKOS_RESTRICT c, std::int64_t sy,
                              std::int64_t sz, K* KOKKOS_RESTRICT a, std::int64_t n) {
  const P* KOKKOS_RESTRICT ym = c - sy;
  const P* KOKKOS_RESTRICT yp = c + sy;
  const K cx = s.cx, cy = s.cy, cz = s.cz, d = s.diag;
  if (s.is3d) {
    const P* KOKKOS_RESTRICT zm = c - sz;
    const P* KOKKOS_RESTRICT zp = c + sz;
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i)
      a[i] = d * K(c[i]) -
             (cx * (K(c[i - 1]) + K(c[i + 1])) + cy * (K(ym[i]) + K(yp[i])) + cz * (K(zm[i]) + K(zp[i])));
  } else {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i)
      a[i] = d * K(c[i]) - (cx * (K(c[i - 1]) + K(c[i + 1])) + cy * (K(ym[i]) + K(yp[i])) + K(0));
  }
  return dot_of_row(c, a, n);
}

// A store past the caches is ordered before what follows (apply_row's streamed rows).
inline void stream_fence() {
#ifdef MANTISSA_SOLVERS_APPLY_STREAM
  _mm_sfence();
#endif
}

// Where A p of a large fp64 grid goes to memory past the caches (stream_store_bytes).
template <class K, class V>
inline bool stream_apply(const V& ap) {
  return std::is_same<K, double>::value && ap.span() * sizeof(K) >= stream_store_bytes;
}

// Per-row partial sums, kept to be summed in row order (the sum one pass over the rows in
// order gives, at any thread count and in any order the rows are computed).
inline double* row_sums(std::int64_t rows) {
  thread_local std::vector<double> sums;
  if (sums.size() < std::size_t(std::max<std::int64_t>(rows, 0))) sums.resize(std::size_t(rows));
  return sums.data();
}

}  // namespace host

// Ap = L p; returns (p, Ap).
template <class Exec, class K, class M>
double apply_dot(const Exec& space, const Placement& pl, const Stencil<K>& s, const View3<K, M>& p,
                 const View3<K, M>& ap) {
  double dot = 0.0;
  if constexpr (host::is_host<Exec>()) {
    const Box b = pl.owned();
    const std::int64_t x0 = b.lo[0], n = b.hi[0] - b.lo[0];
    const std::int64_t sy = std::int64_t(p.extent(2)), sz = sy * std::int64_t(p.extent(1));
    const K* const pp = p.data();
    K* const app = ap.data();
    const std::int64_t y0 = b.lo[1], z0 = b.lo[2], ny = b.hi[1] - y0, rows = ny * (b.hi[2] - z0);
    double* const rd = host::row_sums(rows);
    const std::int64_t tile = host::stencil_tile_rows<K>(n);
    const bool stream = host::stream_apply<K>(ap);
    host::for_rows_tiled(
        "mantissa::solvers::Krylov::apply", space, b, tile, [=](std::int64_t k, std::int64_t j) {
          const std::int64_t o = host::at(p, k, j, x0);
          rd[(k - z0) * ny + (j - y0)] = host::apply_row(s, pp + o, sy, sz, app + o, n, stream);
          if (stream && (j + 1 == b.hi[1] || (j + 1 - y0) % tile == 0))
            host::stream_fence();  // tile's last row
        });
    space.fence();
    for (std::int64_t r = 0; r < rows; ++r) dot += rd[r];
    return dot;
  }
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
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t x0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    const std::int64_t sy = std::int64_t(x.extent(2)), sz = sy * std::int64_t(x.extent(1));
    const K* const xp = x.data();
    const K* const bp = b.data();
    K* const rp = r.data();
    host::reduce_rows(
        "mantissa::solvers::Krylov::residual", space, bx, [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int, NormMax& acc) {
          const std::int64_t o = host::at(x, k, j, x0);
          const K* KOKKOS_RESTRICT c = xp + o;
          const K* KOKKOS_RESTRICT ym = c - sy;
          const K* KOKKOS_RESTRICT yp = c + sy;
          const K* KOKKOS_RESTRICT br = bp + o;
          K* KOKKOS_RESTRICT out = rp + o;
          const K cx = s.cx, cy = s.cy, cz = s.cz, d = s.diag;
          if (s.is3d) {
            const K* KOKKOS_RESTRICT zm = c - sz;
            const K* KOKKOS_RESTRICT zp = c + sz;
            MANTISSA_SOLVERS_IVDEP
            for (std::int64_t i = 0; i < n; ++i)
              out[i] = br[i] - d * c[i] +
                       (cx * (c[i - 1] + c[i + 1]) + cy * (ym[i] + yp[i]) + cz * (zm[i] + zp[i]));
          } else {
            MANTISSA_SOLVERS_IVDEP
            for (std::int64_t i = 0; i < n; ++i)
              out[i] = br[i] - d * c[i] + (cx * (c[i - 1] + c[i + 1]) + cy * (ym[i] + yp[i]) + K(0));
          }
          host::norms_of_row(out, n, acc);
        },
        nm);
    return nm;
  }
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
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t x0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    K* const vp = v.data();
    host::reduce_rows(
        "mantissa::solvers::Krylov::shift", space, bx, [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int, NormMax& acc) {
          K* KOKKOS_RESTRICT q = vp + host::at(v, k, j, x0);
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t i = 0; i < n; ++i) q[i] = q[i] - cc;
          host::norms_of_row(q, n, acc);
        },
        nm);
    return nm;
  }
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

// r -= a Ap; returns the norms of the new r. The matching x += a p is deferred to the next
// direction update (update_p_from reads p there anyway) or to add_direction at the end.
template <class Exec, class K, class M>
NormMax update_r(const Exec& space, const Placement& pl, double alpha, const View3<K, M>& r,
                 const View3<K, M>& ap) {
  NormMax nm;
  const K a = K(alpha);
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t x0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    K* const rp = r.data();
    const K* const app = ap.data();
    host::reduce_rows(
        "mantissa::solvers::Krylov::update", space, bx, [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int, NormMax& acc) {
          const std::int64_t o = host::at(r, k, j, x0);
          K* KOKKOS_RESTRICT rr = rp + o;
          const K* KOKKOS_RESTRICT ar = app + o;
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t i = 0; i < n; ++i) rr[i] = rr[i] - a * ar[i];
          host::norms_of_row(rr, n, acc);
        },
        nm);
    return nm;
  }
  reduce_cells(
      "mantissa::solvers::Krylov::update", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, NormMax& acc) {
        const K t = r(k, j, i) - a * ap(k, j, i);
        r(k, j, i) = t;
        acc.add(double(t));
      },
      nm);
  return nm;
}

// The CG's r update fused with the multigrid's entry (one pass instead of four: the r update,
// the conversion of r into level 0's right-hand side, the zeroing of level 0's x, and the first
// red half-sweep of the pre-smoothing): r -= a Ap with the norms of the new r (as update_r),
// f0 = T(scale r) with detail::load_entry's arithmetic, and x0 = the red half-sweep from a zero
// guess (red: global index sum even; x = 0 + (f - D 0 + 0) / D_cell, rbgs's arithmetic with every
// neighbour 0), black cells 0. x0's ghosts are left: every later read of them follows a fill.
// s: level 0's stencil (storage of f0, x0 at placement px). An fp64 or fp32 level 0 is loaded
// unscaled (scale 1; 16-bit levels below get the residual scale where they start,
// Multigrid::set_coarse_scale). A 16-bit level 0 needs 1 / max|r| of the r this pass writes:
// the caller passes a predicted scale and checks it against the returned max.
template <class Exec, class K, class T, class M>
NormMax update_r_entry(const Exec& space, const Placement& pl, double alpha, const View3<K, M>& r,
                       const View3<K, M>& ap, const Placement& px, const Stencil<compute_t<T>>& s,
                       const View3<T, M>& f0, const View3<T, M>& x0, double scale) {
  using CV = pair_compute_t<K, T>;
  const CV sc = CV(scale);
  NormMax nm;
  const K a = K(alpha);
  const EntryAt e(pl, px);
  const std::int64_t dx = e.dx, dy = e.dy, dz = e.dz;
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    K* const rp = r.data();
    const K* const app = ap.data();
    T* const fp = f0.data();
    T* const xp = x0.data();
    host::reduce_rows(
        "mantissa::solvers::Krylov::update_entry", space, bx, [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int, NormMax& acc) {
          const std::int64_t o = host::at(r, k, j, i0);
          const std::int64_t ox = host::at(x0, k + dz, j + dy, i0 + dx);
          K* KOKKOS_RESTRICT rr = rp + o;
          const K* KOKKOS_RESTRICT ar = app + o;
          T* KOKKOS_RESTRICT fr = fp + ox;
          T* KOKKOS_RESTRICT xr = xp + ox;
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t i = 0; i < n; ++i) rr[i] = rr[i] - a * ar[i];
          host::norms_of_row(rr, n, acc);
          host::entry_of_row<K, T>(s, rr, sc, fr, xr, n, k + dz, j + dy, i0 + dx, e.red(k, j, i0));
        },
        nm);
    return nm;
  }
  reduce_cells(
      "mantissa::solvers::Krylov::update_entry", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, NormMax& acc) {
        const K t = r(k, j, i) - a * ap(k, j, i);
        r(k, j, i) = t;
        acc.add(double(t));
        const T fv = T(sc * CV(t));
        e(s, f0, x0, k, j, i, fv);
      },
      nm);
  return nm;
}

// x += a p (the deferred half of a CG step when no direction update follows).
template <class Exec, class K, class M>
void add_direction(const Exec& space, const Placement& pl, double alpha, const View3<K, M>& x,
                   const View3<K, M>& p) {
  const K a = K(alpha);
  for_each_cell(
      "mantissa::solvers::Krylov::step", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        x(k, j, i) += a * p(k, j, i);
      });
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
  if constexpr (host::is_host<Exec>()) {
    const K* const zp = z.data();
    K* const pp = p.data();
    const Box bx = pl.owned();
    const std::int64_t x0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    host::for_rows(
        "mantissa::solvers::Krylov::direction", space, bx.lo[2], bx.hi[2], bx.lo[1], bx.hi[1],
        [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int) {
          const std::int64_t o = host::at(p, k, j, x0);
          const K* KOKKOS_RESTRICT zr = zp + o;
          K* KOKKOS_RESTRICT pr = pp + o;
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t i = 0; i < n; ++i) pr[i] = (zr[i] - mm) + b * pr[i];
        });
    return;
  }
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

// The preconditioned residual read straight from the multigrid's level-0 solution x0 (type T,
// placement px, any ghost width): z = zscale * x0, rounded as Multigrid::store_solution rounds
// it (compute type pair_compute_t<T, K>, then K), so the Krylov loop needs no z field and
// saves a write and two reads of it per iteration.
template <class T, class K>
struct ZFrom {
  using C = pair_compute_t<T, K>;
  C zs;
  KOKKOS_INLINE_FUNCTION K operator()(const T v) const { return K(zs * C(v)); }
};

// One row of (z, r), (z, Ap), sum z, sum r, sum Ap with z = K(zs x), host::lanes partial sums
// per sum and a scalar remainder; Ap is read through ap(i): a stored row, or one recomputed from
// p (the fp32 search direction). The same bits whichever ap is. GCC 12 leaves the lane loop
// scalar (a conversion per value); the vector form has each lane's operations in its order.
template <class K, class C, class A>
inline void five_sums_of_row(const C* KOKKOS_RESTRICT xr, const C zs, const K* KOKKOS_RESTRICT rr,
                             const A& ap, const std::int64_t n, Sums<5>& acc) {
  double s0[host::lanes] = {}, s1[host::lanes] = {}, s2[host::lanes] = {}, s3[host::lanes] = {},
         s4[host::lanes] = {};
  std::int64_t i = 0;
#ifdef MANTISSA_SOLVERS_VECTOR_LANES
  {
    using host::LaneVector;
    constexpr int h = host::lanes / 2;
    LaneVector s0v[2] = {}, s1v[2] = {}, s2v[2] = {}, s3v[2] = {}, s4v[2] = {};
    for (; i + host::lanes <= n; i += host::lanes) {
      double av[host::lanes];
      for (int l = 0; l < host::lanes; ++l) av[l] = double(ap(i + l));
      for (int half = 0; half < 2; ++half) {
        LaneVector zv, rv, a;
        host::z_lanes(xr + i + half * h, zs, zv);
        host::load_lanes(rr + i + half * h, rv);
        __builtin_memcpy(&a, av + half * h, sizeof a);
        s0v[half] += zv * rv;
        s1v[half] += zv * a;
        s2v[half] += zv;
        s3v[half] += rv;
        s4v[half] += a;
      }
    }
    for (int l = 0; l < host::lanes; ++l) {
      s0[l] = s0v[l / h][l % h];
      s1[l] = s1v[l / h][l % h];
      s2[l] = s2v[l / h][l % h];
      s3[l] = s3v[l / h][l % h];
      s4[l] = s4v[l / h][l % h];
    }
  }
#else
  for (; i + host::lanes <= n; i += host::lanes)
    for (int l = 0; l < host::lanes; ++l) {
      const double zv = double(K(zs * xr[i + l])), rv = double(rr[i + l]), av = double(ap(i + l));
      s0[l] += zv * rv;
      s1[l] += zv * av;
      s2[l] += zv;
      s3[l] += rv;
      s4[l] += av;
    }
#endif
  for (; i < n; ++i) {
    const double zv = double(K(zs * xr[i])), rv = double(rr[i]), av = double(ap(i));
    s0[0] += zv * rv;
    s1[0] += zv * av;
    s2[0] += zv;
    s3[0] += rv;
    s4[0] += av;
  }
  for (int l = 0; l < host::lanes; ++l) {
    acc.v[0] += s0[l];
    acc.v[1] += s1[l];
    acc.v[2] += s2[l];
    acc.v[3] += s3[l];
    acc.v[4] += s4[l];
  }
}

// One row of (z, r) and (z, Ap) alone (a problem that is not singular), as five_sums_of_row
// computes those two: the same lanes, the same bits. WithAp false: (z, r) alone, Ap not read.
template <class K, bool WithAp, class C>
inline void two_dots_of_row(const C* KOKKOS_RESTRICT xr, const C zs, const K* KOKKOS_RESTRICT rr,
                            const K* KOKKOS_RESTRICT ar, const std::int64_t n, Sums<5>& acc) {
  double s0[host::lanes] = {}, s1[host::lanes] = {};
  std::int64_t i = 0;
#ifdef MANTISSA_SOLVERS_VECTOR_LANES
  {
    using host::LaneVector;
    constexpr int h = host::lanes / 2;
    LaneVector s0v[2] = {}, s1v[2] = {};
    for (; i + host::lanes <= n; i += host::lanes)
      for (int half = 0; half < 2; ++half) {
        LaneVector zv, rv, a;
        host::z_lanes(xr + i + half * h, zs, zv);
        host::load_lanes(rr + i + half * h, rv);
        s0v[half] += zv * rv;
        if constexpr (WithAp) {
          host::load_lanes(ar + i + half * h, a);
          s1v[half] += zv * a;
        }
      }
    for (int l = 0; l < host::lanes; ++l) {
      s0[l] = s0v[l / h][l % h];
      s1[l] = s1v[l / h][l % h];
    }
  }
#else
  for (; i + host::lanes <= n; i += host::lanes)
    for (int l = 0; l < host::lanes; ++l) {
      const double zv = double(K(zs * xr[i + l]));
      s0[l] += zv * double(rr[i + l]);
      if constexpr (WithAp) s1[l] += zv * double(ar[i + l]);
    }
#endif
  for (; i < n; ++i) {
    const double zv = double(K(zs * xr[i]));
    s0[0] += zv * double(rr[i]);
    if constexpr (WithAp) s1[0] += zv * double(ar[i]);
  }
  for (int l = 0; l < host::lanes; ++l) {
    acc.v[0] += s0[l];
    acc.v[1] += s1[l];
  }
}

// (z, r), (z, Ap), sum z, sum r, sum Ap with z from x0. The three sums serve only the mean
// projection of a singular problem: without `sums` they stay 0 (the host loop then carries two
// accumulators, not five; the two dots are the same bits either way). Without `with_ap` (the
// standard beta, which needs (z, r) only) Ap is not read and (z, Ap) and sum Ap stay 0.
template <class Exec, class T, class K, class M>
Sums<5> precond_dots_from(const Exec& space, const Placement& pl, const Placement& px, const View3<T, M>& x0,
                          double zscale, const View3<K, M>& r, const View3<K, M>& ap, bool sums = true,
                          bool with_ap = true) {
  using C = pair_compute_t<T, K>;
  const ZFrom<T, K> zf{C(zscale)};
  const std::int64_t dx = px.ghost[0] - pl.ghost[0], dy = px.ghost[1] - pl.ghost[1],
                     dz = px.ghost[2] - pl.ghost[2];
  Sums<5> s;
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    const T* const xp = x0.data();
    const K* const rp = r.data();
    const K* const app = ap.data();
    host::reduce_rows(
        "mantissa::solvers::Krylov::dots", space, bx, [=] { return host::Rows<C, 2>(n); },
        [=](std::int64_t k, std::int64_t j, host::Rows<C, 2>& rows, Sums<5>& acc) {
          const C* KOKKOS_RESTRICT xr = rows.get(0, xp + host::at(x0, k + dz, j + dy, i0 + dx), n);
          const std::int64_t o = host::at(r, k, j, i0);
          const K* KOKKOS_RESTRICT rr = rp + o;
          const K* KOKKOS_RESTRICT ar = app + o;
          if (!sums) {
            if (with_ap)
              two_dots_of_row<K, true>(xr, zf.zs, rr, ar, n, acc);
            else
              two_dots_of_row<K, false>(xr, zf.zs, rr, ar, n, acc);
            return;
          }
          if (with_ap)
            five_sums_of_row<K>(
                xr, zf.zs, rr, [ar](std::int64_t q) { return ar[q]; }, n, acc);
          else
            five_sums_of_row<K>(
                xr, zf.zs, rr, [](std::int64_t) { return K(0); }, n, acc);
        },
        s);
    return s;
  }
  reduce_cells(
      "mantissa::solvers::Krylov::dots", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, Sums<5>& acc) {
        const double zv = double(zf(x0(k + dz, j + dy, i + dx))), rv = double(r(k, j, i)),
                     av = with_ap ? double(ap(k, j, i)) : 0.0;
        acc.v[0] += zv * rv;
        acc.v[1] += zv * av;
        acc.v[2] += zv;
        acc.v[3] += rv;
        acc.v[4] += av;
      },
      s);
  return s;
}

namespace host {

// One row of update_p_from: x += a p where step (the deferred x step), then p = (z - m) + b p,
// z = K(zs x0) from the row xr of level 0 in the compute type C.
template <class K, class P, class C>
inline void direction_row(const C* KOKKOS_RESTRICT xr, const C zs, P* KOKKOS_RESTRICT pr,
                          K* KOKKOS_RESTRICT sr, std::int64_t n, K mm, K b, K a, bool step) {
  if (step) {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i) {
      const K pv = K(pr[i]);
      sr[i] += a * pv;
      pr[i] = P((K(zs * xr[i]) - mm) + b * pv);
    }
  } else {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i) pr[i] = P((K(zs * xr[i]) - mm) + b * K(pr[i]));
  }
}

}  // namespace host

// x += alpha p (the deferred step of update_r, alpha 0 skips it: the first direction), then
// p = (z - m) + beta p with z from x0: one pass over p for both. p is stored in P (K, or float
// under SolverOptions::krylov_storage = fp32: below) and every operation is computed in K; with
// P = K the conversions are the identity.
template <class Exec, class T, class K, class P, class M>
void update_p_from(const Exec& space, const Placement& pl, const Placement& px, const View3<T, M>& x0,
                   double zscale, double m, double beta, const View3<P, M>& p, double alpha,
                   const View3<K, M>& x) {
  using C = pair_compute_t<T, K>;
  const ZFrom<T, K> zf{C(zscale)};
  const K mm = K(m), b = K(beta), a = K(alpha);
  const bool step = alpha != 0.0;
  const std::int64_t dx = px.ghost[0] - pl.ghost[0], dy = px.ghost[1] - pl.ghost[1],
                     dz = px.ghost[2] - pl.ghost[2];
  const char* const label = std::is_same_v<P, K> ? "mantissa::solvers::Krylov::direction"
                                                 : "mantissa::solvers::Krylov::direction_compressed";
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    const T* const xp = x0.data();
    P* const pp = p.data();
    K* const sp = x.data();
    const C zs = zf.zs;
    host::for_rows(
        label, space, bx.lo[2], bx.hi[2], bx.lo[1], bx.hi[1], [=] { return host::Rows<C, 1>(n); },
        [=](std::int64_t k, std::int64_t j, host::Rows<C, 1>& rows) {
          const C* xr = rows.get(0, xp + host::at(x0, k + dz, j + dy, i0 + dx), n);
          host::direction_row(xr, zs, pp + host::at(p, k, j, i0), sp + host::at(x, k, j, i0), n, mm, b, a,
                              step);
        });
    return;
  }
  for_each_cell(
      label, space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        const K pv = K(p(k, j, i));
        if (step) x(k, j, i) += a * pv;
        p(k, j, i) = P((zf(x0(k + dz, j + dy, i + dx)) - mm) + b * pv);
      });
}

// update_p_from and then apply_dot (A p and (p, Ap)) in one sweep over the planes, host
// back-ends, 3D, where every face of the box is a physical one (p's ghosts are mirrors of the
// cells inside, mirror[f] the sign of face f, and no halo exchange sits between the two): the
// rows of A p follow the direction update one plane behind, while the three planes they read
// are still in cache, so p makes one trip to memory an iteration instead of two (8 bytes a cell
// of the 50 the two passes moved; docs/performance.md, 2026-12-07). The y range is cut into
// tiles, one work item each, swept along z: at step t a tile updates its rows of plane t, mirrors
// the ghosts those rows give (the x ends, and the y and z ghost rows where the row is on a face,
// as the fill between the passes does) and computes A p on plane t - 1 for its rows whose y
// neighbours are its own. The first and last row of each tile are computed after all tiles, in
// a pass of their own. Every row gets the operations of the two passes on the same values, and
// the rows' dots are summed in row order, so p, x, A p and the dot are those of update_p_from,
// the fill and apply_dot, bit for bit (tstHostKernels). Returns (p, Ap).
// p stored in P = float (the compressed search direction, SolverOptions::krylov_storage): A p is
// computed in K from it and not stored (ap is not touched; pass an empty view), and the result is
// that of update_p_from, the fill and stencil_dot, bit for bit.
template <class Exec, class T, class K, class P, class M>
double update_p_apply(const Exec& space, const Placement& pl, const Placement& px, const View3<T, M>& x0,
                      double zscale, double m, double beta, const View3<P, M>& p, double alpha,
                      const View3<K, M>& x, const Stencil<K>& s, const View3<K, M>& ap,
                      const std::array<int, 6>& mirror) {
  constexpr bool store = std::is_same<P, K>::value;  // A p stored (fp64 p); else only (p, Ap)
  static_assert(host::is_host<Exec>(),
                "update_p_apply: host back-ends only (update_p_from, apply_dot elsewhere)");
  using C = pair_compute_t<T, K>;
  const C zs = C(zscale);
  const K mm = K(m), b = K(beta), a = K(alpha);
  const bool step = alpha != 0.0;
  const std::int64_t dx = px.ghost[0] - pl.ghost[0], dy = px.ghost[1] - pl.ghost[1],
                     dz = px.ghost[2] - pl.ghost[2];
  const Box bx = pl.owned();
  const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
  const std::int64_t y0 = bx.lo[1], y1 = bx.hi[1], z0 = bx.lo[2], z1 = bx.hi[2], ny = y1 - y0;
  const std::int64_t rows = ny * (z1 - z0);
  if (rows <= 0 || n <= 0) return 0.0;
  const std::int64_t sy = std::int64_t(p.extent(2)), sz = sy * std::int64_t(p.extent(1));
  const T* const xp = x0.data();
  P* const pp = p.data();
  K* const sp = x.data();
  K* const app = store ? ap.data() : nullptr;
  double* const rd = host::row_sums(rows);
  const bool stream = store && host::stream_apply<K>(ap);
  const P sx0 = P(mirror[0]), sx1 = P(mirror[1]), sy0 = P(mirror[2]), sy1 = P(mirror[3]), sz0 = P(mirror[4]),
          sz1 = P(mirror[5]);
  // tiles of stencil_tile_rows rows, at least one a thread
  const std::int64_t threads = std::max(1, int(space.concurrency()));
  const std::int64_t tile =
      std::max<std::int64_t>(1, std::min(host::stencil_tile_rows<P>(n), (ny + threads - 1) / threads));
  const std::int64_t tiles = (ny + tile - 1) / tile;
  // (p, Ap) of row (k, j): A p stored (fp64 p) or only computed into lrow (compressed p)
  const auto row_dot = [=](std::int64_t k, std::int64_t j, host::Rows<K, 1>& lrow) {
    const std::int64_t o = host::at(p, k, j, i0);
    if constexpr (store)
      return host::apply_row(s, pp + o, sy, sz, app + o, n, stream);
    else
      return host::stencil_dot_row(s, pp + o, sy, sz, lrow.scratch(0), n);
  };
  auto copy_row = [](const P* from, P* to, std::int64_t len, P sign) {
    for (std::int64_t i = 0; i < len; ++i) to[i] = sign * from[i];
  };
  Kokkos::parallel_for("mantissa::solvers::Krylov::direction_apply",
                       Kokkos::RangePolicy<Exec>(space, 0, tiles), [=](const std::int64_t item) {
                         host::Rows<C, 1> scratch(n);
                         host::Rows<K, 1> lrow(store ? 1 : n);  // L p's row of a compressed p
                         const std::int64_t ja = y0 + item * tile, jb = std::min(y1, ja + tile);
                         for (std::int64_t t = z0; t <= z1; ++t) {
                           if (t < z1)
                             for (std::int64_t j = ja; j < jb; ++j) {
                               const C* xr = scratch.get(0, xp + host::at(x0, t + dz, j + dy, i0 + dx), n);
                               P* const pr = pp + host::at(p, t, j, i0);
                               host::direction_row(xr, zs, pr, sp + host::at(x, t, j, i0), n, mm, b, a, step);
                               // the fill's mirrors of this row: x ends, then the y and z ghost rows it faces
                               pr[-1] = sx0 * pr[0];
                               pr[n] = sx1 * pr[n - 1];
                               if (j == y0) copy_row(pr, pr - sy, n, sy0);
                               if (j == y1 - 1) copy_row(pr, pr + sy, n, sy1);
                               if (t == z0) copy_row(pr, pr - sz, n, sz0);
                               if (t == z1 - 1) copy_row(pr, pr + sz, n, sz1);
                             }
                           if (t > z0)
                             for (std::int64_t j = ja + 1; j < jb - 1; ++j) {
                               rd[(t - 1 - z0) * ny + (j - y0)] = row_dot(t - 1, j, lrow);
                             }
                         }
                         if (stream) host::stream_fence();
                       });
  space.fence();
  // each tile's first and last rows, their neighbours all final now
  const std::int64_t edges = 2 * tiles;
  Kokkos::parallel_for("mantissa::solvers::Krylov::direction_apply_edges",
                       Kokkos::RangePolicy<Exec>(space, 0, edges), [=](const std::int64_t e) {
                         const std::int64_t ja = y0 + (e / 2) * tile, jb = std::min(y1, ja + tile);
                         const std::int64_t j = (e % 2 == 0) ? ja : jb - 1;
                         if (e % 2 == 1 && jb - 1 == ja) return;  // a tile of one row: done as its first
                         host::Rows<K, 1> lrow(store ? 1 : n);
                         for (std::int64_t k = z0; k < z1; ++k) {
                           rd[(k - z0) * ny + (j - y0)] = row_dot(k, j, lrow);
                         }
                         if (stream) host::stream_fence();
                       });
  space.fence();
  double dot = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) dot += rd[r];
  return dot;
}

// ---- Compressed Krylov vectors (SolverOptions::krylov_storage = fp32) ----------------------
// The search direction p is stored in P (float) while x and r stay in K (double) and every
// product, dot and update is computed in K: a P value converts to K exactly, so x += a p and
// r -= a L p stay consistent to K's rounding (the true residual b - L x follows the recurrence
// as in the fp64 CG). A p is never stored: it is recomputed from p wherever it is read (the
// (p, Ap) dot, the r update, the (z, Ap) dot of the flexible beta), which reads 4 bytes of p
// instead of 8 of a stored Ap, and saves Ap's write. (As CB-GMRES, Anzt, Aliaga et al.: the
// Krylov basis in low precision, the arithmetic in high precision.) p's ghosts must be filled.

// L p at one cell of a row of p (c: the row's first owned cell; 2D: zm = zp = c, cz = 0).
template <class K, class P>
struct StencilRow {
  const P* KOKKOS_RESTRICT c;
  const P* KOKKOS_RESTRICT ym;
  const P* KOKKOS_RESTRICT yp;
  const P* KOKKOS_RESTRICT zm;
  const P* KOKKOS_RESTRICT zp;
  K cx, cy, cz, d;
  KOKKOS_INLINE_FUNCTION K operator()(const std::int64_t i) const {
    return d * K(c[i]) -
           (cx * (K(c[i - 1]) + K(c[i + 1])) + cy * (K(ym[i]) + K(yp[i])) + cz * (K(zm[i]) + K(zp[i])));
  }
};

namespace host {
template <class K, class P, class M>
inline StencilRow<K, P> stencil_row(const Stencil<K>& s, const View3<P, M>& p, std::int64_t k, std::int64_t j,
                                    std::int64_t i0) {
  const std::int64_t sy = std::int64_t(p.extent(2)), sz = sy * std::int64_t(p.extent(1));
  const P* c = p.data() + at(p, k, j, i0);
  StencilRow<K, P> row{
      c, c - sy, c + sy, s.is3d ? c - sz : c, s.is3d ? c + sz : c, s.cx, s.cy, s.is3d ? s.cz : K(0), s.diag};
  return row;
}
}  // namespace host

template <class K, class P, class M>
KOKKOS_INLINE_FUNCTION K apply_at(const Stencil<K>& s, const View3<P, M>& p, const std::int64_t k,
                                  const std::int64_t j, const std::int64_t i) {
  return s.diag * K(p(k, j, i)) - neighbour_sum(p, s, k, j, i);
}

// (p, L p), L p computed in K from p stored in P, not written.
template <class Exec, class K, class P, class M>
double stencil_dot(const Exec& space, const Placement& pl, const Stencil<K>& s, const View3<P, M>& p) {
  double dot = 0.0;
  if constexpr (host::is_host<Exec>()) {
    // rows in tiles (three planes of a tile stay in cache), their dots summed in row order
    const Box b = pl.owned();
    const std::int64_t x0 = b.lo[0], n = b.hi[0] - b.lo[0];
    const std::int64_t sy = std::int64_t(p.extent(2)), sz = sy * std::int64_t(p.extent(1));
    const P* const pp = p.data();
    const std::int64_t y0 = b.lo[1], z0 = b.lo[2], ny = b.hi[1] - y0, rows = ny * (b.hi[2] - z0);
    double* const rd = host::row_sums(rows);
    host::for_rows_tiled(
        "mantissa::solvers::Krylov::apply_compressed", space, b, host::stencil_tile_rows<P>(n),
        [=] { return host::Rows<K, 1>(n); },
        [=](std::int64_t k, std::int64_t j, host::Rows<K, 1>& lrow) {
          rd[(k - z0) * ny + (j - y0)] =
              host::stencil_dot_row(s, pp + host::at(p, k, j, x0), sy, sz, lrow.scratch(0), n);
        });
    space.fence();
    for (std::int64_t r = 0; r < rows; ++r) dot += rd[r];
    return dot;
  }
  reduce_cells(
      "mantissa::solvers::Krylov::apply_compressed", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        acc += double(p(k, j, i)) * double(apply_at(s, p, k, j, i));
      },
      dot);
  return dot;
}

// r -= a L p (L p recomputed from p); returns the norms of the new r. With f0, x0 given (level
// 0 in fp64 or fp32, entry = true), also the multigrid's entry as update_r_entry does it.
template <class Exec, class K, class P, class T, class M>
NormMax update_r_compressed(const Exec& space, const Placement& pl, double alpha, const View3<K, M>& r,
                            const Stencil<K>& sk, const View3<P, M>& p, bool entry, const Placement& px,
                            const Stencil<compute_t<T>>& s, const View3<T, M>& f0, const View3<T, M>& x0) {
  using C = compute_t<T>;
  NormMax nm;
  const K a = K(alpha);
  const EntryAt e(pl, px);
  const std::int64_t dx = e.dx, dy = e.dy, dz = e.dz;
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    K* const rp = r.data();
    T* const fp = f0.data();
    T* const xp = x0.data();
    host::reduce_rows_tiled(
        "mantissa::solvers::Krylov::update_compressed", space, bx, host::stencil_tile_rows<P>(n),
        [] { return 0; },
        [=](std::int64_t k, std::int64_t j, int, NormMax& acc) {
          K* KOKKOS_RESTRICT rr = rp + host::at(r, k, j, i0);
          const StencilRow<K, P> ap = host::stencil_row(sk, p, k, j, i0);
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t i = 0; i < n; ++i) rr[i] = rr[i] - a * ap(i);
          host::norms_of_row(rr, n, acc);
          if (!entry) return;
          const std::int64_t ox = host::at(x0, k + dz, j + dy, i0 + dx);
          T* KOKKOS_RESTRICT fr = fp + ox;
          T* KOKKOS_RESTRICT xr = xp + ox;
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t i = 0; i < n; ++i) fr[i] = T(C(rr[i]));
          host::entry_x_row(s, fr, xr, n, k + dz, j + dy, i0 + dx, e.red(k, j, i0));
        },
        nm);
    return nm;
  }
  reduce_cells(
      "mantissa::solvers::Krylov::update_compressed", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, NormMax& acc) {
        const K t = r(k, j, i) - a * apply_at(sk, p, k, j, i);
        r(k, j, i) = t;
        acc.add(double(t));
        if (!entry) return;
        const T fv = T(C(t));
        e(s, f0, x0, k, j, i, fv);
      },
      nm);
  return nm;
}

// (z, r), (z, Ap), sum z, sum r, sum Ap with z from x0 (as precond_dots_from) and Ap
// recomputed from p.
template <class Exec, class T, class K, class P, class M>
Sums<5> precond_dots_compressed(const Exec& space, const Placement& pl, const Placement& px,
                                const View3<T, M>& x0, double zscale, const View3<K, M>& r,
                                const Stencil<K>& sk, const View3<P, M>& p) {
  using C = pair_compute_t<T, K>;
  const ZFrom<T, K> zf{C(zscale)};
  const std::int64_t dx = px.ghost[0] - pl.ghost[0], dy = px.ghost[1] - pl.ghost[1],
                     dz = px.ghost[2] - pl.ghost[2];
  Sums<5> s;
  if constexpr (host::is_host<Exec>()) {
    const Box bx = pl.owned();
    const std::int64_t i0 = bx.lo[0], n = bx.hi[0] - bx.lo[0];
    const T* const xp = x0.data();
    const K* const rp = r.data();
    host::reduce_rows(
        "mantissa::solvers::Krylov::dots_compressed", space, bx, [=] { return host::Rows<C, 2>(n); },
        [=](std::int64_t k, std::int64_t j, host::Rows<C, 2>& rows, Sums<5>& acc) {
          const C* KOKKOS_RESTRICT xr = rows.get(0, xp + host::at(x0, k + dz, j + dy, i0 + dx), n);
          const K* KOKKOS_RESTRICT rr = rp + host::at(r, k, j, i0);
          const StencilRow<K, P> ap = host::stencil_row(sk, p, k, j, i0);
          five_sums_of_row<K>(xr, zf.zs, rr, ap, n, acc);
        },
        s);
    return s;
  }
  reduce_cells(
      "mantissa::solvers::Krylov::dots_compressed", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, Sums<5>& acc) {
        const double zv = double(zf(x0(k + dz, j + dy, i + dx))), rv = double(r(k, j, i)),
                     av = double(apply_at(sk, p, k, j, i));
        acc.v[0] += zv * rv;
        acc.v[1] += zv * av;
        acc.v[2] += zv;
        acc.v[3] += rv;
        acc.v[4] += av;
      },
      s);
  return s;
}

// x += a p with p in P.
template <class Exec, class K, class P, class M>
void add_direction_compressed(const Exec& space, const Placement& pl, double alpha, const View3<K, M>& x,
                              const View3<P, M>& p) {
  const K a = K(alpha);
  for_each_cell(
      "mantissa::solvers::Krylov::step_compressed", space, pl.owned(),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        x(k, j, i) += a * K(p(k, j, i));
      });
}

}  // namespace mantissa::solvers::detail
