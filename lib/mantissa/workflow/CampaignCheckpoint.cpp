// Campaign checkpoints through lib/mantissa/io (io/Checkpoint.hpp): one file per checkpoint,
// RUN_DIR/<checkpoint.dir>/campaign-<campaign step, 10 digits>.h5, written collectively under a
// temporary name, fsynced and renamed when complete; the newest checkpoint.keep are kept.
//
// A file holds, as global fields without ghosts (readable at any rank count, each with a
// rank-count independent checksum):
//   /fields/state.<i>        the running phase's state (field i, its name in an attribute)
//   /fields/ref.<step>       the reference's primary field at its sample steps
//   /fields/train.<n>.<i>    the online training states (until training is done)
// and as datasets
//   /campaign/results        the results so far and the training result (TextArchive, exact)
//   /campaign/snapshot.<v>   the final primary field of each finished variant
//   /surrogate/<i>           once training is done: the bytes of the trained surrogate's files
//                            RUN_DIR/surrogate-trained* (names in campaign.surrogate_files)
// with the cursor (phase, step, experiment, campaign steps, the phase's counters), the deck hash
// and the state's names and ghost widths as root attributes "campaign.*". The surrogate loads
// itself from RUN_DIR/surrogate-trained*; a resume first puts back the checkpoint's copy where
// that file is missing or differs. Training itself is not checkpointed: a stop waits for its
// end (no optimizer or RNG state is needed, the trained weights are the whole state).
//
// Resume reads the newest file; a damaged one (truncated, a checksum that does not match, not
// HDF5) is skipped with a warning for the previous one; a file of another deck or another grid
// is refused, naming the file and what differs, before anything is written.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Log.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/workflow/CampaignCheckpoint.hpp>
#include <mantissa/workflow/detail/TextArchive.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

namespace fs = std::filesystem;

namespace mantissa::workflow {

namespace {

constexpr const char* k_prefix = "campaign";
constexpr const char* k_format = "mantissa-campaign";
constexpr std::int64_t k_version = 4;  // 4: one collective io checkpoint file (3 and before: per rank)

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

// A device field of the decomposition holding a host field's owned points.
Field<double> to_field(const HostField& h, const Decomposition& decomp, const char* label) {
  Field<double> f(label, decomp, h.ghost[0]);
  from_host(h, f);
  return f;
}

// A checkpoint that cannot be read (the previous one may do) and one that must not be used.
struct Damaged : Error {
  using Error::Error;
};
struct Refused : Error {
  using Error::Error;
};

// Collective: rank 0's error message (empty: none) thrown on every rank.
void throw_if_root_failed(MPI_Comm comm, std::string err) {
  int len = static_cast<int>(err.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  if (len == 0) return;
  err.resize(static_cast<std::size_t>(len));
  MPI_Bcast(err.data(), len, MPI_CHAR, 0, comm);
  throw Error(err);
}

// Collective: rank 0's string on every rank.
void broadcast_from_root(MPI_Comm comm, std::string& s) {
  long long len = static_cast<long long>(s.size());
  MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm);
  s.resize(static_cast<std::size_t>(len));
  if (len > 0) MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, 0, comm);
}

struct Archive {
  std::vector<VariantResult>* results;
  TrainingResult* training;
};
template <class A>
void serialize(A& a, Archive& x) {
  a.list("variants", *x.results);
  serialize(a, *x.training);
}

}  // namespace

CampaignCheckpoint::CampaignCheckpoint() = default;
CampaignCheckpoint::~CampaignCheckpoint() = default;

std::string CampaignCheckpoint::directory(const PhaseContext& ctx) const {
  // Campaign::validate() refused an absolute checkpoint.dir and one that leaves the run
  // directory: --overwrite replaces the run directory and must take its checkpoints with it.
  return ctx.run_dir() + "/" + ctx.config().checkpoint_dir;
}

void CampaignCheckpoint::write(PhaseContext& ctx, const State* state, double time) {
  const auto& cfg = ctx.config();
  const auto& cur = ctx.cursor();
  const auto& ref = ctx.reference_store();
  const Decomposition& decomp = ctx.decomposition();
  if (!m_writer) {
    io::CheckpointOptions opt;
    opt.prefix = k_prefix;
    opt.deck_text = cfg.deck_resolved;
    opt.durable = true;
    const std::string dir = directory(ctx);
    std::string err;
    if (ctx.rank() == 0) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) err = "cannot create the checkpoint directory '" + dir + "' (checkpoint.dir): " + ec.message();
    }
    throw_if_root_failed(ctx.comm(), err);
    m_writer =
        std::make_unique<io::CheckpointWriter>(decomp, dir, static_cast<int>(cfg.checkpoint_keep), opt);
  }
  io::Attributes a;
  a.set("campaign.format", k_format)
      .set("campaign.format_version", k_version)
      .set("campaign.deck_hash", cfg.deck_hash)
      .set("physics", cfg.physics)
      .set("campaign.phase", std::int64_t(cur.phase))
      .set("campaign.phase_name", ctx.phase_name())
      .set("campaign.step", cur.step)
      .set("campaign.experiment", cur.experiment)
      .set("campaign.global_steps", cur.global_steps)
      .set("campaign.state_names", join_lines(ref.state_names))
      .set("campaign.reference_mib", ref.snapshot_mib)
      .set("campaign.train_mib", ref.train_mib);
  // What a checkpoint write costs, for the resumed process's wall-time margin and cost guard
  // (attributes must agree on every rank: the largest rank's).
  double longest = ctx.longest_checkpoint();
  MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, ctx.comm());
  double longest_bytes = ctx.longest_checkpoint_bytes();
  MPI_Allreduce(MPI_IN_PLACE, &longest_bytes, 1, MPI_DOUBLE, MPI_MAX, ctx.comm());
  a.set("campaign.longest_checkpoint_s", longest).set("campaign.longest_checkpoint_bytes", longest_bytes);
  std::vector<std::string> keys;
  for (const auto& kv : cur.phase_state) {
    keys.push_back(kv.first);
    a.set("campaign.phase_state." + kv.first, kv.second);
  }
  a.set("campaign.phase_state", join_lines(keys));

  // Fields: the device fields must live until write() returns (FieldRef refers to them).
  std::vector<Field<double>> keep;
  std::vector<io::FieldRef> fields;
  std::vector<std::string> names;
  std::vector<std::int64_t> ghosts;
  if (state)
    for (std::size_t i = 0; i < state->size(); ++i) {
      names.push_back((*state)[i].name);
      ghosts.push_back((*state)[i].field.ghost(0));
      fields.push_back(io::field_ref("state." + std::to_string(i), (*state)[i].field));
    }
  a.set("campaign.state", join_lines(names)).set("campaign.state_ghosts", ghosts);
  std::vector<std::int64_t> ref_steps, ref_ghosts;
  keep.reserve(ref.snapshots.size() + ref.train_samples.size() * ref.state_names.size());
  for (const auto& kv : ref.snapshots) {
    ref_steps.push_back(kv.first);
    ref_ghosts.push_back(kv.second.ghost[0]);
    keep.push_back(to_field(kv.second, decomp, "mantissa::workflow::CampaignCheckpoint::ref"));
    fields.push_back(io::field_ref("ref." + std::to_string(kv.first), keep.back()));
  }
  a.set("campaign.ref_steps", ref_steps).set("campaign.ref_ghosts", ref_ghosts);
  // The held-out experiments' reference snapshots (campaign.surrogate.heldout_experiments).
  std::vector<std::int64_t> exp_ids, exp_steps, exp_ghosts;
  for (const auto& ekv : ref.experiment_snapshots)
    for (const auto& kv : ekv.second) {
      exp_ids.push_back(ekv.first);
      exp_steps.push_back(kv.first);
      exp_ghosts.push_back(kv.second.ghost[0]);
      keep.push_back(to_field(kv.second, decomp, "mantissa::workflow::CampaignCheckpoint::ref_experiment"));
      fields.push_back(
          io::field_ref("ref.e" + std::to_string(ekv.first) + "." + std::to_string(kv.first), keep.back()));
    }
  a.set("campaign.ref_experiment_ids", exp_ids)
      .set("campaign.ref_experiment_steps", exp_steps)
      .set("campaign.ref_experiment_ghosts", exp_ghosts);
  std::vector<std::int64_t> train_ghosts;
  for (std::size_t n = 0; n < ref.train_samples.size(); ++n)
    for (std::size_t i = 0; i < ref.train_samples[n].size(); ++i) {
      if (n == 0) train_ghosts.push_back(ref.train_samples[n][i].ghost[0]);
      keep.push_back(
          to_field(ref.train_samples[n][i], decomp, "mantissa::workflow::CampaignCheckpoint::train"));
      fields.push_back(io::field_ref("train." + std::to_string(n) + "." + std::to_string(i), keep.back()));
    }
  a.set("campaign.train_count", std::int64_t(ref.train_samples.size()))
      .set("campaign.train_ghosts", train_ghosts)
      .set("campaign.train_experiment",
           std::vector<std::int64_t>(ref.train_experiment.begin(), ref.train_experiment.end()));

  // Results (the same on every rank) and the gathered snapshots (rank 0 holds them; the others
  // know their names).
  std::vector<io::Dataset> extra;
  {
    // Rank 0's text for every rank: the accuracy numbers agree, but timings are each rank's own,
    // and parallel HDF5 needs the same dataset shapes (and attributes) on every rank.
    auto results = ctx.results();
    auto training = ctx.training();
    Archive ar{&results, &training};
    detail::TextWriter w;
    serialize(w, ar);
    std::string t = w.text();
    broadcast_from_root(ctx.comm(), t);
    extra.push_back(io::Dataset::whole("/campaign/results", std::vector<std::uint8_t>(t.begin(), t.end())));
  }
  const auto& gn = decomp.grid().n;
  std::vector<std::string> snaps;
  for (const auto& kv : ctx.snapshots()) {
    snaps.push_back(kv.first);
    extra.push_back(io::Dataset::whole("/campaign/snapshot." + kv.first, kv.second, {gn[2] * gn[1] * gn[0]}));
  }
  a.set("campaign.snapshots", join_lines(snaps));

  // The trained surrogate's files (RUN_DIR/surrogate-trained*, written once when training
  // ends, or its part-way state surrogate-trained-partial* when training stopped), byte for
  // byte with their checksums, so that a resume can tell a damaged or missing weights file and
  // restore it. Rank 0 reads them; every rank learns names and sizes.
  std::string listing;
  std::vector<std::vector<std::uint8_t>> contents;
  if (ctx.training().done || cur.get("training_step") > 0) {
    std::string err;
    if (ctx.rank() == 0) {
      const fs::path trained(ctx.trained_path());
      std::error_code ec;
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(trained.parent_path(), ec)) {
        const std::string n = e.path().filename().string();
        if (e.is_regular_file(ec) && n.rfind(trained.filename().string(), 0) == 0 &&
            n.find(".tmp") == std::string::npos)
          files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) err = "cannot read the trained surrogate's file '" + f.string() + "'";
        listing += f.filename().string() + "\t" + std::to_string(bytes.size()) + "\n";
        contents.push_back(std::move(bytes));
      }
    }
    throw_if_root_failed(ctx.comm(), err);
    broadcast_from_root(ctx.comm(), listing);
  }
  std::vector<std::string> sur_names;
  std::size_t si = 0;
  for (const auto& line : split_lines(listing)) {
    const auto tab = line.find('\t');
    const std::string name = line.substr(0, tab);
    const auto size = static_cast<std::int64_t>(std::stoll(line.substr(tab + 1)));
    sur_names.push_back(name);
    extra.push_back(io::Dataset::whole("/surrogate/" + std::to_string(si),
                                       ctx.rank() == 0 ? contents[si] : std::vector<std::uint8_t>{}, {size}));
    ++si;
  }
  a.set("campaign.surrogate_files", join_lines(sur_names));

  const std::string path = m_writer->write(cur.global_steps, time, a, fields, extra);
  // `latest` names the newest file, for batch scripts that decide between a fresh start and
  // --resume (scripts/slurm, RunDirectory); resume itself lists the files. Written durably by
  // rank 0; a failure (disk full) is thrown on every rank, naming the file.
  std::string err;
  if (ctx.rank() == 0) {
    try {
      io::write_file_durably(m_writer->dir() + "/latest", fs::path(path).filename().string() + "\n");
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  throw_if_root_failed(ctx.comm(), err);
  if (state != nullptr || !cur.phase_state.empty())
    ctx.log("checkpoint " + path + " written (phase '" + ctx.phase_name() + "', step " +
            std::to_string(cur.step) + ")");
  else if (cur.phase < ctx.phase_names().size())
    ctx.log("checkpoint " + path + " written (before phase '" + ctx.phase_name() + "')");
  else
    ctx.log("checkpoint " + path + " written (after the last phase)");
}

namespace {
std::string cost_file(const PhaseContext& ctx) {
  return ctx.run_dir() + "/.checkpoint-write-cost";
}
}  // namespace

std::vector<std::pair<std::string, std::string>> CampaignCheckpoint::state_datasets(const io::H5File& f) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!f.has_attribute("campaign.state")) return out;
  const auto names = split_lines(f.get_string("campaign.state"));
  for (std::size_t i = 0; i < names.size(); ++i)
    out.emplace_back(names[i], "fields/state." + std::to_string(i));
  return out;
}

void CampaignCheckpoint::record_cost(PhaseContext& ctx, double seconds, double bytes) {
  if (ctx.rank() != 0) return;
  std::ofstream out(cost_file(ctx), std::ios::trunc);
  out.precision(17);
  out << seconds << " " << bytes << "\n";
}

void CampaignCheckpoint::read(PhaseContext& ctx) {
  {
    // The newest write's cost (record_cost), rank 0's for every rank.
    double cost[2] = {0.0, 0.0};
    if (ctx.rank() == 0) {
      std::ifstream in(cost_file(ctx));
      if (!(in >> cost[0] >> cost[1]) || !(cost[0] >= 0.0 && cost[0] < 1e9) || !(cost[1] >= 0.0))
        cost[0] = cost[1] = 0.0;
    }
    MPI_Bcast(cost, 2, MPI_DOUBLE, 0, ctx.comm());
    ctx.carry_longest_checkpoint(cost[0], cost[1]);
  }
  const std::string dir = directory(ctx);
  const auto steps = io::list_checkpoint_steps(dir, k_prefix);
  if (steps.empty()) {
    std::string older;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().rfind("ckpt-", 0) == 0)
        older = " (it holds a checkpoint of an older mantissa, which wrote one file per rank)";
    throw Error("--resume: no campaign checkpoint in '" + dir + "'" + older +
                "; the run stopped before its first checkpoint: start it again with --overwrite");
  }
  std::string damaged;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const std::string file = dir + "/" + k_prefix + "-" + [&] {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%010lld", static_cast<long long>(*it));
      return std::string(buf);
    }() + ".h5";
    try {
      read_file(ctx, file);
      if (!damaged.empty())
        log::warn("--resume: {}; resuming from the previous checkpoint '{}'", damaged, file);
      restore_surrogate_files(ctx);
      return;
    } catch (const Damaged& e) {
      damaged += (damaged.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  throw Error("--resume: no usable checkpoint in '" + dir + "': " + damaged +
              "; start the run again with --overwrite");
}

void CampaignCheckpoint::read_file(PhaseContext& ctx, const std::string& file) {
  const auto& cfg = ctx.config();
  const Decomposition& decomp = ctx.decomposition();
  std::unique_ptr<io::CheckpointReader> rd;
  try {
    rd = std::make_unique<io::CheckpointReader>(file, ctx.comm());
  } catch (const Error& e) {
    throw Damaged(e.what());
  }
  const auto& a = rd->attributes();
  auto refuse = [&](const std::string& what) { throw Refused("--resume: '" + file + "' " + what); };
  if (!a.has("campaign.format") || a.get_string("campaign.format") != k_format)
    refuse("is not a mantissa campaign checkpoint (attribute campaign.format)");
  if (a.get_int("campaign.format_version") != k_version)
    refuse("has campaign checkpoint version " + std::to_string(a.get_int("campaign.format_version")) +
           "; this mantissa reads version " + std::to_string(k_version));
  if (a.get_string("campaign.deck_hash") != cfg.deck_hash)
    refuse("was written for another deck (deck hash " + a.get_string("campaign.deck_hash") + ", this deck " +
           cfg.deck_hash + "); resume with the deck it was written with, or start over with --overwrite");
  try {
    rd->validate_against(decomp.grid(), {{}, cfg.physics});
  } catch (const Error& e) {
    refuse(std::string("does not fit this deck: ") + e.what());
  }
  const auto phase = static_cast<std::size_t>(a.get_int("campaign.phase"));
  // phase == the number of phases: written after the last phase (checkpoint.phase_end).
  const auto& phases = ctx.phase_names();
  const std::string expected = phase < phases.size()    ? phases[phase]
                               : phase == phases.size() ? PhaseContext::k_end_phase_name
                                                        : "";
  if (expected.empty() || a.get_string("campaign.phase_name") != expected)
    refuse("is in phase '" + a.get_string("campaign.phase_name") +
           "', which this deck's campaign does not have");

  // Everything is read (and may turn out damaged) before anything of the context changes.
  ReferenceStore ref;
  std::vector<HostField> pending;
  std::vector<std::string> pending_names;
  double pending_time = 0.0;
  std::vector<VariantResult> results;
  TrainingResult training;
  std::map<std::string, std::vector<double>> snapshots;
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> surrogate_files;
  try {
    ref.state_names = split_lines(a.get_string("campaign.state_names"));
    ref.snapshot_mib = a.get_real("campaign.reference_mib");
    ref.train_mib = a.get_real("campaign.train_mib");
    const auto read_host = [&](const std::string& name, std::int64_t ghost) {
      Field<double> f("mantissa::workflow::CampaignCheckpoint::read", decomp, static_cast<int>(ghost));
      rd->read_field(name, f);
      return to_host(f, "mantissa::workflow::CampaignCheckpoint::read");
    };
    const auto ref_steps = a.get_ints("campaign.ref_steps");
    const auto ref_ghosts = a.get_ints("campaign.ref_ghosts");
    for (std::size_t i = 0; i < ref_steps.size(); ++i)
      ref.snapshots[ref_steps[i]] = read_host("ref." + std::to_string(ref_steps[i]), ref_ghosts.at(i));
    // Absent from checkpoints written before held-out experiments existed: none, and every
    // training state is experiment 0's.
    if (a.has("campaign.ref_experiment_ids")) {
      const auto ids = a.get_ints("campaign.ref_experiment_ids");
      const auto steps = a.get_ints("campaign.ref_experiment_steps");
      const auto ghosts = a.get_ints("campaign.ref_experiment_ghosts");
      if (steps.size() != ids.size() || ghosts.size() != ids.size())
        throw Error("its held-out experiments' snapshot lists disagree in length");
      for (std::size_t i = 0; i < ids.size(); ++i)
        ref.experiment_snapshots[int(ids[i])][steps[i]] =
            read_host("ref.e" + std::to_string(ids[i]) + "." + std::to_string(steps[i]), ghosts[i]);
    }
    const auto train_ghosts = a.get_ints("campaign.train_ghosts");
    for (std::int64_t n = 0; n < a.get_int("campaign.train_count"); ++n) {
      std::vector<HostField> smp;
      for (std::size_t i = 0; i < train_ghosts.size(); ++i)
        smp.push_back(read_host("train." + std::to_string(n) + "." + std::to_string(i), train_ghosts[i]));
      ref.train_samples.push_back(std::move(smp));
    }
    if (a.has("campaign.train_experiment")) {
      for (const auto e : a.get_ints("campaign.train_experiment")) ref.train_experiment.push_back(int(e));
      if (ref.train_experiment.size() != ref.train_samples.size())
        throw Error("it lists the experiments of " + std::to_string(ref.train_experiment.size()) +
                    " training states, but holds " + std::to_string(ref.train_samples.size()));
    } else {
      ref.train_experiment.assign(ref.train_samples.size(), 0);
    }
    pending_names = split_lines(a.get_string("campaign.state"));
    const auto state_ghosts = a.get_ints("campaign.state_ghosts");
    for (std::size_t i = 0; i < pending_names.size(); ++i)
      pending.push_back(read_host("state." + std::to_string(i), state_ghosts.at(i)));
    pending_time = rd->time();
    const auto bytes = rd->read_dataset<std::uint8_t>("/campaign/results");
    Archive ar{&results, &training};
    detail::TextReader tr(std::string(bytes.begin(), bytes.end()), "'" + file + "'");
    serialize(tr, ar);
    for (const auto& n : split_lines(a.get_string("campaign.snapshots"))) {
      auto v = rd->read_dataset<double>("/campaign/snapshot." + n);
      if (ctx.rank() != 0) v.clear();  // rank 0 holds the report's copy
      snapshots[n] = std::move(v);
    }
    if (a.has("campaign.surrogate_files")) {
      const auto names = split_lines(a.get_string("campaign.surrogate_files"));
      for (std::size_t i = 0; i < names.size(); ++i)
        surrogate_files.emplace_back(names[i],
                                     rd->read_dataset<std::uint8_t>("/surrogate/" + std::to_string(i)));
    }
  } catch (const Error& e) {
    throw Damaged("'" + file + "' is damaged: " + std::string(e.what()));
  }
  if (results.size() != ctx.results().size())
    refuse("has " + std::to_string(results.size()) + " variants, this deck's campaign " +
           std::to_string(ctx.results().size()));
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].name != ctx.results()[i].name)
      refuse("has variant '" + results[i].name + "' where this deck's campaign has '" +
             ctx.results()[i].name + "'");
  auto& cur = ctx.cursor();
  ctx.reference_store() = std::move(ref);
  ctx.results() = std::move(results);
  ctx.training() = training;
  ctx.snapshots() = std::move(snapshots);
  m_pending = std::move(pending);
  m_pending_names = std::move(pending_names);
  m_pending_time = pending_time;
  cur.phase = phase;
  cur.step = a.get_int("campaign.step");
  cur.experiment = a.get_int("campaign.experiment");
  cur.global_steps = a.get_int("campaign.global_steps");
  cur.phase_state.clear();
  for (const auto& k : split_lines(a.get_string("campaign.phase_state")))
    cur.phase_state[k] = a.get_int("campaign.phase_state." + k);
  if (a.has("campaign.longest_checkpoint_s"))
    ctx.carry_longest_checkpoint(
        a.get_real("campaign.longest_checkpoint_s"),
        a.has("campaign.longest_checkpoint_bytes") ? a.get_real("campaign.longest_checkpoint_bytes") : 0.0);
  m_source = file;
  m_surrogate_files = std::move(surrogate_files);
}

void CampaignCheckpoint::restore_surrogate_files(PhaseContext& ctx) {
  // The checkpoint's copy is checksummed; the run directory's may have been damaged or removed
  // since. Rank 0 compares them and puts back the checkpoint's (durably), saying so.
  std::string err;
  if (ctx.rank() == 0) {
    const fs::path dir = fs::path(ctx.trained_path()).parent_path();
    for (const auto& [name, bytes] : m_surrogate_files) {
      const fs::path f = dir / name;
      std::ifstream in(f, std::ios::binary);
      const std::vector<std::uint8_t> now((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
      if (in.is_open() && now == bytes) continue;
      log::warn(
          "--resume: the trained surrogate's file '{}' {}; restored from the checkpoint '{}'", f.string(),
          in.is_open() ? "differs from the checkpoint's checksummed copy (damaged)" : "is missing", m_source);
      try {
        io::write_file_durably(f.string(),
                               std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      } catch (const std::exception& e) {
        err = e.what();
        break;
      }
    }
  }
  throw_if_root_failed(ctx.comm(), err);
}

double CampaignCheckpoint::load_state(PhaseContext& ctx, State& state) {
  if (m_pending.size() != state.size())
    throw Error("--resume: '" + m_source + "' holds " + std::to_string(m_pending.size()) +
                " state fields, the physics has " + std::to_string(state.size()));
  for (std::size_t i = 0; i < state.size(); ++i) {
    if (m_pending_names[i] != state[i].name)
      throw Error("--resume: '" + m_source + "' state field " + std::to_string(i) + " is '" +
                  m_pending_names[i] + "', the physics' is '" + state[i].name + "'");
    if (m_pending[i].ghost[0] != state[i].field.ghost(0))
      throw Error("--resume: '" + m_source + "' state field '" + state[i].name + "' has ghost width " +
                  std::to_string(m_pending[i].ghost[0]) + ", the physics' " +
                  std::to_string(state[i].field.ghost(0)));
    from_host(m_pending[i], state[i].field);
  }
  (void)ctx;
  m_pending.clear();  // once: a later phase starts fresh
  m_pending_names.clear();
  return m_pending_time;
}

}  // namespace mantissa::workflow
