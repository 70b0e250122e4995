#pragma once
// Phase kind "rollout": the surrogate in the phase's precision (role "storage" of its spec),
// after a physics lead-in to campaign.surrogate.start, to the horizon. A resume inside it repeats
// it from its start (the surrogate's inference state is not checkpointed mid-phase).
#include <mantissa/workflow/Phase.hpp>
#include <mantissa/workflow/PhaseContext.hpp>

#include <string>
#include <utility>

namespace mantissa::workflow {

// What a rollout is scored on (campaign.surrogate.heldout_fraction, PhaseContext::surrogate_split):
// in_sample: from campaign.surrogate.start to the end of the training window (the horizon when
// nothing is held out); heldout: from the end of the training window to the horizon, on states
// the surrogate never trained on; whole_run: from start to the horizon (the hybrid); experiment:
// from start to the horizon of the spec's experiment, one training never saw
// (campaign.surrogate.heldout_experiments), scored against that experiment's reference.
enum class RolloutWindow { in_sample, heldout, whole_run, experiment };
const char* to_string(RolloutWindow w);

class RolloutPhase : public Phase {
 public:
  explicit RolloutPhase(PhaseSpec spec, RolloutWindow window = RolloutWindow::in_sample)
      : Phase(std::move(spec)), m_window(window) {}
  bool resumes_mid_phase() const override { return false; }
  bool run(PhaseContext& ctx, bool resumed) override;

 protected:
  // Appended to the variant's description.
  virtual std::string describe_extra(const PhaseContext& ctx) const;
  // After every surrogate step (the physics holds the surrogate's state `s` at `step`): the
  // hybrid's indicator; may set the cursor's "physics_left" to hand the state to the physics.
  virtual void after_prediction(PhaseContext& ctx, VariantResult& r, PhysicsModel& physics, State& s,
                                std::int64_t step);
  // Before every surrogate step, from the state `s` at `step` (the hybrid keeps its primary field).
  virtual void before_prediction(PhaseContext& /*ctx*/, VariantResult& /*r*/, const State& /*s*/,
                                 std::int64_t /*step*/) {}

 private:
  RolloutWindow m_window;
};

}  // namespace mantissa::workflow
