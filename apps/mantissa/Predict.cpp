// `mantissa predict` (Predict.hpp): a trained surrogate on a user's state, the prediction written
// through lib/mantissa/io with an XDMF sidecar.
#include "Predict.hpp"

#include "Check.hpp"
#include "Registry.hpp"
#if __has_include(<cfd/CfdDeck.hpp>)
#include "CfdAdapter.hpp"
#define MANTISSA_PREDICT_HAVE_CFD 1
#endif

#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Precision.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/FieldRef.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/io/Xdmf.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/CampaignCheckpoint.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/SurrogateModel.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace mantissa::app {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& path) {
  const auto k = path.find_last_of('/');
  return k == std::string::npos ? path : path.substr(k + 1);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The state's fields a prediction reads and writes: the surrogate's channels (seismic: the two
// pressure levels p, p_old; cfd: the velocity u, v, and w in 3D), as the campaign's registry gives
// them to the transformer.
std::vector<std::string> channel_names(const Deck& deck) {
#ifdef MANTISSA_PREDICT_HAVE_CFD
  if (deck.get_string("physics") == "cfd") return cfd_surrogate_channels(deck);
#else
  static_cast<void>(deck);
#endif
  return {"p", "p_old"};
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// Where the state file holds each channel (and, when it has them, the state's other fields by
// name, e.g. the flow's stage potentials), and what the file says of itself.
struct StateLayout {
  std::vector<std::string> datasets;        // one per channel
  std::map<std::string, std::string> more;  // state field name -> dataset, beyond the channels
  std::string kind;
  std::int64_t step = -1;
  double time = 0.0;
};

StateLayout find_layout(const io::H5File& f, const std::string& path, const std::string& fields,
                        const std::vector<std::string>& names, const std::vector<std::string>& others) {
  StateLayout l;
  const std::string example = join(names, ",");
  if (!fields.empty()) {
    l.datasets = split(fields, ',');
    bool empty = fields.back() == ',';
    for (const auto& d : l.datasets) empty = empty || d.empty();
    if (l.datasets.size() != names.size() || empty)
      throw Error("mantissa predict: --fields '" + fields + "' must name " + std::to_string(names.size()) +
                  " datasets separated by commas, one per channel (" + join(names, ", ") +
                  "), e.g. --fields " + example);
    l.kind = "the datasets named by --fields";
  } else if (f.has("fields/state.0")) {
    // A campaign checkpoint: its running state's fields by name (a file without the names, e.g.
    // one written by hand in that layout: the channels are its first fields, in order).
    auto stored = workflow::CampaignCheckpoint::state_datasets(f);
    if (stored.empty())
      for (std::size_t i = 0; i < names.size(); ++i)
        stored.emplace_back(names[i], "fields/state." + std::to_string(i));
    auto dataset = [&](const std::string& n) {
      for (const auto& s : stored)
        if (s.first == n) return s.second;
      return std::string();
    };
    for (const auto& n : names) {
      const std::string d = dataset(n);
      if (d.empty()) {
        std::vector<std::string> held;
        held.reserve(stored.size());
        for (const auto& s : stored) held.push_back(s.first);
        throw Error("mantissa predict: campaign checkpoint '" + path + "' holds the state fields " +
                    join(held, ", ") + ", not the surrogate's channel '" + n +
                    "' (a checkpoint of another physics?); name the datasets with --fields " + example);
      }
      l.datasets.push_back(d);
    }
    for (const auto& n : others)
      if (!dataset(n).empty()) l.more[n] = dataset(n);
    l.kind = "a campaign checkpoint";
  } else {
    // The solver's own checkpoint (/fields/NAME), or what `mantissa predict` writes (/NAME).
    for (const std::string prefix : {"fields/", ""}) {
      bool all = true;
      for (const auto& n : names) all = all && f.has(prefix + n);
      if (!all) continue;
      for (const auto& n : names) l.datasets.push_back(prefix + n);
      for (const auto& n : others)
        if (f.has(prefix + n)) l.more[n] = prefix + n;
      l.kind = prefix.empty() ? join(names, ", ") : "a solver checkpoint";
      break;
    }
    if (l.datasets.empty()) {
      std::string held;
      for (const auto& n : f.names()) held += (held.empty() ? "" : ", ") + n;
      std::vector<std::string> top, nested;
      for (const auto& n : names) {
        top.push_back("/" + n);
        nested.push_back("/fields/" + n);
      }
      throw Error("mantissa predict: state file '" + path + "' has neither " + join(top, ", ") +
                  " (the layout `mantissa predict` writes) nor " + join(nested, ", ") +
                  " (a solver checkpoint) nor /fields/state.<i> (a campaign checkpoint); it holds: " +
                  (held.empty() ? std::string("nothing") : held) + ". Name its " + join(names, ", ") +
                  " datasets with --fields " + example);
    }
  }
  for (const auto& d : l.datasets)
    if (!f.has(d))
      throw Error("mantissa predict: state file '" + path + "' has no dataset '" + d +
                  "' (--fields); check the name with h5ls -r");
  if (f.has_attribute("step")) l.step = f.get_int("step");
  if (f.has_attribute("time")) l.time = f.get_real("time");
  return l;
}

// Reads one global dataset into a distributed fp64 field (this rank's block), converting fp32.
void read_level(const io::H5File& f, const std::string& name, Field<double>& out, const Decomposition& d) {
  const auto attrs = f.dataset_attributes(name);
  const std::string type =
      attrs.has("mantissa_type") ? attrs.get_string("mantissa_type") : std::string("fp64");
  if (type == "fp64") {
    f.read_field(name, io::field_ref(name, out));
  } else if (type == "fp32") {
    Field<float> tmp("mantissa::app::predict::fp32_level", d, out.ghost(0));
    f.read_field(name, io::field_ref(name, tmp));
    auto vo = out.view();
    auto vt = tmp.view();
    Kokkos::parallel_for(
        "mantissa::app::predict::widen", out.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t z, const std::int64_t y, const std::int64_t x) {
          vo(z, y, x) = double(vt(z, y, x));
        });
    fence("mantissa::app::predict::widen");
  } else {
    throw Error("mantissa predict: dataset '" + name + "' of state file '" + f.file_path() + "' is " + type +
                "; give fp64 or fp32 levels (a checkpoint of a " + type +
                "-storage variant: use the reference's or convert it)");
  }
}

}  // namespace

int predict_command(const Deck& deck, const PredictOptions& o) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (o.predictions < 1)
    throw Error("mantissa predict: --predictions " + std::to_string(o.predictions) + " must be at least 1");
  if (o.output.empty() || !ends_with(o.output, ".h5"))
    throw Error("mantissa predict: --output '" + o.output +
                "' must name an HDF5 file ending in .h5 (its XDMF sidecar gets .xmf)");
  if (o.output == o.state || o.output == o.weights)
    throw Error("mantissa predict: --output '" + o.output + "' would replace an input; choose another name");
  if (!is_file(o.weights))
    throw Error("mantissa predict: weights file '" + o.weights +
                "' does not exist; give a surrogate's weights (a run directory's surrogate-trained.h5, or "
                "campaign.surrogate.save_weights + .h5)");
  if (!is_file(o.state)) throw Error("mantissa predict: state file '" + o.state + "' does not exist");
  const Precision precision = parse_precision(o.precision, "mantissa predict --precision");
  const Grid grid = grid_from_deck(deck);
  Decomposition decomp(MPI_COMM_WORLD, grid, process_grid_from_deck(deck));
  const workflow::Registry registry = make_registry();
  const std::string model = deck.get_string("campaign.surrogate.model");
  if (!registry.has_surrogate(model))
    throw Error(deck.file() + ": campaign.surrogate.model = '" + model +
                "' is not a surrogate this build has");
  const workflow::ModelContext ctx{&deck, &decomp};
  auto sur = registry.create_surrogate(model, ctx);
  // SurrogateModel::load takes the prefix (the adapter appends .h5).
  sur->load(ends_with(o.weights, ".h5") ? o.weights.substr(0, o.weights.size() - 3) : o.weights);
  sur->set_precision(precision);

  // The state the surrogate advances: its channels, first, as the campaign hands them to it. A
  // physics with a constraint on its state (cfd: a divergence-free velocity) gets its model, which
  // builds the whole state (the flow's stage potentials after the velocity) and projects every
  // prediction as the campaign does (PhysicsModel::constrain); seismic needs only the two
  // pressure levels, at the physics' ghost width (mesh.ghost is gone: the stencil decides it).
  const std::string physics = deck.get_string("physics");
  const std::vector<std::string> names = channel_names(deck);
  std::unique_ptr<workflow::PhysicsModel> flow;
  workflow::State st;
  if (physics == "cfd") {
    flow = registry.create_physics(
        physics, ctx, registry.physics(physics).precisions.uniform(Precision::fp64, "mantissa predict"));
    st = flow->state();
    for (auto& f : st) Kokkos::deep_copy(f.field.view(), 0.0);
  } else {
    const int ghost = physics_ghost_width(deck);
    for (const auto& n : names)
      st.push_back({n, Field<double>("mantissa::app::predict::" + n, decomp, ghost)});
  }
  std::vector<std::string> others;
  for (std::size_t i = names.size(); i < st.size(); ++i) others.push_back(st[i].name);
  StateLayout layout;
  {
    io::H5File in = io::H5File::open(o.state, MPI_COMM_WORLD, io::Verify::checksums_if_present);
    layout = find_layout(in, o.state, o.fields, names, others);
    for (std::size_t i = 0; i < names.size(); ++i) read_level(in, layout.datasets[i], st[i].field, decomp);
    for (std::size_t i = names.size(); i < st.size(); ++i) {
      const auto it = layout.more.find(st[i].name);
      if (it != layout.more.end()) read_level(in, it->second, st[i].field, decomp);
    }
  }
  const int K = sur->stride();
  if (rank == 0)
    std::cout << fmt::format(
                     "mantissa predict: {} from '{}' ({}: {}{}), {} prediction(s) of K = {} steps in {}{}\n",
                     model, o.state, layout.kind, join(layout.datasets, ", "),
                     layout.step >= 0 ? fmt::format(", step {}", layout.step) : std::string(), o.predictions,
                     K, to_string(precision), flow ? ", each projected to a divergence-free velocity" : "")
              << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  double before_max = 0.0, after_max = 0.0;
  std::int64_t step = std::max<std::int64_t>(layout.step, 0);
  double time = layout.time;
  for (int n = 0; n < o.predictions; ++n) {
    sur->predict(st, 1);
    step += K;
    if (flow) {
      time += double(K) * flow->dt();
      const workflow::Constraint c = flow->constrain(st, step, time);
      before_max = std::max(before_max, c.before);
      after_max = std::max(after_max, c.after);
    }
    if (rank == 0 && (o.predictions <= 10 || (n + 1) % 10 == 0 || n + 1 == o.predictions))
      std::cout << fmt::format("  prediction {}/{}\n", n + 1, o.predictions) << std::flush;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::int64_t steps = std::int64_t(o.predictions) * K;
  {
    io::PendingFile out(o.output, MPI_COMM_WORLD);
    io::H5File f = io::H5File::create(out, MPI_COMM_WORLD);
    f.set("format", "mantissa-prediction");
    f.set("format_version", std::int64_t(1));
    f.set("physics", physics);
    f.set("surrogate", model);
    f.set("weights", o.weights);
    f.set("state_file", o.state);
    f.set("state_layout", layout.kind);
    f.set("deck_hash", deck.hash());
    f.set("precision", std::string(to_string(precision)));
    f.set("predictions", std::int64_t(o.predictions));
    f.set("steps_per_prediction", std::int64_t(K));
    f.set("advanced_steps", steps);
    // The physics step the prediction stands for, when the state file said where it started.
    if (layout.step >= 0) f.set("step", layout.step + steps);
    if (flow) {
      // Every prediction projected (the campaign's rule): the largest divergence L2 norm of a
      // prediction before its projection and after it.
      f.set("projected", std::int64_t(1));
      f.set("divergence_before_max", before_max);
      f.set("divergence_after_max", after_max);
    }
    for (std::size_t i = 0; i < names.size(); ++i)
      f.write_field(names[i], io::field_ref(names[i], st[i].field), grid);
    // What the model saw beside the state (the deck's velocity model, for seismic).
    const workflow::State statics = sur->static_inputs();
    for (const auto& s : statics) f.write_field("static/" + s.name, io::field_ref(s.name, s.field), grid);
    f.close();
    out.commit();
  }
  std::string xmf = o.output.substr(0, o.output.size() - 3) + ".xmf";
  if (rank == 0) {
    const std::string h5 = base_name(o.output);
    const workflow::State statics = sur->static_inputs();
    std::vector<io::XdmfField> xf;
    xf.reserve(names.size() + statics.size());
    for (const auto& n : names) xf.push_back({n, h5, "/" + n, 8});
    for (const auto& s : statics) xf.push_back({s.name, h5, "/static/" + s.name, 8});
    io::write_xdmf(xmf, grid, "prediction", xf);
    std::cout << fmt::format(
                     "wrote {} and {} ({} solver steps ahead{}; {:.3g} s of inference{})\n", o.output, xmf,
                     steps, layout.step >= 0 ? fmt::format(", step {}", layout.step + steps) : std::string(),
                     secs,
                     flow ? fmt::format(
                                "; divergence L2 before the projections up to {:.3g}, after up to {:.3g}",
                                before_max, after_max)
                          : std::string())
              << std::flush;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

}  // namespace mantissa::app
