#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/CampaignKinds.hpp>
#include <mantissa/workflow/HybridPhase.hpp>
#include <mantissa/workflow/PhysicsPhase.hpp>
#include <mantissa/workflow/RolloutPhase.hpp>
#include <mantissa/workflow/SpeedPhase.hpp>
#include <mantissa/workflow/TrainingPhase.hpp>

namespace mantissa::workflow {

namespace {
template <class Map>
std::string names(const Map& m) {
  std::string s;
  for (const auto& kv : m) s += (s.empty() ? "" : ", ") + kv.first;
  return s.empty() ? "(none registered)" : s;
}
}  // namespace

namespace {
// The speed phase after the physics phases: it times all of them, interleaved (SpeedPhase.hpp).
PhaseSpec speed_spec(const std::vector<PhaseSpec>& physics, const std::string& kind) {
  PhaseSpec sp{kind, "speed", {}, ""};
  for (const auto& p : physics) sp.subjects.push_back({p.name, p.precision});
  return sp;
}
}  // namespace

std::vector<PhaseSpec> precision_campaign_plan(const CampaignConfig& cfg, const PrecisionTable& table) {
  std::vector<PhaseSpec> out;
  const auto ref = table.uniform(cfg.reference_precision, "deck key 'campaign.reference'");
  out.push_back({"reference", "reference", ref, "reference"});
  for (std::size_t i = 0; i < cfg.variants.size(); ++i) {
    const auto& v = cfg.variants[i];
    out.push_back(
        {"physics", v.name,
         table.complete(v.precision, "campaign.variants[" + std::to_string(i) + "] ('" + v.name + "')"),
         "physics"});
  }
  if (cfg.timing.repeats > 0) out.push_back(speed_spec(out, "speed"));
  const auto& s = cfg.surrogate;
  if (!s.enabled) return out;
  out.push_back({"training", "training", {}, ""});
  for (const auto p : s.rollout) {
    const std::string name = "surrogate-" + std::string(to_string(p));
    out.push_back({"rollout", name, PrecisionSet{{role::storage, p}, {role::compute, p}}, "surrogate"});
  }
  // The same rollouts on the held-out window (campaign.surrogate.heldout_fraction).
  if (s.heldout_fraction > 0.0)
    for (const auto p : s.rollout) {
      const std::string name = "surrogate-" + std::string(to_string(p)) + "-heldout";
      out.push_back(
          {"rollout-heldout", name, PrecisionSet{{role::storage, p}, {role::compute, p}}, "surrogate"});
    }
  // The same rollouts, from `start` to the horizon, on each experiment training never saw
  // (campaign.surrogate.heldout_experiments).
  for (const int e : s.heldout_experiments)
    for (const auto p : s.rollout) {
      const std::string name = "surrogate-" + std::string(to_string(p)) + "-experiment" + std::to_string(e);
      out.push_back({"rollout-experiment",
                     name,
                     PrecisionSet{{role::storage, p}, {role::compute, p}},
                     "surrogate",
                     {},
                     e});
    }
  if (s.hybrid.enabled) {
    const auto p = s.hybrid.precision;
    const std::string name = "hybrid-" + std::string(to_string(p));
    out.push_back({"hybrid", name, PrecisionSet{{role::storage, p}, {role::compute, p}}, "hybrid"});
  }
  return out;
}

std::vector<PhaseSpec> timing_campaign_plan(const CampaignConfig& cfg, const PrecisionTable& table) {
  if (cfg.timing.repeats < 1)
    throw Error("deck key 'campaign.timing.repeats' is " + std::to_string(cfg.timing.repeats) +
                ", but campaign.kind 'timing' measures only the timed stretches; give at least 1");
  CampaignConfig physics_only = cfg;
  physics_only.surrogate.enabled = false;
  auto out = precision_campaign_plan(physics_only, table);
  for (auto& p : out)
    if (p.kind == "reference" || p.kind == "physics")
      p.kind = p.kind == "reference" ? "timing-reference" : "timing";
  MANTISSA_ASSERT(!out.empty() && out.back().kind == "speed",
                  "the precision plan ends without its speed phase");
  out.back().kind = "timing-speed";
  return out;
}

const CampaignKinds& CampaignKinds::builtin() {
  static const CampaignKinds k = [] {
    CampaignKinds c;
    c.add_phase("reference", [](const PhaseSpec& s) { return std::make_unique<PhysicsPhase>(s, true); });
    c.add_phase("physics", [](const PhaseSpec& s) { return std::make_unique<PhysicsPhase>(s, false); });
    c.add_phase("training", [](const PhaseSpec& s) { return std::make_unique<TrainingPhase>(s); });
    c.add_phase("rollout", [](const PhaseSpec& s) { return std::make_unique<RolloutPhase>(s); });
    c.add_phase("rollout-heldout",
                [](const PhaseSpec& s) { return std::make_unique<RolloutPhase>(s, RolloutWindow::heldout); });
    c.add_phase("rollout-experiment", [](const PhaseSpec& s) {
      return std::make_unique<RolloutPhase>(s, RolloutWindow::experiment);
    });
    c.add_phase("hybrid", [](const PhaseSpec& s) { return std::make_unique<HybridPhase>(s); });
    c.add_phase("timing-reference",
                [](const PhaseSpec& s) { return std::make_unique<PhysicsPhase>(s, true, true); });
    c.add_phase("timing", [](const PhaseSpec& s) { return std::make_unique<PhysicsPhase>(s, false, true); });
    c.add_phase("speed", [](const PhaseSpec& s) { return std::make_unique<SpeedPhase>(s, false); });
    c.add_phase("timing-speed", [](const PhaseSpec& s) { return std::make_unique<SpeedPhase>(s, true); });
    c.add_campaign("precision", precision_campaign_plan);
    c.add_campaign("timing", timing_campaign_plan);
    return c;
  }();
  return k;
}

void CampaignKinds::add_phase(const std::string& kind, PhaseFactory factory) {
  MANTISSA_ASSERT(!m_phases.count(kind), "phase kind '" << kind << "' registered twice");
  m_phases[kind] = std::move(factory);
}

void CampaignKinds::add_campaign(const std::string& kind, CampaignPlan plan) {
  MANTISSA_ASSERT(!m_campaigns.count(kind), "campaign kind '" << kind << "' registered twice");
  m_campaigns[kind] = std::move(plan);
}

std::vector<std::string> CampaignKinds::phase_kinds() const {
  std::vector<std::string> k;
  for (const auto& kv : m_phases) k.push_back(kv.first);
  return k;
}

std::vector<std::string> CampaignKinds::campaign_kinds() const {
  std::vector<std::string> k;
  for (const auto& kv : m_campaigns) k.push_back(kv.first);
  return k;
}

std::vector<PhaseSpec> CampaignKinds::plan(const CampaignConfig& config,
                                           const PrecisionTable& precisions) const {
  auto it = m_campaigns.find(config.kind);
  if (it == m_campaigns.end())
    throw Error("deck key 'campaign.kind': unknown campaign kind '" + config.kind +
                "'; this build has: " + names(m_campaigns));
  return it->second(config, precisions);
}

std::unique_ptr<Phase> CampaignKinds::make_phase(const PhaseSpec& spec) const {
  auto it = m_phases.find(spec.kind);
  if (it == m_phases.end())
    throw Error("campaign phase '" + spec.name + "': unknown phase kind '" + spec.kind +
                "'; this build has: " + names(m_phases));
  return it->second(spec);
}

}  // namespace mantissa::workflow
