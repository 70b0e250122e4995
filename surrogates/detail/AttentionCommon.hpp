#pragma once
// What window attention's portable kernels (WindowAttention.hpp) and its AVX512-BF16 host kernel
// (AttentionAvx512Bf16.hpp) share: scratch bounds and the softmax of one score row.
#include <mantissa/core/LowPrecision.hpp>
#include <surrogates/Tensor.hpp>
#include <surrogates/detail/FastMath.hpp>
#include <surrogates/detail/Lanes.hpp>

namespace mantissa::surrogates {

// Per-thread scratch bounds: a window of at most 1024 tokens (8^3 with room), heads of at most
// 256 channels. Rows of scores and of outputs live in registers/stack so the loops over the head
// channels carry no reduction and vectorize.
constexpr int kMaxWindowTokens = 1024;
constexpr int kMaxHeadDim = 256;

namespace detail {
// Register tiles of the attention kernels: rows x kColBlocks blocks of kLanes columns, kAttentionRows
// rows per thread on host back-ends, one on devices (see WindowAttention.hpp).
constexpr int kColBlocks = 4;
constexpr int kAttentionRows =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, ExecSpace::memory_space>::accessible ? 4 : 1;

// exp for the softmax, whose arguments are <= 0: math::exp, except for fp32 on hosts, where a
// polynomial that the compiler can vectorise replaces the libm call (see FastMath.hpp).
template <class T>
KOKKOS_INLINE_FUNCTION T softmax_exp(T x) {
  return math::exp(x);
}
template <>
KOKKOS_INLINE_FUNCTION float softmax_exp<float>(float x) {
  return exp_nonpositive(x);
}
// Work item `idx` of a launch over (window, head, tile of kAttentionRows rows), tiles fastest:
// block = window * heads + head, the window's tokens [begin, begin + size) of its member list, and
// the tile's first row (first >= size: an empty tile of a smaller window, nothing to do).
struct AttentionTile {
  std::int64_t block;
  int head, begin, size, first;
};
KOKKOS_INLINE_FUNCTION AttentionTile attention_tile(std::int64_t idx, std::int64_t tiles, int heads,
                                                    const int* offsets) {
  AttentionTile a;
  a.block = idx / tiles;
  a.head = int(a.block % heads);
  const std::int64_t w = a.block / heads;
  a.begin = offsets[w];
  a.size = offsets[w + 1] - offsets[w];
  a.first = int(idx % tiles) * kAttentionRows;
  return a;
}

// Rounds a row to bf16 (round16 = 1) or fp16 (2) values; 0 leaves it.
template <class T>
KOKKOS_INLINE_FUNCTION void round_row(T* KOKKOS_RESTRICT x, int size, int round16) {
  if (round16 == 1)
    for (int j = 0; j < size; ++j) x[j] = T(float(bf16(float(x[j]))));
  else if (round16 == 2)
    for (int j = 0; j < size; ++j) x[j] = T(float(fp16(float(x[j]))));
}

// Safe softmax of one score row in place: scale, subtract the maximum, exp, normalise; under 16-bit
// compute (round16: 1 = bf16, 2 = fp16) the probabilities are then rounded to that type, as
// autocast rounds them for the probabilities-times-V product; the rounded values are what the
// backward uses too.
template <class T>
KOKKOS_INLINE_FUNCTION void softmax_row(T* KOKKOS_RESTRICT pr, int size, T scale, int round16) {
  for (int j = 0; j < size; ++j) pr[j] *= scale;
  const T mx = lane_max(pr, size);
  for (int j = 0; j < size; ++j) pr[j] = softmax_exp(pr[j] - mx);
  const T inv = T(1) / lane_sum(pr, size);
  for (int j = 0; j < size; ++j) pr[j] *= inv;
  round_row(pr, size, round16);
}

// softmax_row on R rows of at most 8 entries at once (windows of 2^2 patches: four tokens), the
// same arithmetic per row (so the same bits): the scaled scores, their maximum, exp, and the sum
// in lane_sum's order (entry j in partial j, the partials combined pairwise: with at most 8
// entries the upper eight of the sixteen partials are zero and add nothing), over R x 8 entries
// that vectorise, where softmax_row ran each short row through scalar exp calls.
template <class T, int R>
KOKKOS_INLINE_FUNCTION void softmax_rows8(T* const* p, int size, T scale, int round16) {
  constexpr int W = 8;
  static_assert(kLanes >= 2 * W, "softmax_rows8 reproduces lane_sum with at least 16 partials");
  T x[R * W], mx[R];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < W; ++j) x[r * W + j] = j < size ? p[r][j] * scale : T(0);
    T m = x[r * W];
    for (int j = 1; j < size; ++j) m = x[r * W + j] > m ? x[r * W + j] : m;
    mx[r] = m;
  }
  // exp of every entry, then the padding set to zero: a conditional call kept this loop scalar.
  for (int r = 0; r < R; ++r) {
    MANTISSA_SURROGATE_SIMD
    for (int j = 0; j < W; ++j) {
      const T e = softmax_exp(x[r * W + j] - mx[r]);
      x[r * W + j] = j < size ? e : T(0);
    }
  }
  for (int r = 0; r < R; ++r) {
    const T* e = x + r * W;
    const T s0 = e[0] + e[4], s1 = e[1] + e[5], s2 = e[2] + e[6], s3 = e[3] + e[7];
    const T inv = T(1) / ((s0 + s2) + (s1 + s3));
    for (int j = 0; j < size; ++j) p[r][j] = e[j] * inv;
    round_row(p[r], size, round16);
  }
}

}  // namespace detail
}  // namespace mantissa::surrogates
