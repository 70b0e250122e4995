#pragma once
// The interior update on host back-ends (Serial, OpenMP, Threads): the same arithmetic as the
// point-wise form in stencil_kernels.hpp (laplacian_flat + leapfrog, same operations in the
// same order, so results are bitwise identical; tests/unit/seismic/tstHostStencil.cpp checks
// it), organised for a CPU core:
//
// - Rows of x, split in two passes (x and y terms into a row accumulator, then z terms and the
//   leapfrog update). One pass over all 4R+1 neighbour rows needs more pointers than x86-64 has
//   registers; the compiler then spills and reloads them, which cost 20-30% (measured, see
//   docs/performance.md).
// - Tiles of TJ rows in y swept along z, so the 2R+1 planes a tile needs stay in L2 between
//   consecutive z planes (the working set of a whole plane sweep does not fit in L2 at 128^3).
// - 16-bit storage is decoded to the compute type once per point and z plane, into a ring of
//   2R+1 decoded plane slabs per tile, instead of at every one of the 4R+1 reads; the
//   conversions are branch-free loops the compiler vectorises (bf16: a shift; fp16: F16C where
//   the compiler targets it, which is exact for decoding and round-to-nearest-even for encoding,
//   the rule of LowPrecisionFloat's constructor).
// - 2D with bf16 or fp16 storage and fp32 compute, on AVX2 + F16C: one fused loop per row that
//   decodes the ring's new row and q, updates and encodes, so the streams from memory are read
//   together and nothing decoded is written and read back (1.7x faster than separate decode,
//   update and encode loops at 4096^2, docs/performance.md). 3D likewise: the second pass of a
//   row (z terms and the leapfrog) decodes the row of the ring's newest plane, and q, in its
//   loop; the separate decode pass keeps only the newest plane's halos.
//
// Host only: nothing here is compiled for or called from device code.
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/core/LowPrecisionHost.hpp>
#include <seismic/detail/Launch.hpp>
#include <seismic/stencil_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__F16C__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <immintrin.h>
#define MANTISSA_SEISMIC_HOST_F16C 1
#if defined(MANTISSA_HOST_AVX2_F16C)
#define MANTISSA_SEISMIC_HOST_AVX2 1
#endif
#endif

namespace mantissa::seismic::detail::host {

// Rows of y per tile: 16 rows x (2R+1) planes x a 136-point row of doubles is 150 KB, well
// inside a 1 MiB L2; 8 and 32 were measured slower at 128^3 (docs/performance.md).
inline constexpr int tile_rows = 16;

// m[s-1] = at - s * stride and p[s-1] = at + s * stride for s = 1..R: the rows (or planes) a
// radius-R stencil reads on either side of `at` along one axis.
template <int R, class T>
inline void axis_neighbours(T* at, long stride, T* (&m)[R], T* (&p)[R]) {
  for (int s = 1; s <= R; ++s) {
    m[s - 1] = at - s * stride;
    p[s - 1] = at + s * stride;
  }
}

// ---- storage <-> compute conversion of contiguous runs ------------------------------------

template <class C, class S>
inline void decode(const S* KOKKOS_RESTRICT in, C* KOKKOS_RESTRICT out, int n) {
  if constexpr (std::is_same<S, bf16>::value) {
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) {
      const std::uint32_t u = std::uint32_t(in[i].bits()) << 16;
      float f;
      std::memcpy(&f, &u, sizeof f);
      out[i] = C(f);
    }
  } else if constexpr (std::is_same<S, fp16>::value) {
    int i = 0;
#ifdef MANTISSA_SEISMIC_HOST_F16C
    if constexpr (std::is_same<C, float>::value) {
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
    }
#endif
    for (; i < n; ++i) out[i] = C(float(in[i]));
  } else {
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) out[i] = C(in[i]);
  }
}

template <class S, class C>
inline void encode(const C* KOKKOS_RESTRICT in, S* KOKKOS_RESTRICT out, int n) {
  if constexpr (std::is_same<S, bf16>::value && std::is_same<C, float>::value) {
    // float_to_bf16_bits with the constructor's rule (Overflow::propagate): round to nearest
    // even by add-and-truncate, NaN kept quiet. Branch-free, so it vectorises.
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) {
      std::uint32_t u;
      std::memcpy(&u, &in[i], sizeof u);
      const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
      const std::uint32_t nan = (u >> 16) | 0x0040u;
      const std::uint16_t b = std::uint16_t((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
      out[i] = S::from_bits(b);
    }
  } else if constexpr (std::is_same<S, fp16>::value && std::is_same<C, float>::value) {
    int i = 0;
#ifdef MANTISSA_SEISMIC_HOST_F16C
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(
          reinterpret_cast<__m128i*>(out + i),
          _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    for (; i < n; ++i) out[i] = S(in[i]);
  } else {
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) out[i] = S(in[i]);
  }
}

#ifdef MANTISSA_SEISMIC_HOST_AVX2
// Eight values at a time, the same bits as decode and encode above (core/LowPrecisionHost.hpp).
using mantissa::host::decode8;
using mantissa::host::encode8;

// The pieces of the fused 16-bit row kernels below. Each vector operation is the scalar one
// lane by lane (no FMA: the build contracts nothing), so a vector body and its scalar remainder
// compute every point with the same operations in the same order.
namespace fused {
inline __m256 add(__m256 x, __m256 y) {
  return _mm256_add_ps(x, y);
}
inline __m256 mul(__m256 x, __m256 y) {
  return _mm256_mul_ps(x, y);
}
inline __m256 at(const float* row) {
  return _mm256_loadu_ps(row);
}
inline __m256 all(float x) {
  return _mm256_set1_ps(x);
}
// The ring's new row: decoded from storage, kept for the rows after, returned for this one.
template <class S>
inline __m256 take8(const S* src, float* dst) {
  const __m256 v = decode8(src);
  _mm256_storeu_ps(dst, v);
  return v;
}
template <class S>
inline float take1(const S* src, float* dst) {
  decode<float>(src, dst, 1);
  return *dst;
}
// The leapfrog on q in storage: q <- 2 c - q + m l (stencil_kernels.hpp's leapfrog).
template <class S>
inline void leapfrog8(__m256 c, S* q, const float* m, __m256 l) {
  encode8(add(_mm256_sub_ps(mul(all(2.0f), c), decode8(q)), mul(at(m), l)), q);
}
template <class S>
inline void leapfrog1(float c, S* q, float m, float l) {
  float old;
  decode<float>(q, &old, 1);
  const float r = leapfrog<float>(c, old, m, l);
  encode<S>(&r, q, 1);
}
}  // namespace fused

// 2D, 16-bit storage, fp32 compute: row j's update (x and y terms and the leapfrog, the same
// operations in the same order as update_row_at) fused with the decode of ring row j + R, which
// the row needs only at the same point (its farthest y neighbour above), and with q's decode and
// encode. The three streams from memory (the new p row, q and m) are then read in one loop, as
// in the fp32 sweep, and no decoded row of q is written and read back. pnew_src: row j + R's
// points [0, n) in storage; pnew_dst: the same in the ring (its x halos are decoded apart).
template <int R, class S>
inline void update_row_2d_fused(const float* c, const float* const (&ym)[R], const float* const (&yp)[R],
                                const S* KOKKOS_RESTRICT pnew_src, float* KOKKOS_RESTRICT pnew_dst,
                                S* KOKKOS_RESTRICT q, const float* KOKKOS_RESTRICT m, int n,
                                const StencilWeights<float, R>& w) {
  using namespace fused;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 pn = take8(pnew_src + i, pnew_dst + i);
    const __m256 c0 = at(c + i);
    __m256 l = mul(all(w.center), c0);
    for (int s = 1; s <= R; ++s) l = add(l, mul(all(w.d2[0][s]), add(at(c + i - s), at(c + i + s))));
    for (int s = 1; s < R; ++s) l = add(l, mul(all(w.d2[1][s]), add(at(ym[s - 1] + i), at(yp[s - 1] + i))));
    l = add(l, mul(all(w.d2[1][R]), add(at(ym[R - 1] + i), pn)));
    leapfrog8(c0, q + i, m + i, l);
  }
  for (; i < n; ++i) {  // the remainder, point by point: the same operations
    const float pn = take1(pnew_src + i, pnew_dst + i);
    float l = w.center * c[i];
    for (int s = 1; s <= R; ++s) l = l + w.d2[0][s] * (c[i - s] + c[i + s]);
    for (int s = 1; s < R; ++s) l = l + w.d2[1][s] * (ym[s - 1][i] + yp[s - 1][i]);
    l = l + w.d2[1][R] * (ym[R - 1][i] + pn);
    leapfrog1(c[i], q + i, m[i], l);
  }
}

// 3D, 16-bit storage, fp32 compute: row j's second pass (z terms and the leapfrog, the same
// operations in the same order as update_row_at's) fused with the decode of row j of plane
// k + R, which the row needs only at the same point (its farthest z neighbour above), and with
// q's decode and encode: the streams from memory (plane k + R's row, q and m) are read in one
// loop, and no decoded row of q is written and read back. acc: the row's first pass
// (xy_terms); pnew_src: row j of plane k + R, points [0, n), in storage; pnew_dst: the same in
// the ring (its x halos are decoded apart).
template <int R, class S>
inline void z_terms_3d_fused(const float* c, const float* KOKKOS_RESTRICT acc, const float* const* zm,
                             const float* const* zp, const S* KOKKOS_RESTRICT pnew_src,
                             float* KOKKOS_RESTRICT pnew_dst, S* KOKKOS_RESTRICT q,
                             const float* KOKKOS_RESTRICT m, int n, const StencilWeights<float, R>& w) {
  using namespace fused;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 pn = take8(pnew_src + i, pnew_dst + i);
    __m256 l = at(acc + i);
    for (int s = 1; s < R; ++s) l = add(l, mul(all(w.d2[2][s]), add(at(zm[s - 1] + i), at(zp[s - 1] + i))));
    l = add(l, mul(all(w.d2[2][R]), add(at(zm[R - 1] + i), pn)));
    leapfrog8(at(c + i), q + i, m + i, l);
  }
  for (; i < n; ++i) {  // the remainder, point by point: the same operations
    const float pn = take1(pnew_src + i, pnew_dst + i);
    float l = acc[i];
    for (int s = 1; s < R; ++s) l = l + w.d2[2][s] * (zm[s - 1][i] + zp[s - 1][i]);
    l = l + w.d2[2][R] * (zm[R - 1][i] + pn);
    leapfrog1(c[i], q + i, m[i], l);
  }
}
#endif

// ---- one row ----------------------------------------------------------------------------

// Row scratch of one thread: the accumulator (3D) and the row of p_old in the compute type.
template <class C>
struct RowScratch {
  std::vector<C> acc, old;
  void reserve(int n) {
    if (int(acc.size()) < n) {
      acc.resize(std::size_t(n));
      old.resize(std::size_t(n));
    }
  }
};

// 3D: acc[i] <- the centre, x and y terms of L(c)[i] for i in [0, n), the first of a row's two
// passes (update_row_at).
template <int R, class C>
inline void xy_terms(const C* c, const C* const (&ym)[R], const C* const (&yp)[R], C* KOKKOS_RESTRICT acc,
                     int n, const StencilWeights<C, R>& w) {
  const C* KOKKOS_RESTRICT cr = c;
  MANTISSA_HOST_IVDEP
  for (int i = 0; i < n; ++i) {
    C l = w.center * cr[i];
    for (int s = 1; s <= R; ++s) l = l + w.d2[0][s] * (cr[i - s] + cr[i + s]);
    for (int s = 1; s <= R; ++s) l = l + w.d2[1][s] * (ym[s - 1][i] + yp[s - 1][i]);
    acc[i] = l;
  }
}

// q[i] <- 2 c[i] - q[i] + m[i] L(c)[i] for i in [0, n): c points at the row's first point in
// compute type, its y neighbours are sy away, its z neighbours are zm[s-1] / zp[s-1]. The last
// spatial pass (x and y in 2D, z in 3D) does the leapfrog in the same loop, on q itself or, when
// the storage is not the compute type, on q's decoded row, which is then encoded: the same
// operations in the same order as a separate leapfrog loop over a stored row sum, without its
// store, reload and loop control.
// ym[s-1] / yp[s-1]: the rows s below and above c (any addresses: a ring of decoded rows too).
template <int R, int Dim, class C, class S, class M>
inline void update_row_at(const C* c, const C* const (&ym)[R], const C* const (&yp)[R], const C* const* zm,
                          const C* const* zp, S* q, const M* m, int n, const StencilWeights<C, R>& w,
                          RowScratch<C>& scratch) {
  constexpr bool same = std::is_same<S, C>::value;
  const C* KOKKOS_RESTRICT cr = c;
  const M* KOKKOS_RESTRICT mr = m;
  // The row the leapfrog reads p_old from and writes p_new to: q, or its decoded copy.
  C* KOKKOS_RESTRICT qr = nullptr;
  if constexpr (same) {
    qr = q;
  } else {
    qr = scratch.old.data();
    decode<C>(q, qr, n);
  }
  if constexpr (Dim == 3) {
    C* KOKKOS_RESTRICT acc = scratch.acc.data();
    xy_terms<R>(c, ym, yp, acc, n, w);
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) {  // z terms and the leapfrog
      C l = acc[i];
      for (int s = 1; s <= R; ++s) l = l + w.d2[2][s] * (zm[s - 1][i] + zp[s - 1][i]);
      qr[i] = leapfrog<C>(cr[i], qr[i], C(mr[i]), l);
    }
  } else {
    (void)zm;
    (void)zp;
    MANTISSA_HOST_IVDEP
    for (int i = 0; i < n; ++i) {  // centre, x terms, y terms and the leapfrog
      C l = w.center * cr[i];
      for (int s = 1; s <= R; ++s) l = l + w.d2[0][s] * (cr[i - s] + cr[i + s]);
      for (int s = 1; s <= R; ++s) l = l + w.d2[1][s] * (ym[s - 1][i] + yp[s - 1][i]);
      qr[i] = leapfrog<C>(cr[i], qr[i], C(mr[i]), l);
    }
  }
  if constexpr (!same) encode<S>(qr, q, n);
}

// The same with the y neighbours sy apart.
template <int R, int Dim, class C, class S, class M>
inline void update_row(const C* c, long sy, const C* const* zm, const C* const* zp, S* q, const M* m, int n,
                       const StencilWeights<C, R>& w, RowScratch<C>& scratch) {
  const C* ym[R];
  const C* yp[R];
  axis_neighbours<R>(c, sy, ym, yp);
  update_row_at<R, Dim>(c, ym, yp, zm, zp, q, m, n, w, scratch);
}

// ---- the box ------------------------------------------------------------------------------

// Asks for the cache lines of [p, p + n) (a hint: no fault, no value changed); `write` when the
// lines will be written.
template <class T>
inline void prefetch_lines(const T* p, long n, bool write) {
  const char* a = reinterpret_cast<const char*>(p);
  const long bytes = n * long(sizeof(T));
  if (write) {
    for (long o = 0; o < bytes; o += 64) __builtin_prefetch(a + o, 1, 3);
  } else {
    for (long o = 0; o < bytes; o += 64) __builtin_prefetch(a + o, 0, 3);
  }
}
// How far ahead the 3D sweeps ask for their rows' streams: 4 rows (the only distance measured).
inline constexpr int stream_rows_ahead = 4;

// The row stream_rows_ahead rows after row (k, j) in a sweep of the rows [j0, j1) of each plane
// along z (past j1: the next plane's first rows), as {k, j}.
inline std::pair<int, int> row_ahead(int k, int j, int j0, int j1) {
  int ja = j + stream_rows_ahead, ka = k;
  if (ja >= j1) ja -= j1 - j0, ++ka;
  return {ka, ja};
}

// The interior's streams from memory for the row at offset xa: the lines of plane k + R's row
// of p, of q and of m (perf put half of the 3D sweep's samples on those loads, waiting for
// memory). Interleaved: asked for line by line across the three streams. One stream after the
// other, the prefetches bought the fp64 and fp32 sweep little (a standalone copy of it at
// 128^3, one Zen 5 core: fp32 1.85 ns a point against 2.0 without them and 1.2-1.35
// interleaved; fp64 3.3 against 3.5 and 2.7), as if the later streams' requests were dropped;
// the 3D step with rigid walls ran faster interleaved (fp32 1.27-1.44x, fp64 1.05-1.34x). The
// 16-bit sweep (a ring of decoded rows, m twice q's bytes) was not faster so, and keeps one
// stream after the other (docs/performance.md).
template <int R, bool Interleaved, class M, class S, class P>
inline void prefetch_row_streams(const M* m, const S* q, const P* p, long xa, long sz, long nx) {
  if constexpr (Interleaved) {
    const char* const pc = reinterpret_cast<const char*>(p + xa + R * sz);
    const char* const qc = reinterpret_cast<const char*>(q + xa);
    const char* const mc = reinterpret_cast<const char*>(m + xa);
    const long pb = nx * long(sizeof(P)), qb = nx * long(sizeof(S)), mb = nx * long(sizeof(M));
    const long most = std::max(pb, std::max(qb, mb));
    for (long o = 0; o < most; o += 64) {
      if (o < pb) __builtin_prefetch(pc + o, 0, 3);
      if (o < qb) __builtin_prefetch(qc + o, 1, 3);
      if (o < mb) __builtin_prefetch(mc + o, 0, 3);
    }
  } else {
    prefetch_lines(m + xa, nx, false);
    prefetch_lines(q + xa, nx, true);
    prefetch_lines(p + xa + R * sz, nx, false);
  }
}

// Work items: tiles of tile_rows rows in y times chunks of planes in z, enough of them to keep
// every thread busy; a thread sweeps its chunk along z.
struct Tiling {
  int rows, tiles_y, chunks_z, chunk_len;
};

// rows: rows of y per tile (tile_rows, or whole bands where a tile's set-up is per tile).
inline Tiling make_tiling(const Box& box, int threads, int rows = tile_rows) {
  const int ny = box.hi[1] - box.lo[1], nz = box.hi[2] - box.lo[2];
  Tiling t{};
  t.rows = std::max(rows, 1);
  t.tiles_y = (ny + t.rows - 1) / t.rows;
  const int want = 2 * std::max(threads, 1);
  t.chunks_z = t.tiles_y >= want ? 1 : std::min(nz, (want + t.tiles_y - 1) / t.tiles_y);
  t.chunks_z = std::max(t.chunks_z, 1);
  t.chunk_len = (nz + t.chunks_z - 1) / t.chunks_z;
  return t;
}

// What interior_update does after each block of rows by default: nothing.
struct NoRows {
  void operator()(int, int, int) const {}
};

// after(k, j0, j1) is called by the thread that updated the rows [j0, j1) of plane k (at most
// tile_rows of them), right after them: work on other points of the same rows (the CPML x slabs,
// whose rows continue the interior's) while their lines are still in cache.
template <int R, int Dim, class ExecSpace, class PView, class MView, class C, class After = NoRows>
void interior_update(const ExecSpace& space, const Box& box, const PView& p, const PView& q, const MView& m,
                     const StencilWeights<C, R>& w, const After& after = {}) {
  using S = typename PView::value_type;
  using M = typename MView::value_type;
  static_assert(is_host_space<ExecSpace>(), "host::interior_update runs on host back-ends only");
  if (box.empty()) return;
  const S* const pp = p.data();
  S* const qp = q.data();
  const M* const mp = m.data();
  const long sz = long(p.stride(0)), sy = long(p.stride(1));
  const int x0 = box.lo[0], nx = box.hi[0] - box.lo[0];
  constexpr bool same = std::is_same<S, C>::value;
  // 2D with storage other than the compute type sweeps each band of rows with a ring of 2R+1
  // decoded rows, so p is decoded once per row plus 2R rows per band: bands of about a
  // (2 x threads)-th of the rows, as many work items as make_tiling wants (tiles of tile_rows
  // rows would decode 1.5 rows per row).
  const int threads = space.concurrency();
  const int ny = box.hi[1] - box.lo[1];
  const int band =
      Dim == 2 && !same ? std::max(tile_rows, (ny + 2 * threads - 1) / (2 * threads)) : tile_rows;
  const Tiling t = make_tiling(box, threads, band);
  const int tasks = t.tiles_y * t.chunks_z;
  // A plain host lambda (no KOKKOS_LAMBDA): this code is never compiled for a device.
  Kokkos::parallel_for(
      "mantissa::seismic::Solver::step::interior", Kokkos::RangePolicy<ExecSpace>(space, 0, tasks),
      [=](const int task) {
        const int tile = task % t.tiles_y, chunk = task / t.tiles_y;
        const int j0 = box.lo[1] + tile * t.rows, j1 = std::min(box.hi[1], j0 + t.rows);
        const int k0 = box.lo[2] + chunk * t.chunk_len, k1 = std::min(box.hi[2], k0 + t.chunk_len);
        if (j0 >= j1 || k0 >= k1) return;
        thread_local RowScratch<C> scratch;
        scratch.reserve(nx);
        const C* zm[R] = {};
        const C* zp[R] = {};
        if constexpr (same) {
          for (int k = k0; k < k1; ++k) {
            for (int j = j0; j < j1; ++j) {
              const long x = k * sz + j * sy + x0;
              if constexpr (Dim == 3) {  // the row's streams ahead, as the 16-bit sweep below
                const auto [ka, ja] = row_ahead(k, j, j0, j1);
                prefetch_row_streams<R, true>(mp, qp, pp, ka * sz + ja * sy + x0, sz, nx);
              }
              axis_neighbours<R>(pp + x, sz, zm, zp);
              update_row<R, Dim>(pp + x, sy, zm, zp, qp + x, mp + x, nx, w, scratch);
            }
            after(k, j0, j1);
          }
        } else if constexpr (Dim == 2) {
          // Ring of 2R+1 decoded rows (points [x0 - R, x0 + nx + R)), row j + R decoded as row j
          // is computed.
          constexpr int ring_rows = 2 * R + 1;
          const long len = nx + 2 * R;
          thread_local std::vector<C> ring;
          if (long(ring.size()) < ring_rows * len) ring.resize(std::size_t(ring_rows * len));
          auto row = [&](int jj) {
            return ring.data() + ((jj % ring_rows) + ring_rows) % ring_rows * len + R;
          };
          const C* ym[R];
          const C* yp[R];
          for (int k = k0; k < k1; ++k) {
            auto load = [&](int jj) { decode<C>(pp + k * sz + jj * sy + (x0 - R), row(jj) - R, int(len)); };
            for (int jj = j0 - R; jj < j0 + R; ++jj) load(jj);
            int done = j0;  // rows handed to after() so far
            for (int j = j0; j < j1; ++j) {
              if (j - done == tile_rows) {
                after(k, done, j);
                done = j;
              }
              for (int s = 1; s <= R; ++s) {
                ym[s - 1] = row(j - s);
                yp[s - 1] = row(j + s);
              }
              const long x = k * sz + j * sy + x0;
#ifdef MANTISSA_SEISMIC_HOST_AVX2
              if constexpr (std::is_same<C, float>::value && std::is_same<M, float>::value &&
                            (std::is_same<S, bf16>::value || std::is_same<S, fp16>::value)) {
                // Row j + R's x halos here, its points [0, nx) inside the fused sweep.
                const S* src = pp + k * sz + (j + R) * sy + x0;
                float* dst = row(j + R);
                decode<C>(src - R, dst - R, R);
                decode<C>(src + nx, dst + nx, R);
                update_row_2d_fused<R>(row(j), ym, yp, src, dst, qp + x, mp + x, nx, w);
                continue;
              }
#endif
              load(j + R);
              update_row_at<R, Dim>(row(j), ym, yp, zm, zp, qp + x, mp + x, nx, w, scratch);
            }
            after(k, done, j1);
          }
        } else {
          // Ring of decoded slabs: rows [j0 - R, j1 + R) x points [x0 - R, x0 + nx + R) of the
          // planes k - R .. k + R (one plane in 2D).
          constexpr int planes = Dim == 3 ? 2 * R + 1 : 1;
          const int rows = j1 - j0 + 2 * R;
          const long len = nx + 2 * R;
          const long slab = rows * len;
          thread_local std::vector<C> ring;
          if (long(ring.size()) < planes * slab) ring.resize(std::size_t(planes * slab));
          auto slot = [&](int kk) { return ring.data() + ((kk % planes) + planes) % planes * slab; };
          auto load = [&](int kk) {
            C* dst = slot(kk);
            for (int r = 0; r < rows; ++r)
              decode<C>(pp + kk * sz + (j0 - R + r) * sy + (x0 - R), dst + r * len, int(len));
          };
          const int dz = Dim == 3 ? R : 0;
          for (int kk = k0 - dz; kk < k0 + dz; ++kk) load(kk);
#ifdef MANTISSA_SEISMIC_HOST_AVX2
          if constexpr (Dim == 3 && std::is_same<C, float>::value && std::is_same<M, float>::value &&
                        (std::is_same<S, bf16>::value || std::is_same<S, fp16>::value)) {
            // Plane k + R's rows [j0, j1) are decoded inside their rows' second pass
            // (z_terms_3d_fused); here only its y halo rows and the x halos of the others.
            auto load_halos = [&](int kk) {
              C* dst = slot(kk);
              const S* src = pp + kk * sz + (j0 - R) * sy + (x0 - R);
              for (int r = 0; r < rows; ++r) {
                if (r < R || r >= rows - R) {
                  decode<C>(src + r * sy, dst + r * len, int(len));
                } else {
                  decode<C>(src + r * sy, dst + r * len, R);
                  decode<C>(src + r * sy + R + nx, dst + r * len + R + nx, R);
                }
              }
            };
            for (int k = k0; k < k1; ++k) {
              load_halos(k + R);
              for (int j = j0; j < j1; ++j) {
                const long off = (j - j0 + R) * len + R;
                const C* ym[R];
                const C* yp[R];
                for (int s = 1; s <= R; ++s) {
                  zm[s - 1] = slot(k - s) + off;
                  zp[s - 1] = slot(k + s) + off;
                  ym[s - 1] = slot(k) + off - s * len;
                  yp[s - 1] = slot(k) + off + s * len;
                }
                const long x = k * sz + j * sy + x0;
                // The lines of m, q and plane k + R's row of p (the row's streams from memory)
                // for the row stream_rows_ahead rows on in the tile's sweep (past j1: the next
                // plane's first rows). perf put half of this kernel's samples on those loads,
                // waiting for memory; with the hint, 10-25 % fewer (docs/performance.md). One
                // stream after the other here; the fp32 and fp64 sweep above asks line by line
                // across the streams (prefetch_row_streams).
                {
                  const auto [ka, ja] = row_ahead(k, j, j0, j1);
                  prefetch_row_streams<R, false>(mp, qp, pp, ka * sz + ja * sy + x0, sz, nx);
                }
                xy_terms<R>(slot(k) + off, ym, yp, scratch.acc.data(), nx, w);
                z_terms_3d_fused<R>(slot(k) + off, scratch.acc.data(), zm, zp, pp + x + R * sz,
                                    slot(k + R) + off, qp + x, mp + x, nx, w);
              }
              after(k, j0, j1);
            }
            return;
          }
#endif
          for (int k = k0; k < k1; ++k) {
            load(k + dz);
            for (int j = j0; j < j1; ++j) {
              const long off = (j - j0 + R) * len + R;
              for (int s = 1; s <= dz; ++s) {
                zm[s - 1] = slot(k - s) + off;
                zp[s - 1] = slot(k + s) + off;
              }
              const long x = k * sz + j * sy + x0;
              update_row<R, Dim>(slot(k) + off, len, zm, zp, qp + x, mp + x, nx, w, scratch);
            }
            after(k, j0, j1);
          }
        }
      });
}

}  // namespace mantissa::seismic::detail::host
