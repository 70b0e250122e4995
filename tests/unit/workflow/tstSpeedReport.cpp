// The campaign's speed column (issue 11) with the test physics of TestModels.hpp, at 1 and 2
// ranks: every physics variant is timed as whole stretches after its accuracy run (median,
// spread), the measured memory bound and the fraction of it are in the report for every
// variant, the fixed part of the step is measured and the warning follows it, the subnormal
// mode is applied per variant (a variant may override the campaign's) and stated, the census
// is taken at every sample step and counts exactly, and the timing leaves every accuracy number
// bit for bit as a run without it. Timings themselves are never asserted.
#include "TestModels.hpp"
#include "TestScratch.hpp"

#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/CampaignKinds.hpp>
#include <mantissa/workflow/Report.hpp>
#include <mantissa/workflow/RolloutReport.hpp>
#include <mantissa/workflow/RunDirectory.hpp>
#include <mantissa/workflow/SubnormalCensus.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace mw = mantissa::workflow;
namespace fs = std::filesystem;
using mantissa::Precision;

namespace {

using mantissa::workflow::test::rank_of_world;

std::string scratch(const std::string& name) {
  return mantissa::workflow::test::scratch("speed", name);
}

mantissa::Grid grid() {
  return mantissa::workflow::test::periodic_grid();
}

mw::PrecisionSet fp32() {
  return {{mw::role::storage, Precision::fp32}, {mw::role::compute, Precision::fp32}};
}

mw::CampaignConfig config() {
  mw::CampaignConfig c;
  c.physics = "testwave";
  c.steps = 40;
  c.sample_every = 10;
  c.error_threshold = 1e-3;
  c.variants = {{"fp32", fp32()}, {"fp32-keep", fp32(), false}};
  c.surrogate.enabled = true;
  c.surrogate.model = "linear";
  c.surrogate.rollout = {Precision::fp32};
  c.timing.repeats = 3;
  c.timing.warmup_steps = 2;
  c.deck_hash = "test";
  return c;
}

struct Run {
  std::vector<mw::VariantResult> results;
  std::string json, md;
};

Run run(const mw::CampaignConfig& cfg, const std::string& dir) {
  const auto reg = mw::test::test_registry();
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid());
  mw::RunDirectory rd(MPI_COMM_WORLD, dir, mw::RunMode::overwrite);
  rd.commit();
  mw::Campaign c(cfg, reg, {nullptr, &decomp}, dir, false);
  EXPECT_EQ(c.run(), mw::Campaign::Outcome::finished);
  Run r;
  r.results = c.results();
  mw::ReportInfo info;
  info.machine = mw::machine_info(MPI_COMM_WORLD);
  mw::write_report(c, info, dir);
  if (rank_of_world() == 0) {
    std::stringstream a, b;
    a << std::ifstream(dir + "/report.json").rdbuf();
    b << std::ifstream(dir + "/report.md").rdbuf();
    r.json = a.str();
    r.md = b.str();
  }
  return r;
}

const mw::VariantResult& by_name(const Run& r, const std::string& name) {
  for (const auto& v : r.results)
    if (v.name == name) return v;
  throw std::runtime_error("no variant " + name);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// +-0 on the bits: under denormals-are-zero (the campaign leaves its mode on this thread) a
// subnormal compares equal to 0.0.
bool is_zero_bits(double x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return (u & ~(std::uint64_t(1) << 63)) == 0;
}

bool host_mode_settable() {
  return std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value &&
         mantissa::host_float_env_controllable();
}

TEST(SpeedReport, EveryPhysicsVariantIsTimedWithSpreadBoundAndFraction) {
  const auto r = run(config(), scratch("timed"));
  const auto& ref = by_name(r, "reference");
  // The bound, measured once, before the first variant stepped.
  ASSERT_GT(ref.triad_gbs, 0.0);
  EXPECT_TRUE(std::isfinite(ref.triad_gbs));
  EXPECT_GE(ref.triad_gbs, ref.triad_median_gbs);  // best of the repeats
  EXPECT_FALSE(ref.triad_where.empty());
  for (const std::string name : {"reference", "fp32", "fp32-keep"}) {
    SCOPED_TRACE(name);
    const auto& v = by_name(r, name);
    EXPECT_EQ(v.status, "ok");
    ASSERT_EQ(v.timed_seconds_per_step.size(), 3u);
    EXPECT_EQ(v.timed_warmup_steps, 2);
    EXPECT_EQ(v.timed_steps_per_repeat, 38);  // the rest of the run after the warm-up
    EXPECT_EQ(v.steps_done, 40);              // the timed steps are not counted as campaign steps
    const auto sp = mw::speed_summary(v, ref);
    ASSERT_TRUE(sp.timed);
    EXPECT_EQ(sp.time_per_step, sp.timing.median);
    EXPECT_LE(sp.timing.min, sp.timing.q1);
    EXPECT_LE(sp.timing.q1, sp.timing.median);
    EXPECT_LE(sp.timing.median, sp.timing.q3);
    EXPECT_LE(sp.timing.q3, sp.timing.max);
    EXPECT_GT(sp.timing.min, 0.0);
    EXPECT_GT(sp.in_run_time_per_step, 0.0);
    EXPECT_EQ(sp.triad_gbs, ref.triad_gbs);
    ASSERT_GT(sp.bandwidth_gbs, 0.0);
    EXPECT_DOUBLE_EQ(sp.bandwidth_fraction, sp.bandwidth_gbs / ref.triad_gbs);
    // The test physics has no fixed-cost hook: the campaign measured one launch + fence.
    EXPECT_LT(v.fixed_step_seconds, 0.0);
    ASSERT_GT(v.launch_seconds, 0.0);
    EXPECT_EQ(sp.fixed_step_seconds, v.launch_seconds);
    EXPECT_DOUBLE_EQ(sp.fixed_fraction, v.launch_seconds / sp.time_per_step);
    EXPECT_EQ(sp.warning.empty(), sp.fixed_fraction < mw::fixed_cost_warning_fraction);
    if (!sp.warning.empty()) {
      EXPECT_NE(sp.warning.find(name), std::string::npos);
    }
    if (name == "reference") {
      EXPECT_EQ(sp.speedup, 1.0);
      EXPECT_FALSE(sp.speedup_within_noise);
    } else {
      EXPECT_DOUBLE_EQ(sp.speedup, mw::speed_summary(ref, ref).time_per_step / sp.time_per_step);
      EXPECT_EQ(sp.speedup_within_noise,
                mw::difference_within_noise(mw::speed_summary(ref, ref).timing, sp.timing));
    }
  }
  // A surrogate rollout is not timed in stretches: its predictions' inference time per simulated
  // step, placed against the reference's timed median, never against its in-run time.
  const auto& sur = by_name(r, "surrogate-fp32");
  EXPECT_TRUE(sur.timed_seconds_per_step.empty());
  const auto ssp = mw::speed_summary(sur, ref);
  EXPECT_FALSE(ssp.timed);
  EXPECT_EQ(ssp.method, "predictions");
  ASSERT_GT(sur.surrogate_steps, 0);
  EXPECT_DOUBLE_EQ(ssp.time_per_step, sur.time.inference / double(sur.steps_done - sur.physics_steps));
  const double ref_median = mw::summarize(ref.timed_seconds_per_step).median;
  EXPECT_EQ(ssp.reference_time_per_step, ref_median);
  EXPECT_DOUBLE_EQ(ssp.speedup, ref_median / ssp.time_per_step);
  EXPECT_EQ(ssp.speedup_method, "predictions vs timed reference");
  EXPECT_EQ(ssp.bandwidth_gbs, 0.0);  // the traffic model is the physics'
  EXPECT_TRUE(sur.subnormals_requested.empty());
  // The surrogate's placement ("x physics") is against the timed medians too.
  const auto ps = mw::speed_placement(r.results, mw::TrainingResult{});
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].physics_method, "timed");
  EXPECT_EQ(ps[0].physics_s_per_step, ref_median);
  EXPECT_DOUBLE_EQ(ps[0].ratio, ps[0].s_per_simulated_step / ref_median);
  double fastest = ref_median;
  std::string fastest_name = "reference";
  for (const std::string name : {"fp32", "fp32-keep"}) {
    const double m = mw::summarize(by_name(r, name).timed_seconds_per_step).median;
    if (m < fastest) {
      fastest = m;
      fastest_name = name;
    }
  }
  EXPECT_EQ(ps[0].fastest_physics, fastest_name);
  EXPECT_EQ(ps[0].fastest_physics_s_per_step, fastest);

  if (rank_of_world() != 0) return;
  EXPECT_NE(r.json.find("\"schema_version\": 3"), std::string::npos);
  EXPECT_NE(r.json.find("\"triad_GBps\""), std::string::npos);
  // Per variant: 3 timed (median, spread), 4 with a bound and its fraction and a fixed part.
  EXPECT_EQ(count(r.json, "\"median_s\""), 3u);
  EXPECT_EQ(count(r.json, "\"relative_spread\""), 3u);
  EXPECT_EQ(count(r.json, "\"method\": \"timed\""), 3u);
  EXPECT_EQ(count(r.json, "\"method\": \"predictions\""), 1u);
  EXPECT_EQ(count(r.json, "\"speedup_method\": \"predictions vs timed reference\""), 1u);
  EXPECT_EQ(count(r.json, "\"physics_method\": \"timed\""), 1u);
  EXPECT_EQ(count(r.json, "\"sequence\""), 3u);
  EXPECT_EQ(count(r.json, "\"fraction_of_triad\""), 4u);
  EXPECT_EQ(count(r.json, "\"fixed_step_s\""), 4u);
  EXPECT_EQ(count(r.json, "\"subnormal_share\""), 3u * 2u);  // 3 physics variants x 2 state fields
  for (const char* h : {"## Speed\n", "## Subnormals\n", "Memory bound measured in this job"})
    EXPECT_NE(r.md.find(h), std::string::npos) << h;
  EXPECT_NE(r.md.find("| fp32-keep | keep |"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("3 x 38"), std::string::npos);
  if (host_mode_settable()) {
    EXPECT_NE(r.md.find("Flushing, same precision"), std::string::npos);
  }
}

// The timed stretches of the physics variants are interleaved (the speed phase after the physics
// phases, before the surrogate's): round r has stretch r of the reference, fp32 and fp32-keep, in an
// order rotated to start with the r-th (round 0: reference, fp32, fp32-keep; round 1: fp32,
// fp32-keep, reference; round 2: fp32-keep, reference, fp32), so neither a load burst nor the
// previous stretch's leftovers can fall on one variant's stretches only. Where each stretch ran is
// in the results and in report.json (speed.timing.sequence).
TEST(SpeedReport, TimedStretchesAreInterleavedOverTheVariants) {
  const auto plan = mw::precision_campaign_plan(config(), mw::test::testwave_precisions());
  ASSERT_GE(plan.size(), 5u);
  EXPECT_EQ(plan[3].kind, "speed");
  EXPECT_EQ(plan[4].kind, "training");
  ASSERT_EQ(plan[3].subjects.size(), 3u);
  const std::vector<std::string> names{"reference", "fp32", "fp32-keep"};
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(plan[3].subjects[i].name, names[i]);
  const auto r = run(config(), scratch("interleaved"));
  const std::vector<std::vector<std::int64_t>> places{{0, 5, 7}, {1, 3, 8}, {2, 4, 6}};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(names[i]);
    const auto& v = by_name(r, names[i]);
    ASSERT_EQ(v.timed_seconds_per_step.size(), 3u);
    EXPECT_EQ(v.timed_sequence, places[i]);
  }
  EXPECT_TRUE(by_name(r, "surrogate-fp32").timed_sequence.empty());
  if (rank_of_world() == 0) {
    // The three "sequence" arrays of report.json, whitespace removed, in the variants' order.
    std::vector<std::string> seqs;
    for (auto p = r.json.find("\"sequence\": ["); p != std::string::npos;
         p = r.json.find("\"sequence\": [", p + 1)) {
      std::string a;
      for (auto q = r.json.find('[', p) + 1; q < r.json.size() && r.json[q] != ']'; ++q)
        if (!std::isspace(static_cast<unsigned char>(r.json[q]))) a += r.json[q];
      seqs.push_back(a);
    }
    EXPECT_EQ(seqs, (std::vector<std::string>{"0,5,7", "1,3,8", "2,4,6"}));
    EXPECT_NE(r.md.find("interleaved"), std::string::npos);
  }
  // Without timed stretches there is no speed phase.
  auto off = config();
  off.timing.repeats = 0;
  for (const auto& p : mw::precision_campaign_plan(off, mw::test::testwave_precisions()))
    EXPECT_NE(p.kind, "speed");
}

// The surrogate's placement against hand-made results whose in-run times disagree with the timed
// ones (as a loaded machine makes them): the placement takes the timed medians, never the in-run.
TEST(SpeedReport, SurrogatePlacementUsesTheTimedMedians) {
  mw::VariantResult ref, phys, roll;
  ref.name = "reference";
  ref.kind = "reference";
  ref.steps_done = 100;
  ref.time.steps = 10.0;                               // in-run: 0.1 s per step (the loaded accuracy run)
  ref.timed_seconds_per_step = {0.003, 0.001, 0.002};  // timed: median 0.002
  ref.timed_steps_per_repeat = 10;
  phys.name = "fp32";
  phys.kind = "physics";
  phys.steps_done = 100;
  phys.time.steps = 5.0;
  phys.timed_seconds_per_step = {0.001, 0.0005, 0.002};  // median 0.001
  phys.timed_steps_per_repeat = 10;
  roll.name = "surrogate-fp32";
  roll.kind = "surrogate";
  roll.steps_done = 40;
  roll.physics_steps = 20;
  roll.surrogate_steps = 10;  // K = 2
  roll.time.inference = 0.2;  // 0.02 s per prediction, 0.01 s per simulated step
  roll.time.steps = 2.0;      // its in-run physics lead-in (not its cost)
  const auto ps = mw::speed_placement({ref, phys, roll}, mw::TrainingResult{});
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].physics_method, "timed");
  EXPECT_DOUBLE_EQ(ps[0].physics_s_per_step, 0.002);
  EXPECT_DOUBLE_EQ(ps[0].s_per_simulated_step, 0.01);
  EXPECT_DOUBLE_EQ(ps[0].ratio, 5.0);  // 5x the physics' cost, not 0.1x (the in-run would say)
  EXPECT_EQ(ps[0].fastest_physics, "fp32");
  EXPECT_DOUBLE_EQ(ps[0].fastest_physics_s_per_step, 0.001);
  EXPECT_DOUBLE_EQ(ps[0].ratio_to_fastest, 10.0);
  EXPECT_DOUBLE_EQ(ps[0].break_even_k_measured, 10.0);  // 0.02 s / 0.002 s
  const auto sp = mw::speed_summary(roll, ref);
  EXPECT_EQ(sp.method, "predictions");
  EXPECT_DOUBLE_EQ(sp.time_per_step, 0.01);
  EXPECT_DOUBLE_EQ(sp.speedup, 0.2);  // 0.002 / 0.01: the surrogate is slower
  EXPECT_EQ(sp.speedup_method, "predictions vs timed reference");
  const auto md = mw::speed_placement_md({ref, phys, roll}, mw::TrainingResult{});
  EXPECT_NE(md.find("the median of its timed stretches"), std::string::npos) << md;
  EXPECT_NE(md.find("| surrogate-fp32 | 2 | 0.02 | 0.01 | 5 | 10 |"), std::string::npos) << md;
  // The same results without the reference's timed stretches: in-run, and the report says so.
  ref.timed_seconds_per_step.clear();
  const auto qs = mw::speed_placement({ref, phys, roll}, mw::TrainingResult{});
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_EQ(qs[0].physics_method, "in-run");
  EXPECT_DOUBLE_EQ(qs[0].physics_s_per_step, 0.1);
}

TEST(SpeedReport, SubnormalModeIsAppliedPerVariantAndStated) {
  const auto r = run(config(), scratch("modes"));
  const bool settable = host_mode_settable();
  for (const std::string name : {"reference", "fp32", "fp32-keep"}) {
    SCOPED_TRACE(name);
    const auto& v = by_name(r, name);
    const std::string want = name == "fp32-keep" ? "keep" : "flush";
    EXPECT_EQ(v.subnormals_requested, want);
    if (settable) {
      EXPECT_EQ(v.subnormals_in_force, want);
      EXPECT_EQ(v.subnormals_control, "run-time");
    }
    EXPECT_NE(v.subnormals_mechanism.find(v.subnormals_in_force), std::string::npos);
  }
  // After the physics phases the campaign's mode is back in force (the surrogate phases ran in it).
  if (settable) {
    EXPECT_TRUE(mantissa::this_thread_float_env().flushing());
  }
}

TEST(SpeedReport, CensusAtEverySampleStepCountsExactly) {
  const auto r = run(config(), scratch("census"));
  const std::vector<std::int64_t> steps{0, 10, 20, 30, 40};
  // Step 0 recounted here on the host from the initial state (the campaign counted with a kernel).
  const auto reg = mw::test::test_registry();
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid());
  auto model = reg.create_physics("testwave", {nullptr, &decomp}, fp32());
  model->initialize();
  const auto st = model->state();
  for (const std::string name : {"reference", "fp32", "fp32-keep"}) {
    SCOPED_TRACE(name);
    const auto& v = by_name(r, name);
    EXPECT_EQ(v.census_steps, steps);
    EXPECT_EQ(v.census_steps, v.steps);  // the accuracy samples' steps
    ASSERT_EQ(v.census.size(), st.size());
    const Precision storage = name == "reference" ? Precision::fp64 : Precision::fp32;
    for (std::size_t f = 0; f < st.size(); ++f) {
      const auto& c = v.census[f];
      EXPECT_EQ(c.name, st[f].name);
      EXPECT_EQ(c.storage, std::string(mantissa::to_string(storage)));
      EXPECT_EQ(c.values, 32 * 24);
      ASSERT_EQ(c.subnormal.size(), steps.size());
      ASSERT_EQ(c.zero.size(), steps.size());
      const auto h = mw::to_host(st[f].field, "mantissa::test::census");
      std::int64_t sub = 0, zero = 0;
      for (std::int64_t k = 0; k < h.extent[2]; ++k)
        for (std::int64_t j = 0; j < h.extent[1]; ++j)
          for (std::int64_t i = 0; i < h.extent[0]; ++i) {
            const double x = h.view(k + h.ghost[2], j + h.ghost[1], i + h.ghost[0]);
            sub += mw::is_subnormal_in(x, storage) ? 1 : 0;
            zero += is_zero_bits(x) ? 1 : 0;
          }
      std::int64_t gsub = 0, gzero = 0;
      MPI_Allreduce(&sub, &gsub, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(&zero, &gzero, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(c.subnormal[0], gsub) << c.name;
      EXPECT_EQ(c.zero[0], gzero) << c.name;
      for (std::size_t s = 0; s < steps.size(); ++s) EXPECT_LE(c.subnormal[s] + c.zero[s], c.values);
    }
  }
}

TEST(SpeedReport, TimingLeavesTheAccuracyNumbersBitForBit) {
  auto off = config();
  off.timing.repeats = 0;
  const auto a = run(config(), scratch("with"));
  const auto b = run(off, scratch("without"));
  ASSERT_EQ(a.results.size(), b.results.size());
  for (std::size_t i = 0; i < a.results.size(); ++i) {
    const auto &x = a.results[i], &y = b.results[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.steps, y.steps);
    EXPECT_EQ(x.rel_l2, y.rel_l2);
    EXPECT_EQ(x.max_error, y.max_error);
    EXPECT_EQ(x.energy, y.energy);
    EXPECT_EQ(x.traces, y.traces);
    EXPECT_EQ(x.final_rel_l2, y.final_rel_l2);
    EXPECT_EQ(x.steps_done, y.steps_done);
    for (std::size_t f = 0; f < x.census.size() && f < y.census.size(); ++f)
      EXPECT_EQ(x.census[f].subnormal, y.census[f].subnormal);
  }
  // Without timing: the in-run time, no bound, the report says so.
  const auto& ref = by_name(b, "reference");
  EXPECT_TRUE(ref.timed_seconds_per_step.empty());
  EXPECT_LT(ref.triad_gbs, 0.0);
  const auto sp = mw::speed_summary(by_name(b, "fp32"), ref);
  EXPECT_FALSE(sp.timed);
  EXPECT_TRUE(std::isnan(sp.bandwidth_fraction));
  if (rank_of_world() == 0) {
    EXPECT_NE(b.json.find("\"bounds\": null"), std::string::npos);
    EXPECT_EQ(count(b.json, "\"method\": \"in-run\""), 3u);
    EXPECT_EQ(count(b.json, "\"method\": \"predictions\""), 1u);
    EXPECT_EQ(count(b.json, "\"physics_method\": \"in-run\""), 1u);  // and the report says so:
    EXPECT_NE(b.md.find("its in-run time**"), std::string::npos) << b.md;
    EXPECT_NE(b.md.find("Memory bound: not measured"), std::string::npos);
  }
}

// campaign.kind timing (the speed column at production sizes; here a small grid): every physics
// variant runs only its timed stretches; the report's speed section is complete (median, spread,
// bound, fraction, fixed part) and its accuracy section says it was not measured. Timings are not
// asserted, only the report's structure.
TEST(SpeedReport, TimingCampaignHasTheSpeedSectionAndNoAccuracy) {
  auto cfg = config();
  cfg.kind = "timing";
  // The deck parser turns the surrogate off for this kind (Schema.cpp); the plan ignores it anyway.
  const auto plan = mw::timing_campaign_plan(cfg, mw::test::testwave_precisions());
  ASSERT_EQ(plan.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(plan[i].kind == "timing" || plan[i].kind == "timing-reference") << plan[i].name;
  EXPECT_EQ(plan[3].kind, "timing-speed");
  ASSERT_EQ(plan[3].subjects.size(), 3u);  // it times the three, interleaved
  cfg.surrogate.enabled = false;
  const auto r = run(cfg, scratch("timing-only"));
  ASSERT_EQ(r.results.size(), 3u);
  const auto& ref = by_name(r, "reference");
  ASSERT_GT(ref.triad_gbs, 0.0);
  for (const std::string name : {"reference", "fp32", "fp32-keep"}) {
    SCOPED_TRACE(name);
    const auto& v = by_name(r, name);
    EXPECT_EQ(v.status, "ok");
    ASSERT_EQ(v.timed_seconds_per_step.size(), 3u);
    EXPECT_EQ(v.timed_steps_per_repeat, 38);
    EXPECT_EQ(v.steps_done, 3 * 38);  // here the timed steps are the phase's steps
    // Nothing recorded, compared or counted.
    EXPECT_TRUE(v.steps.empty());
    EXPECT_TRUE(v.rel_l2.empty());
    EXPECT_TRUE(v.traces.empty());
    EXPECT_TRUE(v.census_steps.empty());
    EXPECT_TRUE(std::isnan(v.final_rel_l2));
    EXPECT_TRUE(std::isnan(v.final_energy_drift));
    EXPECT_FALSE(v.subnormals_in_force.empty());
    const auto sp = mw::speed_summary(v, ref);
    ASSERT_TRUE(sp.timed);
    EXPECT_GT(sp.timing.min, 0.0);
    ASSERT_GT(sp.bandwidth_gbs, 0.0);
    EXPECT_DOUBLE_EQ(sp.bandwidth_fraction, sp.bandwidth_gbs / ref.triad_gbs);
    EXPECT_GT(sp.fixed_step_seconds, 0.0);
    EXPECT_TRUE(std::isfinite(sp.speedup));
  }
  if (rank_of_world() == 0) {
    EXPECT_NE(r.json.find("\"kind\": \"timing\""), std::string::npos);
    EXPECT_EQ(count(r.json, "\"measured\": false"), 3u);
    EXPECT_EQ(count(r.json, "\"measured\": true"), 0u);
    EXPECT_EQ(count(r.json, "\"final_rel_l2\": null"), 3u);
    EXPECT_EQ(count(r.json, "\"median_s\""), 3u);
    EXPECT_EQ(count(r.json, "\"method\": \"timed\""), 3u);
    EXPECT_EQ(count(r.json, "\"fraction_of_triad\""), 3u);
    EXPECT_NE(r.md.find("# mantissa timing campaign"), std::string::npos);
    EXPECT_NE(r.md.find("## Accuracy\n\nNot measured"), std::string::npos) << r.md;
    EXPECT_EQ(r.md.find("## Accuracy and speed against the reference"), std::string::npos);
    EXPECT_NE(r.md.find("## Speed\n"), std::string::npos);
    EXPECT_NE(r.md.find("3 x 38"), std::string::npos);
    EXPECT_NE(r.md.find("census not taken"), std::string::npos);
  }
  // A timing campaign without timed stretches is refused, naming the key.
  cfg.timing.repeats = 0;
  try {
    (void)mw::timing_campaign_plan(cfg, mw::test::testwave_precisions());
    ADD_FAILURE() << "no error";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("campaign.timing.repeats"), std::string::npos) << e.what();
  }
}

}  // namespace
