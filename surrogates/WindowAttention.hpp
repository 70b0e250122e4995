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
//
// Under 16- and 8-bit compute the q, k, v and dO operands are rounded to bf16 (fp16 for fp16
// compute) and the products accumulate in fp32, as the attention GEMMs of mixed-precision
// training do; fp8 recipes keep attention in 16-bit (Micikevicius et al., arXiv:2209.05433).
#include <mantissa/core/LowPrecision.hpp>
#include <surrogates/TokenLayout.hpp>

#include <string>

namespace mantissa::surrogates {

template <class T>
class WindowAttention {
 public:
  WindowAttention() = default;
  WindowAttention(int embed, int heads) : m_d(embed), m_heads(heads) {
    if (heads < 1 || embed % heads != 0)
      throw Error("surrogate attention: embedding " + std::to_string(embed) + " is not divisible by heads " +
                  std::to_string(heads) + "; choose surrogate.embed as a multiple of surrogate.heads");
  }

  void forward(Precision compute, const Windows& win, const Matrix<T>& qkv_in, Matrix<T>& out) {
    const std::int64_t n = qkv_in.extent(0);
    m_win = win;
    m_compute = compute;
    m_qkv = rounded(compute, qkv_in, m_qkv_round, "mantissa::surrogates::WindowAttention::qkv_rounded");
    ensure_shape(out, "mantissa::surrogates::WindowAttention::out", n, m_d);
    const std::int64_t wmax = win.max_size;
    const std::int64_t probs = std::int64_t(win.count) * m_heads * wmax * wmax;
    ensure_size(m_p, "mantissa::surrogates::WindowAttention::probabilities", probs);
    auto P = m_p;
    auto qkv = m_qkv;
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
          T* p = &P(((w * H + h) * wmax + i) * wmax);
          T mx = T(0);
          for (int j = 0; j < size; ++j) {
            const int tj = mem(begin + j);
            T s = T(0);
            for (int c = 0; c < dh; ++c) s += qkv(ti, h * dh + c) * qkv(tj, D + h * dh + c);
            s *= scale;
            p[j] = s;
            mx = (j == 0 || s > mx) ? s : mx;
          }
          T sum = T(0);
          for (int j = 0; j < size; ++j) {
            p[j] = math::exp(p[j] - mx);
            sum += p[j];
          }
          const T inv = T(1) / sum;
          for (int j = 0; j < size; ++j) p[j] *= inv;
          for (int c = 0; c < dh; ++c) {
            T acc = T(0);
            for (int j = 0; j < size; ++j) acc += p[j] * qkv(mem(begin + j), 2 * D + h * dh + c);
            o(ti, h * dh + c) = acc;
          }
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
          const T* p = &P(((w * H + h) * wmax + i) * wmax);
          T* ds = &dS(((w * H + h) * wmax + i) * wmax);
          T dot = T(0);
          for (int j = 0; j < size; ++j) {
            const int tj = mem(begin + j);
            T dp = T(0);
            for (int c = 0; c < dh; ++c) dp += dO(ti, h * dh + c) * qkv(tj, 2 * D + h * dh + c);
            ds[j] = dp;
            dot += p[j] * dp;
          }
          for (int j = 0; j < size; ++j) ds[j] = p[j] * (ds[j] - dot);
          for (int c = 0; c < dh; ++c) {
            T acc = T(0);
            for (int j = 0; j < size; ++j) acc += ds[j] * qkv(mem(begin + j), D + h * dh + c);
            g(ti, h * dh + c) = scale * acc;
          }
        });
    Kokkos::parallel_for(
        "mantissa::surrogates::WindowAttention::backward_columns", policy,
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const std::int64_t j = idx % wmax, h = (idx / wmax) % H, w = idx / (wmax * H);
          const int begin = offs(w), size = offs(w + 1) - offs(w);
          if (j >= size) return;
          const int tj = mem(begin + j);
          const std::int64_t base = (w * H + h) * wmax * wmax;
          for (int c = 0; c < dh; ++c) {
            T ak = T(0), av = T(0);
            for (int i = 0; i < size; ++i) {
              const int ti = mem(begin + i);
              ak += dS(base + i * wmax + j) * qkv(ti, h * dh + c);
              av += P(base + i * wmax + j) * dO(ti, h * dh + c);
            }
            g(tj, D + h * dh + c) = scale * ak;
            g(tj, 2 * D + h * dh + c) = av;
          }
        });
  }

 private:
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

  int m_d = 0, m_heads = 1;
  Precision m_compute = Precision::fp32;
  Windows m_win;
  Matrix<T> m_qkv, m_qkv_round, m_dout_round;
  Vector<T> m_p, m_ds;
};

}  // namespace mantissa::surrogates
