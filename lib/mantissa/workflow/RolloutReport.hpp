#pragma once
// The surrogate's scoring in the report (report.json `surrogate.evaluation` and `variants[].rollout`,
// report.md's "Rollouts beside the free baselines"): per rollout the window it is scored on
// (in-sample or held-out, campaign.surrogate.heldout_fraction), its error at the sample steps
// from the hand-over on beside the three free baselines from the same hand-over state
// (Baselines.hpp), the numbers at the end and over predictions 13 to 30, and which baselines beat
// it. STYLE.md 24: a learned model is scored on data it has not seen, beside baselines that cost
// nothing.
#include <mantissa/core/Json.hpp>
#include <mantissa/workflow/Baselines.hpp>
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/Results.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::workflow {

struct BaselineRow {
  double model = 0.0, zero = 0.0, persistence = 0.0, linear = 0.0;
};

struct RolloutScore {
  bool valid = false;                // a rollout with samples after its hand-over
  std::int64_t stride = 0;           // physics steps per surrogate step (0: unknown)
  std::int64_t end_step = 0;         // the last sample
  std::int64_t end_predictions = 0;  // surrogate steps from the hand-over to end_step (pure rollouts)
  BaselineRow end;                   // at end_step
  BaselineRow mean_13_30;            // mean over the samples after 13 to 30 predictions (NaN: none)
  std::int64_t mean_samples = 0;
  // Baselines with a lower error than the surrogate ("zero", "persistence", "linear").
  std::vector<std::string> beaten_at_end, beaten_13_30;
};

// The window of mean_13_30 (the and The Well's rollout window, in predictions).
inline constexpr std::int64_t score_window_first = 13, score_window_last = 30;

RolloutScore rollout_score(const VariantResult& r);

// report.json: the object `rollout` of a surrogate or hybrid variant (key included).
void rollout_json(json::Writer& w, const VariantResult& r);
// report.json: the object `evaluation` inside `surrogate` (key included).
void evaluation_json(json::Writer& w, const CampaignConfig& cfg);
// report.md: the section on rollouts beside the baselines (empty without rollouts).
std::string rollout_md(const CampaignConfig& cfg, const std::vector<VariantResult>& results);

// The hybrid against the reference (campaign.surrogate.hybrid.error_limit): its indicator cannot
// see the reference, the campaign can. `first_over` is the first sample step after the hand-over
// at `start` whose true error (the variant's rel_l2) passed the limit (-1: none); it passed while
// the physics ran when that step lies in a physics stretch after a hand-over, (h, h +
// physics_steps], else while the surrogate ran. The indicator handed over in time when the error
// never passed the limit, or passed it while the physics ran after a hand-over whose own true error
// was within the limit; not in time when it passed while the surrogate ran or the hand-over's true
// error was already above it; unknown when that hand-over was not at a sample step.
struct HybridTruth {
  double limit = 0.0;
  std::int64_t first_over = -1;
  double error_at_first_over = 0.0;
  bool passed_under_physics = false;
  std::int64_t physics_from = -1;  // the hand-over before that physics stretch
  bool in_time = true;
  bool in_time_known = true;
  std::int64_t stride = 0;               // physics steps per prediction (0: no prediction made)
  std::int64_t surrogate_covered = 0;    // physics steps the surrogate's predictions covered
  std::int64_t physics_after_start = 0;  // the hybrid's physics steps after the lead-in
  double end_error = 0.0;                // at the last sample
};
HybridTruth hybrid_truth(const VariantResult& r, const HybridSpec& hs);
// report.json: the object `hybrid` of a hybrid variant (key included).
void hybrid_json(json::Writer& w, const VariantResult& r, const HybridSpec& hs);
// report.md: the hybrid's section (hand-overs, every indicator check beside the true error).
std::string hybrid_md(const VariantResult& r, const HybridSpec& hs);

// Where the surrogate pays: per pure rollout its cost per simulated physics step beside the
// reference physics' own (both measured in this run), and the stride K at which one prediction
// costs what K physics steps cost, at its measured cost and at the measured GEMM rate
// (TrainingResult::gemm_peak_flops): K_measured = t_prediction / t_physics_step,
// K_peak = (flops per prediction / GEMM rate) / t_physics_step. A stride above K pays.
// t_physics_step is the reference's timed median (campaign.timing's interleaved stretches), never
// its in-run time (one fenced step at a time with the recording around it: on a loaded machine
// many times the step; it made a report claim the surrogate cheaper than the physics); only when
// the reference was not timed (campaign.timing.repeats 0) the in-run time, and physics_method says
// so. The fastest timed physics variant (e.g. fp32) is given beside it.
struct SpeedPlacement {
  std::string name;
  std::int64_t stride = 0;
  double physics_s_per_step = 0.0;          // the reference's time per step (timed median, else in-run)
  std::string physics_method;               // "timed" | "in-run"
  std::string fastest_physics;              // the timed physics variant with the lowest median ("": none)
  double fastest_physics_s_per_step = 0.0;  // its timed median
  double ratio_to_fastest = 0.0;            // s_per_simulated_step / fastest_physics_s_per_step
  double s_per_prediction = 0.0;            // measured inference time / predictions
  double s_per_simulated_step = 0.0;        // s_per_prediction / stride
  double ratio = 0.0;                       // s_per_simulated_step / physics_s_per_step
  double achieved_flops = 0.0;              // flops per prediction / s_per_prediction (0: not counted)
  double break_even_k_measured = 0.0;       // s_per_prediction / physics_s_per_step
  double break_even_k_peak = 0.0;           // (flops / GEMM rate) / physics_s_per_step (0: not measured)
};
std::vector<SpeedPlacement> speed_placement(const std::vector<VariantResult>& results,
                                            const TrainingResult& t);
// report.json: the object `speed_placement` inside `surrogate` (key included).
void speed_placement_json(json::Writer& w, const std::vector<VariantResult>& results,
                          const TrainingResult& t);
// report.md: the section "Where the surrogate pays" (empty without pure rollouts).
std::string speed_placement_md(const std::vector<VariantResult>& results, const TrainingResult& t);

}  // namespace mantissa::workflow
