// The reference and the physics variants: the physics in one precision set, every experiment
// of it, step by step from the same initial state, recorded against the reference.
#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/PhysicsPhase.hpp>

#include <algorithm>

namespace mantissa::workflow {

PhysicsPhase::PhysicsPhase(PhaseSpec spec, bool is_reference)
    : Phase(std::move(spec)), m_reference(is_reference) {}

bool PhysicsPhase::run(PhaseContext& ctx, bool resumed) {
  VariantResult& r = ctx.result(name());
  auto& cur = ctx.cursor();
  const auto& cfg = ctx.config();
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
  ctx.log(std::string(resumed ? "resuming " : "running ") + r.name + " (" + r.description + ")" + of_n(ex));
  r.status = r.status == "failed" ? r.status : "running";
  auto record = [&](std::int64_t step) {
    ctx.record(r, *model, ex, step, trace_stride, cfg.steps, m_reference);
  };
  if (!resumed) record(0);
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
  // The training states are needed only by an online-trained surrogate.
  if (m_reference && !ctx.has_surrogate()) ctx.reference_store().train_samples.clear();
}

}  // namespace mantissa::workflow
