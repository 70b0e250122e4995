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

}  // namespace mantissa::workflow
