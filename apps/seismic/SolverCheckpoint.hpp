#pragma once
// Checkpoint hooks of the seismic solver through the foundation's HDF5 checkpoints
// (lib/mantissa/io): the two wavefields, the CPML memory variables, the step, the shot and
// the gather recorded so far. Global datasets, so a restart works at any rank count; the
// update is point-wise, so a restart continues bitwise.
#include <mantissa/core/Error.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <seismic/Solver.hpp>

#include <string>
#include <vector>

namespace mantissa::seismic {

inline constexpr const char* traces_dataset = "seismic_traces";

// Collective. Returns the checkpoint's path.
template <class S, class C>
std::string save_checkpoint(Solver<S, C>& solver, const io::CheckpointWriter& writer,
                            io::Attributes attrs = {}) {
  attrs.set("physics", "seismic");
  attrs.set("seismic_shot", std::int64_t(solver.shot()));
  attrs.set("seismic_dt", solver.dt());
  std::vector<io::FieldRef> fields;
  for (auto& [name, f] : solver.state_fields()) fields.push_back(io::field_ref(name, *f));
  for (auto& [name, f] : solver.memory_fields()) fields.push_back(io::field_ref(name, *f));
  std::vector<io::Dataset> extra;
  const auto& tr = solver.traces();
  if (!tr.data.empty() && tr.num_samples() > 0) {
    std::vector<double> flat;
    for (const auto& row : tr.data) flat.insert(flat.end(), row.begin(), row.end());
    extra.push_back(io::Dataset::whole(traces_dataset, flat,
                                       {std::int64_t(tr.data.size()), std::int64_t(tr.num_samples())}));
  }
  return writer.write(solver.step_index(), solver.time(), attrs, fields, extra);
}

// Collective. The solver must be built from the same deck (grid, order, boundaries).
template <class S, class C>
void load_checkpoint(Solver<S, C>& solver, const io::CheckpointReader& reader) {
  io::CheckpointExpectations expect;
  expect.physics = "seismic";
  for (auto& [name, f] : solver.state_fields()) expect.fields.push_back(name);
  for (auto& [name, f] : solver.memory_fields()) expect.fields.push_back(name);
  reader.validate_against(solver.decomposition().grid(), expect);
  const auto& attrs = reader.attributes();
  if (attrs.get_real("seismic_dt") != solver.dt())
    throw Error("checkpoint '" + reader.file() + "' was written with dt " +
                std::to_string(attrs.get_real("seismic_dt")) + ", this run has dt " +
                std::to_string(solver.dt()) + "; use the deck the checkpoint was written with");
  for (auto& [name, f] : solver.state_fields()) reader.read_field(name, *f);
  for (auto& [name, f] : solver.memory_fields()) reader.read_field(name, *f);
  Traces traces = solver.traces();
  traces.data.assign(solver.config().receivers.size(), {});
  if (reader.has_dataset(traces_dataset)) {
    std::vector<std::int64_t> dims;
    const auto flat = reader.read_dataset<double>(traces_dataset, &dims);
    for (std::int64_t r = 0; r < dims[0]; ++r)
      traces.data[std::size_t(r)].assign(flat.begin() + r * dims[1], flat.begin() + (r + 1) * dims[1]);
  }
  solver.restore(static_cast<int>(attrs.get_int("seismic_shot")), static_cast<int>(reader.step()), traces);
}

}  // namespace mantissa::seismic
