#pragma once
// One phase of a campaign (reference, physics variant, training, rollout, hybrid, and kinds a
// deck's campaign kind adds, such as timing): an object that runs against the PhaseContext and
// nothing else. A phase kind is registered by name in CampaignKinds (CampaignKinds.hpp) with a
// factory; a campaign kind is a plan that lists the phases of a campaign from its config.
#include <mantissa/workflow/PrecisionSet.hpp>

#include <string>
#include <vector>

namespace mantissa::workflow {

class PhaseContext;

// A phase another phase acts on: its name (and result) and its precision set.
struct PhaseSubject {
  std::string name;
  PrecisionSet precision;
};

// What a campaign plan asks of one phase.
struct PhaseSpec {
  std::string kind;         // a registered phase kind ("reference", "physics", "training", ...)
  std::string name;         // unique in the campaign: the variant's name, or the phase's
  PrecisionSet precision;   // of the physics (physics phases) or the surrogate (role "storage")
  std::string result_kind;  // the kind its VariantResult carries in the report; "" = no result
  // The phases this one acts on (the speed phase: the physics phases whose stepping it times).
  std::vector<PhaseSubject> subjects = {};
  // The experiment a rollout runs and is scored on (PhysicsModel::select_experiment; 0 unless a
  // held-out experiment's rollout, campaign.surrogate.heldout_experiments).
  int experiment = 0;
};

class Phase {
 public:
  explicit Phase(PhaseSpec spec) : m_spec(std::move(spec)) {}
  virtual ~Phase() = default;
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

  const PhaseSpec& spec() const { return m_spec; }
  const std::string& name() const { return m_spec.name; }

  // Whether a resume inside this phase continues at the checkpointed step (true), or repeats
  // the phase from its start (false: its result is reset first).
  virtual bool resumes_mid_phase() const { return true; }
  // Whether there is nothing left to do (a phase whose outcome the checkpoint restored).
  virtual bool done(const PhaseContext& /*ctx*/) const { return false; }
  // Runs the phase from its start, or from the checkpointed cursor when `resumed`. Returns false
  // when a stop request ended it (the checkpoint is written), true when it is complete.
  virtual bool run(PhaseContext& ctx, bool resumed) = 0;
  // Called once the phase is complete (between phases): drop what later phases do not need.
  virtual void after(PhaseContext& /*ctx*/) {}

 private:
  PhaseSpec m_spec;
};

}  // namespace mantissa::workflow
