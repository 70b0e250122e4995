#pragma once
// Physics and surrogates by name (the deck's `physics:` value, the surrogate's model name).
// apps/mantissa fills one Registry with adapters of the concrete modules; adding a physics is
// one add_physics() line there (DESIGN.md "Layout"): its precision table, its creator and,
// optionally, a recorder and a report section of its own. A creator is given the deck, the
// shared decomposition and a precision set the table allows (the registry checks it first).
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/PrecisionSet.hpp>
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

class Recorder;
class ReportSection;

struct ModelContext {
  const Deck* deck = nullptr;             // null in unit tests that configure models directly
  const Decomposition* decomp = nullptr;  // shared by every variant and rollout
};

using PhysicsCreator = std::function<std::unique_ptr<PhysicsModel>(const ModelContext&, const PrecisionSet&)>;
using SurrogateCreator = std::function<std::unique_ptr<SurrogateModel>(const ModelContext&)>;
using RecorderCreator = std::function<std::unique_ptr<Recorder>(const ModelContext&)>;
using ReportSectionCreator = std::function<std::unique_ptr<ReportSection>(const ModelContext&)>;

struct PhysicsEntry {
  PrecisionTable precisions;  // the legal combinations, stated once
  PhysicsCreator create;
  RecorderCreator recorder;     // optional: the default Recorder samples the probes
  ReportSectionCreator report;  // optional: nothing beyond the generic report
};

class Registry {
 public:
  void add_physics(const std::string& name, PhysicsEntry entry);
  void add_surrogate(const std::string& name, SurrogateCreator creator);
  bool has_physics(const std::string& name) const { return m_physics.count(name) != 0; }
  bool has_surrogate(const std::string& name) const { return m_surrogates.count(name) != 0; }
  std::vector<std::string> physics_names() const;
  std::vector<std::string> surrogate_names() const;
  // Throw mantissa::Error naming the unknown key and the registered ones.
  const PhysicsEntry& physics(const std::string& name) const;
  // Throws mantissa::Error when the table does not allow `precision` (naming the legal ones).
  std::unique_ptr<PhysicsModel> create_physics(const std::string& name, const ModelContext& ctx,
                                               const PrecisionSet& precision) const;
  std::unique_ptr<Recorder> create_recorder(const std::string& name, const ModelContext& ctx) const;
  std::unique_ptr<ReportSection> create_report_section(const std::string& name,
                                                       const ModelContext& ctx) const;
  std::unique_ptr<SurrogateModel> create_surrogate(const std::string& name, const ModelContext& ctx) const;

 private:
  std::map<std::string, PhysicsEntry> m_physics;
  std::map<std::string, SurrogateCreator> m_surrogates;
};

}  // namespace mantissa::workflow
