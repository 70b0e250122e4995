#include <mantissa/core/Error.hpp>
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/workflow/Baselines.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/CampaignCheckpoint.hpp>
#include <mantissa/workflow/Schema.hpp>
#include <mantissa/workflow/Signals.hpp>

#include <algorithm>
#include <set>
#include <sstream>

namespace mantissa::workflow {

Campaign::Campaign(CampaignConfig config, const Registry& registry, ModelContext context, std::string run_dir,
                   bool resume, const CampaignKinds& kinds)
    : m_cfg(std::move(config)),
      m_registry(registry),
      m_models(context),
      m_dir(std::move(run_dir)),
      m_resume_requested(resume) {
  MANTISSA_ASSERT(m_models.decomp != nullptr, "Campaign needs the shared decomposition in its ModelContext");
  validate();
  m_ctx = std::make_unique<PhaseContext>(m_cfg, m_registry, m_models, m_dir);
  m_ckpt = std::make_unique<CampaignCheckpoint>();
  m_ctx->set_checkpointer(m_ckpt.get());
  for (const auto& spec : kinds.plan(m_cfg, m_ctx->precisions())) {
    m_phases.push_back(kinds.make_phase(spec));
    m_ctx->phase_names().push_back(spec.name);
    if (spec.result_kind.empty()) continue;
    VariantResult r;
    r.name = spec.name;
    r.kind = spec.result_kind;
    r.storage = std::string(to_string(spec.precision.get(role::storage)));
    r.compute = std::string(to_string(spec.precision.get(role::compute, spec.precision.get(role::storage))));
    r.precision = spec.precision.describe();
    m_ctx->results().push_back(r);
  }
  MANTISSA_ASSERT(!m_ctx->results().empty() && m_ctx->results().front().kind == "reference",
                  "campaign kind '" << m_cfg.kind << "' plans no reference first");
  m_section = m_registry.create_report_section(m_cfg.physics, m_models);
  m_energy_source = m_ctx->energy_meter().source();
}

Campaign::~Campaign() = default;

void Campaign::validate() const {
  m_registry.physics(m_cfg.physics);  // throws, naming the choices
  validate_config(m_cfg);
}

void validate_config(const CampaignConfig& cfg) {
  auto bad = [](const std::string& key, const std::string& what) {
    throw Error("deck key '" + key + "': " + what);
  };
  if (cfg.steps < 1) bad("campaign.steps", "must be at least 1");
  if (cfg.checkpoint_keep < 1) bad("checkpoint.keep", "must be at least 1 (the newest checkpoint is kept)");
  check_checkpoint_dir(cfg.checkpoint_dir);
  if (cfg.sample_every < 1) bad("campaign.sample_every", "must be at least 1");
  if (!(cfg.error_threshold > 0.0)) bad("campaign.error_threshold", "must be positive");
  std::set<std::string> names{"reference"};
  for (const auto& v : cfg.variants) {
    if (v.name.empty()) bad("campaign.variants[].name", "a variant has no name");
    if (!names.insert(v.name).second)
      bad("campaign.variants[].name", "'" + v.name + "' is used twice (or is the reserved name 'reference')");
  }
  const auto& s = cfg.surrogate;
  if (!s.enabled) return;
  if (s.training != "online" && s.training != "file")
    bad("campaign.surrogate.training", "'" + s.training + "' is neither 'online' nor 'file'");
  if (s.training == "file" && s.weights.empty())
    bad("campaign.surrogate.weights", "training is 'file' but no weights path is given");
  if (s.horizon > cfg.steps)
    bad("campaign.surrogate.horizon", std::to_string(s.horizon) + " exceeds campaign.steps = " +
                                          std::to_string(cfg.steps) + " (the reference ends there)");
  if (s.train_steps > cfg.steps) bad("campaign.surrogate.train_steps", "exceeds campaign.steps");
  const std::int64_t horizon = s.horizon < 0 ? cfg.steps : s.horizon;
  if (s.start >= horizon)
    bad("campaign.surrogate.start",
        std::to_string(s.start) + " leaves no surrogate step before the horizon " + std::to_string(horizon) +
            " (campaign.surrogate.horizon or run.steps)");
  if (s.training == "online" && s.train_steps >= 0 && s.train_steps <= s.start)
    bad("campaign.surrogate.train_steps",
        std::to_string(s.train_steps) + " ends training before campaign.surrogate.start = " +
            std::to_string(s.start) + "; online training uses the reference states from start on");
  if (s.heldout_fraction > 0.0) {
    if (s.train_steps >= 0)
      bad("campaign.surrogate.heldout_fraction",
          "and campaign.surrogate.train_steps both bound online training; give one of them");
    (void)campaign_time_split(s.start, horizon, cfg.sample_every, s.heldout_fraction,
                              "deck key 'campaign.surrogate.heldout_fraction'");  // throws if unsplittable
  }
  {
    const auto& tr = s.train_experiments;
    const auto& ho = s.heldout_experiments;
    if (tr.empty())
      bad("campaign.surrogate.train_experiments", "is empty; give at least one experiment (0: the first)");
    if (s.training != "online" && !(tr.size() == 1 && tr[0] == 0))
      bad("campaign.surrogate.train_experiments",
          "selects what online training uses, but campaign.surrogate.training is '" + s.training +
              "'; remove the key or train online");
    for (std::size_t i = 0; i < tr.size(); ++i)
      if (std::count(tr.begin(), tr.end(), tr[i]) > 1)
        bad("campaign.surrogate.train_experiments", "names experiment " + std::to_string(tr[i]) + " twice");
    for (std::size_t i = 0; i < ho.size(); ++i) {
      if (std::count(ho.begin(), ho.end(), ho[i]) > 1)
        bad("campaign.surrogate.heldout_experiments", "names experiment " + std::to_string(ho[i]) + " twice");
      if (s.training == "online" && std::count(tr.begin(), tr.end(), ho[i]) > 0)
        bad("campaign.surrogate.heldout_experiments", "experiment " + std::to_string(ho[i]) +
                                                          " is also in campaign.surrogate.train_experiments: "
                                                          "a held-out experiment must be one training "
                                                          "never saw; remove it from one of the two lists");
    }
  }
  if (horizon % cfg.sample_every != 0 && horizon != cfg.steps)
    bad("campaign.surrogate.horizon",
        "must be a multiple of campaign.sample_every or equal campaign.steps, so that "
        "the reference has a snapshot there");
  if (s.hybrid.enabled) {
    if (s.hybrid.k < 1) bad("campaign.surrogate.hybrid.k", "must be at least 1");
    if (s.hybrid.check_every < 1) bad("campaign.surrogate.hybrid.check_every", "must be at least 1");
    if (s.hybrid.sample_stride < 1) bad("campaign.surrogate.hybrid.sample_stride", "must be at least 1");
    if (s.hybrid.physics_steps < 1) bad("campaign.surrogate.hybrid.physics_steps", "must be at least 1");
  }
}

std::array<std::int64_t, 3> Campaign::global_shape() const {
  const auto& n = m_models.decomp->grid().n;
  return {n[2], n[1], n[0]};
}

int Campaign::dim() const {
  return m_models.decomp->grid().dim;
}

const Grid& Campaign::grid() const {
  return m_models.decomp->grid();
}

std::string Campaign::memory_note() const {
  const auto& ref = m_ctx->reference_store();
  std::ostringstream os;
  os.precision(3);
  os << "one model on the device at a time";
  if (m_cfg.timing.repeats > 0)
    os << " (while the speed column is timed, one per physics variant: their stretches are interleaved)";
  os << "; the reference is kept as host snapshots of its primary field at " << ref.snapshots.size()
     << " sample steps (" << ref.snapshot_mib << " MiB on the largest rank)";
  if (m_cfg.surrogate.enabled && m_cfg.surrogate.training == "online")
    os << "; the online training states (" << ref.train_mib
       << " MiB on the largest rank) are held on the host only until training ends";
  return os.str();
}

void check_experiment_range(const CampaignConfig& cfg, int experiments, const std::string& word) {
  const auto& s = cfg.surrogate;
  const std::pair<const char*, const std::vector<int>*> lists[] = {
      {"campaign.surrogate.train_experiments", &s.train_experiments},
      {"campaign.surrogate.heldout_experiments", &s.heldout_experiments}};
  for (const auto& [key, list] : lists)
    for (const int e : *list)
      if (e >= experiments)
        throw Error("deck key '" + std::string(key) + "': " + word + " " + std::to_string(e) +
                    " does not exist: the " + cfg.physics + " deck has " + std::to_string(experiments) +
                    " (0 to " + std::to_string(experiments - 1) + "; seismic: seismic.sources[].shot)");
}

void Campaign::check_experiments() const {
  // The experiment lists against the physics' experiments, before anything runs (the model is
  // made only where a list names an experiment other than 0).
  const auto& s = m_cfg.surrogate;
  int top = 0;
  for (const int e : s.train_experiments) top = std::max(top, e);
  for (const int e : s.heldout_experiments) top = std::max(top, e);
  if (top == 0) return;
  check_experiment_range(
      m_cfg, std::max(1, m_ctx->make_physics(m_ctx->reference_precision())->num_experiments()), "experiment");
}

Campaign::Outcome Campaign::run() {
  auto& cur = m_ctx->cursor();
  if (m_resume_requested) {
    m_ckpt->read(*m_ctx);
    m_resumed = true;
    m_resumed_global_step = cur.global_steps;
    if (cur.phase == m_phases.size())
      m_ctx->log("resuming from " + m_ckpt->source() + ": every phase has run; writing the report");
    else
      m_ctx->log("resuming from " + m_ckpt->source() + " in phase '" + m_ctx->phase_name() + "' at step " +
                 std::to_string(cur.step));
    // The phases after a physics phase run in the campaign's floating-point mode (the physics
    // phase sets it when it ends, PhysicsPhase::after); a process resumed in or before a later
    // phase has not run that physics phase, so it sets the mode here. (A physics phase sets its
    // own when it starts.)
    apply_float_env(m_cfg.flush_subnormals ? SubnormalMode::flush : SubnormalMode::keep);
  }
  // The surrogate exists from the start: the reference phase needs its stride to collect
  // training states.
  if (m_cfg.surrogate.enabled) {
    auto& sur = m_ctx->surrogate();
    if (m_resumed && m_ctx->training().done) sur.load(m_ctx->trained_path());
    check_experiments();
  }
  // run.wall_time_limit forecasts a checkpoint's write from the ones before; before the first
  // of this process (a fresh run) from one small durable write timed now.
  if (m_cfg.wall_time_limit > 0.0) m_ctx->probe_write_cost();
  StopSignals signals;
  const std::size_t first = cur.phase;
  for (std::size_t p = first; p < m_phases.size(); ++p) {
    Phase& ph = *m_phases[p];
    bool resumed_here = m_resumed && p == first;
    const bool resumed_in_phase = resumed_here;  // the test hold skips it even when it starts afresh
    cur.phase = p;
    if (resumed_here && !m_ckpt->has_state() && cur.phase_state.empty()) {
      // Checkpointed between phases (a stop before this phase began): it starts afresh. (A
      // phase without a running state may still have progress of its own: a part-way training
      // keeps its step in the cursor's phase_state.)
      resumed_here = false;
    } else if (!resumed_here && !ph.done(*m_ctx) && m_ctx->stop_requested()) {
      // A stop before a phase begins: a checkpoint between phases, without a running state.
      cur.step = 0;
      cur.experiment = 0;
      cur.phase_state.clear();
      // The checkpoint of the phase before's end (checkpoint.phase_end) holds this very point:
      // writing it again would only cost time (past a wall-time limit, perhaps).
      const bool current = m_ctx->between_phases_checkpoint_current();
      if (!current) m_ctx->write_checkpoint(nullptr, 0.0);
      m_ctx->log("stopped before phase '" + ph.name() + "' (" + m_ctx->stop_reason() + "); " +
                 (current ? "the checkpoint written when the phase before ended holds this point"
                          : "checkpoint written") +
                 "; continue with `mantissa run DECK --resume`");
      return Outcome::stopped;
    }
    if (!resumed_in_phase) m_ctx->test_hold(ph.name());
    if (resumed_here && !ph.resumes_mid_phase()) {
      // Repeat the phase from its start. The campaign step counter keeps counting (it only
      // paces periodic checkpoints and the stop_after_step hook, which must not fire twice).
      auto& r = m_ctx->result(ph.name());
      VariantResult fresh;
      fresh.name = r.name;
      fresh.kind = r.kind;
      fresh.storage = r.storage;
      fresh.compute = r.compute;
      fresh.precision = r.precision;
      r = fresh;
      resumed_here = false;
      m_ctx->log("the phase '" + ph.name() + "' repeats from its start");
      // Stopped in it by the wall-time limit once, it would be stopped again at the same point
      // on every start and never end: the limit waits until it has (signals still stop it).
      if (m_cfg.wall_time_limit > 0.0) {
        m_ctx->set_wall_time_limit_paused(true);
        m_ctx->log("run.wall_time_limit is not acted on in phase '" + ph.name() +
                   "': it cannot resume part-way and must run to its end once");
      }
    }
    if (!resumed_here) {
      cur.step = 0;
      cur.experiment = 0;
      cur.phase_state.clear();
    }
    const bool was_done = ph.done(*m_ctx);
    m_ctx->mark_phase_boundary();  // its set-up, up to its first poll
    const bool done = was_done || ph.run(*m_ctx, resumed_here);
    m_ctx->mark_phase_boundary();  // its end work, up to the next phase's first poll
    if (done && !was_done) m_ctx->note_progress();
    if (!done) {
      m_ctx->log("stopped in phase '" + ph.name() + "' at step " + std::to_string(cur.step) + " (" +
                 m_ctx->stop_reason() + "); checkpoint written; continue with `mantissa run DECK --resume`");
      return Outcome::stopped;
    }
    m_ctx->set_wall_time_limit_paused(false);
    ph.after(*m_ctx);
    // checkpoint.phase_end: the next phase (or the report, after the last) starts from here
    // after a kill -9, a node failure or a failed report; the checkpoint is the one a stop
    // between phases writes.
    if (!was_done && m_ctx->phase_end_checkpoint_due()) {
      cur.phase = p + 1;
      cur.step = 0;
      cur.experiment = 0;
      cur.phase_state.clear();
      m_ctx->write_checkpoint(nullptr, 0.0);
    }
  }
  return Outcome::finished;
}

}  // namespace mantissa::workflow
