#pragma once
// Phase kinds "reference" and "physics": the physics in the phase's precision set, every
// experiment, step by step from the same initial state; the reference keeps its primary field at
// the sample steps (and the online training states) for the phases after it.
#include <mantissa/workflow/Phase.hpp>
#include <mantissa/workflow/PhaseContext.hpp>

namespace mantissa::workflow {

class PhysicsPhase : public Phase {
 public:
  PhysicsPhase(PhaseSpec spec, bool is_reference);
  bool run(PhaseContext& ctx, bool resumed) override;
  void after(PhaseContext& ctx) override;

 private:
  static void note_reference_memory(PhaseContext& ctx);
  bool m_reference;
};

}  // namespace mantissa::workflow
