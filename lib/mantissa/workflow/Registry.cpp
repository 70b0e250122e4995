#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Recorder.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/ReportSection.hpp>

namespace mantissa::workflow {

namespace {
template <class Map>
std::vector<std::string> keys(const Map& m) {
  std::vector<std::string> k;
  k.reserve(m.size());
  for (const auto& kv : m) k.push_back(kv.first);
  return k;
}
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none registered)" : s;
}
}  // namespace

void Registry::add_physics(const std::string& name, PhysicsEntry entry) {
  MANTISSA_ASSERT(!m_physics.count(name), "physics '" << name << "' registered twice");
  MANTISSA_ASSERT(entry.create, "physics '" << name << "' registered without a creator");
  MANTISSA_ASSERT(!entry.precisions.roles.empty() && !entry.precisions.combinations.empty(),
                  "physics '" << name << "' registered without a precision table");
  for (const auto& c : entry.precisions.combinations)
    for (const auto& r : entry.precisions.roles)
      MANTISSA_ASSERT(c.has(r),
                      "physics '" << name << "': combination '" << c.describe() << "' lacks role " << r);
  m_physics[name] = std::move(entry);
}

void Registry::add_surrogate(const std::string& name, SurrogateCreator creator) {
  MANTISSA_ASSERT(!m_surrogates.count(name), "surrogate '" << name << "' registered twice");
  m_surrogates[name] = std::move(creator);
}

std::vector<std::string> Registry::physics_names() const {
  return keys(m_physics);
}
std::vector<std::string> Registry::surrogate_names() const {
  return keys(m_surrogates);
}

const PhysicsEntry& Registry::physics(const std::string& name) const {
  auto it = m_physics.find(name);
  if (it == m_physics.end())
    throw Error("deck key 'physics': unknown physics '" + name +
                "'; this build has: " + join(physics_names()));
  return it->second;
}

std::unique_ptr<PhysicsModel> Registry::create_physics(const std::string& name, const ModelContext& ctx,
                                                       const PrecisionSet& precision) const {
  const auto& e = physics(name);
  if (!e.precisions.allows(precision))
    throw Error(name + ": no solver for " + precision.describe() + "; use one of " + e.precisions.describe() +
                " (campaign.variants[].storage/compute)");
  return e.create(ctx, precision);
}

std::unique_ptr<Recorder> Registry::create_recorder(const std::string& name, const ModelContext& ctx) const {
  const auto& e = physics(name);
  return e.recorder ? e.recorder(ctx) : std::make_unique<Recorder>();
}

std::unique_ptr<ReportSection> Registry::create_report_section(const std::string& name,
                                                               const ModelContext& ctx) const {
  const auto& e = physics(name);
  return e.report ? e.report(ctx) : std::make_unique<ReportSection>();
}

std::unique_ptr<SurrogateModel> Registry::create_surrogate(const std::string& name,
                                                           const ModelContext& ctx) const {
  auto it = m_surrogates.find(name);
  if (it == m_surrogates.end())
    throw Error("surrogate model '" + name + "' is not in this build; available: " + join(surrogate_names()));
  return it->second(ctx);
}

}  // namespace mantissa::workflow
