#pragma once
// Multi-head self-attention inside windows of tokens (Vaswani et al., NeurIPS 2017; windows as
// in Liu et al., Swin Transformer, ICCV 2021). Input: qkv [N, 3D] from one Linear (q, k, v
// blocks of D columns, head h in columns h*dh .. h*dh+dh-1 of each block, as PyTorch's
// reshape(N, 3, H, dh)); output [N, D] before the output projection.
//
// Softmax is made safe by subtracting the row maximum before exp, so no score can overflow
// (every exponent is <= 0) whatever the precision; probabilities are kept for the backward:
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),  dQ = s dS K,  dK = s dS^T Q,
// with s = 1/sqrt(dh). One thread per (window, head, row); windows hold at most max_size tokens.
// K and V are first gathered per (window, head) into transposed blocks [dh, max_size], so the
// score rows (Q K^T and dO V^T) are sums of channel-scaled contiguous rows: every inner loop runs
// over contiguous memory with no reduction and vectorises (a dot product per score would be a
// serial reduction the compiler may not reorder); the sums are register-blocked in kLanes
// (detail::row_times_transposed, detail::weighted_rows), each in the same order as a plain loop. The windows
// are ragged (cut at tile edges, token lists rather than strides), which is why these are loops and not
// batched BLAS calls.
//
// Under 16- and 8-bit compute the q, k, v and dO operands are rounded to bf16 (fp16 for fp16
// compute) and the products accumulate in fp32, as the attention GEMMs of mixed-precision
// training do; fp8 recipes keep attention in 16-bit (Micikevicius et al., arXiv:2209.05433).
#include <mantissa/core/LowPrecision.hpp>
#include <surrogates/TokenLayout.hpp>
#include <surrogates/detail/FastMath.hpp>

#include <string>

namespace mantissa::surrogates {

// Per-thread scratch bounds: a window of at most 1024 tokens (8^3 with room), heads of at most
// 256 channels. Rows of scores and of outputs live in registers/stack so the loops over the head
// channels carry no reduction and vectorize.
constexpr int kMaxWindowTokens = 1024;
constexpr int kMaxHeadDim = 256;

namespace detail {
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
// Lanes of the register-blocked loops below: one AVX-512 register of fp32, two of fp64.
constexpr int kLanes = 16;
// Marks the kLanes loops as the ones to vectorise: GCC otherwise unrolls them completely and
// vectorises the enclosing loop with gathers instead. OpenMP's simd directive where the host
// compiler sees OpenMP; nothing elsewhere (device compilers vectorise across threads).
#if defined(_OPENMP) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define MANTISSA_SURROGATE_SIMD _Pragma("omp simd")
#else
#define MANTISSA_SURROGATE_SIMD
#endif

// s[j] = sum_c a[c] * bt[c * ldb + j] for j < size, c in order. bt holds ldb >= size columns
// rounded up to kLanes, so every block of kLanes columns is read whole; its partial sums stay in
// registers across the loop over c.
template <class T>
KOKKOS_INLINE_FUNCTION void row_times_transposed(const T* KOKKOS_RESTRICT a, const T* KOKKOS_RESTRICT bt,
                                                 int ldb, int dh, int size, T* KOKKOS_RESTRICT s) {
  for (int j0 = 0; j0 < size; j0 += kLanes) {
    T acc[kLanes];
    for (int l = 0; l < kLanes; ++l) acc[l] = T(0);
    for (int c = 0; c < dh; ++c) {
      const T ac = a[c];
      const T* KOKKOS_RESTRICT b = bt + std::int64_t(c) * ldb + j0;
      MANTISSA_SURROGATE_SIMD
      for (int l = 0; l < kLanes; ++l) acc[l] += ac * b[l];
    }
    const int nl = size - j0 < kLanes ? size - j0 : kLanes;
    for (int l = 0; l < nl; ++l) s[j0 + l] = acc[l];
  }
}

// out[c] = factor * sum_i wts[i * wstride] * rows[tok[i] * ld + c] for c < dh, i in order: the
// channels in blocks of kLanes whose sums stay in registers across the loop over i.
template <class T>
KOKKOS_INLINE_FUNCTION void weighted_rows(const T* KOKKOS_RESTRICT wts, std::int64_t wstride,
                                          const T* KOKKOS_RESTRICT rows, const int* KOKKOS_RESTRICT tok,
                                          std::int64_t ld, int count, int dh, T factor,
                                          T* KOKKOS_RESTRICT out) {
  int c0 = 0;
  for (; c0 + kLanes <= dh; c0 += kLanes) {
    T acc[kLanes];
    for (int l = 0; l < kLanes; ++l) acc[l] = T(0);
    for (int i = 0; i < count; ++i) {
      const T wi = wts[i * wstride];
      const T* KOKKOS_RESTRICT r = rows + tok[i] * ld + c0;
      MANTISSA_SURROGATE_SIMD
      for (int l = 0; l < kLanes; ++l) acc[l] += wi * r[l];
    }
    for (int l = 0; l < kLanes; ++l) out[c0 + l] = factor * acc[l];
  }
  if (c0 < dh) {  // a tail narrower than kLanes (dh not a multiple of it): never read past dh
    T acc[kLanes];
    const int nc = dh - c0;
    for (int l = 0; l < nc; ++l) acc[l] = T(0);
    for (int i = 0; i < count; ++i) {
      const T wi = wts[i * wstride];
      const T* KOKKOS_RESTRICT r = rows + tok[i] * ld + c0;
      for (int l = 0; l < nc; ++l) acc[l] += wi * r[l];
    }
    for (int l = 0; l < nc; ++l) out[c0 + l] = factor * acc[l];
  }
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
    m_qkv = rounded(compute, qkv_in, m_qkv_round, "mantissa::surrogates::WindowAttention::qkv_rounded");
    ensure_shape(out, "mantissa::surrogates::WindowAttention::out", n, m_d);
    const std::int64_t wmax = win.max_size;
    if (wmax > kMaxWindowTokens)
      throw Error("surrogate attention: windows of " + std::to_string(wmax) + " tokens exceed " +
                  std::to_string(kMaxWindowTokens) + "; use a smaller surrogate.window");
    const std::int64_t probs = std::int64_t(win.count) * m_heads * wmax * wmax;
    ensure_size(m_p, "mantissa::surrogates::WindowAttention::probabilities", probs);
    gather_transposed(win, m_qkv, m_heads, m_d, m_kt, m_vt);
    const std::int64_t ldk = padded(wmax);
    auto P = m_p;
    auto qkv = m_qkv;
    auto Kt = m_kt;
    auto o = out;
    auto offs = win.offsets;
    auto mem = win.members;
    const int H = m_heads, D = m_d, dh = m_d / m_heads;
    const T scale = T(1) / math::sqrt(T(dh));
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::forward",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H * wmax),
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const std::int64_t i = idx % wmax, h = (idx / wmax) % H, w = idx / (wmax * H);
          const int begin = offs(w), size = offs(w + 1) - offs(w);
          if (i >= size) return;
          const int ti = mem(begin + i);
          T* KOKKOS_RESTRICT p = &P(((w * H + h) * wmax + i) * wmax);
          const T* row = qkv.data();
          const int ld = 3 * D;
          detail::row_times_transposed(row + std::int64_t(ti) * ld + h * dh, &Kt((w * H + h) * dh * ldk), ldk,
                                       dh, size, p);
          T mx = scale * p[0];
          for (int j = 0; j < size; ++j) {
            p[j] *= scale;
            mx = p[j] > mx ? p[j] : mx;
          }
          for (int j = 0; j < size; ++j) p[j] = detail::softmax_exp(p[j] - mx);
          T sum = T(0);
          for (int j = 0; j < size; ++j) sum += p[j];
          const T inv = T(1) / sum;
          for (int j = 0; j < size; ++j) p[j] *= inv;
          detail::weighted_rows(p, 1, row + 2 * D + h * dh, &mem(begin), ld, size, dh, T(1), &o(ti, h * dh));
        });
  }

  void backward(const Matrix<T>& dout_in, Matrix<T>& dqkv) {
    const std::int64_t n = dout_in.extent(0);
    const Windows& win = m_win;
    auto dO =
        rounded(m_compute, dout_in, m_dout_round, "mantissa::surrogates::WindowAttention::dout_rounded");
    ensure_shape(dqkv, "mantissa::surrogates::WindowAttention::dqkv", n, 3 * m_d);
    const std::int64_t wmax = win.max_size;
    ensure_size(m_ds, "mantissa::surrogates::WindowAttention::dscores", std::int64_t(m_p.extent(0)));
    auto P = m_p;
    auto dS = m_ds;
    auto qkv = m_qkv;
    auto Vt = m_vt;
    const std::int64_t ldk = padded(wmax);
    auto g = dqkv;
    auto offs = win.offsets;
    auto mem = win.members;
    const int H = m_heads, D = m_d, dh = m_d / m_heads;
    const T scale = T(1) / math::sqrt(T(dh));
    const auto policy = Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H * wmax);
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::backward_rows", policy,
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const std::int64_t i = idx % wmax, h = (idx / wmax) % H, w = idx / (wmax * H);
          const int begin = offs(w), size = offs(w + 1) - offs(w);
          if (i >= size) return;
          const int ti = mem(begin + i);
          const T* KOKKOS_RESTRICT p = &P(((w * H + h) * wmax + i) * wmax);
          T* KOKKOS_RESTRICT ds = &dS(((w * H + h) * wmax + i) * wmax);
          const T* row = qkv.data();
          const int ld = 3 * D;
          detail::row_times_transposed(dO.data() + std::int64_t(ti) * D + h * dh, &Vt((w * H + h) * dh * ldk),
                                       ldk, dh, size, ds);
          T dot = T(0);
          for (int j = 0; j < size; ++j) dot += p[j] * ds[j];
          for (int j = 0; j < size; ++j) ds[j] = p[j] * (ds[j] - dot);
          detail::weighted_rows(ds, 1, row + D + h * dh, &mem(begin), ld, size, dh, scale, &g(ti, h * dh));
        });
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::backward_columns", policy,
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const std::int64_t j = idx % wmax, h = (idx / wmax) % H, w = idx / (wmax * H);
          const int begin = offs(w), size = offs(w + 1) - offs(w);
          if (j >= size) return;
          const int tj = mem(begin + j);
          const std::int64_t base = (w * H + h) * wmax * wmax + j;
          // dK = s dS^T Q and dV = P^T dO: column j of dS / P weights the window's rows.
          detail::weighted_rows(&dS(base), wmax, qkv.data() + h * dh, &mem(begin), 3 * D, size, dh, scale,
                                &g(tj, D + h * dh));
          detail::weighted_rows(&P(base), wmax, dO.data() + h * dh, &mem(begin), D, size, dh, T(1),
                                &g(tj, 2 * D + h * dh));
        });
  }

  // Public only because nvcc rejects an extended __host__ __device__ lambda (KOKKOS_LAMBDA)
  // inside a private or protected member function; not part of the interface.
 public:
  // Columns of the transposed K / V blocks: max_size rounded up to detail::kLanes.
  static std::int64_t padded(std::int64_t wmax) {
    return (wmax + detail::kLanes - 1) / detail::kLanes * detail::kLanes;
  }

  // K and V of every (window, head) as [dh, padded(max_size)] blocks; columns past a window's size
  // are zero when allocated and are read but never used.
  static void gather_transposed(const Windows& win, const Matrix<T>& qkv, int H, int D, Vector<T>& kt,
                                Vector<T>& vt) {
    const std::int64_t wmax = win.max_size, ldk = padded(wmax);
    const int dh = D / H;
    const std::int64_t total = std::int64_t(win.count) * H * dh * ldk;
    ensure_size(kt, "mantissa::surrogates::WindowAttention::k_transposed", total);
    ensure_size(vt, "mantissa::surrogates::WindowAttention::v_transposed", total);
    auto K = kt;
    auto V = vt;
    auto offs = win.offsets;
    auto mem = win.members;
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::gather_transposed",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(win.count) * H * wmax),
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const std::int64_t j = idx % wmax, h = (idx / wmax) % H, w = idx / (wmax * H);
          const int begin = offs(w), size = offs(w + 1) - offs(w);
          if (j >= size) return;
          const T* KOKKOS_RESTRICT src = &qkv(mem(begin + j), 0);
          const std::int64_t base = (w * H + h) * dh * ldk + j;
          for (int c = 0; c < dh; ++c) {
            K(base + c * ldk) = src[D + h * dh + c];
            V(base + c * ldk) = src[2 * D + h * dh + c];
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
  Windows m_win;
  Matrix<T> m_qkv, m_qkv_round, m_dout_round;
  Vector<T> m_p, m_ds, m_kt, m_vt;
};

}  // namespace mantissa::surrogates
