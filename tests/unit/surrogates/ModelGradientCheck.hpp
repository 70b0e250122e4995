#pragma once
// The whole-model finite-difference check shared by the 2D (tstGradients) and 3D (tstModel3D)
// tests: random input fields, L = sum(R * model(tokens)) for a random projection R, and every
// parameter tensor's analytic dL/dtheta against the central difference at `per_tensor`
// entries. Tolerance (tstGradients.cpp explains it): 1e-6 relative to max(|analytic|, 1e-2).
#include <surrogates/Model.hpp>
#include <surrogates/Patches.hpp>

#include "TestMatrices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace mantissa::surrogates::test {

struct GradientCheckCounts {
  int checked = 0;  // entries compared
  int nonzero = 0;  // of them with |finite difference| > 1e-8 (the check is not of zeros)
};

// `fields` gives the batch shape; it is filled with values uniform in [-1, 1] from field_seed.
inline GradientCheckCounts check_model_gradients(Model<double>& model, const TokenLayout& layout,
                                                 FieldBatch<double> fields, unsigned field_seed,
                                                 unsigned projection_seed, int per_tensor,
                                                 const std::string& what) {
  const ModelConfig& c = model.config();
  {
    auto h = Kokkos::create_mirror_view(fields);
    std::mt19937 gen(field_seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t i = 0; i < h.size(); ++i) h.data()[i] = u(gen);
    Kokkos::deep_copy(fields, h);
  }
  auto tokens = make_matrix<double>("tokens", layout.num_tokens(), c.in_features());
  patchify(fields, c.patch, c.patch_z(), tokens);
  auto R = random_matrix<double>(layout.num_tokens(), c.out_features(), projection_seed);
  Context ctx{mantissa::Precision::fp64};
  Matrix<double> out;
  auto loss = [&] {
    model.forward(ctx, layout, tokens, out);
    return dot(out, R);
  };
  EXPECT_TRUE(std::isfinite(loss())) << what;
  model.zero_grad();
  model.backward(ctx, R);
  Kokkos::fence();
  std::mt19937 gen(7);
  GradientCheckCounts counts;
  for (auto& p : model.parameters()) {
    std::uniform_int_distribution<std::int64_t> pick(0, p.size() - 1);
    for (int s = 0; s < per_tensor; ++s) {
      const std::int64_t i = pick(gen);
      const double keep = p.value(i);
      const double h = 1e-6;
      p.value(i) = keep + h;
      const double lp = loss();
      p.value(i) = keep - h;
      const double lm = loss();
      p.value(i) = keep;
      const double fd = (lp - lm) / (2 * h);
      const double an = p.grad(i);
      EXPECT_NEAR(an, fd, 1e-6 * std::max(std::abs(an), 1e-2)) << what << " " << p.name << " entry " << i;
      ++counts.checked;
      counts.nonzero += std::abs(fd) > 1e-8;
    }
  }
  return counts;
}

}  // namespace mantissa::surrogates::test
