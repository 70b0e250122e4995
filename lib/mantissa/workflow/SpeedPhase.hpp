#pragma once
// Phase kinds "speed" and "timing-speed": the speed column (issue 11). After the physics phases,
// the stepping of every one of them (its spec's subjects: the reference and the deck's physics
// variants) is timed in whole stretches (campaign.timing; StepTimer), interleaved: round r times
// stretch r of every variant in turn (the order rotated: round r starts with subject r mod n), each from the
// variant's initial state after untimed warm-up steps, under the variant's subnormal mode. A load burst on a
// shared machine then lands on every variant alike; timed one variant after another, a burst during the
// reference's stretches made the report claim fp32 5.5x faster without a noise mark. After the stretches,
// each variant's fixed part (exchanges, fills; one launch + fence).
//
// The models of all subjects are alive during this phase (one per variant, each its own state):
// the phase holds their sum in memory, where the accuracy runs held one at a time.
//
// "timing-speed" (campaign kind "timing"): the timed steps are the variants' only steps, so they
// are counted as their steps (speed.steps, phases_s.steps) and traffic.
#include <mantissa/workflow/Phase.hpp>
#include <mantissa/workflow/PhaseContext.hpp>

namespace mantissa::workflow {

class SpeedPhase : public Phase {
 public:
  SpeedPhase(PhaseSpec spec, bool timing_only);
  // A stop (signal, wall-time limit) is honoured between two stretches: a checkpoint without a
  // running state keeps the stretches done (in the results) and their count (the cursor's
  // phase_state); a resume continues the interleaved sequence with the next stretch, so every
  // start makes progress and the report ends with every repeat of every variant.
  bool run(PhaseContext& ctx, bool resumed) override;
  void after(PhaseContext& ctx) override;

 private:
  bool m_timing_only;
};

}  // namespace mantissa::workflow
