// The step timer (median, quartiles, spread, noise test; repeats, warm-up and resets in the
// order promised) and the machine bounds measured in the job (triad, launch cost). No timing is
// asserted: only structure and what holds on any machine at any load.
#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/StepTimer.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace mantissa;
using namespace mantissa::workflow;

TEST(StepTimer, MedianQuartilesAndSpread) {
  const auto t = summarize({5.0, 1.0, 4.0, 2.0, 3.0}, 100, 7);
  EXPECT_DOUBLE_EQ(t.median, 3.0);
  EXPECT_DOUBLE_EQ(t.min, 1.0);
  EXPECT_DOUBLE_EQ(t.max, 5.0);
  EXPECT_DOUBLE_EQ(t.q1, 2.0);
  EXPECT_DOUBLE_EQ(t.q3, 4.0);
  EXPECT_DOUBLE_EQ(t.relative_spread(), 4.0 / 3.0);
  EXPECT_EQ(t.repeats(), 5);
  EXPECT_EQ(t.steps_per_repeat, 100);
  EXPECT_EQ(t.warmup_steps, 7);
  // Samples kept in the order run.
  EXPECT_DOUBLE_EQ(t.samples[0], 5.0);
  const auto even = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_DOUBLE_EQ(even.q1, 1.75);
  EXPECT_DOUBLE_EQ(even.q3, 3.25);
}

TEST(StepTimer, NoiseIsOverlapOfTheRanges) {
  const auto a = summarize({1.0, 1.1, 1.2});
  EXPECT_TRUE(difference_within_noise(a, summarize({1.15, 1.3, 1.4})));
  EXPECT_FALSE(difference_within_noise(a, summarize({0.5, 0.6, 0.7})));
  EXPECT_FALSE(difference_within_noise(a, summarize({1.21, 1.3})));
  EXPECT_TRUE(difference_within_noise(a, TimingSummary{}));  // nothing measured: not a speed-up
}

TEST(StepTimer, WarmsUpResetsAndTimesWholeStretches) {
  std::vector<std::string> calls;
  Stepper s;
  s.reset = [&] { calls.push_back("reset"); };
  s.advance = [&](std::int64_t n) { calls.push_back("advance " + std::to_string(n)); };
  s.fence = [&] { calls.push_back("fence"); };
  TimingPlan plan;
  plan.repeats = 3;
  plan.warmup_steps = 2;
  plan.steps = 50;
  const auto t = time_stepping(MPI_COMM_WORLD, plan, s);
  ASSERT_EQ(t.repeats(), 3);
  EXPECT_EQ(t.steps_per_repeat, 50);
  const std::vector<std::string> one = {"reset", "advance 2", "fence", "advance 50", "fence"};
  std::vector<std::string> want;
  for (int r = 0; r < 3; ++r) want.insert(want.end(), one.begin(), one.end());
  EXPECT_EQ(calls, want);
  for (double x : t.samples) EXPECT_GE(x, 0.0);
  EXPECT_LE(t.min, t.median);
  EXPECT_LE(t.median, t.max);
}

// A stop is honoured before the next warm-up or stretch, not after all the repeats: here it
// arrives during the second stretch, so the third never starts and two samples come back.
TEST(StepTimer, StopsAtTheNextStretchWhenAskedTo) {
  int stretches = 0;
  bool signalled = false;
  Stepper s;
  s.reset = [] {};
  s.advance = [&](std::int64_t n) {
    if (n == 50 && ++stretches == 2) signalled = true;  // the signal arrives inside stretch 2
  };
  s.stop = [&] { return signalled; };
  TimingPlan plan;
  plan.repeats = 5;
  plan.warmup_steps = 2;
  plan.steps = 50;
  const auto t = time_stepping(MPI_COMM_WORLD, plan, s);
  EXPECT_TRUE(t.stopped);
  EXPECT_EQ(stretches, 2);
  EXPECT_EQ(t.repeats(), 2);
  // Without a stop, all five.
  signalled = false;
  stretches = 0;
  s.stop = [] { return false; };
  const auto all = time_stepping(MPI_COMM_WORLD, plan, s);
  EXPECT_FALSE(all.stopped);
  EXPECT_EQ(all.repeats(), 5);
}

TEST(StepTimer, ChoosesTheStretchFromMinSeconds) {
  std::int64_t total = 0;
  Stepper s;
  // Each step takes at least 1 ms, so 16 steps always reach 10 ms; a slow machine may stop earlier.
  s.advance = [&](std::int64_t n) {
    total += n;
    std::this_thread::sleep_for(std::chrono::milliseconds(n));
  };
  TimingPlan plan;
  plan.repeats = 2;
  plan.warmup_steps = 1;
  plan.steps = 0;
  plan.min_seconds = 0.01;
  const auto t = time_stepping(MPI_COMM_WORLD, plan, s);
  EXPECT_GE(t.steps_per_repeat, 1);
  EXPECT_LE(t.steps_per_repeat, 16);
  EXPECT_EQ(t.repeats(), 2);
  for (double x : t.samples) EXPECT_GE(x, 1e-3);  // sleep_for sleeps at least as long as asked
  EXPECT_THROW(time_stepping(MPI_COMM_WORLD, plan, Stepper{}), Error);
}

// Several steppers timed against each other: round r runs stretch r of every stepper in turn (its
// reset, warm-up, stretch), never all of one stepper's stretches in a row, the order rotated so
// that round r starts with stepper r mod n (over n rounds every stepper runs once in every place
// of a round, and never always after the same other one), and `order` says so.
TEST(StepTimer, InterleavesTheSteppersRoundByRound) {
  std::vector<std::string> calls;
  std::vector<Stepper> steppers(3);
  for (int i = 0; i < 3; ++i) {
    const std::string id = std::string(1, char('a' + i));
    steppers[std::size_t(i)].reset = [&calls, id] { calls.push_back(id + " reset"); };
    steppers[std::size_t(i)].advance = [&calls, id](std::int64_t n) {
      calls.push_back(id + " advance " + std::to_string(n));
    };
  }
  TimingPlan plan;
  plan.repeats = 4;
  plan.warmup_steps = 3;
  plan.steps = 20;
  const auto t = time_stepping_interleaved(MPI_COMM_WORLD, plan, steppers);
  std::vector<std::string> want;
  const std::vector<std::vector<const char*>> rounds{
      {"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"a", "b", "c"}};
  for (const auto& round : rounds)
    for (const char* id : round)
      for (const char* what : {" reset", " advance 3", " advance 20"}) want.push_back(std::string(id) + what);
  EXPECT_EQ(calls, want);
  EXPECT_EQ(t.order, (std::vector<int>{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}));
  // In the first n rounds every stepper holds every place of a round once.
  for (int i = 0; i < 3; ++i) {
    std::vector<int> places;
    for (int k = 0; k < 9; ++k)
      if (t.order[std::size_t(k)] == i) places.push_back(k % 3);
    std::sort(places.begin(), places.end());
    EXPECT_EQ(places, (std::vector<int>{0, 1, 2})) << "stepper " << i;
  }
  for (std::size_t k = 0; k < t.order.size(); ++k)
    EXPECT_EQ(std::size_t(t.order[k]), interleaved_stepper(int(k / 3), k % 3, 3));
  EXPECT_EQ(interleaved_stepper(7, 0, 1), 0u);
  EXPECT_FALSE(t.stopped);
  ASSERT_EQ(t.summaries.size(), 3u);
  for (const auto& s : t.summaries) {
    EXPECT_EQ(s.repeats(), 4);
    EXPECT_EQ(s.steps_per_repeat, 20);
    EXPECT_EQ(s.warmup_steps, 3);
    EXPECT_LE(s.min, s.max);
  }
  EXPECT_THROW(time_stepping_interleaved(MPI_COMM_WORLD, plan, {Stepper{}}), Error);
}

// A stop in the middle of a round: the steppers before it in that round (round 1: b, then c,
// then a) have one stretch more than those after it; nothing runs after the stop.
TEST(StepTimer, InterleavedStopsAtTheNextStretch) {
  int stretches = 0;
  bool signalled = false;
  std::vector<Stepper> steppers(3);
  for (auto& s : steppers) {
    s.reset = [] {};
    s.advance = [&](std::int64_t n) {
      if (n == 10 && ++stretches == 5) signalled = true;  // during round 1's second stretch
    };
  }
  steppers[0].stop = [&] { return signalled; };
  TimingPlan plan;
  plan.repeats = 4;
  plan.warmup_steps = 1;
  plan.steps = 10;
  const auto t = time_stepping_interleaved(MPI_COMM_WORLD, plan, steppers);
  EXPECT_TRUE(t.stopped);
  EXPECT_EQ(stretches, 5);
  EXPECT_EQ(t.order, (std::vector<int>{0, 1, 2, 1, 2}));
  ASSERT_EQ(t.summaries.size(), 3u);
  EXPECT_EQ(t.summaries[0].repeats(), 1);
  EXPECT_EQ(t.summaries[1].repeats(), 2);
  EXPECT_EQ(t.summaries[2].repeats(), 2);
}

// A resumed sequence (first = stretches done before the stop) runs only the rest, in the same
// interleaved, rotated order (places 5..8: the last of round 1 (a), then round 2: c, a, b).
TEST(StepTimer, InterleavedContinuesAfterTheStretchesDone) {
  std::vector<int> ran;
  std::vector<Stepper> steppers(3);
  for (int i = 0; i < 3; ++i)
    steppers[std::size_t(i)].advance = [&ran, i](std::int64_t n) {
      if (n == 10) ran.push_back(i);
    };
  TimingPlan plan;
  plan.repeats = 3;
  plan.warmup_steps = 1;
  plan.steps = 10;
  const auto t = time_stepping_interleaved(MPI_COMM_WORLD, plan, steppers, 5);
  EXPECT_EQ(ran, (std::vector<int>{0, 2, 0, 1}));
  EXPECT_EQ(t.order, ran);
  EXPECT_EQ(t.summaries[0].repeats(), 2);
  EXPECT_EQ(t.summaries[1].repeats(), 1);
  EXPECT_EQ(t.summaries[2].repeats(), 1);
}

TEST(Machine, TriadAndLaunchAreMeasured) {
  const auto t = measure_triad(MPI_COMM_WORLD, std::size_t(1) << 20, 3);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  EXPECT_EQ(t.ranks, ranks);
  EXPECT_EQ(t.elements, std::size_t(1) << 20);
  EXPECT_EQ(t.repeats, 3);
  EXPECT_TRUE(std::isfinite(t.total_gbs));
  EXPECT_GT(t.total_gbs, 0.0);
  EXPECT_GT(t.seconds, 0.0);
  EXPECT_LE(t.rank_gbs_min, t.rank_gbs_max);
  EXPECT_GE(t.total_gbs, t.median_total_gbs);  // best repeat against the median one
  EXPECT_FALSE(t.where.empty());
  const double launch = measure_launch_seconds(MPI_COMM_WORLD, 20);
  EXPECT_GT(launch, 0.0);
}

}  // namespace
