#include "Estimate.hpp"
#include "Check.hpp"

#if __has_include(<cfd/CfdDeck.hpp>)
#include "CfdAdapter.hpp"
#endif

#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/Schema.hpp>

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

namespace mantissa::app {

namespace {

// Bytes per grid point (ghosts included) of one physics model with these precisions, and the
// number of fields in its state (what a checkpoint and a training sample hold).
struct Footprint {
  double bytes_per_point = 16 * 8.0;
  int state_fields = 2;
};

double precision_bytes(Precision p) {
  switch (p) {
    case Precision::fp64:
      return 8.0;
    case Precision::fp32:
      return 4.0;
    default:
      return 2.0;
  }
}

// The seismic solver (apps/seismic/Solver.hpp): p and p_old in the storage precision, c^2 dt^2
// in the compute precision, the velocity in fp64 and, with a CPML face, psi and zeta per axis
// in the compute precision.
Footprint seismic_footprint(const Deck& deck, Precision storage, Precision compute) {
  Footprint f;
  const int dim = static_cast<int>(deck.get_int("mesh.dim"));
  bool pml = false;
  for (const char* side : {"x_low", "x_high", "y_low", "y_high", "z_low", "z_high"}) {
    const std::string k = std::string("seismic.boundaries.") + side;
    if (deck.has(k) && deck.get_string(k) == "pml") pml = true;
  }
  f.bytes_per_point = 2 * precision_bytes(storage) + precision_bytes(compute) + 8.0 +
                      (pml ? 2.0 * dim * precision_bytes(compute) : 0.0);
  f.state_fields = 2;
  return f;
}

using FootprintFn = std::function<Footprint(const Deck&, Precision, Precision)>;
const std::map<std::string, FootprintFn>& footprints() {
  static const std::map<std::string, FootprintFn> m = {
    {"seismic", seismic_footprint},
#if __has_include(<cfd/CfdDeck.hpp>)
    // the flow solver's fields (CfdAdapter.hpp); the state is u, v, phi_stage1, phi_stage2
    {"cfd",
     [](const Deck& d, Precision storage, Precision) {
       return Footprint{cfd_bytes_per_point(d, storage), 4};
     }},
#endif
  };
  return m;
}

Footprint footprint(const Deck& deck, Precision storage, Precision compute) {
  const auto it = footprints().find(deck.get_string("physics"));
  if (it == footprints().end()) return Footprint{};
  return it->second(deck, storage, compute);
}

std::string bytes_text(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (b >= 1024.0 && u < 6) {
    b /= 1024.0;
    ++u;
  }
  if (b >= 1024.0) return fmt::format("{:.3g} EiB", b);
  return fmt::format("{:.3g} {}", b, unit[u]);
}

double sum(const std::vector<EstimateLine>& v) {
  double s = 0.0;
  for (const auto& l : v) s += l.bytes;
  return s;
}

const EstimateLine& largest(const std::vector<EstimateLine>& a, const std::vector<EstimateLine>& b) {
  static const EstimateLine none{"nothing", "", 0.0};
  const EstimateLine* best = &none;
  for (const auto* v : {&a, &b})
    for (const auto& l : *v)
      if (l.bytes > best->bytes) best = &l;
  return *best;
}

// The keys behind the largest items, for a refusal.
std::string culprits(const RunEstimate& e, bool with_root) {
  std::vector<EstimateLine> all = e.device;
  all.insert(all.end(), e.host.begin(), e.host.end());
  if (with_root) all.insert(all.end(), e.root.begin(), e.root.end());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  std::string s;
  for (std::size_t i = 0; i < all.size() && i < 3; ++i) {
    if (all[i].bytes <= 0.0) break;
    s += fmt::format("{}{} {} (keys {})", i ? "; " : "", all[i].what, bytes_text(all[i].bytes), all[i].keys);
  }
  return s;
}

}  // namespace

double RunEstimate::device_bytes() const {
  return sum(device);
}
double RunEstimate::host_bytes() const {
  return sum(host);
}
double RunEstimate::root_bytes() const {
  return sum(root);
}

RunEstimate estimate_run(const Deck& deck, int ranks, std::int64_t steps) {
  RunEstimate e;
  e.ranks = std::max(1, ranks);
  e.steps = steps;
  e.device_is_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  const Grid grid = grid_from_deck(deck);
  const auto procs = process_grid_from_deck(deck);
  const int ghost = physics_ghost_width(deck);
  // The decomposition's dims (MPI_Dims_create fills the zeros as Decomposition does).
  int dims[3] = {procs[0], procs[1], grid.dim == 3 ? procs[2] : 1};
  if (dims[0] * dims[1] * dims[2] == 0 || dims[0] * dims[1] * dims[2] != e.ranks) {
    int d[3] = {dims[0] > 0 && e.ranks % dims[0] == 0 ? dims[0] : 0,
                dims[1] > 0 && e.ranks % dims[1] == 0 ? dims[1] : 0, grid.dim == 3 ? 0 : 1};
    if (MPI_Dims_create(e.ranks, grid.dim, d) != MPI_SUCCESS) d[0] = e.ranks, d[1] = 1, d[2] = 1;
    for (int a = 0; a < 3; ++a) dims[a] = std::max(1, d[a]);
  }
  e.local_points = 1.0;
  e.global_points = 1.0;
  for (int a = 0; a < grid.dim; ++a) {
    const double n = static_cast<double>(grid.n[a]);
    e.global_points *= n;
    e.local_points *= std::ceil(n / dims[a]) + 2.0 * ghost;
  }
  const workflow::CampaignConfig cfg = workflow::config_from_deck(deck);
  const double L = e.local_points;

  // Device: the largest physics model (one at a time), plus the surrogate's training
  // activations and samples when it trains online.
  const Footprint ref = footprint(deck, cfg.reference_precision, cfg.reference_precision);
  e.device.push_back({"physics model (" + std::string(to_string(cfg.reference_precision)) + ")",
                      "mesh.n, mesh.process_grid", ref.bytes_per_point * L});
  e.device.push_back({"state copies (sampling, checkpoint)", "mesh.n", 2.0 * ref.state_fields * 8.0 * L});

  const double S = static_cast<double>(steps);
  const double samples = steps > 0 ? std::floor(S / double(cfg.sample_every)) + 2.0 : 0.0;
  const auto& sur = cfg.surrogate;
  const double stride = deck.has("surrogate.steps_per_prediction")
                            ? static_cast<double>(deck.get_int("surrogate.steps_per_prediction"))
                            : 1.0;
  if (sur.enabled && sur.training == "online" && deck.has("surrogate.embed")) {
    const double end = sur.train_steps < 0 ? S : double(sur.train_steps);
    // Every training experiment (shot) adds its trajectory.
    const double n_train =
        double(std::max<std::size_t>(1, sur.train_experiments.size())) *
        (steps > 0 ? std::max(0.0, std::floor((end - double(sur.start)) / stride) + 1.0) : 0.0);
    e.host.push_back(
        {"online training states (host)",
         "campaign.surrogate.train_steps, campaign.surrogate.start, campaign.surrogate.train_experiments, "
         "surrogate.steps_per_prediction, mesh.n",
         n_train * ref.state_fields * 8.0 * L});
    e.device.push_back({"surrogate training samples", "campaign.surrogate.train_steps, mesh.n",
                        n_train * ref.state_fields * 4.0 * L});
    // Activations kept for the backward pass: per token and layer the block's inputs,
    // normalised copies, q/k/v, attention probabilities over a window and the MLP (fp32).
    const double patch = static_cast<double>(deck.get_int("surrogate.patch"));
    const double tokens = L / std::pow(patch, grid.dim);
    const double embed = static_cast<double>(deck.get_int("surrogate.embed"));
    const double mlp = static_cast<double>(deck.get_int("surrogate.mlp_hidden"));
    const double heads = static_cast<double>(deck.get_int("surrogate.heads"));
    const double window = std::pow(static_cast<double>(deck.get_int("surrogate.window")), grid.dim);
    const double layers = static_cast<double>(deck.get_int("surrogate.layers"));
    const double batch = static_cast<double>(deck.get_int("surrogate.train.batch_size"));
    e.device.push_back({"surrogate activations (training)",
                        "surrogate.embed, surrogate.mlp_hidden, surrogate.window, surrogate.layers, "
                        "surrogate.train.batch_size, mesh.n",
                        batch * tokens * layers * (10.0 * embed + 3.0 * mlp + heads * window) * 4.0});
  }

  // Host, per rank: what the campaign keeps while it runs.
  int variants = 1 + static_cast<int>(cfg.variants.size());
  if (sur.enabled)
    variants += static_cast<int>(sur.rollout.size() * (1 + sur.heldout_experiments.size())) +
                (sur.hybrid.enabled ? 1 : 0);
  // Experiment 0's and every held-out experiment's primary field at the sample steps.
  const double heldout = sur.enabled ? double(sur.heldout_experiments.size()) : 0.0;
  e.host.push_back(
      {"reference snapshots (host)",
       "run.steps or run.end_time, campaign.sample_every, campaign.surrogate.heldout_experiments, mesh.n",
       (1.0 + heldout) * samples * 8.0 * L});
  double receivers = static_cast<double>(deck.count("seismic.receivers"));
  if (deck.has("seismic.receiver_line.count"))
    receivers += static_cast<double>(deck.get_int("seismic.receiver_line.count"));
  double shots = 1.0;
  for (std::size_t i = 0; i < deck.count("seismic.sources"); ++i)
    shots = std::max(shots, 1.0 + double(deck.get_int("seismic.sources[" + std::to_string(i) + "].shot")));
  const double record_every =
      deck.has("seismic.record_every") ? static_cast<double>(deck.get_int("seismic.record_every")) : 1.0;
  const double trace_rows = steps > 0 ? std::floor(S / record_every) + 1.0 : 0.0;
  e.host.push_back({"receiver traces (host)",
                    "run.steps or run.end_time, seismic.record_every, seismic.receivers, "
                    "seismic.receiver_line.count, campaign.variants",
                    double(variants) * shots * trace_rows * receivers * 8.0});
  e.host.push_back({"sampled metrics (host)", "run.steps or run.end_time, campaign.sample_every",
                    double(variants) * samples * 8.0 * 8.0});
  // Rank 0 gathers every variant's final primary field for report.h5 (and a gather buffer).
  if (cfg.snapshots)
    e.root.push_back({"gathered final fields (rank 0)", "mesh.n, campaign.variants",
                      (double(variants) + 2.0) * 8.0 * e.global_points});

  // Files: keep + 1 checkpoints (one being written) of the running state, the snapshots and
  // the training states, and the report with the gathered fields and traces.
  const double keep =
      deck.has("checkpoint.keep") ? static_cast<double>(deck.get_int("checkpoint.keep")) : 2.0;
  const double per_ckpt = e.ranks * (ref.state_fields * 8.0 * L + e.host_bytes()) + e.root_bytes();
  e.disk_bytes = (keep + 1.0) * per_ckpt + e.root_bytes() + e.host_bytes();

  e.cell_updates = e.global_points * S * double(variants);
  return e;
}

std::string RunEstimate::summary() const {
  std::ostringstream os;
  const double per_rank = device_bytes() + (device_is_host ? host_bytes() : 0.0);
  os << fmt::format("  memory   per rank {} ({} {}, {} on the host), rank 0 {} more; at {} rank{}\n",
                    bytes_text(device_is_host ? per_rank : device_bytes()), bytes_text(device_bytes()),
                    device_is_host ? "for the models" : "on the device", bytes_text(host_bytes()),
                    bytes_text(root_bytes()), ranks, ranks == 1 ? "" : "s");
  const auto& big = largest(device, host);
  if (big.bytes > 0.0)
    os << fmt::format("           largest: {} {} ({})\n", big.what, bytes_text(big.bytes), big.keys);
  if (steps > 0) {
    os << fmt::format("  disk     up to {} in the run directory (checkpoints kept + report)\n",
                      bytes_text(disk_bytes));
    os << fmt::format("  work     {:.3g} grid point updates ({} steps x {:.4g} points x phases)\n",
                      cell_updates, steps, global_points);
  } else {
    os << "  disk     (steps follow from run.end_time and the time step; estimated by `run`)\n";
  }
  return os.str();
}

double available_host_bytes() {
  double avail = std::numeric_limits<double>::infinity();
  {
    std::ifstream in("/proc/meminfo");
    for (std::string key; in >> key;) {
      double kb = 0.0;
      std::string unit;
      in >> kb >> unit;
      if (key == "MemAvailable:") avail = kb * 1024.0;
    }
  }
  // cgroup v2 (a Slurm job's or a container's limit), then v1.
  auto read_num = [](const char* path, double& v) {
    std::ifstream in(path);
    std::string s;
    if (!(in >> s) || s == "max") return false;
    try {
      v = std::stod(s);
    } catch (...) {
      return false;
    }
    return true;
  };
  double limit = 0.0, usage = 0.0;
  // cgroup v2, else cgroup v1 (whose "no limit" is a huge number)
  const bool v2 =
      read_num("/sys/fs/cgroup/memory.max", limit) && read_num("/sys/fs/cgroup/memory.current", usage);
  if (v2 || (read_num("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit) && limit < 1e18 &&
             read_num("/sys/fs/cgroup/memory/memory.usage_in_bytes", usage)))
    avail = std::min(avail, limit - usage);
  return avail;
}

void check_memory(const RunEstimate& e, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  int on_host = 1, host_rank = 0;
  MPI_Comm_size(host, &on_host);
  MPI_Comm_rank(host, &host_rank);
  // Device memory is not queried on GPU back-ends (no portable call); the host check applies.
  double mine =
      e.host_bytes() + (e.device_is_host ? e.device_bytes() : 0.0) + (rank == 0 ? e.root_bytes() : 0.0);
  double need = 0.0;
  MPI_Allreduce(&mine, &need, 1, MPI_DOUBLE, MPI_SUM, host);
  double avail = host_rank == 0 ? available_host_bytes() : 0.0;
  MPI_Bcast(&avail, 1, MPI_DOUBLE, 0, host);
  MPI_Comm_free(&host);
  // 90 %: the libraries, MPI buffers and the page cache need the rest.
  int bad = need > 0.9 * avail ? 1 : 0, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return;
  // Rank 0 names a failing host's numbers (its own when it fails).
  double mine_pair[2] = {bad ? need : 0.0, bad ? avail : 0.0}, worst[2] = {0.0, 0.0};
  MPI_Allreduce(mine_pair, worst, 2, MPI_DOUBLE, MPI_MAX, comm);
  throw Error(fmt::format(
      "the deck needs about {} of memory on a host ({} rank{} there) but {} is available: {}; make the "
      "mesh smaller (mesh.n), the run shorter (run.steps / run.end_time), sample less often "
      "(campaign.sample_every), or run on more nodes",
      bytes_text(worst[0]), on_host, on_host == 1 ? "" : "s", bytes_text(worst[1]), culprits(e, true)));
}

void check_disk(const RunEstimate& e, const std::string& dir, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double free_bytes = std::numeric_limits<double>::infinity();
  if (rank == 0) {
    struct statvfs st {};
    if (statvfs(dir.c_str(), &st) == 0) free_bytes = double(st.f_bavail) * double(st.f_frsize);
  }
  MPI_Bcast(&free_bytes, 1, MPI_DOUBLE, 0, comm);
  if (e.disk_bytes <= free_bytes) return;
  throw Error(fmt::format(
      "the file system of '{}' has {} free but the run writes up to {} there (checkpoints, checkpoint.keep "
      "of them kept, and the report); free space, lower checkpoint.keep, or choose another run.output_dir",
      dir, bytes_text(free_bytes), bytes_text(e.disk_bytes)));
}

std::int64_t checked_steps(double end_time, double dt) {
  constexpr double limit = 2147483647.0;  // the physics count steps in 32 bits
  const double q = end_time / dt;
  if (!(dt > 0.0) || !std::isfinite(q) || q > limit)
    throw Error(
        fmt::format("deck key 'run.end_time' = {:g} is {:.4g} time steps of dt = {:.4g} s, more than the "
                    "{:.0f} steps a run "
                    "can count; lower run.end_time (or give run.steps)",
                    end_time, q, dt, limit));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(q - 1e-9)));
}

}  // namespace mantissa::app
