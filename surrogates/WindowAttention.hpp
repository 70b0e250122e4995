#pragma once
// Multi-head self-attention inside windows of tokens (Vaswani et al., NeurIPS 2017; windows as
// in Liu et al., Swin Transformer, ICCV 2021). Input: qkv [N, 3D] from one Linear (q, k, v
// blocks of D columns, head h in columns h*dh .. h*dh+dh-1 of each block, as PyTorch's
// reshape(N, 3, H, dh)); output [N, D] before the output projection.
//
// Softmax is made safe by subtracting the row maximum before exp, so no score can overflow
// (every exponent is <= 0) whatever the precision; probabilities are kept for the backward:
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),  dQ = s dS K,  dK = s dS^T Q,
// with s = 1/sqrt(dh). One thread per (window, head, tile of rows): kAttentionRows rows on host
// back-ends, one on devices; windows hold at most max_size tokens.
// K and V are first gathered per (window, head) into transposed blocks [dh, max_size], so the
// score rows (Q K^T and dO V^T) are sums of channel-scaled contiguous rows: every inner loop runs
// over contiguous memory with no reduction and vectorises. The sums are register tiles of rows x
// blocks of kLanes columns (detail::rows_times_transposed, detail::weighted_rows), each element
// summed in the order of a plain loop; the softmax's row sums and the backward's row dot products
// use kLanes partial sums combined pairwise (detail::lane_sum, detail::lane_dot). The windows are
// ragged (cut at tile edges, token lists rather than strides), which is why these are loops and not
// batched BLAS calls.
//
// Under 16- and 8-bit compute the q, k, v and dO operands are rounded to bf16 (fp16 for fp16
// compute) and the products accumulate in fp32, as the attention GEMMs of mixed-precision
// training do; fp8 recipes keep attention in 16-bit (Micikevicius et al., arXiv:2209.05433).
#include <mantissa/core/LowPrecision.hpp>
#include <surrogates/TokenLayout.hpp>
#include <surrogates/detail/AttentionAvx512Bf16.hpp>
#include <surrogates/detail/AttentionCommon.hpp>

#include <string>

namespace mantissa::surrogates {

namespace detail {
// Register tiles: R rows (queries, or key columns in the backward) at once, times up to
// kColBlocks blocks of kLanes columns. Each output element is still one sum in the plain loop's
// order, but R x blocks independent sums advance together, so the loops run at the floating-point
// units' throughput instead of waiting on one add's latency (one row at a time ran at ~4 cycles per
// vector operation). Host back-ends take kAttentionRows rows per thread; devices keep one row per
// thread, since their parallelism comes from threads, not registers.
// s_r[j0 + j] = sum_c a_r[c] * bt[c * ldb + j0 + j] for r < R, j < NB * L (stored: j < valid).
// L: kLanes, or kLanes / 2 for the last columns of a small window (windows of 2^2 patches have
// four tokens: sixteen lanes would compute twelve unused columns).
template <class T, int R, int NB, int L = kLanes>
KOKKOS_INLINE_FUNCTION void tile_times_transposed(const T* const* a, const T* KOKKOS_RESTRICT bt, int ldb,
                                                  int dh, int j0, int valid, T* const* s) {
  T acc[R][NB * L];
  for (int r = 0; r < R; ++r)
    for (int l = 0; l < NB * L; ++l) acc[r][l] = T(0);
  for (int c = 0; c < dh; ++c) {
    const T* KOKKOS_RESTRICT b = bt + std::int64_t(c) * ldb + j0;
    for (int r = 0; r < R; ++r) {
      const T ar = a[r][c];
      for (int k = 0; k < NB; ++k) {
        MANTISSA_SURROGATE_SIMD
        for (int l = 0; l < L; ++l) acc[r][k * L + l] += ar * b[k * L + l];
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < valid; ++j) s[r][j0 + j] = acc[r][j];
}

// s_r[j] = sum_c a_r[c] * bt[c * ldb + j] for r < R, j < size, c in order. bt holds ldb >= size
// columns rounded up to kLanes, so every block of kLanes columns is read whole.
template <class T, int R>
KOKKOS_INLINE_FUNCTION void rows_times_transposed(const T* const* a, const T* KOKKOS_RESTRICT bt, int ldb,
                                                  int dh, int size, T* const* s) {
  int j0 = 0;
  for (; j0 + kColBlocks * kLanes <= size; j0 += kColBlocks * kLanes)
    tile_times_transposed<T, R, kColBlocks>(a, bt, ldb, dh, j0, kColBlocks * kLanes, s);
  for (; j0 < size; j0 += kLanes) {
    const int valid = size - j0 < kLanes ? size - j0 : kLanes;
    if (valid <= kLanes / 2)
      tile_times_transposed<T, R, 1, kLanes / 2>(a, bt, ldb, dh, j0, valid, s);
    else
      tile_times_transposed<T, R, 1>(a, bt, ldb, dh, j0, valid, s);
  }
}

// out_r[c0 + c] = factor * sum_i w_r(i) * rows[tok[i] * ld + c0 + c] for c < NB * L, with
// w_r(i) = wts[r * rstride + i * wstride], i in order.
template <class T, int R, int NB, int L = kLanes>
KOKKOS_INLINE_FUNCTION void tile_weighted(const T* KOKKOS_RESTRICT wts, std::int64_t rstride,
                                          std::int64_t wstride, const T* KOKKOS_RESTRICT rows,
                                          const int* KOKKOS_RESTRICT tok, std::int64_t ld, int count, int c0,
                                          T factor, T* const* out) {
  T acc[R][NB * L];
  for (int r = 0; r < R; ++r)
    for (int l = 0; l < NB * L; ++l) acc[r][l] = T(0);
  for (int i = 0; i < count; ++i) {
    const T* KOKKOS_RESTRICT x = rows + tok[i] * ld + c0;
    for (int r = 0; r < R; ++r) {
      const T wi = wts[r * rstride + i * wstride];
      for (int k = 0; k < NB; ++k) {
        MANTISSA_SURROGATE_SIMD
        for (int l = 0; l < L; ++l) acc[r][k * L + l] += wi * x[k * L + l];
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int l = 0; l < NB * L; ++l) out[r][c0 + l] = factor * acc[r][l];
}

// out_r[c] = factor * sum_i w_r(i) * rows[tok[i] * ld + c] for r < R, c < dh, i in order: blocks
// of kLanes channels, then one of kLanes / 2 (heads of 24 or 40 channels), then single channels.
template <class T, int R>
KOKKOS_INLINE_FUNCTION void weighted_rows(const T* KOKKOS_RESTRICT wts, std::int64_t rstride,
                                          std::int64_t wstride, const T* KOKKOS_RESTRICT rows,
                                          const int* KOKKOS_RESTRICT tok, std::int64_t ld, int count, int dh,
                                          T factor, T* const* out) {
  int c0 = 0;
  for (; c0 + kColBlocks * kLanes <= dh; c0 += kColBlocks * kLanes)
    tile_weighted<T, R, kColBlocks>(wts, rstride, wstride, rows, tok, ld, count, c0, factor, out);
  for (; c0 + kLanes <= dh; c0 += kLanes)
    tile_weighted<T, R, 1>(wts, rstride, wstride, rows, tok, ld, count, c0, factor, out);
  if (c0 + kLanes / 2 <= dh) {
    tile_weighted<T, R, 1, kLanes / 2>(wts, rstride, wstride, rows, tok, ld, count, c0, factor, out);
    c0 += kLanes / 2;
  }
  if (c0 < dh) {  // a tail narrower than kLanes / 2 (dh not a multiple of it): never read past dh
    const int nc = dh - c0;
    for (int r = 0; r < R; ++r) {
      T acc[kLanes];
      for (int l = 0; l < nc; ++l) acc[l] = T(0);
      for (int i = 0; i < count; ++i) {
        const T wi = wts[r * rstride + i * wstride];
        const T* KOKKOS_RESTRICT x = rows + tok[i] * ld + c0;
        for (int l = 0; l < nc; ++l) acc[l] += wi * x[l];
      }
      for (int l = 0; l < nc; ++l) out[r][c0 + l] = factor * acc[l];
    }
  }
}

// The three row kernels of attention for R rows of one (window, head); `tok` lists the window's
// tokens, `first` the first of the R rows; Kt / Vt / P / dS point at the (window, head) block.
// Forward: scores of R queries, safe softmax, probabilities times V into out [N, D].
template <class T, int R>
KOKKOS_INLINE_FUNCTION void attention_forward_tile(const T* qkv, int D, int dh, int h, const int* tok,
                                                   int size, int first, const T* Kt, std::int64_t ldk, T* P,
                                                   std::int64_t wmax, T scale, int round16, T* out) {
  const int ld = 3 * D;
  const T* a[R];
  T* p[R];
  T* o[R];
  for (int r = 0; r < R; ++r) {
    const std::int64_t ti = tok[first + r];
    a[r] = qkv + ti * ld + h * dh;
    p[r] = P + (first + r) * wmax;
    o[r] = out + ti * D + h * dh;
  }
  rows_times_transposed<T, R>(a, Kt, int(ldk), dh, size, p);
  if (size <= 8)
    softmax_rows8<T, R>(p, size, scale, round16);
  else
    for (int r = 0; r < R; ++r) softmax_row(p[r], size, scale, round16);
  weighted_rows<T, R>(p[0], wmax, 1, qkv + 2 * D + h * dh, tok, ld, size, dh, T(1), o);
}

// Backward, per query row: dP = dO V^T, dS = P * (dP - rowsum(P * dP)), dQ = s dS K; under 16-bit
// compute dS is rounded to that type, the gradient the 16-bit products see.
template <class T, int R>
KOKKOS_INLINE_FUNCTION void attention_backward_row_tile(const T* qkv, const T* dO, int D, int dh, int h,
                                                        const int* tok, int size, int first, const T* Vt,
                                                        std::int64_t ldk, const T* P, T* dS,
                                                        std::int64_t wmax, T scale, int round16, T* dqkv) {
  const T* a[R];
  T* ds[R];
  T* g[R];
  for (int r = 0; r < R; ++r) {
    const std::int64_t ti = tok[first + r];
    a[r] = dO + ti * D + h * dh;
    ds[r] = dS + (first + r) * wmax;
    g[r] = dqkv + ti * 3 * D + h * dh;
  }
  rows_times_transposed<T, R>(a, Vt, int(ldk), dh, size, ds);
  for (int r = 0; r < R; ++r) {
    const T* KOKKOS_RESTRICT p = P + (first + r) * wmax;
    T* KOKKOS_RESTRICT d = ds[r];
    const T dot = lane_dot(p, d, size);
    for (int j = 0; j < size; ++j) d[j] = p[j] * (d[j] - dot);
    round_row(d, size, round16);
  }
  weighted_rows<T, R>(ds[0], wmax, 1, qkv + D + h * dh, tok, 3 * D, size, dh, scale, g);
}

// Backward, per key column j: dK = s dS^T Q and dV = P^T dO (column j of dS / P weights the rows).
template <class T, int R>
KOKKOS_INLINE_FUNCTION void attention_backward_column_tile(const T* qkv, const T* dO, int D, int dh, int h,
                                                           const int* tok, int size, int first, const T* P,
                                                           const T* dS, std::int64_t wmax, T scale, T* dqkv) {
  T* gk[R];
  T* gv[R];
  for (int r = 0; r < R; ++r) {
    const std::int64_t tj = tok[first + r];
    gk[r] = dqkv + tj * 3 * D + D + h * dh;
    gv[r] = dqkv + tj * 3 * D + 2 * D + h * dh;
  }
  weighted_rows<T, R>(dS + first, 1, wmax, qkv + h * dh, tok, 3 * D, size, dh, scale, gk);
  weighted_rows<T, R>(P + first, 1, wmax, dO + h * dh, tok, D, size, dh, T(1), gv);
}
// Windows of at most kSmallWindow tokens on host back-ends (2^2 patches: four tokens) take one
// (window, head) block per iteration, with its K (or V) block transposed into the thread's own
// buffer of kSmallWindow columns instead of a gathered [dh, padded(max_size)] block in memory:
// there the gather's strided stores to every line of a block cost as much as the attention.
constexpr int kSmallWindow = kLanes / 2;
constexpr bool kSmallWindowPath = kAttentionRows > 1;
// bt[c * kSmallWindow + j] = qkv[tok[j] * ld + col + c] for j < size, 0 for size <= j < kSmallWindow.
template <class T>
KOKKOS_INLINE_FUNCTION void transpose_small(const T* qkv, std::int64_t ld, int col, const int* tok, int size,
                                            int dh, T* KOKKOS_RESTRICT bt) {
  // Every row of bt zeroed whole (a loop of constant length: one vector store a channel; from
  // `size` on, the compiler called memset for 16 bytes a channel).
  for (int c = 0; c < dh; ++c)
    for (int j = 0; j < kSmallWindow; ++j) bt[c * kSmallWindow + j] = T(0);
  for (int j = 0; j < size; ++j) {
    const T* KOKKOS_RESTRICT src = qkv + tok[j] * ld + col;
    for (int c = 0; c < dh; ++c) bt[c * kSmallWindow + j] = src[c];
  }
}
// Block `idx` of a launch over (window, head) with its K (col0 = D) or V (col0 = 2D) columns
// transposed into bt.
template <class T>
KOKKOS_INLINE_FUNCTION AttentionTile small_window_block(std::int64_t idx, int heads, const int* offsets,
                                                        const int* members, const T* qkv, int D, int col0,
                                                        int dh, T* KOKKOS_RESTRICT bt) {
  const AttentionTile a = attention_tile(idx, 1, heads, offsets);
  transpose_small(qkv, 3 * std::int64_t(D), col0 + a.head * dh, members + a.begin, a.size, dh, bt);
  return a;
}
}  // namespace detail

template <class T>
class WindowAttention {
 public:
  WindowAttention() = default;
  WindowAttention(int embed, int heads) : m_d(embed), m_heads(heads) {
    if (heads < 1 || embed % heads != 0)
      throw Error("surrogate attention: embedding " + std::to_string(embed) + " is not divisible by heads " +
                  std::to_string(heads) + "; choose surrogate.embed as a multiple of surrogate.heads");
    if (embed / heads > kMaxHeadDim)
      throw Error("surrogate attention: " + std::to_string(embed / heads) + " channels per head exceed " +
                  std::to_string(kMaxHeadDim) + "; use more surrogate.heads");
  }

  void forward(Precision compute, const Windows& win, const Matrix<T>& qkv_in, Matrix<T>& out) {
    const std::int64_t n = qkv_in.extent(0);
    m_win = win;
    m_compute = compute;
    // The AVX512-BF16 kernels round operands as they pair them: no rounded copy.
    m_fast = use_avx512bf16(compute);
    m_qkv = m_fast
                ? qkv_in
                : rounded(compute, qkv_in, m_qkv_round, "mantissa::surrogates::WindowAttention::qkv_rounded");
    ensure_shape(out, "mantissa::surrogates::WindowAttention::out", n, m_d);
    const std::int64_t wmax = win.max_size;
    if (wmax > kMaxWindowTokens)
      throw Error("surrogate attention: windows of " + std::to_string(wmax) + " tokens exceed " +
                  std::to_string(kMaxWindowTokens) + "; use a smaller surrogate.window");
    const std::int64_t probs = std::int64_t(win.count) * m_heads * wmax * wmax;
    ensure_size(m_p, "mantissa::surrogates::WindowAttention::probabilities", probs);
    const std::int64_t ldk = padded(wmax);
    const int H = m_heads, D = m_d, dh = m_d / m_heads;
    const T scale = T(1) / math::sqrt(T(dh));
    const int round16 = compute == Precision::fp32 || compute == Precision::fp64 ? 0
                        : compute == Precision::fp16                             ? 2
                                                                                 : 1;
#if MANTISSA_ATTENTION_AVX512BF16
    if constexpr (std::is_same<T, float>::value &&
                  std::is_same<ExecSpace, Kokkos::DefaultHostExecutionSpace>::value) {
      if (m_fast) {
        detail::attention_forward_avx512bf16(win, m_qkv, H, D, float(scale), m_p, m_k2, m_v2, out);
        return;
      }
    }
#endif
    if constexpr (detail::kSmallWindowPath) {
      if (wmax <= detail::kSmallWindow) {
        auto P = m_p;
        auto qkv = m_qkv;
        auto o = out;
        auto offs = win.offsets;
        auto mem = win.members;
        Kokkos::parallel_for(
            "mantissa::surrogates::WindowAttention::forward_small",
            Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H),
            KOKKOS_LAMBDA(const std::int64_t idx) {
              constexpr int R = detail::kAttentionRows, W = detail::kSmallWindow;
              T kt[kMaxHeadDim * W];
              const auto a =
                  detail::small_window_block(idx, H, offs.data(), mem.data(), qkv.data(), D, D, dh, kt);
              const int h = a.head, size = a.size;
              const int* tok = &mem(a.begin);
              T* p = &P(a.block * wmax * wmax);
              int first = 0;
              for (; first + R <= size; first += R)
                detail::attention_forward_tile<T, R>(qkv.data(), D, dh, h, tok, size, first, kt, W, p, wmax,
                                                     scale, round16, o.data());
              for (; first < size; ++first)
                detail::attention_forward_tile<T, 1>(qkv.data(), D, dh, h, tok, size, first, kt, W, p, wmax,
                                                     scale, round16, o.data());
            });
        return;
      }
    }
    gather_transposed(win, m_qkv, H, D, D, m_kt, "mantissa::surrogates::WindowAttention::k_transposed");
    auto P = m_p;
    auto qkv = m_qkv;
    auto Kt = m_kt;
    auto o = out;
    auto offs = win.offsets;
    auto mem = win.members;
    const std::int64_t tiles = (wmax + detail::kAttentionRows - 1) / detail::kAttentionRows;
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::forward",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H * tiles),
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const auto a = detail::attention_tile(idx, tiles, H, offs.data());
          const int h = a.head, size = a.size, first = a.first;
          if (first >= size) return;
          const int* tok = &mem(a.begin);
          const T* kt = &Kt(a.block * dh * ldk);
          T* p = &P(a.block * wmax * wmax);
          if (first + detail::kAttentionRows <= size)
            detail::attention_forward_tile<T, detail::kAttentionRows>(
                qkv.data(), D, dh, h, tok, size, first, kt, ldk, p, wmax, scale, round16, o.data());
          else
            for (int i = first; i < size; ++i)
              detail::attention_forward_tile<T, 1>(qkv.data(), D, dh, h, tok, size, i, kt, ldk, p, wmax,
                                                   scale, round16, o.data());
        });
  }

  void backward(const Matrix<T>& dout_in, Matrix<T>& dqkv) {
    const std::int64_t n = dout_in.extent(0);
    const Windows& win = m_win;
    auto dO = m_fast ? dout_in
                     : rounded(m_compute, dout_in, m_dout_round,
                               "mantissa::surrogates::WindowAttention::dout_rounded");
    ensure_shape(dqkv, "mantissa::surrogates::WindowAttention::dqkv", n, 3 * m_d);
    const std::int64_t wmax = win.max_size;
    ensure_size(m_ds, "mantissa::surrogates::WindowAttention::dscores", std::int64_t(m_p.extent(0)));
    auto P = m_p;
    auto dS = m_ds;
    auto qkv = m_qkv;
    const std::int64_t ldk = padded(wmax);
    const int round16 = m_compute == Precision::fp32 || m_compute == Precision::fp64 ? 0
                        : m_compute == Precision::fp16                               ? 2
                                                                                     : 1;
#if MANTISSA_ATTENTION_AVX512BF16
    if constexpr (std::is_same<T, float>::value &&
                  std::is_same<ExecSpace, Kokkos::DefaultHostExecutionSpace>::value) {
      if (m_fast) {
        const int head_width = m_d / m_heads;
        detail::attention_backward_avx512bf16(
            win, m_qkv, dO, m_heads, m_d, float(T(1) / math::sqrt(T(head_width))), m_p, m_ds, m_pairs, dqkv);
        return;
      }
    }
#endif
    auto g = dqkv;
    auto offs = win.offsets;
    auto mem = win.members;
    const int H = m_heads, D = m_d, dh = m_d / m_heads;
    const T scale = T(1) / math::sqrt(T(dh));
    if constexpr (detail::kSmallWindowPath) {
      if (wmax <= detail::kSmallWindow) {
        Kokkos::parallel_for(
            "mantissa::surrogates::WindowAttention::backward_small",
            Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H),
            KOKKOS_LAMBDA(const std::int64_t idx) {
              constexpr int R = detail::kAttentionRows, W = detail::kSmallWindow;
              T vt[kMaxHeadDim * W];
              const auto a =
                  detail::small_window_block(idx, H, offs.data(), mem.data(), qkv.data(), D, 2 * D, dh, vt);
              const int h = a.head, size = a.size;
              const int* tok = &mem(a.begin);
              const std::int64_t base = a.block * wmax * wmax;
              // The rows (dQ, and dS for the columns) first, as the two launches below do.
              int first = 0;
              for (; first + R <= size; first += R)
                detail::attention_backward_row_tile<T, R>(qkv.data(), dO.data(), D, dh, h, tok, size, first,
                                                          vt, W, &P(base), &dS(base), wmax, scale, round16,
                                                          g.data());
              for (; first < size; ++first)
                detail::attention_backward_row_tile<T, 1>(qkv.data(), dO.data(), D, dh, h, tok, size, first,
                                                          vt, W, &P(base), &dS(base), wmax, scale, round16,
                                                          g.data());
              for (first = 0; first + R <= size; first += R)
                detail::attention_backward_column_tile<T, R>(qkv.data(), dO.data(), D, dh, h, tok, size,
                                                             first, &P(base), &dS(base), wmax, scale,
                                                             g.data());
              for (; first < size; ++first)
                detail::attention_backward_column_tile<T, 1>(qkv.data(), dO.data(), D, dh, h, tok, size,
                                                             first, &P(base), &dS(base), wmax, scale,
                                                             g.data());
            });
        return;
      }
    }
    gather_transposed(win, m_qkv, m_heads, m_d, 2 * m_d, m_vt,
                      "mantissa::surrogates::WindowAttention::v_transposed");
    auto Vt = m_vt;
    const std::int64_t tiles = (wmax + detail::kAttentionRows - 1) / detail::kAttentionRows;
    const auto policy = Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H * tiles);
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::backward_rows", policy,
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const auto a = detail::attention_tile(idx, tiles, H, offs.data());
          const int h = a.head, size = a.size, first = a.first;
          if (first >= size) return;
          const int* tok = &mem(a.begin);
          const T* vt = &Vt(a.block * dh * ldk);
          const std::int64_t base = a.block * wmax * wmax;
          if (first + detail::kAttentionRows <= size)
            detail::attention_backward_row_tile<T, detail::kAttentionRows>(
                qkv.data(), dO.data(), D, dh, h, tok, size, first, vt, ldk, &P(base), &dS(base), wmax, scale,
                round16, g.data());
          else
            for (int i = first; i < size; ++i)
              detail::attention_backward_row_tile<T, 1>(qkv.data(), dO.data(), D, dh, h, tok, size, i, vt,
                                                        ldk, &P(base), &dS(base), wmax, scale, round16,
                                                        g.data());
        });
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::backward_columns", policy,
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const auto a = detail::attention_tile(idx, tiles, H, offs.data());
          const int h = a.head, size = a.size, first = a.first;
          if (first >= size) return;
          const int* tok = &mem(a.begin);
          const std::int64_t base = a.block * wmax * wmax;
          if (first + detail::kAttentionRows <= size)
            detail::attention_backward_column_tile<T, detail::kAttentionRows>(
                qkv.data(), dO.data(), D, dh, h, tok, size, first, &P(base), &dS(base), wmax, scale,
                g.data());
          else
            for (int j = first; j < size; ++j)
              detail::attention_backward_column_tile<T, 1>(qkv.data(), dO.data(), D, dh, h, tok, size, j,
                                                           &P(base), &dS(base), wmax, scale, g.data());
        });
  }

  // Public only because nvcc rejects an extended __host__ __device__ lambda (KOKKOS_LAMBDA)
  // inside a private or protected member function; not part of the interface.
 public:
  // Whether this forward (and its backward) runs the AVX512-BF16 host kernels: bf16 compute, and fp8
  // (whose attention runs in bf16).
  bool use_avx512bf16(Precision compute) const {
#if MANTISSA_ATTENTION_AVX512BF16
    return std::is_same<T, float>::value &&
           std::is_same<ExecSpace, Kokkos::DefaultHostExecutionSpace>::value && compute != Precision::fp32 &&
           compute != Precision::fp64 && compute != Precision::fp16 &&
           (m_d / m_heads) % detail::kLanes == 0 && attention_avx512bf16_enabled();
#else
    (void)compute;
    return false;
#endif
  }

  // Columns of the transposed K / V blocks: max_size rounded up to detail::kLanes.
  static std::int64_t padded(std::int64_t wmax) {
    return (wmax + detail::kLanes - 1) / detail::kLanes * detail::kLanes;
  }

  // One of K (column offset D) or V (2D) of every (window, head) as [dh, padded(max_size)] blocks;
  // columns past a window's size are zero when allocated and are read but never used.
  static void gather_transposed(const Windows& win, const Matrix<T>& qkv, int H, int D, int offset,
                                Vector<T>& kt, const char* label) {
    const std::int64_t wmax = win.max_size, ldk = padded(wmax);
    const int dh = D / H;
    const std::int64_t total = std::int64_t(win.count) * H * dh * ldk;
    ensure_size(kt, label, total);
    auto K = kt;
    auto offs = win.offsets;
    auto mem = win.members;
    // One (window, head) block per iteration: the token loop inside, no index division per token.
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::gather_transposed",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H), KOKKOS_LAMBDA(const std::int64_t wh) {
          const std::int64_t h = wh % H, w = wh / H;
          const int begin = offs(w), size = offs(w + 1) - offs(w);
          T* KOKKOS_RESTRICT dst = &K(wh * dh * ldk);
          for (int j = 0; j < size; ++j) {
            const T* KOKKOS_RESTRICT src = &qkv(mem(begin + j), offset + h * dh);
            for (int c = 0; c < dh; ++c) dst[c * ldk + j] = src[c];
          }
        });
  }

  // The operand as the compute precision sees it: itself in fp32/fp64, else a rounded copy.
  static Matrix<T> rounded(Precision p, const Matrix<T>& x, Matrix<T>& buffer, const char* label) {
    if (p == Precision::fp32 || p == Precision::fp64) return x;
    ensure_shape(buffer, label, x.extent(0), x.extent(1));
    auto b = buffer;
    const bool half = p == Precision::fp16;
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::round",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(x.size())), KOKKOS_LAMBDA(const std::int64_t k) {
          const float v = float(x.data()[k]);
          b.data()[k] = T(half ? float(fp16(v)) : float(bf16(v)));
        });
    return buffer;
  }

 private:
  int m_d = 0, m_heads = 1;
  Precision m_compute = Precision::fp32;
  bool m_fast = false;  // the AVX512-BF16 kernels run this forward and its backward
  Windows m_win;
  Matrix<T> m_qkv, m_qkv_round, m_dout_round;
  Vector<T> m_p, m_ds, m_kt, m_vt;
  // bf16 pairs of K and V for the AVX512-BF16 forward (detail/AttentionAvx512Bf16.hpp).
  Kokkos::View<std::uint32_t*, MemSpace> m_k2, m_v2, m_pairs;
};

}  // namespace mantissa::surrogates
