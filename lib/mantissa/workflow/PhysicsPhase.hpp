#pragma once
// Phase kinds "reference" and "physics": the physics in the phase's precision set, every
// experiment, step by step from the same initial state; the reference keeps its primary field at
// the sample steps (and the online training states) for the phases after it.
//
// The speed column (issue 11): each phase steps under its subnormal mode (campaign.
// flush_subnormals, a variant's override; FloatEnv on every host thread) and counts the subnormal
// values of every state field at the sample steps; the reference first measures the machine's
// memory bound (triad). The timed stretches come after all physics phases, interleaved over the
// variants (SpeedPhase.hpp).
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/workflow/Phase.hpp>
#include <mantissa/workflow/PhaseContext.hpp>

namespace mantissa::workflow {

// timing_only (campaign kind "timing", CampaignKinds.hpp): for production sizes, the phase only
// sets its result up (the model's description, the subnormal mode) for the speed phase's timed
// stretches: no accuracy run, no recording, no comparison with the reference, no census, no
// snapshot; its accuracy numbers are NaN (null in report.json) and speed.steps counts the timed
// steps.
class PhysicsPhase : public Phase {
 public:
  PhysicsPhase(PhaseSpec spec, bool is_reference, bool timing_only = false);
  bool run(PhaseContext& ctx, bool resumed) override;
  void after(PhaseContext& ctx) override;

 private:
  static void note_reference_memory(PhaseContext& ctx);
  SubnormalMode subnormal_mode(const CampaignConfig& cfg) const;
  static void census(PhaseContext& ctx, VariantResult& r, const PhysicsModel& model, std::int64_t step);
  static void measure_bound(PhaseContext& ctx, VariantResult& r);
  bool run_timing_only(PhaseContext& ctx);
  bool m_reference;
  bool m_timing_only;
};

}  // namespace mantissa::workflow
