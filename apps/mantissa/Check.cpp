#include "Check.hpp"
#include "Estimate.hpp"

#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/RunDirectory.hpp>
#include <mantissa/workflow/Schema.hpp>

#if __has_include(<cfd/CfdDeck.hpp>)  // only when the cfd module is built
#include <cfd/CfdDeck.hpp>
#include <cfd/Solver.hpp>
#define MANTISSA_APP_HAS_CFD 1
#endif
#include <seismic/SeismicDeck.hpp>
#include <seismic/VelocityModel.hpp>
#if __has_include(<surrogates/Checkpoint.hpp>)  // only when the surrogate module is built
#include <surrogates/Checkpoint.hpp>
#include <surrogates/Surrogate.hpp>
#include <surrogates/SurrogateDeck.hpp>
#define MANTISSA_APP_HAS_SURROGATES 1
#endif

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

namespace mantissa::app {

namespace {

const char* axis_name(int a) {
  static const char* names[3] = {"x", "y", "z"};
  return names[a];
}

// Decomposition::setup's choice of the process grid (and its refusals), without a communicator.
std::array<int, 3> process_dims(const Grid& grid, std::array<int, 3> dims, int size) {
  if (grid.dim == 2) {
    if (dims[2] > 1)
      throw Error("decomposition: a 2D grid cannot be split along z (process grid z = " +
                  std::to_string(dims[2]) + "); set it to 1 or 0");
    dims[2] = 1;
  }
  int fixed = 1;
  for (int a = 0; a < 3; ++a) {
    if (dims[a] < 0) throw Error("decomposition: process grid entries must be >= 0");
    fixed *= dims[a] > 0 ? dims[a] : 1;
  }
  if (size % fixed != 0)
    throw Error(
        fmt::format("decomposition: the process grid {}x{}x{} does not fit {} ranks; use 0 entries to let "
                    "mantissa choose",
                    dims[0], dims[1], dims[2], size));
  MPI_Dims_create(size, 3, dims.data());
  for (int a = 0; a < 3; ++a)
    if (dims[a] > grid.n[a])
      throw Error(
          fmt::format("decomposition: {} ranks along axis {} but only {} points; use fewer ranks or a "
                      "finer grid",
                      dims[a], a, grid.n[a]));
  return dims;
}

// Every rank owns at least n / dims points along an axis (Decomposition::split).
void check_owned_points(const Deck& deck, const Grid& grid, const std::array<int, 3>& dims) {
  const int ghost = physics_ghost_width(deck);
  const bool is_seismic = deck.get_string("physics") == "seismic";
  for (int a = 0; a < grid.dim; ++a) {
    const std::int64_t owned = grid.n[a] / dims[a];
    int need = ghost;
    std::string why = fmt::format("the ghost width {}", ghost);
    if (is_seismic) {
      // An image boundary (rigid or free surface) mirrors g + 1 points of the rank beside it.
      static const char* sides[3][2] = {{"x_low", "x_high"}, {"y_low", "y_high"}, {"z_low", "z_high"}};
      for (const char* side : sides[a]) {
        const std::string key = std::string("seismic.boundaries.") + side;
        if (deck.has(key) && deck.get_string(key) != "pml" && ghost + 1 > need) {
          need = ghost + 1;
          why = fmt::format("the {} points the image boundary seismic.boundaries.{} needs", ghost + 1, side);
        }
      }
    }
    if (owned >= need) continue;
    const std::int64_t most = std::max<std::int64_t>(1, grid.n[a] / need);
    throw Error(fmt::format(
        "mesh.process_grid: {} ranks along axis {} ({}) leave a rank {} of the {} points there, fewer than "
        "{}{}; "
        "use at most {} ranks along {} (mesh.process_grid) or a larger mesh.n",
        dims[a], a, axis_name(a), owned, grid.n[a], why,
        is_seismic ? fmt::format(" (seismic.order = {})", deck.get_int("seismic.order")) : std::string(),
        most, axis_name(a)));
  }
}

// The seismic solver's own refusals (seismic::check_config) with the velocity model's range over
// the whole grid, and the model file read and checked (VelocityModel).
void check_seismic(const Deck& deck, const Grid& grid, MPI_Comm comm) {
  seismic::Config c = seismic::config_from_deck(deck);
  c.quiet = true;
  const seismic::VelocityModel model(c.velocity, grid, comm);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double range[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const std::int64_t rows = grid.n[1] * grid.n[2];
  for (std::int64_t r = rank; r < rows; r += size) {
    const std::int64_t k = r / grid.n[1], j = r % grid.n[1];
    for (std::int64_t i = 0; i < grid.n[0]; ++i) {
      const double v = model.at(i, j, k);
      range[0] = std::isnan(v) ? -std::numeric_limits<double>::infinity() : std::min(range[0], v);
      range[1] = std::min(range[1], -v);  // max as -min(-v)
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_DOUBLE, MPI_MIN, comm);
  seismic::check_config(c, grid, range[0], -range[1]);
  // The surrogate's experiment lists name shots the deck has (Campaign::check_experiments, here
  // before anything is allocated).
  const workflow::CampaignConfig cfg = workflow::config_from_deck(deck);
  if (cfg.surrogate.enabled) {
    try {
      workflow::check_experiment_range(cfg, static_cast<int>(std::max<std::size_t>(1, c.shots.size())),
                                       "shot");
    } catch (const Error& e) {
      throw Error(deck.file() + ": " + e.what());
    }
  }
  // run.end_time in steps of the solver's own time step (Run.cpp asks a solver for it).
  if (deck.has("run.end_time"))
    checked_steps(deck.get_real("run.end_time"), seismic::effective_dt(c, grid, -range[1]));
}

#if MANTISSA_APP_HAS_SURROGATES
// The transformer's refusals that need no model (Surrogate's constructor): whole patches on every
// rank; and the weights file of training: file (verify_surrogate_file).
void check_surrogate(const Deck& deck, const Grid& grid, const std::array<int, 3>& dims, MPI_Comm comm) {
  const workflow::CampaignConfig cfg = workflow::config_from_deck(deck);
  if (!cfg.surrogate.enabled || cfg.surrogate.model != "transformer") return;
  const auto sc = surrogates::config_from_deck(deck);
  surrogates::ModelConfig mc = sc.model;
  if (deck.get_string("physics") == "cfd") {
    // The flow's channels (CfdAdapter's cfd_surrogate_channels: u, v[, w], no statics), as
    // TransformerSurrogate's constructor refuses them in `run`, here before anything allocates.
    const int n = grid.dim;
    const char* names = grid.dim == 3 ? "u, v, w" : "u, v";
    auto at = [&](const std::string& key) {
      const std::string w = deck.where(key);
      return w.rfind(deck.file(), 0) == 0 ? w : deck.file() + " (" + w + ")";
    };
    if (mc.in_channels != n)
      throw Error(
          fmt::format("{}: surrogate.in_channels = {}, but the {}D cfd campaign feeds the transformer {} "
                      "input channels ({}); set surrogate.in_channels: {}",
                      at("surrogate.in_channels"), mc.in_channels, grid.dim, n, names, n));
    if (mc.out_channels != n)
      throw Error(
          fmt::format("{}: surrogate.out_channels = {}, but the {}D cfd campaign predicts {} channels "
                      "(the change of {}); set surrogate.out_channels: {}",
                      at("surrogate.out_channels"), mc.out_channels, grid.dim, n, names, n));
    if (sc.extrapolation == surrogates::TimeExtrapolation::linear)
      throw Error(
          fmt::format("{}: surrogate.extrapolation = linear extrapolates from input channels 0 and 1 as "
                      "one field one solver step apart; the cfd state channels ({}) are not; set "
                      "surrogate.extrapolation: none",
                      at("surrogate.extrapolation"), names));
  }
  const std::array<int, 3> ps{mc.patch, mc.patch, mc.patch_z()};
  for (int a = 0; a < grid.dim; ++a) {
    if (grid.n[a] % ps[a] != 0)
      throw Error(
          fmt::format("surrogate.patch = {} does not divide mesh.n[{}] = {}; choose a patch size that "
                      "divides every mesh extent",
                      mc.patch, a, grid.n[a]));
    for (int p = 0; p < dims[a]; ++p) {
      const std::int64_t extent = grid.n[a] / dims[a] + (p < grid.n[a] % dims[a] ? 1 : 0);
      if (extent % ps[a] != 0)
        throw Error(
            fmt::format("surrogate: with {} ranks along axis {} a rank owns {} cells, not a multiple of "
                        "surrogate.patch = {}; choose mesh.n and mesh.process_grid so every subdomain is "
                        "whole patches",
                        dims[a], a, extent, mc.patch));
    }
    mc.global_patches[a] = static_cast<int>(grid.n[a] / ps[a]);
  }
  if (cfg.surrogate.training != "file") return;
  const std::string file = cfg.surrogate.weights + ".h5";  // TransformerAdapter loads weights + ".h5"
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string error;
  if (rank == 0) {
    try {
      surrogates::verify_surrogate_file(file, mc, surrogates::model_definition(sc));
    } catch (const Error& e) {
      error = e.what();
    }
  }
  int len = static_cast<int>(error.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  error.resize(static_cast<std::size_t>(len));
  MPI_Bcast(error.data(), len, MPI_CHAR, 0, comm);
  if (len > 0) throw Error("campaign.surrogate.weights: " + error);
}
#endif

}  // namespace

int physics_ghost_width(const Deck& deck) {
  const std::string physics = deck.get_string("physics");
  if (physics == "seismic") return std::max(1, static_cast<int>(deck.get_int("seismic.order")) / 2);
  return 1;  // cfd: the MAC grid's fields have one ghost layer
}

void preflight(const Deck& deck, int ranks, MPI_Comm comm) {
  const Grid grid = grid_from_deck(deck);
  grid.validate();
  const auto dims = process_dims(grid, process_grid_from_deck(deck), ranks);
  check_owned_points(deck, grid, dims);
  // The mesh's memory before anything visits every point (check_seismic scans the velocity
  // model over the whole grid: mesh.n = [100000, 100000] took minutes before it was refused).
  // The callers check again with the steps known.
  check_memory(estimate_run(deck, ranks, 0), comm);
  if (deck.get_string("physics") == "seismic") check_seismic(deck, grid, comm);
#if MANTISSA_APP_HAS_CFD
  if (deck.get_string("physics") == "cfd" && deck.has("run.end_time"))
    checked_steps(deck.get_real("run.end_time"), cfd::choose_dt(grid, cfd::config_from_deck(deck)));
#endif
  // The campaign's own refusals (Campaign's constructor makes them too, before anything runs).
  // With run.end_time the steps are known only from the physics' time step (Run.cpp), and some
  // refusals compare with them: there the Campaign makes them.
  if (!deck.has("run.end_time")) {
    try {
      workflow::validate_config(workflow::config_from_deck(deck));
    } catch (const Error& e) {
      throw Error(deck.file() + ": " + e.what());
    }
  }
  // The run directory run.output_dir/run.name lies inside run.output_dir (RunDirectory).
  (void)workflow::RunDirectory::join(deck.get_string("run.output_dir"), deck.get_string("run.name"));
#if MANTISSA_APP_HAS_SURROGATES
  check_surrogate(deck, grid, dims, comm);
#endif
}

}  // namespace mantissa::app
