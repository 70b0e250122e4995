// A surrogate rollout in one precision: the reference-precision physics leads in to
// campaign.surrogate.start, the surrogate steps from there to the horizon, every step recorded
// against the reference as a physics variant is. HybridPhase (HybridPhase.cpp) adds its error
// indicator through the after_prediction() hook.
#include <mantissa/workflow/Baselines.hpp>
#include <mantissa/workflow/RolloutPhase.hpp>

#include <cmath>
#include <numeric>

namespace mantissa::workflow {

namespace {
// Cursor keys (Cursor::phase_state) of a rollout.
constexpr const char* k_physics_left = "physics_left";  // physics steps before the surrogate (re)takes over
}  // namespace

const char* to_string(RolloutWindow w) {
  switch (w) {
    case RolloutWindow::in_sample:
      return "in-sample";
    case RolloutWindow::heldout:
      return "held-out";
    case RolloutWindow::whole_run:
      return "whole run";
    case RolloutWindow::experiment:
      return "held-out experiment";
  }
  return "";
}

std::string RolloutPhase::describe_extra(const PhaseContext& /*ctx*/) const {
  return "";
}

void RolloutPhase::after_prediction(PhaseContext& /*ctx*/, VariantResult& /*r*/, PhysicsModel& /*physics*/,
                                    State& /*s*/, std::int64_t /*step*/) {}

bool RolloutPhase::run(PhaseContext& ctx, bool resumed) {
  VariantResult& r = ctx.result(name());
  auto& cur = ctx.cursor();
  const auto& cfg = ctx.config();
  const Precision precision = spec().precision.get(role::storage);
  PhaseTimer setup("campaign::setup");
  SurrogateModel& sur = ctx.surrogate();
  auto physics = ctx.make_physics(ctx.reference_precision());
  ctx.note_model(*physics);
  // The experiment it runs: 0, or a held-out one (campaign.surrogate.heldout_experiments).
  const int experiment = m_window == RolloutWindow::experiment ? spec().experiment : 0;
  r.experiment = experiment;
  physics->select_experiment(experiment);
  // Each rollout starts from the trained weights and inference state, so that its numbers do
  // not depend on the phases before it, and a resume inside a rollout can repeat the phase
  // from its start (a surrogate's inference state, e.g. fp8 delayed-scaling histories, is
  // not checkpointed mid-phase).
  sur.load(ctx.trained_path());
  sur.set_precision(precision);
  const int stride = sur.stride();
  // Probes are sampled where both the surrogate (every stride steps) and the physics'
  // probe stride have a sample. A rollout runs experiment 0, or the held-out experiment it is
  // scored on.
  const int trace_stride = std::lcm(stride, ctx.probes().stride);
  const std::int64_t horizon = cfg.surrogate.horizon < 0 ? cfg.steps : cfg.surrogate.horizon;
  r.precision_support = sur.precision_support(precision);
  // The model in one line: the surrogate's description continues with lines that are the same for
  // every rollout (the GEMM paths), which report.md shows once, in its "Surrogate" section.
  {
    const std::string d = sur.describe();
    r.description = d.substr(0, d.find('\n'));
  }
  // The window this rollout is scored on: the physics hands over at `start`, the rollout ends
  // at `end` (both sample steps or the horizon, so the reference has snapshots there).
  const TimeSplit split = ctx.surrogate_split();
  std::int64_t start = cfg.surrogate.start, end = horizon;
  if (m_window == RolloutWindow::in_sample) end = split.train_end;
  if (m_window == RolloutWindow::heldout) {
    start = split.heldout_begin;
    end = split.heldout_end;
  }
  r.window = m_window == RolloutWindow::experiment ? "held-out " + physics->experiment_name(experiment)
                                                   : std::string(to_string(m_window));
  r.handover_step = start;
  if (start > 0)
    r.description += "; the physics (" + std::string(to_string(cfg.reference_precision)) +
                     ") runs steps 0 to " + std::to_string(start) + ", the surrogate from there";
  if (m_window == RolloutWindow::experiment) {
    std::string trained;
    for (const int e : cfg.surrogate.train_experiments)
      trained += (trained.empty() ? "" : ", ") + physics->experiment_name(e);
    r.description +=
        "; held out: " + physics->experiment_name(experiment) + ", steps " + std::to_string(start) + " to " +
        std::to_string(end) +
        (cfg.surrogate.training == "online"
             ? ", which training never saw (it trained on " + trained + ")"
             : std::string(
                   ", not trained on in this campaign (the weights were loaded; the report's training "
                   "line gives their provenance)"));
  } else if (m_window == RolloutWindow::heldout)
    r.description += "; held out: scored on steps " + std::to_string(start) + " to " + std::to_string(end) +
                     ", which training never saw (it trained on steps " + std::to_string(split.train_begin) +
                     " to " + std::to_string(split.train_end) + ")";
  else if (cfg.surrogate.training == "online")
    r.description += std::string("; ") + (m_window == RolloutWindow::in_sample ? "in-sample" : "whole run") +
                     ": trained on steps " + std::to_string(split.train_begin) + " to " +
                     std::to_string(split.train_end);
  r.description += describe_extra(ctx);
  {
    // Untimed warm-up of the physics and the surrogate in this precision (see the physics
    // phase); the state is set below.
    // Not when resuming: a prediction may update inference state the checkpoint already
    // holds (fp8 delayed-scaling amax histories), and resume must repeat the run bit for bit.
    physics->initialize();
    if (!resumed) {
      State w = physics->state();
      sur.predict(w, 1);
    }
  }
  State s;
  if (resumed) {
    s = physics->state();
    const double t = ctx.load_checkpoint_state(s);
    physics->set_state(s, cur.step, t);
  } else {
    physics->initialize();
    s = physics->state();
  }
  r.time.setup += setup.stop();
  ctx.log(std::string(resumed ? "resuming " : "running ") + r.name);
  r.status = r.status == "failed" ? r.status : "running";
  // The free baselines (Baselines.hpp) predict from the hand-over state: its primary field h0
  // and the primary field one physics step before it, h0_old (the lead-in's last stride is split
  // to take it; without a lead-in h0_old = h0, and linear extrapolation is persistence). After a
  // resume they are not known (NaN): a rollout repeats from its start on resume anyway.
  HostField h0, h0_old;
  bool have_h0 = false;
  r.baseline_zero.clear();
  r.baseline_persistence.clear();
  r.baseline_linear.clear();
  auto primary = [&]() {
    return to_host(physics->state()[0].field, "mantissa::workflow::RolloutPhase::baseline");
  };
  if (!resumed && start == 0) {
    h0 = primary();
    h0_old = h0;
    have_h0 = true;
  }
  auto record = [&](std::int64_t step) {
    ctx.record(r, *physics, experiment, step, trace_stride, end, false);
    if (r.steps.size() <= r.baseline_zero.size()) return;  // no sample taken at this step
    PhaseTimer sb("campaign::baselines");
    double zero = std::nan(""), persistence = zero, linear = zero;
    if (have_h0 && step >= start) {
      const HostField& ref = ctx.reference_snapshot(experiment, step);
      const auto e = rollout_errors(ctx.comm(), ref, ref, h0, h0_old, step - start);
      zero = e.zero;
      persistence = e.persistence;
      linear = e.linear;
    }
    r.baseline_zero.resize(r.steps.size() - 1, std::nan(""));
    r.baseline_persistence.resize(r.steps.size() - 1, std::nan(""));
    r.baseline_linear.resize(r.steps.size() - 1, std::nan(""));
    r.baseline_zero.push_back(zero);
    r.baseline_persistence.push_back(persistence);
    r.baseline_linear.push_back(linear);
    r.time.analysis += sb.stop();
  };
  if (!resumed) {
    record(0);
    // The physics leads in to `start` through the hand-back branch below (as after a hybrid
    // hand-over), so every sample, probe row and checkpoint is taken as in the rest.
    cur.phase_state[k_physics_left] = start;
  }
  // The physics' constraint on the predictions (PhysicsModel::constrain: a flow's projection to a
  // divergence-free velocity): its measure before and after, over the predictions of this phase.
  Constraint constraint;
  std::int64_t constrained = 0;
  double before_max = 0.0, before_sum = 0.0, after_max = 0.0;
  ctx.energy_meter().start();
  const double dt = physics->dt();
  std::int64_t step = cur.step;
  bool stopped = false;
  auto progress = ctx.progress(r.name, end);
  while (r.status != "failed" && step < end) {
    std::int64_t& physics_left = cur.phase_state[k_physics_left];
    if (ctx.stop_requested()) {
      if (physics_left > 0) s = physics->state();
      cur.step = step;
      ctx.write_checkpoint(&s, double(step) * dt);
      stopped = true;
      break;
    }
    if (physics_left > 0) {
      PhaseTimer sw("campaign::rollout_physics");
      if (!have_h0 && physics_left == stride && !resumed) {
        // The last lead-in stride: one step short of the hand-over, keep the primary field.
        if (stride > 1) physics->step(stride - 1);
        sw.stop();
        h0_old = primary();
        PhaseTimer sw1("campaign::rollout_physics");
        physics->step(1);
        r.time.steps += sw.stop() + sw1.stop();
      } else {
        physics->step(stride);
        r.time.steps += sw.stop();
      }
      r.physics_steps += stride;
      physics_left -= stride;
      step += stride;
      if (physics_left == 0) {
        PhaseTimer sw2("campaign::hand_back");
        s = physics->state();  // hand the state back to the surrogate
        r.time.steps += sw2.stop();
        if (!have_h0 && !resumed) {
          h0 = to_host(s[0].field, "mantissa::workflow::RolloutPhase::baseline");
          have_h0 = true;
        }
      }
    } else {
      // One surrogate step per call so that every sample and probe step is seen (an
      // autoregressive block of K steps gives the same state).
      before_prediction(ctx, r, s, step);
      PhaseTimer sw("campaign::predict");
      sur.predict(s, 1);
      r.time.inference += sw.stop();
      ++r.surrogate_steps;
      step += stride;
      {
        // Part of what a prediction costs: its time is the surrogate's (inference).
        PhaseTimer sc("campaign::constrain");
        const Constraint c = physics->constrain(s, step, double(step) * dt);
        r.time.inference += sc.stop();
        if (c.applied()) {
          if (constrained == 0) constraint = c;
          ++constrained;
          before_max = std::fmax(before_max, c.before);
          before_sum += c.before;
          after_max = std::fmax(after_max, c.after);
        }
      }
      PhaseTimer sa("campaign::set_state");
      physics->set_state(s, step, double(step) * dt);
      r.time.analysis += sa.stop();
      after_prediction(ctx, r, *physics, s, step);
    }
    r.steps_done += stride;
    record(step);
    progress.update(step, double(step) * dt);
    bool due = false;
    for (int i = 0; i < stride; ++i) due = ctx.after_step() || due;
    if (due && r.status != "failed") {
      PhaseTimer io("campaign::checkpoint");
      cur.step = step;
      const State now = cur.get(k_physics_left) > 0 ? physics->state() : s;
      ctx.write_checkpoint(&now, double(step) * dt);
      r.time.io += io.stop();
    }
  }
  if (constrained > 0) {
    const std::string m = constraint.measure, n = constraint.name;
    r.set_metric(m + "_before_" + n + "_max", before_max);
    r.set_metric(m + "_before_" + n + "_mean", before_sum / double(constrained));
    r.set_metric(m + "_after_" + n + "_max", after_max);
    r.set_metric(n + "s", double(constrained), true);
    r.description += "; " + constraint.what + " (" + m + " L2 norm before it at most " + fmt_g(before_max) +
                     ", after it at most " + fmt_g(after_max) + ", over " + std::to_string(constrained) +
                     " predictions)";
  }
  const double joules = ctx.energy_meter().joules();
  if (joules >= 0.0) r.energy_joules = std::fmax(r.energy_joules, 0.0) + joules;
  const auto cost = physics->cost_per_step();
  r.cell_updates = cost.cell_updates * double(r.steps_done);
  r.bytes = cost.bytes * double(r.physics_steps);
  const double sflops = sur.flops_per_step();
  r.flops = (sflops > 0.0 ? sflops * double(r.surrogate_steps) : 0.0) + cost.flops * double(r.physics_steps);
  if (stopped) return false;
  ctx.finish(r, *physics);
  return true;
}

}  // namespace mantissa::workflow
