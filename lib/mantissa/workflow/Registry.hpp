#pragma once
// Physics and surrogates by name (the deck's `physics:` value, the surrogate's model name).
// apps/mantissa fills one Registry with adapters of the concrete modules; adding a physics is
// one add_physics() line there (DESIGN.md "Layout"). A creator is given the deck, the shared
// decomposition and the precision pair, and throws mantissa::Error for a pair it lacks.
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/SurrogateModel.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mantissa {
class Deck;
}

namespace mantissa::workflow {

struct ModelContext {
  const Deck* deck = nullptr;             // null in unit tests that configure models directly
  const Decomposition* decomp = nullptr;  // shared by every variant and rollout
};

using PhysicsCreator =
    std::function<std::unique_ptr<PhysicsModel>(const ModelContext&, Precision storage, Precision compute)>;
using SurrogateCreator = std::function<std::unique_ptr<SurrogateModel>(const ModelContext&)>;

class Registry {
 public:
  void add_physics(const std::string& name, PhysicsCreator creator);
  void add_surrogate(const std::string& name, SurrogateCreator creator);
  bool has_physics(const std::string& name) const { return m_physics.count(name) != 0; }
  bool has_surrogate(const std::string& name) const { return m_surrogates.count(name) != 0; }
  std::vector<std::string> physics_names() const;
  std::vector<std::string> surrogate_names() const;
  // Throw mantissa::Error naming the unknown key and the registered ones.
  std::unique_ptr<PhysicsModel> create_physics(const std::string& name, const ModelContext& ctx,
                                               Precision storage, Precision compute) const;
  std::unique_ptr<SurrogateModel> create_surrogate(const std::string& name, const ModelContext& ctx) const;

 private:
  std::map<std::string, PhysicsCreator> m_physics;
  std::map<std::string, SurrogateCreator> m_surrogates;
};

}  // namespace mantissa::workflow
