#pragma once
// The seam between the campaign and a physics (DESIGN.md "How data flows"): one virtual
// interface at the top, templates below it (ExaMPM ExaMPM_Solver.hpp). A physics module
// (apps/seismic, apps/cfd) knows nothing of campaigns; apps/mantissa adapts it to this
// interface and registers it by the deck's `physics:` name (PhysicsRegistry).
//
// Everything the campaign exchanges with a physics is fp64 (Field<double>): variants in lower
// precisions convert at the boundary, which is exact for fp32/bf16/fp16 values, so a state
// copied out and set back reproduces the run bit for bit (the checkpoint hook relies on it).
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/Field.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::workflow {

struct NamedField {
  std::string name;
  Field<double> field;
};
// The complete state of a physics at one step: every field needed to continue the run (all
// time levels, auxiliary absorbing-layer fields, ...). The first field is the primary
// observable the campaign compares between variants (pressure for the wave).
using State = std::vector<NamedField>;

// Global diagnostics (collective over the decomposition's communicator).
struct Diagnostics {
  double energy = 0.0;  // the physics' conserved (or dissipated) energy
  bool finite = true;   // no NaN/Inf in any state field
  std::string where;    // when !finite: "field 'p' at global (x, y, z) = (12, 40, 0)"
};

// What the receivers record, for the shot gathers (gathers.h5): positions in the grid's
// coordinates (in the order of receiver_names()), physics steps between two samples, the
// quantity and the units.
struct Recording {
  std::vector<std::array<double, 3>> positions;
  int stride = 1;  // e.g. seismic.record_every
  std::string quantity, unit;
  std::string length_unit = "m", time_unit = "s";
};

// One source of a shot, for the gathers' metadata.
struct SourceInfo {
  std::array<double, 3> position{0.0, 0.0, 0.0};
  std::string wavelet;  // e.g. "ricker"
  double frequency = 0.0, delay = 0.0, amplitude = 0.0;
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

  // One line for logs and the report: physics, storage/compute precisions, grid.
  virtual std::string describe() const = 0;
  virtual Precision storage_precision() const = 0;
  virtual Precision compute_precision() const = 0;
  // Whether the storage type runs on native hardware types here ("native") or is emulated
  // ("emulated"), for the report's context section.
  virtual std::string precision_support() const = 0;

  // Sets the initial state (step 0, time 0). Deterministic: every variant starts from the
  // same state.
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

  // Receivers (seismograms): names, and the primary field's value at each receiver now, the
  // same vector on every rank. A physics without receivers returns empty vectors.
  virtual std::vector<std::string> receiver_names() const { return {}; }
  virtual std::vector<double> sample_receivers() const { return {}; }
  virtual Recording recording() const { return {}; }

  // Shots: experiments on the same grid and model that differ only in their sources (a
  // seismic survey). initialize() starts the selected shot and set_state() continues within
  // it. The campaign runs every shot of the reference and of each physics variant for the
  // gathers; its accuracy numbers, snapshots and the surrogate use shot 0.
  virtual int num_shots() const { return 1; }
  virtual void select_shot(int /*shot*/) {}
  virtual std::vector<SourceInfo> shot_sources(int /*shot*/) const { return {}; }

  virtual StepCost cost_per_step() const = 0;
};

}  // namespace mantissa::workflow
