#include <surrogates/AdamW.hpp>

namespace mantissa::surrogates {

void OptimizerConfig::validate() const {
  auto fail = [](const std::string& key, double v, const std::string& remedy) {
    throw Error("surrogate.train." + key + " = " + std::to_string(v) + ": " + remedy);
  };
  if (!(learning_rate > 0.0)) fail("learning_rate", learning_rate, "must be positive");
  if (min_learning_rate < 0.0 || min_learning_rate > learning_rate)
    fail("min_learning_rate", min_learning_rate, "must be in [0, learning_rate]");
  if (warmup_steps < 0) fail("warmup_steps", warmup_steps, "must be >= 0");
  if (total_steps < 1) fail("total_steps", total_steps, "must be >= 1");
  if (weight_decay < 0.0) fail("weight_decay", weight_decay, "must be >= 0");
  if (!(beta1 >= 0.0 && beta1 < 1.0)) fail("beta1", beta1, "must be in [0, 1)");
  if (!(beta2 >= 0.0 && beta2 < 1.0)) fail("beta2", beta2, "must be in [0, 1)");
  if (!(epsilon > 0.0)) fail("epsilon", epsilon, "must be positive");
}

double scheduled_learning_rate(const OptimizerConfig& c, std::int64_t step) {
  if (step < c.warmup_steps) return c.learning_rate * double(step + 1) / double(c.warmup_steps);
  if (step >= c.total_steps) return c.min_learning_rate;
  const double span = std::max<double>(1.0, double(c.total_steps - c.warmup_steps));
  const double t = double(step - c.warmup_steps) / span;
  return c.min_learning_rate +
         0.5 * (c.learning_rate - c.min_learning_rate) * (1.0 + std::cos(3.14159265358979323846 * t));
}

}  // namespace mantissa::surrogates
