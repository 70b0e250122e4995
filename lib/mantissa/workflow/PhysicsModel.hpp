#pragma once
// The seam between the campaign and a physics (DESIGN.md "How data flows"): one virtual
// interface at the top, templates below it (ExaMPM ExaMPM_Solver.hpp). A physics module
// (apps/seismic, apps/cfd) knows nothing of campaigns; apps/mantissa adapts it to this
// interface and registers it by the deck's `physics:` name (Registry), with the table of its
// precision combinations (PrecisionSet.hpp) and, optionally, a recorder and report sections of
// its own (Recorder.hpp, ReportSection.hpp). Nothing here is particular to one physics.
//
// Everything the campaign exchanges with a physics is fp64 (Field<double>): variants in lower
// precisions convert at the boundary, which is exact for fp32/bf16/fp16 values, so a state
// copied out and set back reproduces the run bit for bit (the checkpoint hook relies on it).
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/Field.hpp>
#include <mantissa/workflow/PrecisionSet.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace mantissa::workflow {

struct NamedField {
  std::string name;
  Field<double> field;
};
// The complete state of a physics at one step: every field needed to continue the run (all
// time levels, auxiliary absorbing-layer fields, ...). The first field is the primary
// observable the campaign compares between variants (pressure for the wave, a velocity
// component or the vorticity for a flow).
using State = std::vector<NamedField>;

struct NamedValue {
  std::string name;
  double value = 0.0;
};

// Global diagnostics (collective over the decomposition's communicator): named scalars. The
// first one is the physics' energy (conserved or dissipated: the wave's acoustic energy, a
// flow's kinetic energy); the campaign reports its drift against the reference and the hybrid
// indicator compares it. Others (enstrophy, divergence, solver iterations, ...) are recorded at
// the sample steps as they are.
struct Diagnostics {
  std::vector<NamedValue> values;
  bool finite = true;  // no NaN/Inf in any state field
  std::string where;   // when !finite: "field 'p' at global (x, y, z) = (12, 40, 0)"

  double energy() const {
    return values.empty() ? std::numeric_limits<double>::quiet_NaN() : values[0].value;
  }
};

// Observation points: the primary field's value at fixed positions, sampled every `stride`
// physics steps (seismic: the receivers; a flow: velocity probes).
struct Probes {
  std::vector<std::string> names;
  std::vector<std::array<double, 3>> positions;  // grid coordinates, in the order of names
  int stride = 1;
  std::string quantity, unit;
  std::string length_unit = "m", time_unit = "s";
};

// What PhysicsModel::constrain did to a state that did not come from the physics' own stepping
// (a surrogate's prediction). `what` empty: the physics has no constraint and left the state alone.
// Otherwise `name` names the operation ("projection") and `measure` the constraint's violation
// ("divergence": its L2 norm) before and after it, and `what` says it in words for the report.
struct Constraint {
  std::string name, measure, what;
  double before = std::numeric_limits<double>::quiet_NaN();
  double after = std::numeric_limits<double>::quiet_NaN();
  bool applied() const { return !what.empty(); }
};

// Work per step for the speed numbers; 0 means "not counted" and the report says so.
struct StepCost {
  double cell_updates = 0.0;  // global points advanced per step
  double bytes = 0.0;         // minimum global memory traffic per step (a roofline model)
  double flops = 0.0;         // global floating-point operations per step
};

class PhysicsModel {
 public:
  virtual ~PhysicsModel() = default;

  // One line for logs and the report: physics, precisions, grid.
  virtual std::string describe() const = 0;
  // The precision of every role (the combination it was created with).
  virtual PrecisionSet precision() const = 0;
  // Whether the state's storage type runs on native hardware types here ("native") or is
  // emulated ("emulated"), for the report's context section.
  virtual std::string precision_support() const = 0;

  // Sets the initial state (step 0, time 0) of the selected experiment. Deterministic: every
  // variant starts from the same state.
  virtual void initialize() = 0;
  // Advances n steps. Must not throw on NaN/Inf; diagnostics() reports it.
  virtual void step(std::int64_t n) = 0;
  virtual std::int64_t step_index() const = 0;
  virtual double time() const = 0;
  virtual double dt() const = 0;

  // fp64 copies of the full state (checkpoint "save" hook, surrogate input).
  virtual State state() const = 0;
  // Replaces the full state (checkpoint "load" hook, hand-over from a surrogate). The fields
  // must have the names, decomposition and ghost widths of state().
  virtual void set_state(const State& state, std::int64_t step, double time) = 0;

  virtual Diagnostics diagnostics() const = 0;

  // Makes a state from outside the physics' own stepping (a surrogate's prediction, of state()'s
  // layout) one the physics can continue from, in place, before set_state() takes it: an
  // incompressible flow projects the velocity onto divergence-free fields with its own pressure
  // projection. The physics may hold the state afterwards (set_state() then follows with `step`,
  // `time`). Collective. Default: no constraint; the state is left alone.
  virtual Constraint constrain(State& /*state*/, std::int64_t /*step*/, double /*time*/) { return {}; }

  // Probes: where they are, and the primary field's value at each now, the same vector on every
  // rank. A physics without probes returns empty ones.
  virtual Probes probes() const { return {}; }
  virtual std::vector<double> sample_probes() const { return {}; }

  // Experiments: runs on the same grid and medium that differ only in their forcing (a seismic
  // survey's shots). initialize() starts the selected one and set_state() continues within it.
  // The campaign runs every experiment of the reference and of each physics variant; the
  // accuracy numbers and snapshots are experiment 0's. The surrogate trains on the experiments
  // of campaign.surrogate.train_experiments and is scored on those of heldout_experiments.
  virtual int num_experiments() const { return 1; }
  virtual void select_experiment(int /*experiment*/) {}
  // An experiment in the report's words (seismic: "shot 2").
  virtual std::string experiment_name(int experiment) const {
    return "experiment " + std::to_string(experiment);
  }

  virtual StepCost cost_per_step() const = 0;

  // For the speed column (issue 11). The precision each field of state() is stored in, in
  // state()'s order, for the subnormal census (SubnormalCensus.hpp); empty: every field in the
  // storage role's precision.
  virtual std::vector<Precision> state_storage() const { return {}; }
  // Seconds of the part of one step that does not shrink with the grid (halo exchanges,
  // boundary fills, their fences), measured now on this rank without changing the state; < 0:
  // not measured (the campaign then counts one kernel launch + fence).
  virtual double fixed_step_seconds() { return -1.0; }
};

}  // namespace mantissa::workflow
