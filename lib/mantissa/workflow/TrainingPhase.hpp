#pragma once
// Phase kind "training": the surrogate trained online on the reference states (or its weights
// loaded), saved for the rollouts, and its one-step error measured.
#include <mantissa/workflow/Phase.hpp>
#include <mantissa/workflow/PhaseContext.hpp>

namespace mantissa::workflow {

class TrainingPhase : public Phase {
 public:
  using Phase::Phase;
  bool done(const PhaseContext& ctx) const override;
  bool run(PhaseContext& ctx, bool resumed) override;
};

}  // namespace mantissa::workflow
