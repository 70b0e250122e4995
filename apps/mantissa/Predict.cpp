// `mantissa predict` (Predict.hpp): a trained surrogate on a user's state, the prediction written
// through lib/mantissa/io with an XDMF sidecar.
#include "Predict.hpp"

#include "Check.hpp"
#include "Registry.hpp"

#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Precision.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/FieldRef.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/io/Xdmf.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/SurrogateModel.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <sys/stat.h>
#include <chrono>
#include <cmath>
#include <iostream>

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

// The two datasets of the state file the surrogate starts from, and what the file says of
// itself (its step, when it has one).
struct StateLayout {
  std::string p, p_old, kind;
  std::int64_t step = -1;
};

StateLayout find_layout(const io::H5File& f, const std::string& path, const std::string& fields) {
  StateLayout l;
  if (!fields.empty()) {
    const auto comma = fields.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 >= fields.size() ||
        fields.find(',', comma + 1) != std::string::npos)
      throw Error("mantissa predict: --fields '" + fields +
                  "' must name two datasets separated by one comma, e.g. --fields p,p_old");
    l.p = fields.substr(0, comma);
    l.p_old = fields.substr(comma + 1);
    l.kind = "the datasets named by --fields";
  } else if (f.has("fields/state.0") && f.has("fields/state.1")) {
    l.p = "fields/state.0";
    l.p_old = "fields/state.1";
    l.kind = "a campaign checkpoint";
  } else if (f.has("p") && f.has("p_old")) {
    l.p = "p";
    l.p_old = "p_old";
    l.kind = "p and p_old";
  } else {
    std::string names;
    for (const auto& n : f.names()) names += (names.empty() ? "" : ", ") + n;
    throw Error("mantissa predict: state file '" + path +
                "' has neither /p and /p_old (the layout `mantissa predict` writes) nor /fields/state.0 and "
                "/fields/state.1 (a campaign checkpoint); it holds: " +
                (names.empty() ? std::string("nothing") : names) +
                ". Name its two pressure levels with --fields P,P_OLD");
  }
  for (const auto* d : {&l.p, &l.p_old})
    if (!f.has(*d))
      throw Error("mantissa predict: state file '" + path + "' has no dataset '" + *d +
                  "' (--fields); check the name with h5ls -r");
  if (f.has_attribute("step")) l.step = f.get_int("step");
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

  // The physics' ghost width (mesh.ghost is gone: the stencil decides it), as the campaign's
  // states that the surrogate was trained on have it.
  const int ghost = physics_ghost_width(deck);
  workflow::State st;
  st.push_back({"p", Field<double>("mantissa::app::predict::p", decomp, ghost)});
  st.push_back({"p_old", Field<double>("mantissa::app::predict::p_old", decomp, ghost)});
  StateLayout layout;
  {
    io::H5File in = io::H5File::open(o.state, MPI_COMM_WORLD, io::Verify::checksums_if_present);
    layout = find_layout(in, o.state, o.fields);
    read_level(in, layout.p, st[0].field, decomp);
    read_level(in, layout.p_old, st[1].field, decomp);
  }
  const int K = sur->stride();
  if (rank == 0)
    std::cout
        << fmt::format(
               "mantissa predict: {} from '{}' ({}: {}, {}{}), {} prediction(s) of K = {} steps in {}\n",
               model, o.state, layout.kind, layout.p, layout.p_old,
               layout.step >= 0 ? fmt::format(", step {}", layout.step) : std::string(), o.predictions, K,
               to_string(precision))
        << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < o.predictions; ++n) {
    sur->predict(st, 1);
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
    f.write_field("p", io::field_ref("p", st[0].field), grid);
    f.write_field("p_old", io::field_ref("p_old", st[1].field), grid);
    // What the model saw beside the state (the deck's velocity model, for seismic).
    const workflow::State statics = sur->static_inputs();
    for (const auto& s : statics) f.write_field("static/" + s.name, io::field_ref(s.name, s.field), grid);
    f.close();
    out.commit();
  }
  std::string xmf = o.output.substr(0, o.output.size() - 3) + ".xmf";
  if (rank == 0) {
    const std::string h5 = base_name(o.output);
    std::vector<io::XdmfField> xf{{"p", h5, "/p", 8}, {"p_old", h5, "/p_old", 8}};
    for (const auto& s : sur->static_inputs()) xf.push_back({s.name, h5, "/static/" + s.name, 8});
    io::write_xdmf(xmf, grid, "prediction", xf);
    std::cout << fmt::format("wrote {} and {} ({} solver steps ahead{}; {:.3g} s of inference)\n", o.output,
                             xmf, steps,
                             layout.step >= 0 ? fmt::format(", step {}", layout.step + steps) : std::string(),
                             secs)
              << std::flush;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

}  // namespace mantissa::app
