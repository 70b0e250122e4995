#pragma once
// The kinds of phase and the kinds of campaign, by name (no phase kind is string-compared
// anywhere else). A phase kind is a factory of Phase objects; a campaign kind is a plan that
// lists the phases a campaign runs, in order, from its config and the physics' precision table.
//
// builtin() has the phase kinds reference, physics, speed, training, rollout, hybrid,
// timing-reference, timing and timing-speed, and the campaign kinds "precision" (the reference,
// the deck's physics variants, the speed phase that times all of them interleaved when
// campaign.timing.repeats > 0, then, when the surrogate is enabled, its training, its rollouts and
// the hybrid) and "timing" (the reference and the variants set up, and their interleaved timed
// stretches only). A new kind (e.g. a timing-only campaign)
// is a Phase subclass in its own file plus one add_phase()/add_campaign() line in builtin(), or
// added to a copy of builtin() by whoever constructs the Campaign.
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/Phase.hpp>
#include <mantissa/workflow/PrecisionSet.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mantissa::workflow {

using PhaseFactory = std::function<std::unique_ptr<Phase>(const PhaseSpec&)>;
using CampaignPlan = std::function<std::vector<PhaseSpec>(const CampaignConfig&, const PrecisionTable&)>;

class CampaignKinds {
 public:
  static const CampaignKinds& builtin();

  void add_phase(const std::string& kind, PhaseFactory factory);
  void add_campaign(const std::string& kind, CampaignPlan plan);
  std::vector<std::string> phase_kinds() const;
  std::vector<std::string> campaign_kinds() const;

  // Throw mantissa::Error naming the unknown kind and the registered ones.
  std::vector<PhaseSpec> plan(const CampaignConfig& config, const PrecisionTable& precisions) const;
  std::unique_ptr<Phase> make_phase(const PhaseSpec& spec) const;

 private:
  std::map<std::string, PhaseFactory> m_phases;
  std::map<std::string, CampaignPlan> m_campaigns;
};

// The plan of the "precision" campaign kind (exposed so that other kinds can extend it).
std::vector<PhaseSpec> precision_campaign_plan(const CampaignConfig& config,
                                               const PrecisionTable& precisions);
// The plan of the "timing" campaign kind (issue 11: the speed column at production sizes): the
// reference and the deck's physics variants as timing-only phases (PhysicsPhase timing_only: no
// accuracy run, no reference comparison), then the speed phase "timing-speed" (SpeedPhase: their
// interleaved stretches, which count as their steps); no surrogate phases whatever
// campaign.surrogate says. Throws when campaign.timing.repeats is 0.
std::vector<PhaseSpec> timing_campaign_plan(const CampaignConfig& config, const PrecisionTable& precisions);

}  // namespace mantissa::workflow
