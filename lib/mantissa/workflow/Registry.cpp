#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Registry.hpp>

namespace mantissa::workflow {

namespace {
template <class Map>
std::vector<std::string> keys(const Map& m) {
  std::vector<std::string> k;
  for (const auto& kv : m) k.push_back(kv.first);
  return k;
}
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none registered)" : s;
}
}  // namespace

void Registry::add_physics(const std::string& name, PhysicsCreator creator) {
  MANTISSA_ASSERT(!m_physics.count(name), "physics '" << name << "' registered twice");
  m_physics[name] = std::move(creator);
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

std::unique_ptr<PhysicsModel> Registry::create_physics(const std::string& name, const ModelContext& ctx,
                                                       Precision storage, Precision compute) const {
  auto it = m_physics.find(name);
  if (it == m_physics.end())
    throw Error("deck key 'physics': unknown physics '" + name +
                "'; this build has: " + join(physics_names()));
  return it->second(ctx, storage, compute);
}

std::unique_ptr<SurrogateModel> Registry::create_surrogate(const std::string& name,
                                                           const ModelContext& ctx) const {
  auto it = m_surrogates.find(name);
  if (it == m_surrogates.end())
    throw Error("surrogate model '" + name + "' is not in this build; available: " + join(surrogate_names()));
  return it->second(ctx);
}

}  // namespace mantissa::workflow
