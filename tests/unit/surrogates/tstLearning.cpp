// Learning: on 2D wave snapshots made here, a fixed number of AdamW steps lowers the validation
// loss at least 10x in fp32 and in bf16 mixed precision, and fp8 (E4M3/E5M2, delayed scaling)
// ends within 2x of bf16 (the bounds the issue sets).
#include "WaveData.hpp"

#include <surrogates/Trainer.hpp>

#include <gtest/gtest.h>

#include <map>
#include <numeric>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

struct Outcome {
  double initial = 0.0, final = 0.0;
  int skipped = 0;
};

ms::ModelConfig small_model() {
  ms::ModelConfig c;
  c.dim = 2;
  c.in_channels = 3;
  c.out_channels = 2;
  c.patch = 4;
  c.embed = 32;
  c.heads = 4;
  c.layers = 2;
  c.mlp_hidden = 64;
  c.window = 4;
  c.shifted = true;
  c.global_patches = {8, 8, 1};
  return c;
}

Outcome train(Precision compute, int steps) {
  const int n = 32, K = 2;
  ms::Dataset train_set(3, 2, {n, n, 1}), valid_set(3, 2, {n, n, 1});
  wave_test::make_wave_samples(train_set, n, K, 6, 8, 1);
  wave_test::make_wave_samples(valid_set, n, K, 2, 4, 99);  // other trajectories
  const auto norm = train_set.normalization();
  ms::ModelConfig mc = small_model();
  ms::Model<float> model(mc);
  ms::OptimizerConfig oc;
  oc.learning_rate = 5e-3;
  oc.min_learning_rate = 1e-4;
  oc.warmup_steps = 10;
  oc.total_steps = steps;
  oc.weight_decay = 1e-4;
  ms::Trainer<float> trainer(model, oc, compute, MPI_COMM_SELF);
  ms::TokenLayout vl, bl;
  ms::Matrix<float> vin, vout, bin, bout;
  std::vector<std::int64_t> all(valid_set.size());
  std::iota(all.begin(), all.end(), 0);
  valid_set.make_batch(all, norm, mc, vl, vin, vout);
  Outcome o;
  o.initial = trainer.evaluate(vl, vin, vout);
  std::mt19937 gen(5);
  std::uniform_int_distribution<std::int64_t> pick(0, train_set.size() - 1);
  for (int s = 0; s < steps; ++s) {
    std::vector<std::int64_t> idx(4);
    for (auto& i : idx) i = pick(gen);
    train_set.make_batch(idx, norm, mc, bl, bin, bout);
    o.skipped += trainer.step(bl, bin, bout).skipped ? 1 : 0;
  }
  o.final = trainer.evaluate(vl, vin, vout);
  return o;
}

std::map<Precision, Outcome>& outcomes() {
  static std::map<Precision, Outcome> o;
  return o;
}
const Outcome& outcome(Precision p) {
  auto it = outcomes().find(p);
  if (it == outcomes().end()) it = outcomes().emplace(p, train(p, 400)).first;
  return it->second;
}

}  // namespace

TEST(SurrogateLearning, Fp32LowersValidationLoss10x) {
  const auto& o = outcome(Precision::fp32);
  std::printf("fp32: validation loss %.4g -> %.4g\n", o.initial, o.final);
  EXPECT_LT(o.final, o.initial / 10.0);
}

TEST(SurrogateLearning, Bf16LowersValidationLoss10x) {
  const auto& o = outcome(Precision::bf16);
  std::printf("bf16: validation loss %.4g -> %.4g\n", o.initial, o.final);
  EXPECT_LT(o.final, o.initial / 10.0);
}

TEST(SurrogateLearning, Fp16WithLossScalingLearns) {
  const auto& o = outcome(Precision::fp16);
  std::printf("fp16: validation loss %.4g -> %.4g (%d skipped steps)\n", o.initial, o.final, o.skipped);
  EXPECT_LT(o.final, o.initial / 10.0);
}

TEST(SurrogateLearning, Fp8EndsWithin2xOfBf16) {
  const auto& b = outcome(Precision::bf16);
  const auto& o = outcome(Precision::fp8_e4m3);
  std::printf("fp8: validation loss %.4g -> %.4g (bf16 %.4g)\n", o.initial, o.final, b.final);
  EXPECT_LT(o.final, 2.0 * b.final);
}
