#pragma once
// The surrogate as the workflow uses it (the one seam between the campaign and the transformer):
// built from the configuration and the run's decomposition, fed samples online by the running
// solver (each rank its own subdomain), trained data-parallel over the ranks, and asked to
// advance the fields by K solver steps in a chosen precision. Inference is domain-decomposed:
// every rank runs its subdomain plus a halo of patches gathered from the ranks that own them
// (ModelConfig::halo_patches), which gives the one-rank result to rounding.
#include <surrogates/Checkpoint.hpp>

#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/Field.hpp>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mantissa::surrogates {

// How the inputs and targets are scaled before the model sees them. The first out_channels
// input channels are the state (a prediction adds its change to them), the others static
// (velocity).
//  - dataset: every channel by its mean and standard deviation over the training set.
//  - amplitude: the state channels and the change first divided by the state's amplitude (RMS of
//    input channel 0 over the whole domain, all ranks), then as `dataset`. The prediction is then
//    exactly homogeneous in the state (f(a x) = a f(x), a > 0; a linear wave equation's update is)
//    and a state at rest stays at rest (amplitude 0 predicts no change).
enum class InputScaling { dataset, amplitude };

// What the model's output is added to (Extrapolation.hpp):
//  - none: nothing; the model predicts the whole change over K steps.
//  - linear: linear extrapolation in time from input channels 0 and 1 (the state one solver step
//    apart), K (u^n - u^{n-1}) for every predicted channel; the model learns what it misses.
enum class TimeExtrapolation { none, linear };

struct SurrogateConfig {
  ModelConfig model;
  OptimizerConfig optimizer;
  LossScaleConfig loss_scale;
  Precision train_precision = Precision::fp32;  // fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2
  int batch_size = 4;                           // samples per rank and step
  int steps_per_prediction = 4;                 // K: solver steps one prediction advances
  std::uint64_t seed = 20261129;                // batch sampling
  InputScaling scaling = InputScaling::dataset;
  TimeExtrapolation extrapolation = TimeExtrapolation::none;
  // A random shift of the attention windows' grid (0 to window-1 patches per axis, the same on
  // every rank) at every training step and every prediction, so that the errors a window edge
  // makes do not pile up at one place through a rollout. Predictions then depend on how many
  // came before (the n-th prediction of a surrogate uses the n-th shift).
  bool window_shift = false;
  // Training noise (Sanchez-Gonzalez et al., ICML 2020): Gaussian noise of this standard deviation
  // (in normalised units) added to the state channels of every input, the target corrected so the
  // model learns to land on the true next state from the perturbed one. 0: off.
  double noise = 0.0;
  // Pushforward training (Brandstetter et al., "Message Passing Neural PDE Solvers", ICLR 2022):
  // this fraction of the steps after the first quarter of training starts from the model's own
  // prediction one step ahead (no gradient through it) and learns the step after it. 0: off.
  double pushforward = 0.0;
  // Horizon of a pushforward step: it chains h of the model's own predictions (each detached,
  // no gradient through them) before the step it learns, h drawn uniformly from 1 to this.
  int pushforward_steps = 1;
};

struct TrainStats {
  std::vector<double> loss;  // per step of this call, global mean squared error in normalised units
  int skipped_steps = 0;
  double seconds = 0.0;
  int first_step = 0;    // the step this call began at (> 0: it continued a part-way training)
  int steps_done = 0;    // steps trained in all, this call's included
  bool stopped = false;  // `stop` said yes before the last step
};

// What defines a model beyond its ModelConfig, as written into and checked against a weights
// file (surrogate.* key without the prefix, value): steps_per_prediction and the input scaling.
std::vector<std::pair<std::string, std::int64_t>> model_definition(const SurrogateConfig& c);

class Surrogate {
 public:
  using HostField = Field<double>;
  Surrogate(const SurrogateConfig& config, const Decomposition& decomp);
  ~Surrogate();
  Surrogate(const Surrogate&) = delete;
  Surrogate& operator=(const Surrogate&) = delete;

  // One sample of this rank's subdomain: in_channels input fields and out_channels target
  // fields (the change of the state over K steps). Ghosts are ignored.
  void add_sample(const std::vector<const HostField*>& inputs, const std::vector<const HostField*>& targets);
  std::int64_t num_samples() const;
  // Data-parallel training over the decomposition's communicator, up to `steps` optimizer steps
  // in all; collective. It continues where a part-way state (save() after a stopped train(),
  // then load()) left off. `stop` (collective: the same answer on every rank) is asked after
  // every step; when it says yes, train() returns with stopped = true, and save() keeps what a
  // later train() needs to end where an uninterrupted one would, bit for bit, at the same rank
  // count: weights, optimizer and loss-scale state, every rank's sampling generator, steps done.
  TrainStats train(int steps, const std::function<bool()>& stop = {});
  // Optimizer steps trained so far (after a load(): those of the file's training).
  int steps_done() const;
  // outputs = inputs' prediction of the change over K steps, in physical units; collective.
  void predict(const std::vector<const HostField*>& inputs, const std::vector<HostField*>& outputs,
               Precision p);

  // Weights, optimizer state, loss scale, fp8 scales, normalisation, generator state and what
  // else defines the model (steps_per_prediction, input scaling): a file whose definition differs
  // from this configuration is refused naming the key. save: rank 0 writes; load: every rank
  // reads. Collective.
  void save(const std::string& file) const;
  void load(const std::string& file);
  std::string describe() const;
  // Floating-point operations of one prediction over the whole (global) domain.
  double flops_per_prediction() const;
  const SurrogateConfig& config() const { return m_config; }
  // Normalisation of inputs and targets (set by train() from the data, or by load()); setting it
  // directly serves inference with weights made elsewhere.
  const Normalization& normalization() const;
  void set_normalization(const Normalization& n);
  // Where the weights came from: train() records its samples and losses, the caller the deck
  // (set_provenance); save() writes it, load() reads the file's (Checkpoint.hpp).
  const Provenance& provenance() const;
  void set_provenance(const Provenance& p);

 private:
  // Patches of halo around a rank's training tile.
  int train_halo() const;
  template <class T>
  void train_steps(int steps, TrainStats& stats, const std::function<bool()>& stop);
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  SurrogateConfig m_config;
  const Decomposition& m_decomp;
};

}  // namespace mantissa::surrogates
