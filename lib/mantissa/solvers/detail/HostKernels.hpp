#pragma once
// Host back-end bodies (Serial, OpenMP, Threads) of the multigrid kernels in PoissonKernels.hpp:
// the same arithmetic per cell, in the same order (so every cell's value is bitwise the one
// the point-wise form gives, at any rank count), organised for a CPU core:
//
// - whole x rows through raw pointers marked restrict / ivdep, so the compiler vectorises the
//   row loop; the point-wise lambdas read the views through the closure, and a store through
//   one view may alias the closure's pointers, so GCC reloaded them per cell and did not
//   vectorise (measured: the fp32 residual ran at the fp64 one's cell rate, docs/performance.md);
// - 16-bit storage decoded to the compute type once per row (bf16: a shift; fp16: F16C where
//   the compiler targets it) and encoded once per row with the constructor's rounding rule; on
//   AVX2 + F16C the hot rows (residual, red-black sweep, prolongation, restriction, the entry)
//   decode, compute and encode eight cells in registers instead;
// - red-black Gauss-Seidel writes only the cells of the colour it updates (it reads the other
//   colour's), so rows may run on any thread without a race; fp64 (and fp32 / 16-bit without
//   AVX2) computes the whole row and stores the colour's cells, fp32 and 16-bit on AVX2 compute
//   the colour's cells only (rbgs_row_fast);
// - the prolongation keeps the coarse rows it has interpolated along x for the next fine rows,
//   the restriction sums eight fine rows per pass over its column buffer;
// - on a level with physical faces only, a smoothing step's colour passes run as one sweep over
//   the planes, each pass one plane behind the one before (rbgs_passes).
//
// Work is split into a few chunks of rows per thread; each chunk owns its row scratch.
// Host only: nothing here is compiled for or called from device code.
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/core/LowPrecisionHost.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__F16C__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <immintrin.h>
#define MANTISSA_SOLVERS_HOST_F16C 1
#endif

#if defined(__clang__)
#define MANTISSA_SOLVERS_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__INTEL_COMPILER)
#define MANTISSA_SOLVERS_IVDEP _Pragma("GCC ivdep")
#else
#define MANTISSA_SOLVERS_IVDEP
#endif

namespace mantissa::solvers::detail::host {

template <class Exec>
constexpr bool is_host() {
  return std::is_same<typename Exec::memory_space, Kokkos::HostSpace>::value;
}

// ---- storage <-> compute conversion of runs ------------------------------------------------

// out[m] = C(in[m * step]), m < n.
template <class C, class S>
inline void decode(const S* KOKKOS_RESTRICT in, C* KOKKOS_RESTRICT out, std::int64_t n,
                   std::int64_t step = 1) {
  if constexpr (std::is_same<S, bf16>::value) {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t m = 0; m < n; ++m) {
      const std::uint32_t u = std::uint32_t(in[m * step].bits()) << 16;
      float f;
      std::memcpy(&f, &u, sizeof f);
      out[m] = C(f);
    }
  } else if constexpr (std::is_same<S, fp16>::value) {
    std::int64_t m = 0;
#ifdef MANTISSA_SOLVERS_HOST_F16C
    if constexpr (std::is_same<C, float>::value) {
      if (step == 1)
        for (; m + 8 <= n; m += 8)
          _mm256_storeu_ps(out + m,
                           _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + m))));
    }
#endif
    for (; m < n; ++m) out[m] = C(float(in[m * step]));
  } else {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t m = 0; m < n; ++m) out[m] = C(in[m * step]);
  }
}

// out[m * step] = S(in[m]), m < n, with the rounding of S's constructor from C.
template <class S, class C>
inline void encode(const C* KOKKOS_RESTRICT in, S* KOKKOS_RESTRICT out, std::int64_t n,
                   std::int64_t step = 1) {
  if constexpr (std::is_same<S, bf16>::value && std::is_same<C, float>::value) {
    // float_to_bf16_bits, Overflow::propagate (bf16's rule): round to nearest even by
    // add-and-truncate, NaN kept quiet. Branch-free, so it vectorises.
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t m = 0; m < n; ++m) {
      std::uint32_t u;
      std::memcpy(&u, &in[m], sizeof u);
      const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
      const std::uint32_t nan = (u >> 16) | 0x0040u;
      out[m * step] = S::from_bits(std::uint16_t((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded));
    }
  } else if constexpr (std::is_same<S, fp16>::value && std::is_same<C, float>::value) {
    std::int64_t m = 0;
#ifdef MANTISSA_SOLVERS_HOST_F16C
    if (step == 1)
      for (; m + 8 <= n; m += 8)
        _mm_storeu_si128(
            reinterpret_cast<__m128i*>(out + m),
            _mm256_cvtps_ph(_mm256_loadu_ps(in + m), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    for (; m < n; ++m) out[m * step] = S(in[m]);
  } else {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t m = 0; m < n; ++m) out[m * step] = S(in[m]);
  }
}

// A row of storage type S seen in compute type C: the storage itself when they agree, else a
// decoded copy in the slot's scratch.
template <class C, int Slots>
struct Rows {
  std::vector<C> buf[Slots];
  explicit Rows(std::int64_t n) {
    for (auto& b : buf) b.resize(std::size_t(std::max<std::int64_t>(n, 1)));
  }
  template <class S>
  const C* get(int slot, const S* p, std::int64_t n, std::int64_t step = 1) {
    if constexpr (std::is_same<S, C>::value) {
      if (step == 1) return p;
    }
    decode<C>(p, buf[slot].data(), n, step);
    return buf[slot].data();
  }
  C* scratch(int slot) { return buf[slot].data(); }
};

// Runs body(k, j, scratch) for rows (k, j), k in [z0, z1), j in [y0, y1), in a few chunks per
// thread; make() builds a chunk's scratch.
template <class Exec, class Make, class Body>
void for_rows(const char* label, const Exec& space, std::int64_t z0, std::int64_t z1, std::int64_t y0,
              std::int64_t y1, const Make& make, const Body& body) {
  const std::int64_t ny = y1 - y0, rows = (z1 - z0) * ny;
  if (rows <= 0) return;
  const std::int64_t chunks = std::min<std::int64_t>(rows, 4 * std::max(1, int(space.concurrency())));
  const std::int64_t per = (rows + chunks - 1) / chunks;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(space, 0, chunks), [=](const std::int64_t c) {
    auto scratch = make();
    const std::int64_t end = std::min(rows, (c + 1) * per);
    for (std::int64_t row = c * per; row < end; ++row) body(z0 + row / ny, y0 + row % ny, scratch);
  });
}

// Position of (k, j, i) in a LayoutRight view.
template <class V>
inline std::int64_t at(const V& v, std::int64_t k, std::int64_t j, std::int64_t i) {
  return (k * std::int64_t(v.extent(1)) + j) * std::int64_t(v.extent(2)) + i;
}

// The stencil rows' streams from memory, asked for rows_ahead rows ahead of the row being
// computed: the newest plane's row of x, and f (and the output where it is another array). A
// row of 256 doubles is 32 lines, and the hardware prefetchers restarted on each row left the
// loads waiting for memory (the seismic sweeps gained the same way, docs/performance.md).
// Hints only: the values are untouched. Rows past the end of the array are not asked for.
inline constexpr std::int64_t rows_ahead = 4;
template <class T>
inline void prefetch_row(const T* base, std::size_t span, std::int64_t off, std::int64_t n, bool write) {
  if (off + n > std::int64_t(span)) return;
  const char* a = reinterpret_cast<const char*>(base + off);
  const std::int64_t bytes = n * std::int64_t(sizeof(T));
  if (write) {
    for (std::int64_t q = 0; q < bytes; q += 64) __builtin_prefetch(a + q, 1, 3);
  } else {
    for (std::int64_t q = 0; q < bytes; q += 64) __builtin_prefetch(a + q, 0, 3);
  }
}

#ifdef MANTISSA_HOST_AVX2_F16C
// 16-bit storage with fp32 compute on AVX2 + F16C: the residual's and the red-black sweep's row
// loops with the rows decoded in registers (LowPrecisionHost.hpp) and the results encoded there,
// instead of six rows decoded into scratch, a loop over the scratch and an encode loop; the
// sweep computes only its colour's cells. The 16-bit multigrid was slower than the fp32 one
// before (docs/performance.md, 2026-12-05). The operations per cell are those of the scratch
// loops, in the same order, so the bits are the same (tstHostKernels).
template <class T>
constexpr bool fused16 = std::is_same<T, bf16>::value || std::is_same<T, fp16>::value;

// f - d x_c + ((cx (x_l + x_r) + cy (y_m + y_p)) + cz (z_m + z_p)), or + 0 in 2D, for eight
// cells: xc and xl decoded (the cells i .. i + 7 and i - 1 .. i + 6 of the row), x the row at
// cell i (its ghosts at -1 and n filled), its y and z neighbour rows and f.
template <bool Is3d, class T>
inline __m256 residual8(__m256 xc, __m256 xl, const T* x, const T* ym, const T* yp, const T* zm, const T* zp,
                        const T* f, __m256 d, __m256 cx, __m256 cy, __m256 cz) {
  using mantissa::host::decode8;
  __m256 l = _mm256_add_ps(_mm256_mul_ps(cx, _mm256_add_ps(xl, decode8(x + 1))),
                           _mm256_mul_ps(cy, _mm256_add_ps(decode8(ym), decode8(yp))));
  if constexpr (Is3d)
    l = _mm256_add_ps(l, _mm256_mul_ps(cz, _mm256_add_ps(decode8(zm), decode8(zp))));
  else
    l = _mm256_add_ps(l, _mm256_setzero_ps());
  (void)zm;
  (void)zp;
  (void)cz;
  return _mm256_add_ps(_mm256_sub_ps(decode8(f), _mm256_mul_ps(d, xc)), l);
}

// The same for one cell, from the stored values.
template <class T>
inline float residual1(const T* x, const T* ym, const T* yp, const T* zm, const T* zp, const T* f, float d,
                       float cx, float cy, float cz, bool is3d) {
  const float z = is3d ? cz * (float(*zm) + float(*zp)) : 0.0f;
  return float(*f) - d * float(*x) + (cx * (float(x[-1]) + float(x[1])) + cy * (float(*ym) + float(*yp)) + z);
}

// r = f - L x along a row of n cells.
template <bool Is3d, class T>
inline void residual_row16(const T* x, const T* ym, const T* yp, const T* zm, const T* zp, const T* f, T* r,
                           std::int64_t n, float d, float cx, float cy, float cz) {
  const __m256 vd = _mm256_set1_ps(d), vx = _mm256_set1_ps(cx), vy = _mm256_set1_ps(cy),
               vz = _mm256_set1_ps(cz);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xc = mantissa::host::decode8(x + i), xl = mantissa::host::decode8(x + i - 1);
    mantissa::host::encode8(
        residual8<Is3d>(xc, xl, x + i, ym + i, yp + i, zm + i, zp + i, f + i, vd, vx, vy, vz), r + i);
  }
  for (; i < n; ++i) r[i] = T(residual1(x + i, ym + i, yp + i, zm + i, zp + i, f + i, d, cx, cy, cz, Is3d));
}

// Eight 16-bit values decoded: the low (High = false) or the high halves of eight 32-bit words.
template <bool High, class T>
inline __m256 decode_halves8(__m256i u) {
  if constexpr (std::is_same<T, bf16>::value) {
    return _mm256_castsi256_ps(High ? _mm256_and_si256(u, _mm256_set1_epi32(int(0xFFFF0000u)))
                                    : _mm256_slli_epi32(u, 16));
  } else {
    // the halves into each 128-bit half's low 8 bytes, the two halves' low quadwords together
    const __m256i pick =
        High ? _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1)
             : _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    return _mm256_cvtph_ps(
        _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_shuffle_epi8(u, pick), 0x08)));
  }
}

// The 16 values from p as eight 32-bit words.
template <class T>
inline __m256i words8(const T* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// One colour of red-black Gauss-Seidel along a row of n cells: x_i + r_i inv for the cells
// e0, e0 + 2, ... (e0: 0 or 1), every other cell left as it is, with T = bf16, fp16 or float
// storage and fp32 compute. Only the colour's cells are computed, eight at a time from the
// sixteen cells from e0 + 2m on (computing the whole row and storing every other cell, as the
// scratch loops do, doubles the arithmetic, which is what 16-bit and fp32 storage are short
// of: that cost the fp32 sweep 10 % at 256^3, docs/performance.md, 2026-12-05). Cells on an x
// face (face_lo: cell 0, face_hi: cell n - 1) take their own inverse diagonal, inv_lo /
// inv_hi; their updates are computed before any cell is stored, from the values the sweep
// started with. The operations per cell are those of the scratch loops, in the same order
// (tstHostKernels).
//
// How the sixteen cells are split into the colour's eight (xc) and their right neighbours (xr):
// - bf16: as eight 32-bit words, the colour's cells are the low halves and their right
//   neighbours the high halves, each decoded by one shift or mask; xc and xr in cell order.
// - fp16 and float: the cells i .. i + 7 (A) and i + 8 .. i + 15 (B) as floats, then shufps:
//   E = [0 2 8 10 | 4 6 12 14] (0x88) and O = [1 3 9 11 | 5 7 13 15] (0xDD), cells counted from
//   i. Every row is split the same way, so the lanes line up. For fp16 this is two F16C
//   conversions of eight contiguous halves and one in-lane shuffle, against a byte shuffle and
//   a lane-crossing permute before each conversion of the low halves (0.57 against 0.75 ns a
//   row on Zen 3).
// The left neighbours come from the registers of the block before (the values the sweep
// started with, as in the scratch loops: a colour cell's neighbours are of the other colour and
// never stored). Loaded again from the row, they would overlap the stores just made, and such
// a load waits for them to retire.
template <bool Is3d, class T>
inline void rbgs_row_fast(T* x, const T* ym, const T* yp, const T* zm, const T* zp, const T* f,
                          std::int64_t n, std::int64_t e0, float d, float cx, float cy, float cz, float inv,
                          bool face_lo, float inv_lo, bool face_hi, float inv_hi) {
  auto update = [&](std::int64_t i, float iv) {
    return T(float(x[i]) + residual1(x + i, ym + i, yp + i, zm + i, zp + i, f + i, d, cx, cy, cz, Is3d) * iv);
  };
  const bool lo = face_lo && e0 == 0, hi = face_hi && (n - 1 - e0) % 2 == 0 && (n > 1 || !lo);
  const T at_lo = lo ? update(0, inv_lo) : T(), at_hi = hi ? update(n - 1, inv_hi) : T();
  const __m256 vd = _mm256_set1_ps(d), vx = _mm256_set1_ps(cx), vy = _mm256_set1_ps(cy),
               vz = _mm256_set1_ps(cz), vi = _mm256_set1_ps(inv);
  constexpr bool words = std::is_same<T, bf16>::value;  // split as 32-bit words, in cell order
  // The sixteen cells from row + i as floats, A and B (fp16, float).
  const auto floats = [](const T* row, __m256& a, __m256& b) {
    if constexpr (std::is_same<T, float>::value) {
      a = _mm256_loadu_ps(row);
      b = _mm256_loadu_ps(row + 8);
    } else {
      a = mantissa::host::decode8(row);
      b = mantissa::host::decode8(row + 8);
    }
  };
  // The colour's eight cells of a neighbour row (or f) at row + i.
  const auto at = [&](const T* row) {
    if constexpr (words) {
      return decode_halves8<false, T>(words8(row));
    } else {
      __m256 a, b;
      floats(row, a, b);
      return _mm256_shuffle_ps(a, b, 0x88);
    }
  };
  // words: lane 7 is the left neighbour of the block's first cell; else lane 0 (O's lane 7
  // moved to lane 0 by `left`)
  const __m256i left = _mm256_setr_epi32(7, 0, 5, 2, 1, 4, 3, 6);
  std::int64_t m = 0;  // the block's first cell: e0 + 2 m
#ifdef __AVX512F__
  if constexpr (std::is_same<T, float>::value) {
    // AVX-512, float rows: 32 cells a block, the colour's 16 in cell order; the 256-bit loop
    // below finishes the row. The 256-bit block spends its shuffle port on the colour splits
    // (five per eight cells); here one two-source permute splits sixteen, and the neighbour rows
    // on either side are added before the split, which picks the same lanes out of the same
    // sums. Same operations per cell in the same order. fp32 colour pair at 256^3 on a Xeon:
    // 32-34 -> 26 ms (docs/performance.md, 2026-12-05). The same for fp16 (one F16C conversion
    // per 16 cells) was slower than the 256-bit loop there (27 against 25-27 ms) and is not used.
    // Blocks start at cells 0, 32, 64, .. whatever the colour, so with rows that start on a
    // cache line (Field's align_bytes) every load and store is on a line of its own: the
    // colour's cells are the even lanes (e0 = 0) or the odd ones (e0 = 1). Blocks starting at
    // cell e0 put every load and store of half the rows across two lines, and those rows ran
    // 13 % slower (docs/performance.md, 2026-12-07).
    const __m512 wd = _mm512_set1_ps(d), wx = _mm512_set1_ps(cx), wy = _mm512_set1_ps(cy),
                 wz = _mm512_set1_ps(cz), wi = _mm512_set1_ps(inv);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i mine = e0 == 0 ? even : odd, other = e0 == 0 ? odd : even;
    // e0 = 0, the left neighbours: [cell -1 (the block before's last odd cell), 1, 3, .., 29]
    const __m512i left16 = _mm512_setr_epi32(31, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    // e0 = 1, the right neighbours: [2, 4, .., 30, cell 32 (the next block's first)]
    const __m512i right16 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const __m512i to_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i to_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    // the colour's cells of row1 + row2 (each cell's sum as the 256-bit loop adds them)
    const auto colour_sum = [&](const T* row1, const T* row2) {
      return _mm512_permutex2var_ps(_mm512_add_ps(_mm512_loadu_ps(row1), _mm512_loadu_ps(row2)), mine,
                                    _mm512_add_ps(_mm512_loadu_ps(row1 + 16), _mm512_loadu_ps(row2 + 16)));
    };
    __m512 prev16 = _mm512_set1_ps(float(x[-1]));
    // cells i .. i + 31 and, for e0 = 1, cell i + 32 (n: the ghost); the colour's first is e0 + 2m
    for (; e0 + 2 * m + 31 <= n; m += 16) {
      const std::int64_t i = 2 * m;
      const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
      const __m512 xc = _mm512_permutex2var_ps(a, mine, b), xo = _mm512_permutex2var_ps(a, other, b);
      __m512 xl, xr;
      if (e0 == 0) {
        xr = xo;
        xl = _mm512_permutex2var_ps(xo, left16, prev16);
        prev16 = xo;
      } else {
        xl = xo;
        xr = _mm512_permutex2var_ps(xo, right16, _mm512_set1_ps(float(x[i + 32])));
      }
      __m512 l = _mm512_add_ps(_mm512_mul_ps(wx, _mm512_add_ps(xl, xr)),
                               _mm512_mul_ps(wy, colour_sum(ym + i, yp + i)));
      if constexpr (Is3d)
        l = _mm512_add_ps(l, _mm512_mul_ps(wz, colour_sum(zm + i, zp + i)));
      else
        l = _mm512_add_ps(l, _mm512_setzero_ps());
      const __m512 fc = _mm512_permutex2var_ps(_mm512_loadu_ps(f + i), mine, _mm512_loadu_ps(f + i + 16));
      const __m512 r = _mm512_add_ps(_mm512_sub_ps(fc, _mm512_mul_ps(wd, xc)), l);
      const __m512 xn = _mm512_add_ps(xc, _mm512_mul_ps(r, wi));
      // back in cell order with the other colour's cells as they were read
      const __m512 ev = e0 == 0 ? xn : xo, od = e0 == 0 ? xo : xn;
      _mm512_storeu_ps(x + i, _mm512_permutex2var_ps(ev, to_lo, od));
      _mm512_storeu_ps(x + i + 16, _mm512_permutex2var_ps(ev, to_hi, od));
    }
  }
#endif
  __m256 prev = _mm256_set1_ps(float(x[e0 + 2 * m - 1]));
  for (; e0 + 2 * m + 15 <= n; m += 8) {  // cells e0 + 2m .. e0 + 2m + 15 (n: the ghost)
    const std::int64_t i = e0 + 2 * m;
    __m256 xc, xr, xl;
    if constexpr (words) {
      const __m256i u = words8(x + i);
      xc = decode_halves8<false, T>(u);
      xr = decode_halves8<true, T>(u);
      // [prev7, xr0 .. xr6]: the upper half of prev joined to the lower half of xr, then
      // shifted by one lane within each 128-bit half
      const __m256 mid = _mm256_permute2f128_ps(prev, xr, 0x21);
      xl = _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(xr), _mm256_castps_si256(mid), 12));
      prev = xr;
    } else {
      __m256 a, b;
      floats(x + i, a, b);
      xc = _mm256_shuffle_ps(a, b, 0x88);
      xr = _mm256_shuffle_ps(a, b, 0xDD);
      // [-1 1 7 9 | 3 5 11 13]: O permuted, cell -1 from the block before
      const __m256 moved = _mm256_permutevar8x32_ps(xr, left);
      xl = _mm256_blend_ps(moved, prev, 0x01);
      prev = moved;
    }
    __m256 l = _mm256_add_ps(_mm256_mul_ps(vx, _mm256_add_ps(xl, xr)),
                             _mm256_mul_ps(vy, _mm256_add_ps(at(ym + i), at(yp + i))));
    if constexpr (Is3d)
      l = _mm256_add_ps(l, _mm256_mul_ps(vz, _mm256_add_ps(at(zm + i), at(zp + i))));
    else
      l = _mm256_add_ps(l, _mm256_setzero_ps());
    const __m256 r = _mm256_add_ps(_mm256_sub_ps(at(f + i), _mm256_mul_ps(vd, xc)), l);
    const __m256 xn = _mm256_add_ps(xc, _mm256_mul_ps(r, vi));
    // The sixteen cells back in one 32-byte store (or two for float), the colour's new, the
    // other colour's with the bits they were read with (eight 16-bit stores cost the sweep
    // 20 % at 256^3). No thread writes the other colour in this pass, so a thread reading
    // those cells meanwhile (for a neighbouring row) sees the same bits either way.
    if constexpr (std::is_same<T, float>::value) {
      // unpcklps / unpckhps (E', O) are A and B again
      _mm256_storeu_ps(x + i, _mm256_unpacklo_ps(xn, xr));
      _mm256_storeu_ps(x + i + 8, _mm256_unpackhi_ps(xn, xr));
    } else {
      const __m256i u = words8(x + i);
      const __m256i keep = _mm256_and_si256(u, _mm256_set1_epi32(int(0xFFFF0000u)));
      __m256i low;
      if constexpr (words) {
        low = _mm256_cvtepu16_epi32(mantissa::host::encode8_bits<T>(xn));
      } else {
        // xn encoded is [0 2 8 10 4 6 12 14] (16-bit lanes); each cell into the low half of
        // its word: cells 0 2 4 6 (lanes 0 1 4 5) in the lower 128 bits, 8 .. 14 in the upper
        const __m128i h = mantissa::host::encode8_bits<T>(xn);
        const __m256i hh = _mm256_inserti128_si256(_mm256_castsi128_si256(h), h, 1);
        const __m256i to_words =
            _mm256_setr_epi8(0, 1, -1, -1, 2, 3, -1, -1, 8, 9, -1, -1, 10, 11, -1, -1,  //
                             4, 5, -1, -1, 6, 7, -1, -1, 12, 13, -1, -1, 14, 15, -1, -1);
        low = _mm256_shuffle_epi8(hh, to_words);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), _mm256_or_si256(keep, low));
    }
  }
  for (std::int64_t i = e0 + 2 * m; i < n; i += 2) x[i] = update(i, inv);
  if (lo) x[0] = at_lo;
  if (hi) x[n - 1] = at_hi;
}
#endif

// The rows (k, j) of b in tiles of `tile` rows along y, each tile swept along z (for_rows_tiled
// runs body(k, j) over them, reduce_rows_tiled reduces). A 7-point stencil reads three planes of
// its input: at 256^3 in fp64 three whole planes (1.5 MiB) do not stay in a 1 MiB L2, so each
// plane came from beyond L2 three times, where three planes of a tile stay (stencil_tile_rows).
// Work items are tiles x segments of z, enough of them for every thread.
struct RowTiles {
  Box b;
  std::int64_t tile = 1, tiles = 0, per = 1, items = 0;  // items: tiles x segments of z
  RowTiles(const Box& box, std::int64_t rows, int threads) : b(box) {
    const std::int64_t ny = b.hi[1] - b.lo[1], nz = b.hi[2] - b.lo[2];
    if (ny <= 0 || nz <= 0 || b.hi[0] <= b.lo[0]) return;
    tile = std::max<std::int64_t>(1, std::min(rows, ny));
    tiles = (ny + tile - 1) / tile;
    const std::int64_t want = 4 * std::max(1, threads);
    const std::int64_t segments = std::min(nz, std::max<std::int64_t>(1, (want + tiles - 1) / tiles));
    per = (nz + segments - 1) / segments;
    items = tiles * segments;
  }
  // body(k, j) for the rows of work item `item`, z outer
  template <class Body>
  void rows_of(std::int64_t item, const Body& body) const {
    const std::int64_t t = item % tiles, sg = item / tiles;
    const std::int64_t j0 = b.lo[1] + t * tile, j1 = std::min(b.hi[1], j0 + tile);
    const std::int64_t k0 = b.lo[2] + sg * per, k1 = std::min(b.hi[2], k0 + per);
    for (std::int64_t k = k0; k < k1; ++k)
      for (std::int64_t j = j0; j < j1; ++j) body(k, j);
  }
};

template <class Exec, class Make, class Body>
void for_rows_tiled(const char* label, const Exec& space, const Box& b, std::int64_t tile, const Make& make,
                    const Body& body) {
  const RowTiles rt(b, tile, int(space.concurrency()));
  if (rt.items == 0) return;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(space, 0, rt.items), [=](const std::int64_t item) {
    auto scratch = make();
    rt.rows_of(item, [&](std::int64_t k, std::int64_t j) { body(k, j, scratch); });
  });
}

// The same without scratch: body(k, j).
template <class Exec, class Body>
void for_rows_tiled(const char* label, const Exec& space, const Box& b, std::int64_t tile, const Body& body) {
  struct None {};
  for_rows_tiled(
      label, space, b, tile, [] { return None{}; },
      [=](std::int64_t k, std::int64_t j, None&) { body(k, j); });
}

// Rows of a tile for a stencil over rows of n values of type T: three planes of the tile in
// about 256 KiB, a quarter of the smallest L2 in sight (Zen 3-5: 512 KiB-1 MiB a core); 42 rows
// for a 256-row of doubles. 32 and 42 rows ran alike, 16 and 8 slower (docs/performance.md).
template <class T>
inline std::int64_t stencil_tile_rows(std::int64_t n) {
  return std::max<std::int64_t>(
      4, std::int64_t(256 * 1024) / (3 * std::max<std::int64_t>(n, 1) * std::int64_t(sizeof(T))));
}

// ---- kernels -----------------------------------------------------------------------------

// The inverse diagonal of row (k, j) (storage indices) away from the x faces, as
// Stencil::diag_at computes it; the x-face cells take Stencil::inv_diag_at.
template <class C, class S>
inline C row_inv_diag(const S& s, std::int64_t k, std::int64_t j) {
  const std::int64_t g1 = j + s.shift[1], g2 = k + s.shift[2];
  C dr = s.diag;
  dr -= C(0) + C(0);
  dr -= (g1 == 0 ? s.lo[1] : C(0)) + (g1 == s.last[1] ? s.hi[1] : C(0));
  if (s.is3d) dr -= (g2 == 0 ? s.lo[2] : C(0)) + (g2 == s.last[2] ? s.hi[2] : C(0));
  return dr == s.diag ? s.inv_diag : C(1) / dr;
}

// The x ghosts of row xr[0..n) on the physical faces (see Stencil::mlo): T(sign * C(x)), the
// value mirror_face writes.
template <class T, class S>
inline void mirror_row(const S& s, T* xr, std::int64_t x0, std::int64_t n) {
  using C = compute_t<T>;
  if (s.mlo != C(0) && x0 + s.shift[0] == 0) xr[-1] = T(s.mlo * C(xr[0]));
  if (s.mhi != C(0) && x0 + n - 1 + s.shift[0] == s.last[0]) xr[n] = T(s.mhi * C(xr[n - 1]));
}

// dst[i] = T(s * C(src[i])) for i in [0, n): a ghost row mirrored from a row inside, in storage
// (w: scratch for n values, used when the storage is not the compute type).
template <class T, class C>
inline void scaled_row(const T* src, T* dst, std::int64_t n, C s, C* KOKKOS_RESTRICT w) {
  if constexpr (std::is_same<T, C>::value) {
    (void)w;
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i) dst[i] = s * src[i];
  } else {
    decode<C>(src, w, n);
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i) w[i] = s * w[i];
    encode<T>(w, dst, n);
  }
}

// The ghost rows of a y (axis 1) or z (axis 2) face, box b: row (k, j) = T(s * C(row mirrored
// across the face)), whole x rows (see detail::mirror_face).
template <class Exec, class T, class M, class C>
void mirror_rows(const Exec& space, const Box& b, const View3<T, M>& v, int axis, std::int64_t pivot, C s) {
  const std::int64_t n = b.hi[0] - b.lo[0];
  T* const vp = v.data();
  for_rows(
      "mantissa::solvers::Multigrid::boundary", space, b.lo[2], b.hi[2], b.lo[1], b.hi[1],
      [=] { return Rows<C, 1>(n); },
      [=](std::int64_t k, std::int64_t j, Rows<C, 1>& rows) {
        const T* const src = vp + at(v, axis == 2 ? pivot - k : k, axis == 1 ? pivot - j : j, b.lo[0]);
        scaled_row(src, vp + at(v, k, j, b.lo[0]), n, s, rows.scratch(0));
      });
}

// r = f - L x over the owned box (see detail::residual).
template <class Exec, class T, class M, class S>
void residual(const Exec& space, const Box& b, const S& s, const View3<T, M>& x, const View3<T, M>& f,
              const View3<T, M>& r) {
  using C = compute_t<T>;
  const std::int64_t x0 = b.lo[0], n = b.hi[0] - b.lo[0];
  const std::int64_t sy = std::int64_t(x.extent(2)), sz = sy * std::int64_t(x.extent(1));
  T* const xp = x.data();
  const T* const fp = f.data();
  T* const rp = r.data();
  // fp64 3D: tiles of rows swept along z, so three planes of a tile stay in L2 (with rows
  // starting on a cache line the fp64 residual went from 52-56 to 62-73 % of the triad at 256^3;
  // docs/performance.md, 2026-12-07); otherwise plane order, the next rows' streams asked for
  // ahead. The same row body either way, so the same bits.
  const bool tiled = std::is_same<T, double>::value && s.is3d;
  const auto make = [=] { return Rows<C, 8>(n + 2); };
  const auto row = [=](std::int64_t k, std::int64_t j, Rows<C, 8>& rows) {
    const std::int64_t o = at(x, k, j, x0);
    mirror_row(s, xp + o, x0, n);
    if (!tiled) {
      const std::int64_t oa = o + rows_ahead * sy;
      prefetch_row(xp, x.span(), oa + (s.is3d ? sz : 0), n, false);
      prefetch_row(fp, f.span(), oa, n, false);
      prefetch_row(rp, r.span(), oa, n, true);
    }
#ifdef MANTISSA_HOST_AVX2_F16C
    if constexpr (fused16<T> && std::is_same<C, float>::value) {
      const T* const c = xp + o;
      if (s.is3d)
        residual_row16<true>(c, c - sy, c + sy, c - sz, c + sz, fp + o, rp + o, n, s.diag, s.cx, s.cy, s.cz);
      else
        residual_row16<false>(c, c - sy, c + sy, c, c, fp + o, rp + o, n, s.diag, s.cx, s.cy, s.cz);
      return;
    }
#endif
    const C* KOKKOS_RESTRICT xr = rows.get(0, xp + o - 1, n + 2) + 1;
    const C* KOKKOS_RESTRICT ym = rows.get(1, xp + o - sy, n);
    const C* KOKKOS_RESTRICT yp = rows.get(2, xp + o + sy, n);
    const C* KOKKOS_RESTRICT fr = rows.get(3, fp + o, n);
    C* KOKKOS_RESTRICT out = std::is_same<T, C>::value ? reinterpret_cast<C*>(rp + o) : rows.scratch(4);
    const C cx = s.cx, cy = s.cy, cz = s.cz, d = s.diag;
    if (s.is3d) {
      const C* KOKKOS_RESTRICT zm = rows.get(5, xp + o - sz, n);
      const C* KOKKOS_RESTRICT zp = rows.get(6, xp + o + sz, n);
      MANTISSA_SOLVERS_IVDEP
      for (std::int64_t i = 0; i < n; ++i)
        out[i] =
            fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + cz * (zm[i] + zp[i]));
    } else {
      MANTISSA_SOLVERS_IVDEP
      for (std::int64_t i = 0; i < n; ++i)
        out[i] = fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + C(0));
    }
    if constexpr (!std::is_same<T, C>::value) encode<T>(out, rp + o, n);
  };
  if (tiled)
    for_rows_tiled("mantissa::solvers::Multigrid::residual", space, b, stencil_tile_rows<T>(n), make, row);
  else
    for_rows("mantissa::solvers::Multigrid::residual", space, b.lo[2], b.hi[2], b.lo[1], b.hi[1], make, row);
}

// One colour of red-black Gauss-Seidel along row (k, j) (see detail::rbgs). The update of every
// cell of a row is computed contiguously into scratch and only the colour's cells are stored:
// twice the arithmetic of the colour alone, but no strided copies of seven rows in and one out,
// which were most of a pass's instructions (docs/performance.md, 2026-12-03). 16-bit rows are
// decoded whole. Only the colour's cells are written (or, on AVX2 with 16-bit storage,
// rewritten with the bits they had), so rows may still run on any thread.
template <class T, class M, class S>
inline void rbgs_row(const Box& b, std::int64_t shift, const S& s, const View3<T, M>& x, const T* fp,
                     int colour, std::int64_t k, std::int64_t j, Rows<compute_t<T>, 7>& rows,
                     bool ahead = true) {
  using C = compute_t<T>;
  const std::int64_t x0 = b.lo[0], x1 = b.hi[0], n = x1 - x0;
  const std::int64_t sy = std::int64_t(x.extent(2)), sz = sy * std::int64_t(x.extent(1));
  T* const xp = x.data();
  mirror_row(s, xp + at(x, k, j, x0), x0, n);
  const std::int64_t par = ((k + j + x0 + shift) % 2 + 2) % 2;
  const std::int64_t start = x0 + ((colour + 2 - par) % 2);
  if (start >= x1) return;
  const C inv = row_inv_diag<C>(s, k, j);
  const C cx = s.cx, cy = s.cy, cz = s.cz, d = s.diag;
  const bool is3d = s.is3d;
  const std::int64_t o = at(x, k, j, x0);
  if (ahead) {
    prefetch_row(xp, x.span(), o + rows_ahead * sy + (is3d ? sz : 0), n, false);
    prefetch_row(fp, x.span(), o + rows_ahead * sy, n, false);  // f: x's shape
  }
#ifdef MANTISSA_HOST_AVX2_F16C
  if constexpr ((fused16<T> || std::is_same<T, float>::value) && std::is_same<C, float>::value) {
    T* const c = xp + o;
    auto on_face = [&](std::int64_t i) {
      const std::int64_t g0 = x0 + i + s.shift[0];
      return g0 == 0 || g0 == s.last[0];
    };
    const bool flo = on_face(0), fhi = on_face(n - 1);
    const C ilo = flo ? s.inv_diag_at(k, j, x0) : inv, ihi = fhi ? s.inv_diag_at(k, j, x0 + n - 1) : inv;
    const T* const zm = is3d ? c - sz : c;
    const T* const zp = is3d ? c + sz : c;
    const std::int64_t e0 = start - x0;
    if (is3d)
      rbgs_row_fast<true>(c, c - sy, c + sy, zm, zp, fp + o, n, e0, d, cx, cy, cz, inv, flo, ilo, fhi, ihi);
    else
      rbgs_row_fast<false>(c, c - sy, c + sy, zm, zp, fp + o, n, e0, d, cx, cy, cz, inv, flo, ilo, fhi, ihi);
    return;
  }
#endif
  const C* KOKKOS_RESTRICT xr = rows.get(0, xp + o - 1, n + 2) + 1;
  const C* KOKKOS_RESTRICT ym = rows.get(1, xp + o - sy, n);
  const C* KOKKOS_RESTRICT yp = rows.get(2, xp + o + sy, n);
  const C* KOKKOS_RESTRICT zm = is3d ? rows.get(3, xp + o - sz, n) : ym;
  const C* KOKKOS_RESTRICT zp = is3d ? rows.get(4, xp + o + sz, n) : yp;
  const C* KOKKOS_RESTRICT fr = rows.get(5, fp + o, n);
  C* KOKKOS_RESTRICT out = rows.scratch(6);
  if (is3d) {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i) {
      const C r =
          fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + cz * (zm[i] + zp[i]));
      out[i] = xr[i] + r * inv;
    }
  } else {
    MANTISSA_SOLVERS_IVDEP
    for (std::int64_t i = 0; i < n; ++i) {
      const C r = fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + C(0));
      out[i] = xr[i] + r * inv;
    }
  }
  // cells on an x face: their own diagonal
  for (const std::int64_t i : {std::int64_t(0), n - 1}) {
    const std::int64_t g0 = x0 + i + s.shift[0];
    if (g0 != 0 && g0 != s.last[0]) continue;
    const C z = is3d ? cz * (zm[i] + zp[i]) : C(0);
    const C r = fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + z);
    out[i] = xr[i] + r * s.inv_diag_at(k, j, x0 + i);
  }
  // T's constructor rounds as encode does
  T* const xw = xp + o;
  for (std::int64_t i = start - x0; i < n; i += 2) xw[i] = T(out[i]);
}

// One colour of red-black Gauss-Seidel over the owned box (see detail::rbgs).
template <class Exec, class T, class M, class S>
void rbgs(const Exec& space, const Box& b, std::int64_t shift, const S& s, const View3<T, M>& x,
          const View3<T, M>& f, int colour) {
  using C = compute_t<T>;
  const std::int64_t n = b.hi[0] - b.lo[0];
  const T* const fp = f.data();
  for_rows(
      "mantissa::solvers::Multigrid::rbgs", space, b.lo[2], b.hi[2], b.lo[1], b.hi[1],
      [=] { return Rows<C, 7>(n + 2); },
      [=](std::int64_t k, std::int64_t j, Rows<C, 7>& rows) {
        rbgs_row(b, shift, s, x, fp, colour, k, j, rows);
      });
}

// Ghost row (k, j) = T(sign * C(row (k, from))), the whole storage row: mirror_rows' row.
template <class T, class M>
inline void mirror_row_from(const View3<T, M>& v, std::int64_t k, std::int64_t j, std::int64_t kf,
                            std::int64_t jf, compute_t<T> sign, Rows<compute_t<T>, 7>& rows) {
  const std::int64_t n = std::int64_t(v.extent(2));
  scaled_row(v.data() + at(v, kf, jf, 0), v.data() + at(v, k, j, 0), n, sign, rows.scratch(6));
}

// Several colour passes of red-black Gauss-Seidel (colours[0], .., colours[m - 1]) in one sweep
// over the planes, 3D, on a level whose every face is a physical one (its ghosts mirrors of the
// cells inside, no halo exchange between the passes; mirror[f] the sign of face f). Each pass
// reads x and f whole and writes x, and at 256^3 the passes are bound by those bytes (the fp16
// colour pair took 1.1 ns a cell at 128^3, 1.6-1.9 at 256^3, on a Xeon core): here pass q
// runs on plane t - q at step t, so a plane's rows are still in cache when the next pass reaches
// it one step later, and the m passes move x and f about once. A pass on plane p reads planes
// p - 1 .. p + 1: pass q - 1 has finished all three (it ran on p + 1 earlier in the same step),
// and pass q + 1 has not touched p - 1 yet (it does so after pass q in the same step). After pass
// q on plane p, the ghost rows of p's y faces and, where p is the first or last plane, the
// ghost plane beyond it are mirrored again (mirror_face's order: y, then z), as the ghost fill
// between two passes does; the x faces are mirrored in every row (mirror_row). Every cell gets
// the same operations on the same values as in m separate passes with a fill before each, so
// the bits are the same (tstHostKernels). Four passes at 256^3, one Xeon core: fp64 167-186 ->
// 111-133 ms, fp32 66-76 -> 46-49, fp16 47-56 -> 34-41 (docs/performance.md, 2026-12-06).
//
// The sweep runs in tiles of rows (tile > 0 rows, or tile <= 0: sweep_tile_rows, at most a
// thread's share of the rows), tile after tile along y, so the planes a sweep keeps in flight
// are the tile's rows and stay in L2 (m + 2 planes of x and m of f: 2.5 MiB at 256^3 in fp32,
// more than a core's L2); a level whose planes fit is one tile a thread. Pass q of
// tile i covers rows [y0 + i tile - q, y0 + (i + 1) tile - q) (the first tile from y0, the last
// to y1): row j's neighbours j - 1 and j + 1 then have had passes q - 1 and q exactly, as in the
// plane sweep, so the bits are the same again (tstHostKernels). The threads of one team take
// the tiles in turn, a tile one step behind the tile before it (a pipeline along y; the
// threads' tiles stay in their own L2).
template <class T>
inline std::int64_t sweep_tile_rows(std::int64_t n, int m) {
  const std::int64_t planes = 2 * std::int64_t(m) + 2;
  return std::max<std::int64_t>(
      m + 1, std::int64_t(384 * 1024) / (planes * std::max<std::int64_t>(n, 1) * std::int64_t(sizeof(T))));
}

template <class Exec, class T, class M, class S>
void rbgs_passes(const Exec& space, const Box& b, std::int64_t shift, const S& s, const View3<T, M>& x,
                 const View3<T, M>& f, const int* colours, int m, const std::array<int, 6>& mirror,
                 std::int64_t tile = 0) {
  using C = compute_t<T>;
  const std::int64_t n = b.hi[0] - b.lo[0];
  const std::int64_t y0 = b.lo[1], y1 = b.hi[1], z0 = b.lo[2], z1 = b.hi[2], ny = y1 - y0;
  const T* const fp = f.data();
  const std::int64_t threads = std::max(1, int(space.concurrency()));
  const std::int64_t chunks = std::max<std::int64_t>(1, std::min(ny, threads));
  std::vector<Rows<C, 7>> scratch;
  for (std::int64_t c = 0; c < chunks; ++c) scratch.emplace_back(std::max(n + 2, std::int64_t(x.extent(2))));
  Rows<C, 7>* const sc = scratch.data();
  std::vector<int> passes(colours, colours + m);
  const int* const col = passes.data();
  const C ylo = C(mirror[2]), yhi = C(mirror[3]), zlo = C(mirror[4]), zhi = C(mirror[5]);
  const std::int64_t rows_y = std::int64_t(x.extent(1));
  // After a pass on plane p (not the last pass): the ghost rows of p's y faces (first: y0's,
  // last: y1's side) and, where p is the first or last plane, the ghost plane's rows [ga, gb).
  const auto mirror_after = [=](std::int64_t p, bool first, bool last, std::int64_t ga, std::int64_t gb,
                                Rows<C, 7>& rows) {
    if (first) mirror_row_from(x, p, y0 - 1, p, y0, ylo, rows);
    if (last) mirror_row_from(x, p, y1, p, y1 - 1, yhi, rows);
    if (p == z0)
      for (std::int64_t j = ga; j < gb; ++j) mirror_row_from(x, z0 - 1, j, p, j, zlo, rows);
    if (p == z1 - 1)
      for (std::int64_t j = ga; j < gb; ++j) mirror_row_from(x, z1, j, p, j, zhi, rows);
  };
  // tiles of sweep_tile_rows rows, at least one a thread (a level whose planes fit: one tile a
  // thread, the whole sweep in one launch; a launch, a fence and the ghost mirrors per plane and
  // pass made the sweep of a 64^3 level slower than separate passes: 0.74 against 0.40 ns a cell
  // and pass in fp32, docs/performance.md, 2026-12-07)
  if (ny <= 0 || n <= 0 || z1 <= z0) return;
  if (tile <= 0) tile = std::min(sweep_tile_rows<T>(n, m), (ny + threads - 1) / threads);
  if (tile < m) tile = m;  // pass m - 1 of the first tile keeps a row
  const std::int64_t tiles = (ny + tile - 1) / tile;
  const int team = int(std::min<std::int64_t>(threads, tiles));
  // done[i]: the last step tile i has finished. Tile i's step t reads what tile i - 1 wrote in
  // its steps up to t and nothing tile i - 1 writes later, and tile i - 1 reads nothing that
  // tile i writes before its step t + 1: so tile i waits for tile i - 1 to finish step t, and
  // thread r of the team takes tiles r, r + team, .. in order.
  std::vector<std::atomic<std::int64_t>> done_v(static_cast<std::size_t>(tiles));
  for (auto& d : done_v) d.store(z0 - 1);
  std::atomic<std::int64_t>* const done = done_v.data();
  using Team = Kokkos::TeamPolicy<Exec>;
  Kokkos::parallel_for(
      "mantissa::solvers::Multigrid::rbgs", Team(space, 1, team), [=](const typename Team::member_type& mem) {
        Rows<C, 7>& rows = sc[mem.team_rank()];
        const auto bound = [=](std::int64_t i, int q) {
          return i == 0 ? y0 : i >= tiles ? y1 : y0 + i * tile - q;
        };
        for (std::int64_t i = mem.team_rank(); i < tiles; i += mem.team_size())
          for (std::int64_t t = z0; t < z1 + m - 1; ++t) {
            for (int spins = 0; i > 0 && done[i - 1].load(std::memory_order_acquire) < t; ++spins)
              if (spins > 64) std::this_thread::yield();
            for (int q = 0; q < m; ++q) {
              const std::int64_t p = t - q;
              if (p < z0 || p >= z1) continue;
              const std::int64_t ja = bound(i, q), jb = bound(i + 1, q);
              for (std::int64_t j = ja; j < jb; ++j) rbgs_row(b, shift, s, x, fp, col[q], p, j, rows, q == 0);
              if (q + 1 == m) continue;
              // the ghost plane's rows of this tile (with the y ghost rows at either end)
              mirror_after(p, i == 0, i + 1 == tiles, i == 0 ? 0 : ja, i + 1 == tiles ? rows_y : jb, rows);
            }
            done[i].store(t, std::memory_order_release);
          }
      });
  space.fence();
}

// Weighted Jacobi, x_out = x_in + w D^-1 (f - L x_in) (see detail::jacobi; x_in's ghosts filled).
template <class Exec, class T, class M, class S, class C>
void jacobi(const Exec& space, const Box& b, const S& s, C w, const View3<T, M>& x_in,
            const View3<T, M>& x_out, const View3<T, M>& f) {
  const std::int64_t x0 = b.lo[0], n = b.hi[0] - b.lo[0];
  const std::int64_t sy = std::int64_t(x_in.extent(2)), sz = sy * std::int64_t(x_in.extent(1));
  const T* const xp = x_in.data();
  const T* const fp = f.data();
  T* const op = x_out.data();
  for_rows(
      "mantissa::solvers::Multigrid::jacobi", space, b.lo[2], b.hi[2], b.lo[1], b.hi[1],
      [=] { return Rows<C, 8>(n + 2); },
      [=](std::int64_t k, std::int64_t j, Rows<C, 8>& rows) {
        const std::int64_t o = at(x_in, k, j, x0);
        const std::int64_t oa = o + rows_ahead * sy;
        prefetch_row(xp, x_in.span(), oa + (s.is3d ? sz : 0), n, false);
        prefetch_row(fp, f.span(), oa, n, false);
        prefetch_row(op, x_out.span(), oa, n, true);
        const C* KOKKOS_RESTRICT xr = rows.get(0, xp + o - 1, n + 2) + 1;
        const C* KOKKOS_RESTRICT ym = rows.get(1, xp + o - sy, n);
        const C* KOKKOS_RESTRICT yp = rows.get(2, xp + o + sy, n);
        const C* KOKKOS_RESTRICT fr = rows.get(3, fp + o, n);
        const C* KOKKOS_RESTRICT zm = s.is3d ? rows.get(5, xp + o - sz, n) : ym;
        const C* KOKKOS_RESTRICT zp = s.is3d ? rows.get(6, xp + o + sz, n) : yp;
        // storage in the compute type: straight into x_out, no copy
        C* KOKKOS_RESTRICT out = std::is_same<T, C>::value ? reinterpret_cast<C*>(op + o) : rows.scratch(4);
        const std::int64_t g1 = j + s.shift[1], g2 = k + s.shift[2];
        C dr = s.diag;
        dr -= C(0) + C(0);
        dr -= (g1 == 0 ? s.lo[1] : C(0)) + (g1 == s.last[1] ? s.hi[1] : C(0));
        if (s.is3d) dr -= (g2 == 0 ? s.lo[2] : C(0)) + (g2 == s.last[2] ? s.hi[2] : C(0));
        const C inv = dr == s.diag ? s.inv_diag : C(1) / dr;
        const C cx = s.cx, cy = s.cy, cz = s.cz, d = s.diag;
        const bool is3d = s.is3d;
        MANTISSA_SOLVERS_IVDEP
        for (std::int64_t i = 0; i < n; ++i) {
          const C z = is3d ? cz * (zm[i] + zp[i]) : C(0);
          const C r = fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + z);
          out[i] = xr[i] + w * r * inv;
        }
        for (std::int64_t i : {std::int64_t(0), n - 1}) {
          const std::int64_t g0 = x0 + i + s.shift[0];
          if (g0 != 0 && g0 != s.last[0]) continue;
          const C z = is3d ? cz * (zm[i] + zp[i]) : C(0);
          const C r = fr[i] - d * xr[i] + (cx * (xr[i - 1] + xr[i + 1]) + cy * (ym[i] + yp[i]) + z);
          out[i] = xr[i] + w * r * s.inv_diag_at(k, j, x0 + i);
        }
        if constexpr (!std::is_same<T, C>::value) encode<T>(out, op + o, n);
      });
}

// Full weighting (see detail::restrict_full_weighting): the 16 fine rows of a coarse row are
// first summed with their (y, z) weights along the fine row (contiguous, vectorised), then the
// sum is filtered along x once (1 3 3 1 at stride 2), in the order the device form adds.
template <class Exec, class TF, class TC, class M>
void restrict_fw(const Exec& space, const Box& cb, std::int64_t base0, std::int64_t base1, std::int64_t base2,
                 bool is3d, double scale, const View3<TF, M>& rf, const View3<TC, M>& fc) {
  using C = pair_compute_t<TF, TC>;
  const C sc = C(scale);
  const std::int64_t x0 = cb.lo[0], n = cb.hi[0] - cb.lo[0];
  const TF* const rp = rf.data();
  TC* const cp = fc.data();
  for_rows(
      "mantissa::solvers::Multigrid::restrict", space, cb.lo[2], cb.hi[2], cb.lo[1], cb.hi[1],
      [=] { return Rows<C, 3>(2 * n + 4); },
      [=](std::int64_t k, std::int64_t j, Rows<C, 3>& rows) {
        const C w[4] = {C(0.125), C(0.375), C(0.375), C(0.125)};
        const std::int64_t fi = 2 * x0 + base0 - 1, fj = 2 * j + base1 - 1;
        const std::int64_t fk = is3d ? 2 * k + base2 - 1 : k;
        const std::int64_t len = 2 * n + 2;  // fine cells 2I-1 .. 2I+2 of the row's coarse cells
        C* KOKKOS_RESTRICT col = rows.scratch(1);
        const int planes = is3d ? 4 : 1;
        // col[e] = 0 + w_00 q_00[e] + w_01 q_01[e] + ... over planes c and rows bb in that order,
        // eight fine rows per pass (two planes), each row read where it lies (16-bit: decoded in
        // registers); sixteen passes of one row each loaded and stored col sixteen times.
        for (int c0 = 0; c0 < planes; c0 += 2) {
          const int nr = planes == 1 ? 4 : 8;
          const TF* q[8];
          C wq[8];
          for (int r = 0; r < 8; ++r) {
            const int c = c0 + (r < nr ? r / 4 : 0), bb = r % 4;
            q[r] = rp + at(rf, fk + c, fj + bb, fi);
            wq[r] = is3d ? w[c] * w[bb] : w[bb];
          }
          const bool first = c0 == 0;
          std::int64_t e = 0;
#ifdef MANTISSA_HOST_AVX2_F16C
          if constexpr (fused16<TF> && std::is_same<C, float>::value) {
            __m256 vw[8];
            for (int r = 0; r < 8; ++r) vw[r] = _mm256_set1_ps(wq[r]);
            for (; e + 8 <= len; e += 8) {
              __m256 t = first ? _mm256_setzero_ps() : _mm256_loadu_ps(col + e);
              for (int r = 0; r < nr; ++r)
                t = _mm256_add_ps(t, _mm256_mul_ps(vw[r], mantissa::host::decode8(q[r] + e)));
              _mm256_storeu_ps(col + e, t);
            }
          }
#endif
          if constexpr (std::is_same<TF, C>::value) {
            if (nr == 8) {
              const C* KOKKOS_RESTRICT q0 = q[0];
              const C* KOKKOS_RESTRICT q1 = q[1];
              const C* KOKKOS_RESTRICT q2 = q[2];
              const C* KOKKOS_RESTRICT q3 = q[3];
              const C* KOKKOS_RESTRICT q4 = q[4];
              const C* KOKKOS_RESTRICT q5 = q[5];
              const C* KOKKOS_RESTRICT q6 = q[6];
              const C* KOKKOS_RESTRICT q7 = q[7];
              MANTISSA_SOLVERS_IVDEP
              for (std::int64_t m = e; m < len; ++m) {
                C t = first ? C(0) : col[m];
                t += wq[0] * q0[m];
                t += wq[1] * q1[m];
                t += wq[2] * q2[m];
                t += wq[3] * q3[m];
                t += wq[4] * q4[m];
                t += wq[5] * q5[m];
                t += wq[6] * q6[m];
                t += wq[7] * q7[m];
                col[m] = t;
              }
              continue;
            }
          }
          for (std::int64_t m = e; m < len; ++m) {
            C t = first ? C(0) : col[m];
            for (int r = 0; r < nr; ++r) t += wq[r] * C(q[r][m]);
            col[m] = t;
          }
        }
        TC* const dst = cp + at(fc, k, j, x0);
        C* KOKKOS_RESTRICT out = std::is_same<TC, C>::value ? reinterpret_cast<C*>(dst) : rows.scratch(2);
        MANTISSA_SOLVERS_IVDEP
        for (std::int64_t m = 0; m < n; ++m) {
          C t = C(0);
          t += w[0] * col[2 * m];
          t += w[1] * col[2 * m + 1];
          t += w[2] * col[2 * m + 2];
          t += w[3] * col[2 * m + 3];
          out[m] = sc * t;
        }
        if constexpr (!std::is_same<TC, C>::value) encode<TC>(out, dst, n);
      });
}

// A chunk's scratch for prolong: the coarse rows decoded, and the last eight coarse rows
// interpolated along x, keyed by their (k, j). A fine row needs four coarse rows ((ck, cj),
// (ck, cj + dj), (ck + dk, cj), (ck + dk, cj + dj)), and the fine rows 2c - 1 .. 2c + 2 of a
// plane all need coarse row c: the slot (k & 1, j & 3) keeps a row until a fine row three rows
// on, so each coarse row is interpolated once per fine plane instead of four times.
template <class C>
struct ProlongRows {
  Rows<C, 1> rows;
  std::vector<C> t[8];
  std::int64_t key_k[8], key_j[8];
  explicit ProlongRows(std::int64_t n) : rows(n) {
    for (int q = 0; q < 8; ++q) {
      t[q].resize(std::size_t(std::max<std::int64_t>(n, 1)));
      key_k[q] = key_j[q] = -1;  // no row yet (storage indices are >= 0)
    }
  }
};

// x_f += P x_c (see detail::prolong_add), vectorised over the fine row: the coarse rows
// interpolated along x (cached, ProlongRows), then along y and z, in prolong_add's order.
template <class Exec, class TC, class TF, class M>
void prolong(const Exec& space, const Box& fb, const std::int64_t fo[3], const std::int64_t co[3], bool is3d,
             const View3<TC, M>& xc, const View3<TF, M>& xf, double scale) {
  using C = pair_compute_t<TC, TF>;
  const C ps = C(scale);
  const std::int64_t x0 = fb.lo[0], n = fb.hi[0] - fb.lo[0];
  const std::int64_t fo0 = fo[0], fo1 = fo[1], fo2 = fo[2], co0 = co[0], co1 = co[1], co2 = co[2];
  const TC* const cp = xc.data();
  TF* const fp = xf.data();
  // coarse cells ci(i) = (gi >> 1) + co0 for the row's fine cells; a run from c_first - 1
  const std::int64_t g_first = x0 + fo0, g_last = x0 + n - 1 + fo0;
  const std::int64_t c_lo = (g_first >> 1) + co0 - 1, c_n = ((g_last >> 1) + co0 + 1) - c_lo + 1;
  for_rows(
      "mantissa::solvers::Multigrid::prolong", space, fb.lo[2], fb.hi[2], fb.lo[1], fb.hi[1],
      [=] { return ProlongRows<C>(std::max(n, c_n) + 4); },
      [=](std::int64_t k, std::int64_t j, ProlongRows<C>& sc) {
        const C a = C(0.75), bw = C(0.25);
        const std::int64_t gj = j + fo1, cj = (gj >> 1) + co1, dj = (gj & 1) ? 1 : -1;
        const std::int64_t gk = k + fo2, ck = is3d ? (gk >> 1) + co2 : k, dk = (gk & 1) ? 1 : -1;
        // t[i] = a X(ci) + b X(ci + di) along coarse row (rk, rj)
        const auto interpolated = [&](std::int64_t rk, std::int64_t rj) -> const C* {
          const int q = int(((rk & 1) << 2) | (rj & 3));
          C* KOKKOS_RESTRICT tr = sc.t[q].data();
          if (sc.key_k[q] == rk && sc.key_j[q] == rj) return tr;
          sc.key_k[q] = rk;
          sc.key_j[q] = rj;
          const C* KOKKOS_RESTRICT X = sc.rows.get(0, cp + at(xc, rk, rj, c_lo), c_n);
          // fine cells 2c (left neighbour c - 1) and 2c + 1 (right neighbour c + 1) of coarse c
          const std::int64_t off = co0 - c_lo;  // X[c + off] is coarse global cell c
          const std::int64_t c_first = (g_first + 1) >> 1, c_end = (g_last + 1) >> 1;  // pairs
          if (g_first & 1) {  // the row starts on an odd fine cell
            const std::int64_t c = g_first >> 1;
            tr[0] = a * X[c + off] + bw * X[c + off + 1];
          }
          const std::int64_t e0 = 2 * c_first - g_first;  // row index of the first pair
          MANTISSA_SOLVERS_IVDEP
          for (std::int64_t c = c_first; c < c_end; ++c) {
            tr[e0 + 2 * (c - c_first)] = a * X[c + off] + bw * X[c + off - 1];
            tr[e0 + 2 * (c - c_first) + 1] = a * X[c + off] + bw * X[c + off + 1];
          }
          if (!(g_last & 1)) {  // the row ends on an even fine cell
            const std::int64_t c = g_last >> 1;
            tr[g_last - g_first] = a * X[c + off] + bw * X[c + off - 1];
          }
          return tr;
        };
        const C* KOKKOS_RESTRICT t0 = interpolated(ck, cj);
        const C* KOKKOS_RESTRICT t1 = interpolated(ck, cj + dj);
        const C* KOKKOS_RESTRICT t2 = is3d ? interpolated(ck + dk, cj) : t0;
        const C* KOKKOS_RESTRICT t3 = is3d ? interpolated(ck + dk, cj + dj) : t1;
        TF* const row = fp + at(xf, k, j, x0);
        std::int64_t i = 0;
#ifdef MANTISSA_HOST_AVX2_F16C
        if constexpr (fused16<TF> && std::is_same<C, float>::value) {
          // 16-bit fine rows decoded and encoded in registers (LowPrecisionHost.hpp)
          const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(bw), vs = _mm256_set1_ps(ps);
          const auto lerp = [&](const C* u, const C* v) {
            return _mm256_add_ps(_mm256_mul_ps(va, _mm256_loadu_ps(u + i)),
                                 _mm256_mul_ps(vb, _mm256_loadu_ps(v + i)));
          };
          for (; i + 8 <= n; i += 8) {
            const __m256 p =
                is3d ? _mm256_add_ps(_mm256_mul_ps(va, lerp(t0, t1)), _mm256_mul_ps(vb, lerp(t2, t3)))
                     : lerp(t0, t1);
            mantissa::host::encode8(_mm256_add_ps(mantissa::host::decode8(row + i), _mm256_mul_ps(vs, p)),
                                    row + i);
          }
        }
#endif
        // out[i] = old[i] + the prolonged correction; in place when the fine level stores C
        if constexpr (std::is_same<TF, C>::value) {
          C* KOKKOS_RESTRICT out = row;
          if (is3d) {
            MANTISSA_SOLVERS_IVDEP
            for (; i < n; ++i) {
              const C p0 = a * t0[i] + bw * t1[i];
              const C p1 = a * t2[i] + bw * t3[i];
              out[i] = out[i] + ps * (a * p0 + bw * p1);
            }
          } else {
            MANTISSA_SOLVERS_IVDEP
            for (; i < n; ++i) out[i] = out[i] + ps * (a * t0[i] + bw * t1[i]);
          }
        } else {
          for (; i < n; ++i) {
            const C p =
                is3d ? a * (a * t0[i] + bw * t1[i]) + bw * (a * t2[i] + bw * t3[i]) : a * t0[i] + bw * t1[i];
            row[i] = TF(C(row[i]) + ps * p);
          }
        }
      });
}

// Level 0's x row of the multigrid's entry, from its f row: the red half-sweep from a zero guess
// (red cells x = 0 + ((f - D 0) + 0) / D_cell, rbgs's arithmetic with every neighbour 0), black
// cells 0. (k, j, i0): the row's first cell in x's storage; red: the parity of i (counted from
// i0) of the red cells. The row's diagonal away from the x faces as host::rbgs computes it, the
// x-face cells with their own after.
template <class T, class S>
inline void entry_x_row(const S& s, const T* KOKKOS_RESTRICT fr, T* KOKKOS_RESTRICT xr, std::int64_t n,
                        std::int64_t k, std::int64_t j, std::int64_t i0, std::int64_t red) {
  using C = compute_t<T>;
  const C inv = row_inv_diag<C>(s, k, j);
  const C d = s.diag;
  std::int64_t i = 0;
#ifdef MANTISSA_HOST_AVX2_F16C
  if constexpr (std::is_same<C, float>::value && (fused16<T> || std::is_same<T, float>::value)) {
    // Eight cells at a time (16-bit rows decoded and encoded in registers, LowPrecisionHost.hpp),
    // the black lanes masked to +0, the bits of T(0.0f). GCC 12 leaves the loop below scalar
    // (the colour test per cell): a quarter of the CG's fused r update (perf, 256^3, 2026-12-05).
    const auto load = [](const T* q) {
      if constexpr (std::is_same<T, float>::value)
        return _mm256_loadu_ps(q);
      else
        return mantissa::host::decode8(q);
    };
    const auto store = [](__m256 v, T* q) {
      if constexpr (std::is_same<T, float>::value)
        _mm256_storeu_ps(q, v);
      else
        mantissa::host::encode8(v, q);
    };
    const __m256 vd = _mm256_set1_ps(d), vi = _mm256_set1_ps(inv), zero = _mm256_setzero_ps();
    const __m256 keep = _mm256_castsi256_ps(red == 0 ? _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0)
                                                     : _mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1));
    for (; i + 8 <= n; i += 8) {
      const __m256 res = _mm256_add_ps(_mm256_sub_ps(load(fr + i), _mm256_mul_ps(vd, zero)), zero);
      store(_mm256_and_ps(_mm256_add_ps(zero, _mm256_mul_ps(res, vi)), keep), xr + i);
    }
  } else if constexpr (std::is_same<T, double>::value) {
    const __m256d vd = _mm256_set1_pd(d), vi = _mm256_set1_pd(inv), zero = _mm256_setzero_pd();
    const __m256d keep =
        _mm256_castsi256_pd(red == 0 ? _mm256_setr_epi64x(-1, 0, -1, 0) : _mm256_setr_epi64x(0, -1, 0, -1));
    for (; i + 4 <= n; i += 4) {
      const __m256d res =
          _mm256_add_pd(_mm256_sub_pd(_mm256_loadu_pd(fr + i), _mm256_mul_pd(vd, zero)), zero);
      _mm256_storeu_pd(xr + i, _mm256_and_pd(_mm256_add_pd(zero, _mm256_mul_pd(res, vi)), keep));
    }
  }
#endif
  MANTISSA_SOLVERS_IVDEP
  for (; i < n; ++i) {
    const C res = (C(fr[i]) - d * C(0)) + C(0);
    xr[i] = (i & 1) == red ? T(C(0) + res * inv) : T(0.0f);
  }
  for (std::int64_t e : {std::int64_t(0), n - 1}) {
    const std::int64_t g0 = i0 + e + s.shift[0];
    if ((e & 1) != red || (g0 != 0 && g0 != s.last[0])) continue;
    const C res = (C(fr[e]) - d * C(0)) + C(0);
    xr[e] = T(C(0) + res * s.inv_diag_at(k, j, i0 + e));
  }
}

// dst = scale * src over the destination's owned box (see detail::convert).
template <class Exec, class TS, class TD, class M>
void convert(const Exec& space, const Box& db, std::int64_t dx, std::int64_t dy, std::int64_t dz,
             double scale, const View3<TS, M>& src, const View3<TD, M>& dst) {
  using C = pair_compute_t<TS, TD>;
  const C sc = C(scale);
  const std::int64_t x0 = db.lo[0], n = db.hi[0] - db.lo[0];
  const TS* const sp = src.data();
  TD* const dp = dst.data();
  for_rows(
      "mantissa::solvers::convert", space, db.lo[2], db.hi[2], db.lo[1], db.hi[1],
      [=] { return Rows<C, 2>(n); },
      [=](std::int64_t k, std::int64_t j, Rows<C, 2>& rows) {
        const C* KOKKOS_RESTRICT in = rows.get(0, sp + at(src, k + dz, j + dy, x0 + dx), n);
        C* KOKKOS_RESTRICT out = rows.scratch(1);
        MANTISSA_SOLVERS_IVDEP
        for (std::int64_t i = 0; i < n; ++i) out[i] = sc * in[i];
        encode<TD>(out, dp + at(dst, k, j, x0), n);
      });
}

}  // namespace mantissa::solvers::detail::host
