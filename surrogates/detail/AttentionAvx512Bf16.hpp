#pragma once
// Window attention's forward under bf16 compute on x86-64 hosts with AVX512-BF16: Q K^T and P V as
// bf16 dot products (vdpbf16ps: per fp32 lane, two bf16 products added to the sum), the way
// autocast runs both products as bf16 matrix multiplies with fp32 accumulation. Twice the
// products per instruction of the fp32 kernels, and half the bytes of K and V. Compiled where the
// host compiler targets AVX512-BF16 (e.g. -march=native on AMD Zen 4/5, Intel Sapphire Rapids);
// elsewhere, and on devices, the portable kernels of WindowAttention.hpp run.
//
// Operands are q, k, v (and dO) rounded to bf16 as the pairs are built (round to nearest even, as
// the portable kernels' rounded copies) and the probabilities rounded to bf16 by softmax_row, so the products
// are exact in fp32 and the kernel differs from the portable one only in the order of the fp32 additions
// (pairs first). K is stored as pairs of channels [dh/2][columns] and V as pairs of tokens [tokens/2][dh],
// both per (window, head), zero past a window's end.
#include <surrogates/TokenLayout.hpp>
#include <surrogates/detail/AttentionCommon.hpp>

#include <cstdint>

#if defined(__AVX512BF16__) && defined(__AVX512F__) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__)
#define MANTISSA_ATTENTION_AVX512BF16 1
#include <immintrin.h>
#else
#define MANTISSA_ATTENTION_AVX512BF16 0
#endif

namespace mantissa::surrogates {
// Whether this build has the AVX512-BF16 attention kernel, and whether bf16 forwards may use it
// (default yes); tests and benchmarks switch it off to run the portable kernels on the same host.
constexpr bool attention_avx512bf16_compiled() {
  return MANTISSA_ATTENTION_AVX512BF16 != 0;
}
inline bool& attention_avx512bf16_enabled() {
  static bool enabled = true;
  return enabled;
}
}  // namespace mantissa::surrogates

#if MANTISSA_ATTENTION_AVX512BF16
namespace mantissa::surrogates::detail {

// Two floats rounded to bf16 as one 32-bit pair, `lo` in the low half (the element vdpbf16ps
// takes first).
inline std::uint32_t bf16_pair(float lo, float hi) {
  // Round to nearest even (as vcvtne2ps2bf16 and mantissa::bf16 do for finite values; infinities
  // stay infinite, NaNs NaN), so the operands need no rounded copy first.
  const std::uint32_t a = mantissa::detail::float_to_bits(lo), b = mantissa::detail::float_to_bits(hi);
  const std::uint32_t ra = (a + 0x7FFFu + ((a >> 16) & 1u)) >> 16;
  const std::uint32_t rb = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
  return rb | ra;
}

// bf16 pairs of n consecutive floats (zero past n), 16 pairs per store, so `pairs` must hold a
// multiple of 16: vcvtne2ps2bf16 rounds to nearest even, exact on values that are already bf16.
inline void to_bf16_pairs(const float* x, int n, std::uint32_t* pairs) {
  for (int j0 = 0; j0 < n; j0 += 32) {
    const int rem = n - j0;
    const __mmask16 lo = rem >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << rem) - 1u);
    const __mmask16 hi = rem >= 32  ? __mmask16(0xFFFF)
                         : rem > 16 ? __mmask16((1u << (rem - 16)) - 1u)
                                    : __mmask16(0);
    const __m512bh v =
        _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + j0 + 16), _mm512_maskz_loadu_ps(lo, x + j0));
    _mm512_storeu_si512(pairs + j0 / 2, (__m512i)v);
  }
}

// A row of zeros standing for the tokens past a window's end, so the gathers below have no branch.
inline constexpr float kZeroRow[kMaxHeadDim] = {};

// out[c] = bf16_pair(x0[c], x1[c]) for c < n: two token rows paired element by element (a plain
// loop the compiler vectorises).
inline void pair_rows(const float* KOKKOS_RESTRICT x0, const float* KOKKOS_RESTRICT x1, int n,
                      std::uint32_t* KOKKOS_RESTRICT out) {
  for (int c = 0; c < n; ++c) out[c] = bf16_pair(x0[c], x1[c]);
}

// out[cp * ldk + j] = the bf16 pair of channels 2cp, 2cp+1 of token j's row for j < ldk, cp < dh/2,
// with row(j) = base + mem[j] * ld for j < size and zeros past it: 16 tokens at a time, each
// converted by to_bf16_pairs, then transposed through a small tile (a pair at a time, the
// conversion branch-free, was most of the gather's cost).
inline void channel_pairs(const float* base, std::int64_t ld, const int* mem, int size, int dh,
                          std::int64_t ldk, std::uint32_t* out) {
  alignas(64) std::uint32_t tile[16][kMaxHeadDim / 2 + 16];
  const int dp = dh / 2;
  for (std::int64_t j0 = 0; j0 < ldk; j0 += 16) {
    for (int jj = 0; jj < 16; ++jj) {
      const std::int64_t j = j0 + jj;
      to_bf16_pairs(j < size ? base + std::int64_t(mem[j]) * ld : kZeroRow, dh, tile[jj]);
    }
    for (int cp = 0; cp < dp; ++cp)
      for (int jj = 0; jj < 16; ++jj) out[cp * ldk + j0 + jj] = tile[jj][cp];
  }
}

inline __m512 dot_bf16(__m512 acc, std::uint32_t a_pair, __m512i b_pairs) {
  return _mm512_dpbf16_ps(acc, (__m512bh)_mm512_set1_epi32(int(a_pair)), (__m512bh)b_pairs);
}

// s_r[j0 + j] = sum over channel pairs of q_r . k_j for NB blocks of 16 columns; `valid` columns
// are stored (fewer only in a last block of one).
template <int R, int NB>
inline void scores_bf16(const std::uint32_t (*qp)[kMaxHeadDim / 2], const std::uint32_t* k2, std::int64_t ldk,
                        int pairs, int j0, int valid, float* const* s) {
  __m512 acc[R][NB];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < NB; ++k) acc[r][k] = _mm512_setzero_ps();
  for (int cp = 0; cp < pairs; ++cp) {
    __m512i b[NB];
    for (int k = 0; k < NB; ++k) b[k] = _mm512_loadu_si512(k2 + cp * ldk + j0 + 16 * k);
    for (int r = 0; r < R; ++r)
      for (int k = 0; k < NB; ++k) acc[r][k] = dot_bf16(acc[r][k], qp[r][cp], b[k]);
  }
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < NB; ++k) {
      if (valid == NB * 16)
        _mm512_storeu_ps(s[r] + j0 + 16 * k, acc[r][k]);
      else
        _mm512_mask_storeu_ps(s[r] + j0 + 16 * k, __mmask16((1u << valid) - 1u), acc[r][k]);
    }
}

// o_r[c0 + c] = factor * sum over token pairs of p_r . v for NB blocks of 16 channels.
template <int R, int NB>
inline void weighted_bf16(const std::uint32_t (*pp)[kMaxWindowTokens / 2], int pairs, const std::uint32_t* v2,
                          int dh, int c0, float factor, float* const* o) {
  __m512 acc[R][NB];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < NB; ++k) acc[r][k] = _mm512_setzero_ps();
  for (int jp = 0; jp < pairs; ++jp) {
    __m512i b[NB];
    for (int k = 0; k < NB; ++k) b[k] = _mm512_loadu_si512(v2 + std::int64_t(jp) * dh + c0 + 16 * k);
    for (int r = 0; r < R; ++r)
      for (int k = 0; k < NB; ++k) acc[r][k] = dot_bf16(acc[r][k], pp[r][jp], b[k]);
  }
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < NB; ++k)
      _mm512_storeu_ps(o[r] + c0 + 16 * k, _mm512_mul_ps(_mm512_set1_ps(factor), acc[r][k]));
}

// R query rows of one (window, head): scores, softmax (probabilities kept in P for the backward),
// probabilities times V.
template <int R>
inline void attention_tile_bf16(const float* qkv, int D, int dh, int h, const int* tok, int size, int first,
                                const std::uint32_t* k2, std::int64_t ldk, const std::uint32_t* v2, float* P,
                                std::int64_t wmax, float scale, float* out) {
  const int dp = dh / 2, np = (size + 1) / 2;
  std::uint32_t qp[R][kMaxHeadDim / 2];
  std::uint32_t pp[R][kMaxWindowTokens / 2];
  float* p[R];
  float* o[R];
  for (int r = 0; r < R; ++r) {
    const std::int64_t ti = tok[first + r];
    const float* q = qkv + ti * 3 * D + h * dh;
    to_bf16_pairs(q, dh, qp[r]);
    p[r] = P + (first + r) * wmax;
    o[r] = out + ti * D + h * dh;
  }
  int j0 = 0;
  for (; j0 + 64 <= size; j0 += 64) scores_bf16<R, 4>(qp, k2, ldk, dp, j0, 64, p);
  for (; j0 < size; j0 += 16) scores_bf16<R, 1>(qp, k2, ldk, dp, j0, size - j0 < 16 ? size - j0 : 16, p);
  for (int r = 0; r < R; ++r) {
    softmax_row(p[r], size, scale, 1);
    to_bf16_pairs(p[r], size, pp[r]);
  }
  int c0 = 0;
  for (; c0 + 64 <= dh; c0 += 64) weighted_bf16<R, 4>(pp, np, v2, dh, c0, 1.0f, o);
  for (; c0 < dh; c0 += 16) weighted_bf16<R, 1>(pp, np, v2, dh, c0, 1.0f, o);
}

// The whole forward: qkv [N, 3D] already rounded to bf16 values, dh a multiple of 16; writes P and
// out [N, D]. Host execution space only.
inline void attention_forward_avx512bf16(const Windows& win, const Matrix<float>& qkv_m, int H, int D,
                                         float scale, Vector<float>& P_v, Vector<std::uint32_t>& k2_v,
                                         Vector<std::uint32_t>& v2_v, const Matrix<float>& out_m) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int dh = D / H, dp = dh / 2;
  const std::int64_t wmax = win.max_size, ldk = (wmax + 15) / 16 * 16, npmax = (wmax + 1) / 2;
  const std::int64_t blocks = std::int64_t(win.count) * H;
  ensure_size(k2_v, "mantissa::surrogates::WindowAttention::k_pairs", blocks * dp * ldk);
  ensure_size(v2_v, "mantissa::surrogates::WindowAttention::v_pairs", blocks * npmax * dh);
  const float* qkv = qkv_m.data();
  float* out = out_m.data();
  float* P = P_v.data();
  std::uint32_t* k2 = k2_v.data();
  std::uint32_t* v2 = v2_v.data();
  const int* offs = win.offsets.data();
  const int* mem = win.members.data();
  Kokkos::parallel_for(
      "mantissa::surrogates::WindowAttention::gather_pairs", Kokkos::RangePolicy<Host>(0, blocks),
      [=](const std::int64_t b) {
        const std::int64_t w = b / H, h = b % H;
        const int begin = offs[w], size = offs[w + 1] - offs[w];
        channel_pairs(qkv + D + h * dh, 3 * D, mem + begin, size, dh, ldk, k2 + b * dp * ldk);
        std::uint32_t* vb = v2 + b * npmax * dh;
        for (std::int64_t jp = 0; jp < npmax; ++jp) {
          const std::int64_t j = 2 * jp;
          const float* v0 = j < size ? qkv + std::int64_t(mem[begin + j]) * 3 * D + 2 * D + h * dh : kZeroRow;
          const float* v1 =
              j + 1 < size ? qkv + std::int64_t(mem[begin + j + 1]) * 3 * D + 2 * D + h * dh : kZeroRow;
          pair_rows(v0, v1, dh, vb + jp * dh);
        }
      });
  constexpr int R = kAttentionRows;
  const std::int64_t tiles = (wmax + R - 1) / R;
  Kokkos::parallel_for(
      "mantissa::surrogates::WindowAttention::forward_avx512bf16",
      Kokkos::RangePolicy<Host>(0, blocks * tiles), [=](const std::int64_t idx) {
        const auto a = attention_tile(idx, tiles, H, offs);
        const std::int64_t b = a.block;
        const int h = a.head, begin = a.begin, size = a.size, first = a.first;
        if (first >= size) return;
        const std::uint32_t* kb = k2 + b * dp * ldk;
        const std::uint32_t* vb = v2 + b * npmax * dh;
        float* pb = P + b * wmax * wmax;
        if (first + R <= size)
          attention_tile_bf16<R>(qkv, D, dh, h, mem + begin, size, first, kb, ldk, vb, pb, wmax, scale, out);
        else
          for (int i = first; i < size; ++i)
            attention_tile_bf16<1>(qkv, D, dh, h, mem + begin, size, i, kb, ldk, vb, pb, wmax, scale, out);
      });
}

// o_r[c] = factor * sum over token pairs of w_r . x for c < dh (a multiple of 16).
template <int R>
inline void weighted_rows_bf16(const std::uint32_t (*wp)[kMaxWindowTokens / 2], int pairs,
                               const std::uint32_t* x2, int dh, float factor, float* const* o) {
  int c0 = 0;
  for (; c0 + 64 <= dh; c0 += 64) weighted_bf16<R, 4>(wp, pairs, x2, dh, c0, factor, o);
  for (; c0 < dh; c0 += 16) weighted_bf16<R, 1>(wp, pairs, x2, dh, c0, factor, o);
}

// Backward, R query rows: dP = dO V^T (bf16 pairs of channels), dS = P * (dP - rowsum(P * dP))
// rounded to bf16 (the gradient the bf16 products see, as autocast's bf16 backward products do),
// dQ = s dS K (pairs of tokens).
template <int R>
inline void attention_backward_rows_bf16(const float* dO, int D, int dh, int h, const int* tok, int size,
                                         int first, const std::uint32_t* vc, std::int64_t ldk,
                                         const std::uint32_t* kt, const float* P, float* dS,
                                         std::int64_t wmax, float scale, float* dqkv) {
  const int dp = dh / 2, np = (size + 1) / 2;
  std::uint32_t ap[R][kMaxHeadDim / 2];
  std::uint32_t sp[R][kMaxWindowTokens / 2];
  float* ds[R];
  float* g[R];
  for (int r = 0; r < R; ++r) {
    const std::int64_t ti = tok[first + r];
    to_bf16_pairs(dO + ti * D + h * dh, dh, ap[r]);
    ds[r] = dS + (first + r) * wmax;
    g[r] = dqkv + ti * 3 * D + h * dh;
  }
  int j0 = 0;
  for (; j0 + 64 <= size; j0 += 64) scores_bf16<R, 4>(ap, vc, ldk, dp, j0, 64, ds);
  for (; j0 < size; j0 += 16) scores_bf16<R, 1>(ap, vc, ldk, dp, j0, size - j0 < 16 ? size - j0 : 16, ds);
  for (int r = 0; r < R; ++r) {
    const float* p = P + (first + r) * wmax;
    float* d = ds[r];
    const float dot = lane_dot(p, d, size);
    for (int j = 0; j < size; ++j) d[j] = float(bf16(p[j] * (d[j] - dot)));
    to_bf16_pairs(d, size, sp[r]);
  }
  weighted_rows_bf16<R>(sp, np, kt, dh, scale, g);
}

// Backward, R key columns: dK = s dS^T Q and dV = P^T dO, the columns of dS and P paired along
// the query rows.
template <int R>
inline void attention_backward_columns_bf16(int D, int dh, int h, const int* tok, int size, int first,
                                            const std::uint32_t* qt, const std::uint32_t* dot2,
                                            const float* P, const float* dS, std::int64_t wmax, float scale,
                                            float* dqkv) {
  const int np = (size + 1) / 2;
  std::uint32_t sp[R][kMaxWindowTokens / 2];
  std::uint32_t pp[R][kMaxWindowTokens / 2];
  float* gk[R];
  float* gv[R];
  for (int r = 0; r < R; ++r) {
    const std::int64_t tj = tok[first + r];
    gk[r] = dqkv + tj * 3 * D + D + h * dh;
    gv[r] = dqkv + tj * 3 * D + 2 * D + h * dh;
  }
  for (int ip = 0; ip < np; ++ip) {
    const std::int64_t i0 = 2 * ip, i1 = i0 + 1;
    const bool has1 = i1 < size;
    if constexpr (R == 4) {
      // Four columns of rows i0 and i1 at once: round each to bf16 and interleave them into pairs.
      const auto pairs4 = [&](const float* m) {
        const __m128bh a = _mm_cvtneps_pbh(_mm_loadu_ps(m + i0 * wmax + first));
        const __m128bh b = _mm_cvtneps_pbh(has1 ? _mm_loadu_ps(m + i1 * wmax + first) : _mm_setzero_ps());
        return _mm_unpacklo_epi16((__m128i)a, (__m128i)b);
      };
      const __m128i s4 = pairs4(dS), p4 = pairs4(P);
      sp[0][ip] = std::uint32_t(_mm_extract_epi32(s4, 0));
      sp[1][ip] = std::uint32_t(_mm_extract_epi32(s4, 1));
      sp[2][ip] = std::uint32_t(_mm_extract_epi32(s4, 2));
      sp[3][ip] = std::uint32_t(_mm_extract_epi32(s4, 3));
      pp[0][ip] = std::uint32_t(_mm_extract_epi32(p4, 0));
      pp[1][ip] = std::uint32_t(_mm_extract_epi32(p4, 1));
      pp[2][ip] = std::uint32_t(_mm_extract_epi32(p4, 2));
      pp[3][ip] = std::uint32_t(_mm_extract_epi32(p4, 3));
    } else {
      for (int r = 0; r < R; ++r) {
        const std::int64_t j = first + r;
        sp[r][ip] = bf16_pair(dS[i0 * wmax + j], has1 ? dS[i1 * wmax + j] : 0.0f);
        pp[r][ip] = bf16_pair(P[i0 * wmax + j], has1 ? P[i1 * wmax + j] : 0.0f);
      }
    }
  }
  weighted_rows_bf16<R>(sp, np, qt, dh, scale, gk);
  weighted_rows_bf16<R>(pp, np, dot2, dh, 1.0f, gv);
}

// The whole backward: qkv and dO already rounded to bf16 values, P as the forward left it (bf16
// values); writes dS and dqkv [N, 3D]. Host execution space only. `pairs` holds, per (window,
// head): V paired along channels [dh/2][ldk], then K, Q and dO paired along tokens [tokens/2][dh].
inline void attention_backward_avx512bf16(const Windows& win, const Matrix<float>& qkv_m,
                                          const Matrix<float>& dO_m, int H, int D, float scale,
                                          const Vector<float>& P_v, Vector<float>& dS_v,
                                          Vector<std::uint32_t>& pairs_v, const Matrix<float>& dqkv_m) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int dh = D / H, dp = dh / 2;
  const std::int64_t wmax = win.max_size, ldk = (wmax + 15) / 16 * 16, npmax = (wmax + 1) / 2;
  const std::int64_t blocks = std::int64_t(win.count) * H;
  const std::int64_t vc_size = dp * ldk, tok_size = npmax * dh, block_size = vc_size + 3 * tok_size;
  ensure_size(pairs_v, "mantissa::surrogates::WindowAttention::backward_pairs", blocks * block_size);
  const float* qkv = qkv_m.data();
  const float* dO = dO_m.data();
  const float* P = P_v.data();
  float* dS = dS_v.data();
  float* dqkv = dqkv_m.data();
  std::uint32_t* pairs = pairs_v.data();
  const int* offs = win.offsets.data();
  const int* mem = win.members.data();
  Kokkos::parallel_for(
      "mantissa::surrogates::WindowAttention::gather_backward_pairs", Kokkos::RangePolicy<Host>(0, blocks),
      [=](const std::int64_t b) {
        const std::int64_t w = b / H, h = b % H;
        const int begin = offs[w], size = offs[w + 1] - offs[w];
        std::uint32_t* vc = pairs + b * block_size;
        channel_pairs(qkv + 2 * D + h * dh, 3 * D, mem + begin, size, dh, ldk, vc);
        // K (offset D), Q (offset 0) of qkv and dO, paired along tokens.
        const float* src[3] = {qkv + D + h * dh, qkv + h * dh, dO + h * dh};
        const std::int64_t ld[3] = {3 * D, 3 * D, D};
        for (int m = 0; m < 3; ++m) {
          std::uint32_t* t = vc + vc_size + m * tok_size;
          for (std::int64_t jp = 0; jp < npmax; ++jp) {
            const std::int64_t j = 2 * jp;
            const float* x0 = j < size ? src[m] + std::int64_t(mem[begin + j]) * ld[m] : kZeroRow;
            const float* x1 = j + 1 < size ? src[m] + std::int64_t(mem[begin + j + 1]) * ld[m] : kZeroRow;
            pair_rows(x0, x1, dh, t + jp * dh);
          }
        }
      });
  constexpr int R = kAttentionRows;
  const std::int64_t tiles = (wmax + R - 1) / R;
  Kokkos::parallel_for("mantissa::surrogates::WindowAttention::backward_rows_avx512bf16",
                       Kokkos::RangePolicy<Host>(0, blocks * tiles), [=](const std::int64_t idx) {
                         const auto a = attention_tile(idx, tiles, H, offs);
                         const std::int64_t b = a.block;
                         const int h = a.head, begin = a.begin, size = a.size, first = a.first;
                         if (first >= size) return;
                         const std::uint32_t* vc = pairs + b * block_size;
                         const std::uint32_t* kt = vc + vc_size;
                         const float* pb = P + b * wmax * wmax;
                         float* sb = dS + b * wmax * wmax;
                         if (first + R <= size)
                           attention_backward_rows_bf16<R>(dO, D, dh, h, mem + begin, size, first, vc, ldk,
                                                           kt, pb, sb, wmax, scale, dqkv);
                         else
                           for (int i = first; i < size; ++i)
                             attention_backward_rows_bf16<1>(dO, D, dh, h, mem + begin, size, i, vc, ldk, kt,
                                                             pb, sb, wmax, scale, dqkv);
                       });
  Kokkos::parallel_for("mantissa::surrogates::WindowAttention::backward_columns_avx512bf16",
                       Kokkos::RangePolicy<Host>(0, blocks * tiles), [=](const std::int64_t idx) {
                         const auto a = attention_tile(idx, tiles, H, offs);
                         const std::int64_t b = a.block;
                         const int h = a.head, begin = a.begin, size = a.size, first = a.first;
                         if (first >= size) return;
                         const std::uint32_t* qt = pairs + b * block_size + vc_size + tok_size;
                         const std::uint32_t* dot2 = qt + tok_size;
                         const float* pb = P + b * wmax * wmax;
                         const float* sb = dS + b * wmax * wmax;
                         if (first + R <= size)
                           attention_backward_columns_bf16<R>(D, dh, h, mem + begin, size, first, qt, dot2,
                                                              pb, sb, wmax, scale, dqkv);
                         else
                           for (int j = first; j < size; ++j)
                             attention_backward_columns_bf16<1>(D, dh, h, mem + begin, size, j, qt, dot2, pb,
                                                                sb, wmax, scale, dqkv);
                       });
}

}  // namespace mantissa::surrogates::detail
#endif
