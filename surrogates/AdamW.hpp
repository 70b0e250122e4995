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

  // Global L2 norm of the gradients (call after the all-reduce: every rank gets the same value).
  static double grad_norm(const std::vector<Parameter<T>>& params) {
    double s = 0.0;
    for (const auto& p : params) {
      double part = 0.0;
      auto g = p.grad;
      Kokkos::parallel_reduce(
          "mantissa::surrogates::AdamW::grad_norm", Kokkos::RangePolicy<ExecSpace>(0, p.size()),
          KOKKOS_LAMBDA(const std::int64_t i, double& acc) { acc += double(g(i)) * double(g(i)); }, part);
      s += part;
    }
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

  // Clips (if configured), then applies one AdamW step; returns the norm before clipping.
  double step(const std::vector<Parameter<T>>& params) {
    const double norm = grad_norm(params);
    if (m_config.clip_norm > 0.0 && norm > m_config.clip_norm)
      scale_grads(params, m_config.clip_norm / (norm + 1e-6));
    const double lr = scheduled_learning_rate(m_config, m_step);
    ++m_step;
    const T b1 = T(m_config.beta1), b2 = T(m_config.beta2), eps = T(m_config.epsilon);
    const T c1 = T(1.0 - std::pow(m_config.beta1, double(m_step)));
    const T c2 = T(1.0 - std::pow(m_config.beta2, double(m_step)));
    const T decay = T(1.0 - lr * m_config.weight_decay), tlr = T(lr);
    for (std::size_t k = 0; k < params.size(); ++k) {
      // Raw restrict pointers: the four flat views never alias, and saying so lets the loop
      // vectorise without run-time overlap checks.
      T* KOKKOS_RESTRICT p = params[k].value.data();
      const T* KOKKOS_RESTRICT g = params[k].grad.data();
      T* KOKKOS_RESTRICT m = m_m[k].data();
      T* KOKKOS_RESTRICT v = m_v[k].data();
      Kokkos::parallel_for(
          "mantissa::surrogates::AdamW::step", Kokkos::RangePolicy<ExecSpace>(0, params[k].size()),
          KOKKOS_LAMBDA(const std::int64_t i) {
            const T gi = g[i];
            const T mi = b1 * m[i] + (T(1) - b1) * gi;
            const T vi = b2 * v[i] + (T(1) - b2) * gi * gi;
            m[i] = mi;
            v[i] = vi;
            p[i] = p[i] * decay - tlr * (mi / c1) / (math::sqrt(vi / c2) + eps);
          });
    }
    return norm;
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
};

}  // namespace mantissa::surrogates
