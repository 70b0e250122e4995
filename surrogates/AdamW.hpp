#pragma once
// AdamW (Loshchilov and Hutter, "Decoupled Weight Decay Regularization", ICLR 2019) exactly as
// PyTorch's torch.optim.AdamW: p -= lr*wd*p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps). The learning rate follows a linear
// warm-up and a cosine decay (Loshchilov and Hutter, SGDR, ICLR 2017); gradients are clipped by
// their global L2 norm as torch.nn.utils.clip_grad_norm_ does.
#include <surrogates/Parameter.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace mantissa::surrogates {

struct OptimizerConfig {
  double learning_rate = 1e-3;
  double min_learning_rate = 1e-5;
  int warmup_steps = 20;
  int total_steps = 1000;  // end of the cosine; constant min_learning_rate after
  double weight_decay = 0.01;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double clip_norm = 1.0;  // <= 0: no clipping
  void validate() const;
};

// Learning rate of step `step` (0-based).
double scheduled_learning_rate(const OptimizerConfig& c, std::int64_t step);

// One work item of the fused optimizer loops: up to AdamW::kChunk elements of one parameter.
template <class T>
struct AdamWChunk {
  T* p = nullptr;
  const T* g = nullptr;
  T* m = nullptr;
  T* v = nullptr;
  std::int64_t n = 0;
};

template <class T>
class AdamW {
 public:
  AdamW() = default;
  AdamW(const OptimizerConfig& config, const std::vector<Parameter<T>>& params) : m_config(config) {
    config.validate();
    for (const auto& p : params) {
      m_m.emplace_back(Kokkos::view_alloc("mantissa::surrogates::AdamW::m." + p.name), p.size());
      m_v.emplace_back(Kokkos::view_alloc("mantissa::surrogates::AdamW::v." + p.name), p.size());
    }
  }

  // Elements per work item of the loops below: each item runs a plain loop over its chunk, on
  // restrict pointers, which the compiler vectorises (one Kokkos index per element does not).
  static constexpr std::int64_t kChunk = 2048;

  // Global L2 norm of the gradients (call after the all-reduce: every rank gets the same value),
  // in one reduction over chunks of every parameter. Squares are summed in double, in 8
  // interleaved partial sums per chunk (vectorisable; the order differs from a single running sum
  // only by rounding, and Kokkos' reduction across threads already orders the sum by thread count).
  double grad_norm(const std::vector<Parameter<T>>& params) {
    const auto chunks = chunk_table(params);
    double s = 0.0;
    Kokkos::parallel_reduce(
        "mantissa::surrogates::AdamW::grad_norm",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(chunks.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t c, double& acc) {
          const T* KOKKOS_RESTRICT gc = chunks(c).g;
          const std::int64_t m = chunks(c).n;
          double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          std::int64_t i = 0;
          for (; i + 8 <= m; i += 8)
            for (int l = 0; l < 8; ++l) lanes[l] += double(gc[i + l]) * double(gc[i + l]);
          for (; i < m; ++i) lanes[0] += double(gc[i]) * double(gc[i]);
          acc += ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                 ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        },
        s);
    return std::sqrt(s);
  }

  static void scale_grads(const std::vector<Parameter<T>>& params, double factor) {
    const T f = T(factor);
    for (const auto& p : params) {
      auto g = p.grad;
      Kokkos::parallel_for(
          "mantissa::surrogates::AdamW::scale_grads", Kokkos::RangePolicy<ExecSpace>(0, p.size()),
          KOKKOS_LAMBDA(const std::int64_t i) { g(i) *= f; });
    }
  }

  // Clips (if configured), then applies one AdamW step; returns the norm before clipping. `norm`:
  // the gradients' norm if the caller has it already (grad_norm of the same gradients), else < 0.
  double step(const std::vector<Parameter<T>>& params, double norm = -1.0) {
    if (norm < 0.0) norm = grad_norm(params);
    if (m_config.clip_norm > 0.0 && norm > m_config.clip_norm)
      scale_grads(params, m_config.clip_norm / (norm + 1e-6));
    const double lr = scheduled_learning_rate(m_config, m_step);
    ++m_step;
    const T b1 = T(m_config.beta1), b2 = T(m_config.beta2), eps = T(m_config.epsilon);
    const T c1 = T(1.0 - std::pow(m_config.beta1, double(m_step)));
    const T c2 = T(1.0 - std::pow(m_config.beta2, double(m_step)));
    const T decay = T(1.0 - lr * m_config.weight_decay), tlr = T(lr);
    // One launch over the chunks of every parameter; restrict pointers inside each chunk (the four
    // flat views never alias, and saying so lets the loop vectorise without run-time overlap
    // checks). Same arithmetic, element by element.
    const auto chunks = chunk_table(params);
    Kokkos::parallel_for(
        "mantissa::surrogates::AdamW::step",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(chunks.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t c) {
          T* KOKKOS_RESTRICT pc = chunks(c).p;
          const T* KOKKOS_RESTRICT gc = chunks(c).g;
          T* KOKKOS_RESTRICT mc = chunks(c).m;
          T* KOKKOS_RESTRICT vc = chunks(c).v;
          const std::int64_t len = chunks(c).n;
          for (std::int64_t i = 0; i < len; ++i) {
            const T gi = gc[i];
            const T mi = b1 * mc[i] + (T(1) - b1) * gi;
            const T vi = b2 * vc[i] + (T(1) - b2) * gi * gi;
            mc[i] = mi;
            vc[i] = vi;
            pc[i] = pc[i] * decay - tlr * (mi / c1) / (math::sqrt(vi / c2) + eps);
          }
        });
    return norm;
  }

  // The chunks of `params` (values, gradients, moments), rebuilt when any of their storage moved
  // (a checkpoint may replace the moment views).
  Kokkos::View<AdamWChunk<T>*, MemSpace> chunk_table(const std::vector<Parameter<T>>& params) {
    std::vector<const void*> key;
    for (std::size_t k = 0; k < params.size(); ++k)
      key.insert(key.end(),
                 {params[k].value.data(), params[k].grad.data(), k < m_m.size() ? m_m[k].data() : nullptr,
                  k < m_v.size() ? m_v[k].data() : nullptr});
    if (key == m_chunk_key && m_chunks.extent(0) > 0) return m_chunks;
    if (params.size() != m_m.size())
      throw Error("mantissa::surrogates::AdamW: " + std::to_string(params.size()) +
                  " parameters, the optimizer has " + std::to_string(m_m.size()) + " (internal)");
    std::vector<AdamWChunk<T>> host;
    for (std::size_t k = 0; k < params.size(); ++k) {
      const std::int64_t n = params[k].size();
      for (std::int64_t c = 0; c * kChunk < n; ++c)
        host.push_back({params[k].value.data() + c * kChunk, params[k].grad.data() + c * kChunk,
                        m_m[k].data() + c * kChunk, m_v[k].data() + c * kChunk,
                        n - c * kChunk < kChunk ? n - c * kChunk : kChunk});
    }
    m_chunks = Kokkos::View<AdamWChunk<T>*, MemSpace>("mantissa::surrogates::AdamW::chunks", host.size());
    auto h = Kokkos::create_mirror_view(m_chunks);
    for (std::size_t i = 0; i < host.size(); ++i) h(i) = host[i];
    Kokkos::deep_copy(m_chunks, h);
    m_chunk_key = key;
    return m_chunks;
  }

  std::int64_t step_count() const { return m_step; }
  void set_step_count(std::int64_t s) { m_step = s; }
  std::vector<Vector<T>>& first_moments() { return m_m; }
  std::vector<Vector<T>>& second_moments() { return m_v; }
  const OptimizerConfig& config() const { return m_config; }

 private:
  OptimizerConfig m_config;
  std::int64_t m_step = 0;
  std::vector<Vector<T>> m_m, m_v;
  Kokkos::View<AdamWChunk<T>*, MemSpace> m_chunks;
  std::vector<const void*> m_chunk_key;
};

}  // namespace mantissa::surrogates
