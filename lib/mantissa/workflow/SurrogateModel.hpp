#pragma once
// The seam between the campaign and a learned surrogate. apps/mantissa adapts
// surrogates::Surrogate to it; tests use a small linear stencil surrogate.
//
// A surrogate step advances stride() physics steps. The campaign feeds consecutive reference
// states (one per surrogate step) with add_sample(), one trajectory per training experiment,
// each ended by end_trajectory(), calls train() (once,
// or again after a stop: save(), and in a later run load() and train()), and then predicts from
// any state in any supported precision.
#include <mantissa/core/Precision.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

namespace mantissa::workflow {

struct TrainStats {
  std::int64_t samples = 0;
  std::int64_t iterations = 0;
  double initial_loss = 0.0;
  double final_loss = 0.0;
  double flops = 0.0;  // 0 = not counted
  // Training stopped part-way (stop said yes); iterations counts the steps done so far.
  bool stopped = false;
  // > 0: this call continued a part-way training from that iteration (initial_loss is then the
  // loss of its first step, not of the training's).
  std::int64_t first_iteration = 0;
};

// Where a surrogate's weights came from: recorded by the campaign that trained them (saved with
// the weights) and shown by a campaign that loads them (campaign.surrogate.training: file).
struct SurrogateProvenance {
  std::string deck_hash, deck_file;  // the training campaign's deck
  std::int64_t samples = -1;         // training samples (-1: unknown)
  std::int64_t steps_trained = -1;   // optimizer steps (-1: unknown)
  double initial_loss = std::numeric_limits<double>::quiet_NaN();
  double final_loss = std::numeric_limits<double>::quiet_NaN();
  bool known() const { return !deck_hash.empty() || samples >= 0 || steps_trained >= 0; }
};

class SurrogateModel {
 public:
  virtual ~SurrogateModel() = default;

  virtual std::string describe() const = 0;
  // Physics steps per surrogate step.
  virtual int stride() const = 0;

  // Training data: the reference state at steps 0, stride, 2 stride, ... in order.
  virtual void add_sample(const State& state) = 0;
  // The samples added so far end a trajectory: the next add_sample() starts another (another
  // experiment's), and no pair spans the two.
  virtual void end_trajectory() = 0;
  // Collective. Deterministic for a given deck and rank count (resume relies on it). `stop`
  // (collective) may be asked between optimizer steps; when it says yes the surrogate returns
  // with stopped = true, save() keeps the part-way state, and after load() a new train() ends
  // where an uninterrupted one would. A surrogate that trains in one piece never asks it.
  virtual TrainStats train(const std::function<bool()>& stop) = 0;

  // Inference precision for the next predict() calls; throws mantissa::Error if unsupported.
  virtual void set_precision(Precision p) = 0;
  virtual std::string precision_support(Precision p) const = 0;  // "native" | "emulated"
  // Advances `state` by k surrogate steps in place (collective).
  virtual void predict(State& state, int k) = 0;
  // Floating-point operations of one surrogate step, global (0 = not counted).
  virtual double flops_per_step() const { return 0.0; }
  // Whether the state's fields 0 and 1 are the primary field at two successive physics steps
  // (seismic p^n, p^{n-1}), so that a physics continuing from a prediction needs them consistent
  // (HybridPhase, campaign.surrogate.hybrid.time_level).
  virtual bool time_levels() const { return false; }
  // Collective: the measured rate (flop/s, summed over the ranks) of a large GEMM on the path the
  // surrogate's fp32 GEMMs take on this back-end, for the report's speed placement (the stride K at
  // which a prediction at that rate costs what K physics steps cost); 0: not measured. What was
  // measured, in words, in gemm_peak_describe().
  virtual double gemm_peak_flops() { return 0.0; }
  virtual std::string gemm_peak_describe() const { return ""; }

  // Provenance: train() records what it did; the caller adds the deck before save(); load()
  // replaces it with the file's. A surrogate without the notion keeps none.
  virtual SurrogateProvenance provenance() const { return {}; }
  virtual void set_provenance(const SurrogateProvenance& /*p*/) {}

  // The static input fields the surrogate sees beside the state (seismic: the velocity), named;
  // `mantissa predict` writes them beside its prediction so a reader sees what the model saw.
  virtual State static_inputs() const { return {}; }

  // Collective; `path` is a file prefix the surrogate may extend (weights, optimizer, RNG).
  virtual void save(const std::string& path) const = 0;
  virtual void load(const std::string& path) = 0;
};

}  // namespace mantissa::workflow
