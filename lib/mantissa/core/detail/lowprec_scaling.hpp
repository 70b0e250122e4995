#pragma once
// Per-tensor scaling for fp8 (included by LowPrecision.hpp; the names are public).
//
// fp8 has so little range (E4M3: 2^-9 .. 448) that tensors are stored as q = x * scale with
// one float scale per tensor, chosen so that the largest magnitude lands near the format's
// maximum. "Delayed scaling" as in NVIDIA Transformer Engine (Micikevicius et al., "FP8
// Formats for Deep Learning", arXiv:2209.05433, 2022): the scale for the next step comes from
// a history of the amax values seen in the last N steps, not from the tensor about to be
// cast, so that casting needs no extra pass; a margin of 2^-margin leaves headroom for growth.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace mantissa {

namespace detail {
template <class View>
void require_contiguous(const View& v, const char* who) {
  if (!v.span_is_contiguous())
    throw Error(std::string(who) + ": View '" + v.label() +
                "' is not contiguous; pass a contiguous View (e.g. a LayoutRight/LayoutLeft allocation, "
                "not a strided subview)");
}
}  // namespace detail

// Largest |x| over all elements of a contiguous View of any rank and value type, as float.
// NaN elements are ignored (fmax), Inf elements give Inf.
template <class ExecSpace, class View>
float amax(const ExecSpace& space, const View& v) {
  detail::require_contiguous(v, "mantissa::amax");
  const auto* data = v.data();
  float result = 0.0f;
  Kokkos::parallel_reduce(
      "mantissa::core::amax", Kokkos::RangePolicy<ExecSpace>(space, 0, v.span()),
      KOKKOS_LAMBDA(const std::size_t i, float& m) {
        m = math::fmax(m, math::fabs(static_cast<float>(data[i])));
      },
      Kokkos::Max<float>(result));
  return result > 0.0f ? result : 0.0f;  // an empty View reduces to the identity, -max
}
template <class View>
float amax(const View& v) {
  return amax(typename View::execution_space(), v);
}

// dst = Q(src * scale), element by element; Q = the value type of dst with its default
// overflow rule (saturating for fp8). Views must be contiguous with the same number of
// elements; their layouts must match for the element order to mean the same thing.
template <class ExecSpace, class Src, class Dst>
void quantize(const ExecSpace& space, const Src& src, const Dst& dst, float scale) {
  using Q = typename Dst::non_const_value_type;
  detail::require_contiguous(src, "mantissa::quantize");
  detail::require_contiguous(dst, "mantissa::quantize");
  if (src.span() != dst.span())
    throw Error("mantissa::quantize: source '" + src.label() + "' has " + std::to_string(src.span()) +
                " elements but destination '" + dst.label() + "' has " + std::to_string(dst.span()) +
                "; allocate the destination with the source's extents");
  const auto* s = src.data();
  auto* d = dst.data();
  Kokkos::parallel_for(
      "mantissa::core::quantize", Kokkos::RangePolicy<ExecSpace>(space, 0, src.span()),
      KOKKOS_LAMBDA(const std::size_t i) { d[i] = Q(static_cast<float>(s[i]) * scale); });
}
template <class Src, class Dst>
void quantize(const Src& src, const Dst& dst, float scale) {
  quantize(typename Dst::execution_space(), src, dst, scale);
}

// dst = src / scale (computed as src * (1/scale) in float, then converted to dst's type).
template <class ExecSpace, class Src, class Dst>
void dequantize(const ExecSpace& space, const Src& src, const Dst& dst, float scale) {
  using R = typename Dst::non_const_value_type;
  detail::require_contiguous(src, "mantissa::dequantize");
  detail::require_contiguous(dst, "mantissa::dequantize");
  if (src.span() != dst.span())
    throw Error("mantissa::dequantize: source '" + src.label() + "' has " + std::to_string(src.span()) +
                " elements but destination '" + dst.label() + "' has " + std::to_string(dst.span()) +
                "; allocate the destination with the source's extents");
  if (!(scale > 0.0f) || !(scale < 3.4e38f))
    throw Error("mantissa::dequantize: scale " + std::to_string(scale) +
                " is not a positive finite number; use the scale the data was quantized with");
  const float inv = 1.0f / scale;
  const auto* s = src.data();
  auto* d = dst.data();
  Kokkos::parallel_for(
      "mantissa::core::dequantize", Kokkos::RangePolicy<ExecSpace>(space, 0, src.span()),
      KOKKOS_LAMBDA(const std::size_t i) { d[i] = R(static_cast<float>(s[i]) * inv); });
}
template <class Src, class Dst>
void dequantize(const Src& src, const Dst& dst, float scale) {
  dequantize(typename Dst::execution_space(), src, dst, scale);
}

// Configuration of delayed scaling (Transformer Engine's DelayedScaling recipe).
struct Fp8ScalingConfig {
  enum class AmaxAlgorithm { max, most_recent };
  int history_length = 16;  // amax values remembered (TE: amax_history_len)
  int margin = 0;           // scale is divided by 2^margin (TE: margin)
  AmaxAlgorithm algorithm = AmaxAlgorithm::max;
};

// Host-side state of one tensor's scale. update() takes the amax measured when the tensor was
// last cast and computes the scale for the next cast:
//   scale = max_representable / amax_from_history / 2^margin,
// keeping the previous scale while amax is 0 or not finite (TE does the same).
class DelayedScaling {
 public:
  DelayedScaling(float max_representable, const Fp8ScalingConfig& config = {})
      : m_max(max_representable), m_config(config) {
    if (config.history_length < 1)
      throw Error("fp8 scaling: history_length = " + std::to_string(config.history_length) +
                  " must be at least 1 (1 means: use the last amax only)");
    if (config.margin < 0 || config.margin > 64)
      throw Error("fp8 scaling: margin = " + std::to_string(config.margin) +
                  " must be in [0, 64] (powers of two of headroom below the format's maximum)");
    if (!(max_representable > 0.0f) || !(max_representable < 3.4e38f))
      throw Error("fp8 scaling: max_representable = " + std::to_string(max_representable) +
                  " must be a positive finite number (e.g. 448 for fp8_e4m3)");
  }

  // The scaling for value type T (fp8_e4m3, fp8_e5m2, ...): its largest finite value.
  template <class T>
  static DelayedScaling for_type(const Fp8ScalingConfig& config = {}) {
    return DelayedScaling(static_cast<float>(precision_traits<T>::max()), config);
  }

  void update(float new_amax) {
    m_history.push_back(new_amax);
    if (static_cast<int>(m_history.size()) > m_config.history_length) m_history.erase(m_history.begin());
    float a = new_amax;
    if (m_config.algorithm == Fp8ScalingConfig::AmaxAlgorithm::max)
      a = *std::max_element(m_history.begin(), m_history.end());
    if (a > 0.0f && a < 3.4e38f) {
      float s = m_max / a;
      for (int i = 0; i < m_config.margin; ++i) s *= 0.5f;
      m_scale = s;
    }
  }
  float scale() const { return m_scale; }
  float scale_inverse() const { return 1.0f / m_scale; }
  const std::vector<float>& history() const { return m_history; }
  const Fp8ScalingConfig& config() const { return m_config; }

 private:
  float m_max;
  Fp8ScalingConfig m_config;
  float m_scale = 1.0f;
  std::vector<float> m_history;
};

}  // namespace mantissa
