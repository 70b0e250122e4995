// Campaign checkpoints: one directory per checkpoint under RUN_DIR/checkpoints, written under
// a temporary name and renamed when complete; `latest` names the newest one, older ones are
// removed. Each rank writes rank-NNNNN.h5 (its part of the running state, of the reference
// snapshots and of the online training states); rank 0 writes campaign.h5 (cursor, results
// so far, gathered snapshots); the surrogate saves itself next to them once trained.
// Resume needs the same rank count (the states are rank-local); the message says so.
#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/CampaignCheckpoint.hpp>
#include <mantissa/workflow/detail/H5.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace fs = std::filesystem;

namespace mantissa::workflow {

namespace {
using namespace detail;

constexpr const char* k_format = "mantissa-campaign-checkpoint";
constexpr std::int64_t k_version = 3;  // 3: phase state, diagnostics and metrics in the results

std::string rank_file(const std::string& dir, int rank) {
  std::ostringstream os;
  os << dir << "/rank-" << std::setw(5) << std::setfill('0') << rank << ".h5";
  return os.str();
}

void write_host_field(hid_t parent, const std::string& name, const HostField& h) {
  const auto& v = h.view;
  h5_write(parent, name, {v.extent(0), v.extent(1), v.extent(2)}, v.data());
  std::int64_t meta[9] = {h.ghost[0],  h.ghost[1],  h.ghost[2],  h.extent[0], h.extent[1],
                          h.extent[2], h.offset[0], h.offset[1], h.offset[2]};
  h5_write(parent, name + ".meta", {9}, meta);
}

HostField read_host_field(hid_t parent, const std::string& name, const std::string& file) {
  std::vector<std::uint64_t> shape;
  const auto data = h5_read_doubles(parent, name, &shape);
  const auto meta = h5_read_ints(parent, name + ".meta");
  if (shape.size() != 3 || meta.size() != 9)
    throw Error("checkpoint '" + file + "': dataset '" + name + "' is damaged");
  HostField h;
  h.view = decltype(h.view)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::workflow::checkpoint"),
                            shape[0], shape[1], shape[2]);
  std::memcpy(h.view.data(), data.data(), data.size() * sizeof(double));
  for (int a = 0; a < 3; ++a) {
    h.ghost[a] = static_cast<int>(meta[a]);
    h.extent[a] = meta[3 + a];
    h.offset[a] = meta[6 + a];
  }
  return h;
}

std::string join_lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "\n") + x;
  return s;
}
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) v.push_back(line);
  return v;
}
}  // namespace

void CampaignCheckpoint::write(PhaseContext& ctx, const State* state, double time) {
  const auto& cfg = ctx.config();
  const auto& cur = ctx.cursor();
  const auto& ref = ctx.reference_store();
  const int m_rank = ctx.rank();
  auto comm = [&ctx] { return ctx.comm(); };
  const std::string base = ctx.run_dir() + "/checkpoints";
  const std::string name = "ckpt-" + std::to_string(cur.global_steps);
  const std::string tmp = base + "/" + name + ".tmp";
  int size = 1;
  MPI_Comm_size(comm(), &size);
  if (m_rank == 0) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) throw Error("cannot create checkpoint directory '" + tmp + "': " + ec.message());
  }
  MPI_Barrier(comm());
  auto write_cursor = [&](hid_t f) {
    h5_attr(f, "format", std::string(k_format));
    h5_attr(f, "format_version", k_version);
    h5_attr(f, "deck_hash", cfg.deck_hash);
    h5_attr(f, "ranks", std::int64_t(size));
    h5_attr(f, "phase", std::int64_t(cur.phase));
    h5_attr(f, "phase_name", ctx.phase_name());
    h5_attr(f, "step", cur.step);
    h5_attr(f, "experiment", cur.experiment);
    h5_attr(f, "time", time);
    h5_attr(f, "global_steps", cur.global_steps);
    std::string keys;
    for (const auto& kv : cur.phase_state) {
      keys += (keys.empty() ? "" : "\n") + kv.first;
      h5_attr(f, "phase_state." + kv.first, kv.second);
    }
    h5_attr(f, "phase_state", keys);
  };
  {
    auto f = h5_create(rank_file(tmp, m_rank));
    write_cursor(f.id());
    h5_attr(f.id(), "rank", std::int64_t(m_rank));
    auto gs = h5_group(f.id(), "state");
    if (state) {
      h5_attr(gs.id(), "count", std::int64_t(state->size()));
      for (std::size_t i = 0; i < state->size(); ++i) {
        h5_attr(gs.id(), "name" + std::to_string(i), (*state)[i].name);
        write_host_field(gs.id(), std::to_string(i),
                         to_host((*state)[i].field, "mantissa::workflow::checkpoint"));
      }
    } else {
      h5_attr(gs.id(), "count", std::int64_t(0));
    }
    auto gr = h5_group(f.id(), "reference");
    std::vector<std::int64_t> steps;
    for (const auto& kv : ref.snapshots) {
      steps.push_back(kv.first);
      write_host_field(gr.id(), std::to_string(kv.first), kv.second);
    }
    h5_write(gr.id(), "steps", {steps.size()}, steps.data());
    auto gt = h5_group(f.id(), "train");
    h5_attr(gt.id(), "count", std::int64_t(ref.train_samples.size()));
    for (std::size_t i = 0; i < ref.train_samples.size(); ++i) {
      auto gi = h5_group(gt.id(), std::to_string(i));
      for (std::size_t j = 0; j < ref.train_samples[i].size(); ++j)
        write_host_field(gi.id(), std::to_string(j), ref.train_samples[i][j]);
    }
  }
  if (m_rank == 0) {
    auto f = h5_create(tmp + "/campaign.h5");
    write_cursor(f.id());
    h5_attr(f.id(), "state_names", join_lines(ref.state_names));
    h5_attr(f.id(), "reference_mib", ref.snapshot_mib);
    h5_attr(f.id(), "train_mib", ref.train_mib);
    auto gres = h5_group(f.id(), "results");
    H5Writer w(gres.id());
    w.list("variants", ctx.results());
    auto gtr = h5_group(f.id(), "training");
    H5Writer wt(gtr.id());
    serialize(wt, ctx.training());
    auto gsn = h5_group(f.id(), "snapshots");
    const auto& gn = ctx.decomposition().grid().n;
    const std::array<std::int64_t, 3> shape{gn[2], gn[1], gn[0]};
    for (auto& kv : ctx.snapshots()) {
      h5_write(gsn.id(), kv.first,
               {std::uint64_t(shape[0]), std::uint64_t(shape[1]), std::uint64_t(shape[2])}, kv.second.data());
    }
  }
  // The surrogate is not saved here: its trained state is in RUN_DIR/surrogate-trained*, and a
  // rollout interrupted mid-phase repeats from its start.
  MPI_Barrier(comm());
  if (m_rank == 0) {
    std::error_code ec;
    const std::string final_dir = base + "/" + name;
    fs::remove_all(final_dir, ec);
    fs::rename(tmp, final_dir, ec);
    if (ec) throw Error("cannot rename checkpoint '" + tmp + "': " + ec.message());
    {
      std::ofstream out(base + "/latest.tmp");
      out << name << "\n";
    }
    fs::rename(base + "/latest.tmp", base + "/latest", ec);
    for (const auto& e : fs::directory_iterator(base, ec)) {
      const std::string n = e.path().filename().string();
      if (e.is_directory() && n.rfind("ckpt-", 0) == 0 && n != name) fs::remove_all(e.path(), ec);
    }
  }
  MPI_Barrier(comm());
  ctx.log("checkpoint " + name + " written (phase '" + ctx.phase_name() + "', step " +
          std::to_string(cur.step) + ")");
}

void CampaignCheckpoint::read(PhaseContext& ctx) {
  const auto& cfg = ctx.config();
  auto& cur = ctx.cursor();
  auto& ref = ctx.reference_store();
  const int m_rank = ctx.rank();
  auto comm = [&ctx] { return ctx.comm(); };
  const std::string m_dir = ctx.run_dir();
  const std::string base = m_dir + "/checkpoints";
  std::string name;
  {
    std::ifstream in(base + "/latest");
    in >> name;
  }
  if (name.empty())
    throw Error("--resume: '" + base + "/latest' is empty or unreadable; the checkpoint is damaged");
  m_source = base + "/" + name;
  int size = 1;
  MPI_Comm_size(comm(), &size);
  const std::string cfile = m_source + "/campaign.h5";
  auto f = h5_open(cfile);
  if (h5_attr_string(f.id(), "format") != k_format)
    throw Error("--resume: '" + cfile + "' is not a mantissa campaign checkpoint");
  if (h5_attr_int(f.id(), "format_version") != k_version)
    throw Error("--resume: '" + cfile + "' has checkpoint format version " +
                std::to_string(h5_attr_int(f.id(), "format_version")) + "; this mantissa reads version " +
                std::to_string(k_version));
  if (h5_attr_string(f.id(), "deck_hash") != cfg.deck_hash)
    throw Error("--resume: the deck changed since the checkpoint in '" + m_dir +
                "' was written (hash differs); resume with the same deck, or start over with --overwrite");
  const auto ranks = h5_attr_int(f.id(), "ranks");
  if (ranks != size)
    throw Error("--resume: the checkpoint was written by " + std::to_string(ranks) + " ranks; resume with " +
                std::to_string(ranks) + " ranks (campaign checkpoints are per rank)");
  cur.phase = static_cast<std::size_t>(h5_attr_int(f.id(), "phase"));
  if (cur.phase >= ctx.phase_names().size() || h5_attr_string(f.id(), "phase_name") != ctx.phase_name())
    throw Error("--resume: the checkpoint's phase does not match this deck's campaign");
  cur.step = h5_attr_int(f.id(), "step");
  cur.experiment = h5_attr_int(f.id(), "experiment");
  cur.global_steps = h5_attr_int(f.id(), "global_steps");
  cur.phase_state.clear();
  for (const auto& k : split_lines(h5_attr_string(f.id(), "phase_state")))
    cur.phase_state[k] = h5_attr_int(f.id(), "phase_state." + k);
  ref.state_names = split_lines(h5_attr_string(f.id(), "state_names"));
  ref.snapshot_mib = h5_attr_double(f.id(), "reference_mib");
  ref.train_mib = h5_attr_double(f.id(), "train_mib");
  {
    auto g = h5_open_group(f.id(), "results");
    H5Reader r(g.id());
    std::vector<VariantResult> results;
    r.list("variants", results);
    if (results.size() != ctx.results().size())
      throw Error("--resume: the checkpoint has " + std::to_string(results.size()) + " variants, the deck " +
                  std::to_string(ctx.results().size()));
    ctx.results() = std::move(results);
    auto gt = h5_open_group(f.id(), "training");
    H5Reader rt(gt.id());
    serialize(rt, ctx.training());
  }
  if (m_rank == 0) {
    auto g = h5_open_group(f.id(), "snapshots");
    for (const auto& r : ctx.results())
      if (h5_exists(g.id(), r.name)) ctx.snapshots()[r.name] = h5_read_doubles(g.id(), r.name);
  }
  const std::string rfile = rank_file(m_source, m_rank);
  auto rf = h5_open(rfile);
  auto gr = h5_open_group(rf.id(), "reference");
  for (auto s : h5_read_ints(gr.id(), "steps"))
    ref.snapshots[s] = read_host_field(gr.id(), std::to_string(s), rfile);
  auto gt = h5_open_group(rf.id(), "train");
  const auto n = h5_attr_int(gt.id(), "count");
  for (std::int64_t i = 0; i < n; ++i) {
    auto gi = h5_open_group(gt.id(), std::to_string(i));
    std::vector<HostField> smp;
    for (std::size_t j = 0; j < ref.state_names.size(); ++j)
      smp.push_back(read_host_field(gi.id(), std::to_string(j), rfile));
    ref.train_samples.push_back(std::move(smp));
  }
}

double CampaignCheckpoint::load_state(PhaseContext& ctx, State& state) {
  const std::string rfile = rank_file(m_source, ctx.rank());
  auto rf = h5_open(rfile);
  auto gs = h5_open_group(rf.id(), "state");
  const auto n = h5_attr_int(gs.id(), "count");
  if (n != static_cast<std::int64_t>(state.size()))
    throw Error("--resume: '" + rfile + "' holds " + std::to_string(n) + " state fields, the physics has " +
                std::to_string(state.size()));
  for (std::size_t i = 0; i < state.size(); ++i) {
    if (h5_attr_string(gs.id(), "name" + std::to_string(i)) != state[i].name)
      throw Error("--resume: '" + rfile + "' state field " + std::to_string(i) + " is not '" + state[i].name +
                  "'");
    const HostField h = read_host_field(gs.id(), std::to_string(i), rfile);
    if (h.extent != state[i].field.extent() || h.offset != state[i].field.offset())
      throw Error("--resume: '" + rfile +
                  "' was written with another decomposition; use the same mesh and ranks");
    from_host(h, state[i].field);
  }
  return h5_attr_double(rf.id(), "time");
}

}  // namespace mantissa::workflow
