#pragma once
// Precision per role (DESIGN.md "Precision"): a physics variant is described by the precision
// of each of its roles (the state's storage, the arithmetic, a linear solver's inner
// iterations, ...), not by a fixed storage/compute pair, so that a physics with a solver can say
// "fp64 storage, fp64 compute, fp32 multigrid" without a change to lib/.
//
// PrecisionTable is where a physics states, once, which combinations it has: the registry refuses
// any other (naming the legal ones), the deck schema takes the choices of
// campaign.variants[].<role> from the tables of the registered physics, and the report lists them.
#include <mantissa/core/Precision.hpp>

#include <string>
#include <utility>
#include <vector>

namespace mantissa::workflow {

// The role names the built-in physics use. A physics may define others (the table names them).
namespace role {
inline constexpr const char* storage = "storage";  // precision the state is stored in
inline constexpr const char* compute = "compute";  // precision the update is computed in
inline constexpr const char* solver = "solver";    // inner precision of a linear solver (CFD)
}  // namespace role

class PrecisionSet {
 public:
  PrecisionSet() = default;
  PrecisionSet(std::initializer_list<std::pair<std::string, Precision>> roles);

  bool has(const std::string& role) const;
  // Throws mantissa::Error naming the role when it is absent.
  Precision get(const std::string& role) const;
  Precision get(const std::string& role, Precision fallback) const;
  void set(const std::string& role, Precision p);
  // In the order the roles were set.
  const std::vector<std::pair<std::string, Precision>>& roles() const { return m_roles; }
  bool empty() const { return m_roles.empty(); }
  // "storage fp16, compute fp32"
  std::string describe() const;
  // The same roles with the same precisions, in any order.
  bool operator==(const PrecisionSet& o) const;
  bool operator!=(const PrecisionSet& o) const { return !(*this == o); }

 private:
  std::vector<std::pair<std::string, Precision>> m_roles;
};

// The legal combinations of one physics.
struct PrecisionTable {
  std::vector<std::string> roles;          // every role the physics has, in display order
  std::vector<PrecisionSet> combinations;  // each with every role; the preferred ones first

  bool allows(const PrecisionSet& p) const;
  // The precisions `role` takes in any combination, in the order of Precision.
  std::vector<Precision> choices(const std::string& role) const;
  // `given` with its missing roles filled from the first combination that agrees with it on the
  // given roles; throws mantissa::Error (naming `where`, a role the physics lacks and the legal
  // combinations) when a role is unknown or no combination agrees.
  PrecisionSet complete(const PrecisionSet& given, const std::string& where) const;
  // Every role at p (a reference run); throws like complete() when the table lacks it.
  PrecisionSet uniform(Precision p, const std::string& where) const;
  // "storage/compute: fp64/fp64, fp64/fp32, ..."
  std::string describe() const;
};

}  // namespace mantissa::workflow
