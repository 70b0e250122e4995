// The speed column: every physics variant's stepping timed in interleaved stretches.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/SpeedPhase.hpp>
#include <mantissa/workflow/StepTimer.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>

namespace mantissa::workflow {

namespace {
SubnormalMode mode_of(bool flush) {
  return flush ? SubnormalMode::flush : SubnormalMode::keep;
}

// The subnormal mode a physics phase stepped under (PhysicsPhase::subnormal_mode): the variant's
// own flush_subnormals, else the campaign's.
SubnormalMode mode_for(const CampaignConfig& cfg, const std::string& name) {
  for (const auto& v : cfg.variants)
    if (v.name == name && v.flush_subnormals) return mode_of(*v.flush_subnormals);
  return mode_of(cfg.flush_subnormals);
}

std::string ms(double seconds) {
  std::ostringstream os;
  os.precision(3);
  os << seconds * 1e3;
  return os.str();
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The cursor's phase_state key: timed stretches done before a stop (interleaved order).
const char* const k_stretches_done = "speed_stretches_done";

struct Subject {
  VariantResult* result = nullptr;
  std::unique_ptr<PhysicsModel> model;
  SubnormalMode mode = SubnormalMode::flush;
  double seconds = 0.0;  // wall time of its resets, warm-ups and stretches (phases_s.timing)
};
}  // namespace

SpeedPhase::SpeedPhase(PhaseSpec spec, bool timing_only)
    : Phase(std::move(spec)), m_timing_only(timing_only) {}

bool SpeedPhase::run(PhaseContext& ctx, bool resumed) {
  const auto& cfg = ctx.config();
  const auto& t = cfg.timing;
  if (t.repeats < 1) return true;
  auto& cur = ctx.cursor();
  // A resume continues the sequence after the stretches done before the stop (their samples are
  // in the checkpointed results); a fresh start has none.
  const std::int64_t done = resumed ? cur.get(k_stretches_done) : 0;
  PhaseTimer setup("campaign::setup");
  std::vector<Subject> subjects;
  for (const auto& s : spec().subjects) {
    VariantResult& r = ctx.result(s.name);
    if (r.status == "failed") continue;  // its stepping is not finite: nothing to time
    if (done == 0) {
      r.timed_seconds_per_step.clear();
      r.timed_sequence.clear();
    }
    Subject x;
    x.result = &r;
    x.mode = mode_for(cfg, s.name);
    apply_float_env(x.mode);
    x.model = ctx.make_physics(s.precision);
    x.model->select_experiment(0);
    x.model->initialize();
    subjects.push_back(std::move(x));
  }
  const double setup_s = setup.stop();
  if (subjects.empty()) return true;
  for (auto& x : subjects) x.result->time.setup += setup_s / double(subjects.size());

  // The same trajectory as the accuracy run (experiment 0 from its initial state), so the timed
  // steps see the same fields (the same subnormals, the same wave in the absorbing layers).
  const std::int64_t warmup = std::max<std::int64_t>(0, std::min(t.warmup_steps, cfg.steps - 1));
  const std::int64_t rest = cfg.steps - warmup;
  TimingPlan plan;
  plan.repeats = t.repeats;
  plan.warmup_steps = warmup;
  plan.steps = t.steps > 0 ? std::min(t.steps, rest) : rest;
  ctx.log(
      "timing " + std::to_string(subjects.size()) + " variants interleaved: " + std::to_string(plan.repeats) +
      " rounds (round r starts with variant r mod n) of one stretch of " + std::to_string(plan.steps) +
      " steps per variant, each after " + std::to_string(warmup) + " untimed steps from the initial state");
  std::vector<Stepper> steppers;
  for (auto& x : subjects) {
    Stepper s;
    Subject* p = &x;
    s.reset = [p] {
      const double t0 = now();
      apply_float_env(p->mode);
      p->model->initialize();
      p->seconds += now() - t0;
    };
    s.advance = [p](std::int64_t n) {
      const double t0 = now();
      p->model->step(n);
      p->seconds += now() - t0;
    };
    s.fence = [] { fence("mantissa::workflow::SpeedPhase::timing"); };
    // A stop (signal, wall-time limit) is honoured before the next warm-up or stretch (below).
    s.stop = [&ctx] { return ctx.stop_requested(); };
    s.recorded = [&ctx] { ctx.note_progress(); };
    steppers.push_back(std::move(s));
  }
  if (done > 0) ctx.log("timing continues after stretch " + std::to_string(done) + " (resumed)");
  const InterleavedTiming timing = time_stepping_interleaved(ctx.comm(), plan, steppers, done);
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    VariantResult& r = *subjects[i].result;
    const auto& sum = timing.summaries[i];
    r.timed_seconds_per_step.insert(r.timed_seconds_per_step.end(), sum.samples.begin(), sum.samples.end());
    r.timed_steps_per_repeat = sum.steps_per_repeat;
    r.timed_warmup_steps = sum.warmup_steps;
    for (std::size_t k = 0; k < timing.order.size(); ++k)
      if (timing.order[k] == static_cast<int>(i))
        r.timed_sequence.push_back(done + static_cast<std::int64_t>(k));
  }
  if (timing.stopped) {
    // Stopped between two stretches (a signal, the wall-time limit): a checkpoint without a
    // running state that says how many stretches are done; --resume continues with the next.
    const std::int64_t now_done = done + static_cast<std::int64_t>(timing.order.size());
    for (auto& x : subjects) x.result->time.timing += x.seconds;
    cur.phase_state[k_stretches_done] = now_done;
    ctx.write_checkpoint(nullptr, 0.0);
    ctx.log("timing stopped after " + std::to_string(now_done) + " of " +
            std::to_string(plan.repeats * static_cast<int>(subjects.size())) + " stretches (" +
            ctx.stop_reason() + "); --resume continues with the next stretch");
    return false;
  }
  for (auto& x : subjects) {
    VariantResult& r = *x.result;
    const auto sum = summarize(r.timed_seconds_per_step);  // with the stretches before a resume
    {
      // The fixed part of a step, in the same job, right after: the physics' own (exchanges,
      // fills) and one launch + fence; the slowest rank's.
      const double t0 = now();
      apply_float_env(x.mode);
      double fixed = x.model->fixed_step_seconds(), gfixed = 0.0;
      MPI_Allreduce(&fixed, &gfixed, 1, MPI_DOUBLE, MPI_MAX, ctx.comm());
      r.fixed_step_seconds = gfixed;
      r.launch_seconds = measure_launch_seconds(ctx.comm());
      x.seconds += now() - t0;
      ctx.log("timed " + r.name + ": " + ms(sum.median) + " ms/step median [" + ms(sum.min) + " - " +
              ms(sum.max) + "] of " + std::to_string(sum.repeats()) + "; fixed part " +
              (gfixed >= 0 ? ms(gfixed) : std::string("n/a")) + " ms, launch " + ms(r.launch_seconds) +
              " ms");
    }
    r.time.timing += x.seconds;
    if (m_timing_only) {
      // The timed steps are this variant's steps: the speed column's per-step traffic and rates.
      const auto cost = x.model->cost_per_step();
      double seconds = 0.0;
      for (double s : r.timed_seconds_per_step) seconds += s * double(r.timed_steps_per_repeat);
      r.steps_done = std::int64_t(r.timed_seconds_per_step.size()) * r.timed_steps_per_repeat;
      r.time.steps = seconds;
      r.cell_updates = cost.cell_updates * double(r.steps_done);
      r.bytes = cost.bytes * double(r.steps_done);
      r.flops = cost.flops * double(r.steps_done);
    }
  }
  if (m_timing_only) {
    const double hwm = memory_hwm_mib(ctx.comm());  // every variant's model was alive here
    for (auto& x : subjects) x.result->memory_hwm_mib = hwm;
  }
  return true;
}

void SpeedPhase::after(PhaseContext& ctx) {
  // The phases after this one (surrogate training, rollouts, the hybrid) run in the campaign's mode.
  apply_float_env(mode_of(ctx.config().flush_subnormals));
}

}  // namespace mantissa::workflow
