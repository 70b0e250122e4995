#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/StepTimer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

namespace mantissa::workflow {

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Linear interpolation between the order statistics of sorted data at quantile q in [0, 1].
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * double(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double f = pos - double(lo);
  return sorted[lo] + f * (sorted[hi] - sorted[lo]);
}

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Seconds of one stretch of n steps, the slowest rank's.
double timed_stretch(MPI_Comm comm, const TimingPlan& plan, const Stepper& s, std::int64_t n) {
  MPI_Barrier(comm);
  const double t0 = plan.cpu_time ? cpu_now() : now();
  s.advance(n);
  if (s.fence) s.fence();
  double local = plan.cpu_time ? (cpu_now() - t0) / std::max(plan.cpu_threads, 1) : now() - t0, global = 0.0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
  return global;
}
}  // namespace

TimingSummary summarize(std::vector<double> seconds_per_step, std::int64_t steps_per_repeat,
                        std::int64_t warmup_steps) {
  TimingSummary t;
  t.samples = seconds_per_step;
  t.steps_per_repeat = steps_per_repeat;
  t.warmup_steps = warmup_steps;
  if (seconds_per_step.empty()) return t;
  std::sort(seconds_per_step.begin(), seconds_per_step.end());
  t.min = seconds_per_step.front();
  t.max = seconds_per_step.back();
  t.median = quantile(seconds_per_step, 0.5);
  t.q1 = quantile(seconds_per_step, 0.25);
  t.q3 = quantile(seconds_per_step, 0.75);
  return t;
}

bool difference_within_noise(const TimingSummary& a, const TimingSummary& b) {
  if (a.samples.empty() || b.samples.empty()) return true;
  return a.min <= b.max && b.min <= a.max;
}

TimingSummary time_stepping(MPI_Comm comm, const TimingPlan& plan, const Stepper& stepper) {
  if (!stepper.advance) throw Error("time_stepping: no advance hook");
  if (plan.repeats < 1) throw Error("time_stepping: repeats must be at least 1");
  bool stopped = false;
  auto stop = [&] { return stopped = stopped || (stepper.stop && stepper.stop()); };
  auto start = [&] {
    if (stepper.reset) stepper.reset();
    if (plan.warmup_steps > 0 && !stop()) {
      stepper.advance(plan.warmup_steps);
      if (stepper.fence) stepper.fence();
    }
  };
  std::int64_t steps = plan.steps;
  std::vector<double> samples;
  start();
  if (steps <= 0 && !stopped) {
    // Doubling from one step until a stretch lasts min_seconds (the slowest rank decides, so
    // every rank chooses the same length); these probe stretches are not samples.
    steps = 1;
    while (steps < plan.max_steps && !stop()) {
      const double t = timed_stretch(comm, plan, stepper, steps);
      if (t >= plan.min_seconds) break;
      steps = std::min(plan.max_steps, steps * 2);
    }
    if (!stopped) start();
  }
  samples.reserve(static_cast<std::size_t>(plan.repeats));
  for (int r = 0; r < plan.repeats && !stopped; ++r) {
    if (r > 0 && stepper.reset) start();
    if (stop()) break;
    samples.push_back(timed_stretch(comm, plan, stepper, steps) / double(steps));
  }
  auto t = summarize(std::move(samples), std::max<std::int64_t>(steps, 0), plan.warmup_steps);
  t.stopped = stopped;
  return t;
}

InterleavedTiming time_stepping_interleaved(MPI_Comm comm, const TimingPlan& plan,
                                            const std::vector<Stepper>& steppers, std::int64_t first) {
  if (plan.repeats < 1) throw Error("time_stepping_interleaved: repeats must be at least 1");
  for (const auto& s : steppers)
    if (!s.advance) throw Error("time_stepping_interleaved: a stepper has no advance hook");
  InterleavedTiming out;
  const std::size_t n = steppers.size();
  if (n == 0) return out;
  const auto& poll = steppers.front().stop;
  bool stopped = false;
  auto stop = [&] { return stopped = stopped || (poll && poll()); };
  auto start = [&](const Stepper& s) {
    if (s.reset) s.reset();
    if (plan.warmup_steps > 0 && !stop()) {
      s.advance(plan.warmup_steps);
      if (s.fence) s.fence();
    }
  };
  // Stretch lengths: the plan's, or each stepper's own from the doubling probe.
  std::vector<std::int64_t> steps(n, plan.steps);
  for (std::size_t i = 0; i < n && !stopped; ++i) {
    if (steps[i] > 0) continue;
    start(steppers[i]);
    std::int64_t k = 1;
    while (k < plan.max_steps && !stop()) {
      if (timed_stretch(comm, plan, steppers[i], k) >= plan.min_seconds) break;
      k = std::min(plan.max_steps, k * 2);
    }
    steps[i] = k;
  }
  std::vector<std::vector<double>> samples(n);
  for (int r = 0; r < plan.repeats && !stopped; ++r)
    for (std::size_t j = 0; j < n; ++j) {
      if (std::int64_t(r) * std::int64_t(n) + std::int64_t(j) < first) continue;  // done before a resume
      const std::size_t i = interleaved_stepper(r, j, n);
      start(steppers[i]);
      if (stop()) break;
      samples[i].push_back(timed_stretch(comm, plan, steppers[i], steps[i]) / double(steps[i]));
      out.order.push_back(static_cast<int>(i));
      if (steppers[i].recorded) steppers[i].recorded();
    }
  for (std::size_t i = 0; i < n; ++i) {
    out.summaries.push_back(
        summarize(std::move(samples[i]), std::max<std::int64_t>(steps[i], 0), plan.warmup_steps));
    out.summaries.back().stopped = stopped;
  }
  out.stopped = stopped;
  return out;
}

}  // namespace mantissa::workflow
