// A surrogate rollout in one precision: the reference-precision physics leads in to
// campaign.surrogate.start, the surrogate steps from there to the horizon, every step recorded
// against the reference as a physics variant is. HybridPhase (HybridPhase.cpp) adds its error
// indicator through the after_prediction() hook.
#include <mantissa/workflow/RolloutPhase.hpp>

#include <cmath>
#include <numeric>

namespace mantissa::workflow {

namespace {
// Cursor keys (Cursor::phase_state) of a rollout.
constexpr const char* k_physics_left = "physics_left";  // physics steps before the surrogate (re)takes over
}  // namespace

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
  // Each rollout starts from the trained weights and inference state, so that its numbers do
  // not depend on the phases before it, and a resume inside a rollout can repeat the phase
  // from its start (a surrogate's inference state, e.g. fp8 delayed-scaling histories, is
  // not checkpointed mid-phase).
  sur.load(ctx.trained_path());
  sur.set_precision(precision);
  const int stride = sur.stride();
  // Probes are sampled where both the surrogate (every stride steps) and the physics'
  // probe stride have a sample. Rollouts run experiment 0 only (the surrogate learned it).
  const int trace_stride = std::lcm(stride, ctx.probes().stride);
  const std::int64_t horizon = cfg.surrogate.horizon < 0 ? cfg.steps : cfg.surrogate.horizon;
  r.precision_support = sur.precision_support(precision);
  r.description = sur.describe();
  const std::int64_t start = cfg.surrogate.start;
  if (start > 0)
    r.description += "; the physics (" + std::string(to_string(cfg.reference_precision)) +
                     ") runs steps 0 to " + std::to_string(start) + ", the surrogate from there";
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
  auto record = [&](std::int64_t step) { ctx.record(r, *physics, 0, step, trace_stride, horizon, false); };
  if (!resumed) {
    record(0);
    // The physics leads in to `start` through the hand-back branch below (as after a hybrid
    // hand-over), so every sample, probe row and checkpoint is taken as in the rest.
    cur.phase_state[k_physics_left] = start;
  }
  ctx.energy_meter().start();
  const double dt = physics->dt();
  std::int64_t step = cur.step;
  bool stopped = false;
  auto progress = ctx.progress(r.name, horizon);
  while (r.status != "failed" && step < horizon) {
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
      physics->step(stride);
      r.time.steps += sw.stop();
      r.physics_steps += stride;
      physics_left -= stride;
      step += stride;
      if (physics_left == 0) {
        PhaseTimer sw2("campaign::hand_back");
        s = physics->state();  // hand the state back to the surrogate
        r.time.steps += sw2.stop();
      }
    } else {
      // One surrogate step per call so that every sample and probe step is seen (an
      // autoregressive block of K steps gives the same state).
      PhaseTimer sw("campaign::predict");
      sur.predict(s, 1);
      r.time.inference += sw.stop();
      ++r.surrogate_steps;
      step += stride;
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
