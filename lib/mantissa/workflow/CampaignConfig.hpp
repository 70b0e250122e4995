#pragma once
// What a campaign runs, as a plain struct: filled from the deck's `campaign:` section by
// config_from_deck() (Schema.cpp) or directly in tests.
#include <mantissa/core/Precision.hpp>
#include <mantissa/workflow/PrecisionSet.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mantissa::workflow {

struct VariantSpec {
  VariantSpec() = default;
  // {name, precision} as the tests and benches write it, and optionally the subnormal override.
  VariantSpec(std::string n, PrecisionSet p, std::optional<bool> flush = std::nullopt)
      : name(std::move(n)), precision(std::move(p)), flush_subnormals(flush) {}

  std::string name;  // unique, used in the report and as an HDF5 group name
  // The roles the deck gives (storage, compute, solver, ...); the physics' precision table
  // completes the others (PrecisionTable::complete).
  PrecisionSet precision;
  // campaign.variants[].flush_subnormals: absent = the campaign's (CampaignConfig::flush_subnormals).
  std::optional<bool> flush_subnormals;
};

// How every physics variant's stepping is timed for the speed column (PhysicsPhase, StepTimer):
// after the accuracy run, `repeats` stretches of the same trajectory from the initial state,
// each after `warmup_steps` untimed steps, nothing recorded inside them.
struct TimingSpec {
  int repeats = 5;                // 0: no timed stretches (the speed column is the in-run time)
  std::int64_t warmup_steps = 5;  // untimed steps before each stretch
  std::int64_t steps = -1;        // steps per stretch (-1: the rest of the run, steps - warmup_steps)
};

struct HybridSpec {
  bool enabled = false;
  Precision precision = Precision::fp32;  // surrogate inference precision in hybrid mode
  int k = 4;                              // surrogate steps per predict() call
  int check_every = 4;                    // indicator evaluated every M surrogate steps
  double energy_tol = 0.05;               // |energy drift| above this hands over to the physics
  double residual_tol = 0.05;             // one-step residual against the physics above this hands over
  int sample_stride = 4;                  // the residual is evaluated on every n-th point per axis
  std::int64_t physics_steps = 20;        // physics steps after a hand-over before the surrogate resumes
  // The true error (rel. L2 against the reference) the indicator should hand over before; the
  // report says whether it did. It does not steer the run (the indicator cannot see the reference).
  double error_limit = 0.05;
  // The earlier time level (state field 1) the physics gets when it continues from a prediction
  // of a surrogate whose state has two (SurrogateModel::time_levels): "interpolated", from the
  // quadratic through the surrogate's own primary fields one prediction before, at and after the
  // step, or "surrogate", its own field 1 (HybridPhase says why).
  std::string time_level = "interpolated";
};

struct SurrogateSpec {
  bool enabled = false;
  std::string model = "transformer";  // registry key
  std::string training = "online";    // "online": from the reference run; "file": load weights
  std::string weights;                // training == "file": the weights' path prefix
  std::string save_weights;           // optional: where to save the trained weights
  std::int64_t train_steps = -1;      // reference steps that feed training (-1: all)
  std::vector<Precision> rollout;     // pure surrogate rollouts, one per precision
  std::int64_t horizon = -1;          // physics steps a rollout covers (-1: campaign steps)
  // Rollouts and the hybrid run the reference-precision physics for steps [0, start) and hand
  // the state to the surrogate there; online training uses the reference states from `start`
  // on. A surrogate sees only the state, so forcing it cannot see (a seismic source's wavelet
  // in time) belongs to the physics: `start` after the source has faded.
  std::int64_t start = 0;
  // The held-out time window (Baselines.hpp campaign_time_split): the last fraction of the
  // window [start, horizon] is not trained on; every rollout precision is then run twice, on
  // the training window (in-sample) and from the split to the horizon (held-out). 0: none.
  double heldout_fraction = 0.0;
  // Experiments (PhysicsModel::num_experiments; seismic: shots) whose reference trajectories
  // train the surrogate online, in this order, and experiments it never trains on, each rolled
  // out in every rollout precision from `start` to the horizon and scored against that
  // experiment's reference (report: held-out <experiment>).
  std::vector<int> train_experiments{0};
  std::vector<int> heldout_experiments;
  HybridSpec hybrid;
};

// Checkpoints that a clock or a phase's end asks for keep at least this many times the longest
// checkpoint write between them, so that writing them costs at most about 5 % of the run.
inline constexpr double k_checkpoint_cost_ratio = 20.0;

struct CampaignConfig {
  std::string physics;                 // registry key
  std::string kind = "precision";      // campaign kind (CampaignKinds): which phases run
  std::int64_t steps = 100;            // physics steps of the reference and every variant
  std::int64_t sample_every = 10;      // fields are compared every this many steps (and at the end)
  double error_threshold = 0.1;        // relative L2 above which a variant "diverged" (report: time)
  std::int64_t receiver_max_lag = -1;  // probe cross-correlation lag window in steps (-1: steps / 10)
  Precision reference_precision = Precision::fp64;  // every role of the reference
  std::vector<VariantSpec> variants;                // without the reference
  SurrogateSpec surrogate;
  bool snapshots = true;              // final primary fields gathered into report.h5 + XDMF
  std::int64_t checkpoint_every = 0;  // campaign steps between periodic checkpoints (0: none)
  // Seconds of wall time between periodic checkpoints (0: none), never less than
  // k_checkpoint_cost_ratio times the longest checkpoint write so far.
  double checkpoint_interval = 600.0;
  // A checkpoint after every phase (the last one before the report), unless less than
  // k_checkpoint_cost_ratio times the longest checkpoint write has passed since the last one.
  bool checkpoint_phase_end = true;
  // The cost guard of checkpoint_interval and checkpoint_phase_end (not a deck key: tests set 0
  // to have every phase end checkpointed however fast the phases are).
  double checkpoint_cost_ratio = k_checkpoint_cost_ratio;
  std::int64_t checkpoint_keep = 2;            // newest checkpoints kept
  std::string checkpoint_dir = "checkpoints";  // relative to the run directory unless absolute
  std::int64_t stop_after_step = -1;           // test hook: raise SIGTERM after this many campaign steps
  // Seconds of wall time, counted from the campaign's construction, before which the campaign
  // checkpoints and stops (0: no limit). run.wall_time_limit less the start-up already spent.
  double wall_time_limit = 0.0;
  double progress_every = 10.0;  // seconds between progress lines of a phase (0: none)
  // Flush-to-zero + denormals-are-zero while the physics steps (core/FloatEnv.hpp); a variant
  // may override it (VariantSpec::flush_subnormals).
  bool flush_subnormals = true;
  TimingSpec timing;
  // Context for the report.
  std::string deck_file, deck_hash, deck_resolved;
};

}  // namespace mantissa::workflow
