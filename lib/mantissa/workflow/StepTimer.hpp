#pragma once
// Timing a variant's stepping the way a performance engineer accepts it (STYLE.md #20; Google
// Benchmark's repetitions and aggregates): a warm-up first, then the stepping timed as a whole
// over a stretch of many steps (one fence at the end, not one per step), several repeats, and the
// median with the spread. Nothing else (recording, comparisons, checkpoints) runs inside a timed
// stretch. Every rank times the same stretch between barriers; a repeat's time is the slowest
// rank's, since the step is done when the last rank is.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mantissa::workflow {

// Seconds per step over the repeats.
struct TimingSummary {
  std::vector<double> samples;        // seconds per step, one per repeat, in the order run
  std::int64_t steps_per_repeat = 0;  // steps in each timed stretch
  std::int64_t warmup_steps = 0;      // untimed steps before the first stretch
  double median = 0.0, min = 0.0, max = 0.0, q1 = 0.0, q3 = 0.0;
  bool stopped = false;  // Stepper::stop said so before all repeats ran; samples has those that did
  int repeats() const { return static_cast<int>(samples.size()); }
  // (max - min) / median: 0.1 = the repeats span 10% of the median.
  double relative_spread() const { return median > 0.0 ? (max - min) / median : 0.0; }
};

// Median and quartiles (linear interpolation between order statistics, as numpy's default),
// min and max of seconds-per-step samples.
TimingSummary summarize(std::vector<double> seconds_per_step, std::int64_t steps_per_repeat = 0,
                        std::int64_t warmup_steps = 0);

// Whether `variant` being faster or slower than `baseline` is inside the noise: their ranges
// [min, max] overlap, so some repeat of one is as fast as some repeat of the other.
bool difference_within_noise(const TimingSummary& baseline, const TimingSummary& variant);

struct TimingPlan {
  int repeats = 5;                  // timed stretches
  std::int64_t warmup_steps = 5;    // untimed steps before them (after each reset)
  std::int64_t steps = 0;           // steps per stretch; 0: enough for min_seconds
  double min_seconds = 0.05;        // with steps = 0: a stretch lasts at least this long
  std::int64_t max_steps = 100000;  // with steps = 0: never more steps per stretch than this
  // Process CPU time divided by `cpu_threads` instead of wall time: on a shared, loaded machine it
  // counts only the time this process ran (caches and memory are still shared: for comparing
  // variants with each other, never for a report's speed column).
  bool cpu_time = false;
  int cpu_threads = 1;
};

// Hooks of the thing being timed. reset: back to a start state (untimed; may be empty);
// advance(n): n steps; fence: wait until they are complete (device back-ends; may be empty);
// stop: polled before every warm-up and every stretch, the points where stopping costs no
// measurement half done (a stop signal, the wall-time limit); it must answer the same on every
// rank (collective, as PhaseContext::stop_requested is); may be empty.
struct Stepper {
  std::function<void()> reset;
  std::function<void(std::int64_t)> advance;
  std::function<void()> fence;
  std::function<bool()> stop;
  // time_stepping_interleaved: called after each recorded stretch (the campaign's progress).
  std::function<void()> recorded = {};
};

// Collective over comm. Runs reset, warm-up, then `repeats` stretches (each after a reset when
// one is given, and its warm-up), and returns seconds per step. With plan.steps = 0 the stretch
// length is chosen from the warm-up's speed (doubling until min_seconds is reached), the same on
// every rank. When stepper.stop says so it returns at once with the repeats done so far and
// `stopped` set.
TimingSummary time_stepping(MPI_Comm comm, const TimingPlan& plan, const Stepper& stepper);

// Several things timed against each other (the campaign's physics variants), interleaved:
// round r runs stretch r of every stepper in turn (each after its own reset and warm-up), so a
// load burst on a shared machine lands on every variant's samples alike instead of on the one
// variant that happened to be running (issue 11: timed one variant after another, a burst during
// the reference's stretches made fp32 look 5.5x faster, unmarked). The order within a round
// rotates: round r starts with stepper r mod n (interleaved_stepper), so over n rounds every
// stepper runs once in every place of a round, and neither a load that recurs with the rounds'
// period nor what the previous stretch left in the caches falls on one stepper only (a fixed
// order put one variant always right after the same other one). bench/solvers times the same
// way. With plan.steps = 0 each stepper's stretch length is found first (time_stepping's
// doubling, one stepper after another; those probes are not samples).
// The stepper that runs j-th (0-based) in round r of n steppers: (r + j) mod n.
constexpr std::size_t interleaved_stepper(int round, std::size_t j, std::size_t n) {
  return (static_cast<std::size_t>(round) % n + j) % n;
}

struct InterleavedTiming {
  std::vector<TimingSummary> summaries;  // one per stepper, in the steppers' order
  std::vector<int> order;                // the stepper of every timed stretch, in the order run
  bool stopped = false;                  // a stop came before every stretch ran
};
// Collective over comm. The stop hook of steppers[0] is polled before every warm-up and every
// stretch (the others' are not used); on a stop every summary keeps the stretches it had.
// `first` > 0 continues a sequence stopped after that many stretches (a resumed campaign): the
// stretches before it are not run, and `order` and the summaries hold only the new ones.
InterleavedTiming time_stepping_interleaved(MPI_Comm comm, const TimingPlan& plan,
                                            const std::vector<Stepper>& steppers, std::int64_t first = 0);

}  // namespace mantissa::workflow
