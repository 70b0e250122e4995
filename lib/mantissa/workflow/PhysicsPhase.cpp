// The reference and the physics variants: the physics in one precision set, every experiment
// of it, step by step from the same initial state, recorded against the reference.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/PhysicsPhase.hpp>
#include <mantissa/workflow/SubnormalCensus.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace mantissa::workflow {

namespace {
SubnormalMode mode_of(bool flush) {
  return flush ? SubnormalMode::flush : SubnormalMode::keep;
}
}  // namespace

PhysicsPhase::PhysicsPhase(PhaseSpec spec, bool is_reference, bool timing_only)
    : Phase(std::move(spec)), m_reference(is_reference), m_timing_only(timing_only) {}

SubnormalMode PhysicsPhase::subnormal_mode(const CampaignConfig& cfg) const {
  if (!m_reference)
    for (const auto& v : cfg.variants)
      if (v.name == name() && v.flush_subnormals) return mode_of(*v.flush_subnormals);
  return mode_of(cfg.flush_subnormals);
}

void PhysicsPhase::census(PhaseContext& ctx, VariantResult& r, const PhysicsModel& model, std::int64_t step) {
  PhaseTimer sw("campaign::census");
  const State st = model.state();
  std::vector<Precision> storage = model.state_storage();
  if (storage.empty()) storage.assign(st.size(), model.precision().get(role::storage));
  const auto c = subnormal_census(st, storage, ctx.comm());
  if (r.census.empty())
    for (const auto& f : c)
      r.census.push_back({f.field, std::string(to_string(f.storage)), f.values, {}, {}});
  MANTISSA_ASSERT(r.census.size() == c.size(),
                  "the state has " << c.size() << " fields, the census " << r.census.size());
  r.census_steps.push_back(step);
  for (std::size_t i = 0; i < c.size(); ++i) {
    r.census[i].subnormal.push_back(c[i].subnormal);
    r.census[i].zero.push_back(c[i].zero);
  }
  r.time.analysis += sw.stop();
}

void PhysicsPhase::measure_bound(PhaseContext& ctx, VariantResult& r) {
  PhaseTimer sw("campaign::bounds");
  const TriadBound b = measure_triad(ctx.comm());
  r.triad_gbs = b.total_gbs;
  r.triad_median_gbs = b.median_total_gbs;
  r.triad_rank_min_gbs = b.rank_gbs_min;
  r.triad_rank_max_gbs = b.rank_gbs_max;
  r.triad_elements = static_cast<std::int64_t>(b.elements);
  r.triad_where = b.where;
  r.time.setup += sw.stop();
  std::ostringstream os;
  os.precision(3);
  os << "memory bound (STREAM triad, " << b.where << "): " << b.total_gbs << " GB/s best, "
     << b.median_total_gbs << " GB/s median of " << b.repeats;
  ctx.log(os.str());
}

bool PhysicsPhase::run_timing_only(PhaseContext& ctx) {
  VariantResult& r = ctx.result(name());
  const auto& cfg = ctx.config();
  const FloatEnvReport env = apply_float_env(subnormal_mode(cfg));
  r.subnormals_requested = std::string(to_string(env.requested));
  r.subnormals_in_force = env.in_force;
  r.subnormals_control = env.control;
  r.subnormals_mechanism = env.describe();
  if (m_reference && r.triad_gbs < 0.0) measure_bound(ctx, r);
  PhaseTimer setup("campaign::setup");
  auto model = ctx.make_physics(spec().precision);
  model->initialize();
  r.description = model->describe();
  r.precision_support = model->precision_support();
  ctx.note_model(*model);
  r.time.setup += setup.stop();
  // Nothing is compared with a reference here: the accuracy numbers are not measured.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.final_rel_l2 = r.max_rel_l2 = r.final_max_error = r.final_energy_drift = r.max_abs_energy_drift = nan;
  r.status = "running";
  ctx.log("timing only " + r.name + " (" + r.description + "); subnormals " + env.describe() +
          "; timed with the other variants, interleaved, in the phase 'speed'");
  // The timed stretches (and the steps, traffic and memory they count) are the speed phase's,
  // interleaved with the other variants' (SpeedPhase).
  r.memory_hwm_mib = memory_hwm_mib(ctx.comm());
  r.status = "ok";
  return true;
}

bool PhysicsPhase::run(PhaseContext& ctx, bool resumed) {
  if (m_timing_only) return run_timing_only(ctx);
  VariantResult& r = ctx.result(name());
  auto& cur = ctx.cursor();
  const auto& cfg = ctx.config();
  // The floating-point environment of this variant's stepping, on every host thread (FloatEnv);
  // a resume sets it again.
  const FloatEnvReport env = apply_float_env(subnormal_mode(cfg));
  r.subnormals_requested = std::string(to_string(env.requested));
  r.subnormals_in_force = env.in_force;
  r.subnormals_control = env.control;
  r.subnormals_mechanism = env.describe();
  // The machine's memory bound, measured once in the job, before the first variant steps.
  if (m_reference && cfg.timing.repeats > 0 && r.triad_gbs < 0.0) measure_bound(ctx, r);
  PhaseTimer setup("campaign::setup");
  auto model = ctx.make_physics(spec().precision);
  // One untimed step first (first-touch pages, thread start-up, lazy allocations), so that
  // the timed steps measure the steady state; initialize() then starts over.
  model->initialize();
  model->step(1);
  r.description = model->describe();
  r.precision_support = model->precision_support();
  ctx.note_model(*model);
  const int experiments = ctx.num_experiments();
  const int trace_stride = ctx.probes().stride;
  r.trace_stride = trace_stride;
  r.extra_experiments.resize(static_cast<std::size_t>(experiments - 1));
  int ex = resumed ? static_cast<int>(cur.experiment) : 0;
  MANTISSA_ASSERT(ex >= 0 && ex < experiments, "checkpointed experiment " << ex << " of " << experiments);
  cur.experiment = ex;
  model->select_experiment(ex);
  if (resumed) {
    State st = model->state();
    const double t = ctx.load_checkpoint_state(st);
    model->set_state(st, cur.step, t);
  } else {
    model->initialize();
  }
  auto& names = ctx.reference_store().state_names;
  if (names.empty())
    for (const auto& f : model->state()) names.push_back(f.name);
  r.time.setup += setup.stop();
  auto of_n = [experiments](int e) {
    return experiments > 1 ? ", experiment " + std::to_string(e) + " of " + std::to_string(experiments)
                           : std::string();
  };
  ctx.log(std::string(resumed ? "resuming " : "running ") + r.name + " (" + r.description + ")" + of_n(ex) +
          "; subnormals " + env.describe());
  r.status = r.status == "failed" ? r.status : "running";
  auto record = [&](std::int64_t step) {
    ctx.record(r, *model, ex, step, trace_stride, cfg.steps, m_reference);
  };
  // The subnormal census at experiment 0's sample steps (after the sample's own recording).
  auto census_at = [&](std::int64_t step) {
    if (ex == 0 && r.status != "failed" && ctx.is_sample_step(step, cfg.steps)) census(ctx, r, *model, step);
  };
  if (!resumed) {
    record(0);
    census_at(0);
  }
  ctx.energy_meter().start();
  const auto cost = model->cost_per_step();
  std::int64_t s = model->step_index();
  bool stopped = false;
  // Experiment 0 is compared with the reference (record, finish); later ones only record their
  // probes and energy. A stop inside any experiment checkpoints (experiment, step).
  while (true) {
    auto progress = ctx.progress(r.name + of_n(ex), cfg.steps, cost.cell_updates);
    while (r.status != "failed" && s < cfg.steps) {
      if (ctx.stop_requested()) {
        cur.step = s;
        const State st = model->state();
        ctx.write_checkpoint(&st, model->time());
        stopped = true;
        break;
      }
      PhaseTimer sw("campaign::step");
      model->step(1);
      r.time.steps += sw.stop();
      ++s;
      ++r.steps_done;
      record(s);
      census_at(s);
      progress.update(s, model->time());
      if (ctx.after_step() && r.status != "failed") {
        PhaseTimer io("campaign::checkpoint");
        cur.step = s;
        const State st = model->state();
        ctx.write_checkpoint(&st, model->time());
        r.time.io += io.stop();
      }
    }
    if (stopped) break;
    if (ex == 0) {
      if (m_reference) note_reference_memory(ctx);
      ctx.finish(r, *model);  // the accuracy numbers and the snapshot are experiment 0's
    }
    if (++ex >= experiments || r.status == "failed") break;
    PhaseTimer sw("campaign::setup");
    cur.experiment = ex;
    model->select_experiment(ex);
    model->initialize();
    s = model->step_index();
    r.time.setup += sw.stop();
    ctx.log("running " + r.name + of_n(ex));
    record(0);
  }
  const double joules = ctx.energy_meter().joules();
  if (joules >= 0.0) r.energy_joules = std::fmax(r.energy_joules, 0.0) + joules;
  r.cell_updates = cost.cell_updates * double(r.steps_done);
  r.bytes = cost.bytes * double(r.steps_done);
  r.flops = cost.flops * double(r.steps_done);
  if (stopped) return false;
  // The speed column is measured after every physics phase, interleaved over the variants
  // (SpeedPhase): the accuracy numbers are not touched by it.
  if (r.status != "failed") r.status = "ok";  // a resume inside a later experiment does not repeat finish()
  cur.experiment = 0;
  return true;
}

void PhysicsPhase::note_reference_memory(PhaseContext& ctx) {
  auto& ref = ctx.reference_store();
  double bytes = 0.0;
  for (const auto& kv : ref.snapshots) bytes += double(kv.second.view.span()) * sizeof(double);
  for (const auto& smp : ref.train_samples)
    for (const auto& f : smp) ref.train_mib += double(f.view.span()) * sizeof(double) / 1048576.0;
  double mib = bytes / 1048576.0, gmib = 0.0, gtrain = 0.0;
  MPI_Allreduce(&mib, &gmib, 1, MPI_DOUBLE, MPI_MAX, ctx.comm());
  MPI_Allreduce(&ref.train_mib, &gtrain, 1, MPI_DOUBLE, MPI_MAX, ctx.comm());
  ref.snapshot_mib = gmib;
  ref.train_mib = gtrain;
}

void PhysicsPhase::after(PhaseContext& ctx) {
  // The phases after this one (surrogate training, rollouts, the hybrid) run in the campaign's mode.
  apply_float_env(mode_of(ctx.config().flush_subnormals));
  // The training states are needed only by an online-trained surrogate.
  if (m_reference && !ctx.has_surrogate()) {
    ctx.reference_store().train_samples.clear();
    ctx.reference_store().train_experiment.clear();
  }
}

}  // namespace mantissa::workflow
