#pragma once
// Phase kind "hybrid": a rollout that hands the state to the physics for
// campaign.surrogate.hybrid.physics_steps whenever its error indicator (energy drift, one-step
// residual against the physics, non-finite values) exceeds the tolerances. The physics continues
// from a prediction with a consistent earlier time level (campaign.surrogate.hybrid.time_level).
#include <mantissa/workflow/RolloutPhase.hpp>

namespace mantissa::workflow {

class HybridPhase : public RolloutPhase {
 public:
  explicit HybridPhase(PhaseSpec spec) : RolloutPhase(std::move(spec), RolloutWindow::whole_run) {}

 protected:
  std::string describe_extra(const PhaseContext& ctx) const override;
  void after_prediction(PhaseContext& ctx, VariantResult& r, PhysicsModel& physics, State& s,
                        std::int64_t step) override;
  void before_prediction(PhaseContext& ctx, VariantResult& r, const State& s, std::int64_t step) override;

 private:
  // The primary field before the last prediction (campaign.surrogate.hybrid.time_level interpolated).
  HostField m_prev;
  std::int64_t m_prev_step = -1;
};

}  // namespace mantissa::workflow
