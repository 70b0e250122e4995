// The held-out evaluation of the campaign's surrogate (issue 12) with the test physics and
// surrogate of TestModels.hpp, at 1, 2 and 3 ranks: campaign.surrogate.heldout_fraction splits
// the surrogate's window, training sees only its first part, every rollout precision runs once
// in-sample and once held out, and each rollout carries the three free baselines from its own
// hand-over state (the zero field scores 1, persistence 0 after 0 predictions), checked here
// against fields computed independently from the physics, and written to report.json/report.md.
#include "TestModels.hpp"
#include "TestScratch.hpp"

#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/Report.hpp>
#include <mantissa/workflow/RolloutReport.hpp>
#include <mantissa/workflow/RunDirectory.hpp>
#include <mantissa/workflow/Signals.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mw = mantissa::workflow;
namespace fs = std::filesystem;
using mantissa::Precision;

namespace {

using mantissa::workflow::test::rank_of_world;

std::string scratch(const std::string& name) {
  return mantissa::workflow::test::scratch("heldout", name);
}

mantissa::Grid grid() {
  return mantissa::workflow::test::periodic_grid();
}

mw::CampaignConfig config() {
  mw::CampaignConfig c;
  c.physics = "testwave";
  c.steps = 60;
  c.sample_every = 10;
  c.error_threshold = 1e-3;
  c.surrogate.enabled = true;
  c.surrogate.model = "linear";
  c.surrogate.rollout = {Precision::fp64};
  c.surrogate.start = 20;
  // Window [20, 60]: 0.25 of it held out puts the split at step 50 (a sample step).
  c.surrogate.heldout_fraction = 0.25;
  c.deck_hash = "test";
  return c;
}

struct Run {
  std::vector<mw::VariantResult> results;
  mw::TrainingResult training;
};

Run run(const mw::CampaignConfig& cfg, const mw::Registry& reg, const std::string& dir) {
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid());
  mw::RunDirectory rd(MPI_COMM_WORLD, dir, mw::RunMode::overwrite);
  rd.commit();
  mw::Campaign c(cfg, reg, {nullptr, &decomp}, dir, false);
  EXPECT_EQ(c.run(), mw::Campaign::Outcome::finished);
  mw::ReportInfo info;
  info.machine = mw::machine_info(MPI_COMM_WORLD);
  mw::write_report(c, info, dir);
  return {c.results(), c.training()};
}

const mw::VariantResult& by_name(const Run& r, const std::string& name) {
  for (const auto& v : r.results)
    if (v.name == name) return v;
  throw std::runtime_error("no variant " + name);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The reference's primary field and the one before it at `step`, from the physics directly.
struct Fields {
  mw::HostField p, p_prev;
};
Fields reference_at(const mantissa::Decomposition& d, std::int64_t step) {
  mw::test::TestWave<double> w(d, {});
  w.initialize();
  w.step(step);
  const auto st = w.state();
  return {mw::to_host(st[0].field, "test::p"), mw::to_host(st[1].field, "test::p_prev")};
}

}  // namespace

TEST(WorkflowHeldout, TrainsOnTheFirstPartAndScoresBothWindowsBesideTheBaselines) {
  // g off by 0.05: the surrogate is wrong by a known, visible amount per step.
  const auto reg = mw::test::test_registry({}, -1, 0.05);
  const std::string dir = scratch("split");
  const auto r = run(config(), reg, dir);
  EXPECT_EQ(r.training.samples, 31);  // reference states 20, 21, ..., 50; none of 51..60
  const auto& in = by_name(r, "surrogate-fp64");
  const auto& out = by_name(r, "surrogate-fp64-heldout");
  EXPECT_EQ(in.window, "in-sample");
  EXPECT_EQ(out.window, "held-out");
  EXPECT_EQ(in.handover_step, 20);
  EXPECT_EQ(out.handover_step, 50);
  ASSERT_EQ(in.status, "ok");
  ASSERT_EQ(out.status, "ok");
  // In-sample ends where training ends; the held-out rollout runs from there to the horizon.
  EXPECT_EQ(in.steps.back(), 50);
  EXPECT_EQ(in.surrogate_steps, 30);
  EXPECT_EQ(out.steps.back(), 60);
  EXPECT_EQ(out.surrogate_steps, 10);
  EXPECT_EQ(out.physics_steps, 50);
  for (const auto* v : {&in, &out}) {
    ASSERT_EQ(v->baseline_zero.size(), v->steps.size()) << v->name;
    ASSERT_EQ(v->baseline_persistence.size(), v->steps.size()) << v->name;
    ASSERT_EQ(v->baseline_linear.size(), v->steps.size()) << v->name;
    for (std::size_t i = 0; i < v->steps.size(); ++i) {
      const auto s = v->steps[i];
      if (s < v->handover_step) {
        EXPECT_TRUE(std::isnan(v->baseline_zero[i])) << v->name << " step " << s;
        continue;
      }
      // The zero field's error is 1 against any non-zero reference.
      EXPECT_DOUBLE_EQ(v->baseline_zero[i], 1.0) << v->name << " step " << s;
      if (s == v->handover_step) {
        // 0 predictions: the hand-over state is the reference's; persistence and linear
        // extrapolation over 0 steps are that state, exactly.
        EXPECT_EQ(v->baseline_persistence[i], 0.0) << v->name;
        EXPECT_EQ(v->baseline_linear[i], 0.0) << v->name;
        EXPECT_EQ(v->rel_l2[i], 0.0) << v->name;
      } else {
        EXPECT_GT(v->baseline_persistence[i], 1e-3) << v->name << " step " << s;
        EXPECT_GT(v->rel_l2[i], 1e-4) << v->name << " step " << s;
      }
    }
  }
  // The held-out baselines at step 60, computed independently from the physics: persistence
  // is the state at 50 against the state at 60; linear extrapolation p50 + 10 (p50 - p49).
  {
    mantissa::Decomposition d(MPI_COMM_WORLD, grid());
    const auto at50 = reference_at(d, 50);
    const auto at60 = reference_at(d, 60);
    mw::HostField lin = at50.p;
    lin.view = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>(
        "test::lin", at50.p.view.extent(0), at50.p.view.extent(1), at50.p.view.extent(2));
    for (std::size_t k = 0; k < lin.view.extent(0); ++k)
      for (std::size_t j = 0; j < lin.view.extent(1); ++j)
        for (std::size_t i = 0; i < lin.view.extent(2); ++i)
          lin.view(k, j, i) =
              at50.p.view(k, j, i) + 10.0 * (at50.p.view(k, j, i) - at50.p_prev.view(k, j, i));
    const double persistence = mw::field_error(MPI_COMM_WORLD, at50.p, at60.p).rel_l2;
    const double linear = mw::field_error(MPI_COMM_WORLD, lin, at60.p).rel_l2;
    EXPECT_DOUBLE_EQ(out.baseline_persistence.back(), persistence);
    EXPECT_DOUBLE_EQ(out.baseline_linear.back(), linear);
    EXPECT_GT(persistence, 1e-2);
  }
  // The score: a surrogate 20 % off in its Laplacian coefficient against baselines; the
  // report's verdict lists the baselines with a lower error.
  const auto sc = mw::rollout_score(out);
  ASSERT_TRUE(sc.valid);
  EXPECT_EQ(sc.stride, 1);
  EXPECT_EQ(sc.end_predictions, 10);
  EXPECT_EQ(sc.end.model, out.final_rel_l2);
  EXPECT_EQ(sc.mean_samples, 0);  // samples after 13-30 predictions: none in 10
  const auto si = mw::rollout_score(in);
  EXPECT_EQ(si.end_predictions, 30);
  EXPECT_EQ(si.mean_samples, 2);  // after 20 and 30 predictions (samples at steps 40 and 50)
  for (const auto& b : sc.beaten_at_end) EXPECT_TRUE(b == "zero" || b == "persistence" || b == "linear") << b;
  // Files: report.json has the evaluation windows and every rollout's baselines; report.md the
  // table with the held-out rows.
  if (rank_of_world() == 0) {
    const auto json = slurp(dir + "/report.json");
    for (const char* key :
         {"\"evaluation\"", "\"heldout_fraction\": 0.25", "\"train_steps\"", "\"heldout_steps\"",
          "\"rollout\"", "\"window\": \"held-out\"", "\"window\": \"in-sample\"", "\"beaten_at_end_by\"",
          "\"persistence\"", "\"linear\"", "\"zero\"", "\"speed_placement\""})
      EXPECT_NE(json.find(key), std::string::npos) << key;
    const auto md = slurp(dir + "/report.md");
    EXPECT_NE(md.find("Rollouts beside the free baselines"), std::string::npos);
    EXPECT_NE(md.find("| surrogate-fp64-heldout | held-out | 50 | 10 |"), std::string::npos) << md;
    EXPECT_EQ(md.find("In-sample only"), std::string::npos);
    // The surrogate's multi-line description: its first line on every rollout row of
    // "Precisions", the rest (the GEMM paths) once, in "Surrogate".
    const auto first = md.find("GEMM paths:");
    ASSERT_NE(first, std::string::npos) << md;
    EXPECT_EQ(md.find("GEMM paths:", first + 1), std::string::npos) << md;
    EXPECT_GT(first, md.find("## Surrogate")) << md;
    EXPECT_NE(md.find("- surrogate-fp64-heldout: "), std::string::npos) << md;
  }
}

TEST(WorkflowHeldout, AnExactSurrogateBeatsEveryBaselineAndWithoutASplitTheReportSaysInSampleOnly) {
  const auto reg = mw::test::test_registry();
  auto cfg = config();
  cfg.surrogate.heldout_fraction = 0.0;
  const std::string dir = scratch("nosplit");
  const auto r = run(cfg, reg, dir);
  EXPECT_EQ(r.training.samples, 41);  // 20..60
  for (const auto& v : r.results) EXPECT_EQ(v.name.find("heldout"), std::string::npos) << v.name;
  const auto& in = by_name(r, "surrogate-fp64");
  EXPECT_EQ(in.steps.back(), 60);
  const auto sc = mw::rollout_score(in);
  ASSERT_TRUE(sc.valid);
  EXPECT_TRUE(sc.beaten_at_end.empty());
  EXPECT_LT(sc.end.model, 1e-6);
  EXPECT_GT(sc.end.persistence, 1e-2);
  if (rank_of_world() == 0) {
    const auto json = slurp(dir + "/report.json");
    EXPECT_NE(json.find("\"in_sample_only\": true"), std::string::npos);
    EXPECT_NE(json.find("\"heldout_steps\": null"), std::string::npos);
    EXPECT_NE(slurp(dir + "/report.md").find("In-sample only"), std::string::npos);
  }
}

TEST(WorkflowHeldout, BadSplitsNameTheKey) {
  const auto reg = mw::test::test_registry();
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid());
  auto expect_refused = [&](const mw::CampaignConfig& cfg, const std::string& what) {
    try {
      mw::Campaign c(cfg, reg, {nullptr, &decomp}, scratch("bad"), false);
      FAIL() << "accepted: " << what;
    } catch (const mantissa::Error& e) {
      EXPECT_NE(std::string(e.what()).find("campaign.surrogate.heldout_fraction"), std::string::npos)
          << e.what();
    }
  };
  auto both = config();
  both.surrogate.train_steps = 40;
  expect_refused(both, "train_steps and heldout_fraction together");
  auto short_window = config();
  short_window.surrogate.start = 50;  // (50, 60) holds no sample step to split at
  expect_refused(short_window, "a window with no sample step inside");
}

// campaign.surrogate.train_experiments / heldout_experiments: the test physics' experiments start
// the pulse at different places; the surrogate trains on experiments 0 and 2 and is rolled out
// on experiment 1, which it never saw.
mw::CampaignConfig experiments_config() {
  auto c = config();
  c.surrogate.heldout_fraction = 0.0;
  c.surrogate.train_experiments = {0, 2};
  c.surrogate.heldout_experiments = {1};
  return c;
}

mw::test::TestWaveOptions three_experiments() {
  mw::test::TestWaveOptions o;
  o.experiments = 3;
  return o;
}

Run run_resumable(const mw::CampaignConfig& cfg, const mw::Registry& reg, const std::string& dir, bool resume,
                  mw::Campaign::Outcome expected) {
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid());
  mw::RunDirectory rd(MPI_COMM_WORLD, dir, resume ? mw::RunMode::resume : mw::RunMode::overwrite);
  rd.commit();
  mw::Campaign c(cfg, reg, {nullptr, &decomp}, dir, resume);
  EXPECT_EQ(c.run(), expected);
  if (expected == mw::Campaign::Outcome::finished) {
    mw::ReportInfo info;
    info.machine = mw::machine_info(MPI_COMM_WORLD);
    mw::write_report(c, info, dir);
  }
  return {c.results(), c.training()};
}

Fields experiment_at(const mantissa::Decomposition& d, int experiment, std::int64_t step) {
  mw::test::TestWave<double> w(d, three_experiments());
  w.select_experiment(experiment);
  w.initialize();
  w.step(step);
  const auto st = w.state();
  return {mw::to_host(st[0].field, "test::p"), mw::to_host(st[1].field, "test::p_prev")};
}

TEST(WorkflowHeldout, TrainsOnSomeExperimentsAndScoresAnotherItNeverSaw) {
  const auto reg = mw::test::test_registry(three_experiments());
  const std::string dir = scratch("experiments");
  const auto r = run_resumable(experiments_config(), reg, dir, false, mw::Campaign::Outcome::finished);
  // Reference states 20..60 of experiments 0 and 2; one-step pairs only inside each.
  EXPECT_EQ(r.training.samples, 82);
  EXPECT_EQ(r.training.one_step_pairs, 80);
  // The exact surrogate learns the stencil only if no (p^{n-1}, p^n) -> p^{n+1} triple spans the
  // two trajectories (such a triple jumps from one pulse to another).
  EXPECT_LT(r.training.one_step_rel_l2, 1e-9);
  const auto& in = by_name(r, "surrogate-fp64");
  const auto& out = by_name(r, "surrogate-fp64-experiment1");
  EXPECT_EQ(in.experiment, 0);
  EXPECT_EQ(out.experiment, 1);
  EXPECT_EQ(out.window, "held-out experiment 1");
  EXPECT_EQ(out.handover_step, 20);
  ASSERT_EQ(out.status, "ok");
  EXPECT_EQ(out.steps.back(), 60);
  EXPECT_EQ(out.surrogate_steps, 40);
  EXPECT_EQ(out.physics_steps, 20);
  // Its probes are experiment 1's: the reference's record of experiment 1 at the same steps
  // (exact predictions: round-off), and not experiment 0's.
  {
    const auto& ref = r.results.front();
    ASSERT_EQ(out.num_probes, 2);
    ASSERT_GE(ref.extra_experiments.size(), 1u);
    const auto& rt1 = ref.extra_experiments[0].traces;
    ASSERT_EQ(out.trace_stride % ref.trace_stride, 0);
    const std::size_t k = std::size_t(out.trace_stride / ref.trace_stride), rows = out.traces.size() / 2;
    EXPECT_EQ(rows, std::size_t(60 / out.trace_stride + 1));
    ASSERT_LE((rows - 1) * k * 2 + 1, rt1.size());
    double peak = 0.0, worst = 0.0, from0 = 0.0;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < 2; ++j) {
        const double v = out.traces[i * 2 + j];
        peak = std::fmax(peak, std::fabs(rt1[i * k * 2 + j]));
        worst = std::fmax(worst, std::fabs(v - rt1[i * k * 2 + j]));
        from0 = std::fmax(from0, std::fabs(v - ref.traces[i * k * 2 + j]));
      }
    EXPECT_GT(peak, 0.0);
    EXPECT_LT(worst, 1e-9 * peak);
    EXPECT_GT(from0, 0.1 * peak);
  }
  // Scored against experiment 1's reference: 0 at the hand-over, round-off after 40 exact
  // predictions; the baselines from experiment 1's hand-over state, computed here from the
  // physics (and different from experiment 0's).
  ASSERT_EQ(out.rel_l2.size(), out.steps.size());
  for (std::size_t i = 0; i < out.steps.size(); ++i)
    if (out.steps[i] == 20) {
      EXPECT_EQ(out.rel_l2[i], 0.0);
    }
  EXPECT_LT(out.final_rel_l2, 1e-9);
  {
    mantissa::Decomposition d(MPI_COMM_WORLD, grid());
    const auto a20 = experiment_at(d, 1, 20), a60 = experiment_at(d, 1, 60);
    const auto b20 = experiment_at(d, 0, 20), b60 = experiment_at(d, 0, 60);
    const double persistence = mw::field_error(MPI_COMM_WORLD, a20.p, a60.p).rel_l2;
    EXPECT_DOUBLE_EQ(out.baseline_persistence.back(), persistence);
    EXPECT_DOUBLE_EQ(out.baseline_zero.back(), 1.0);
    // The experiments' states differ (their pulses start apart), so the 0 at the hand-over and the
    // round-off after it say that the rollout ran experiment 1 and was scored against experiment 1.
    EXPECT_GT(mw::field_error(MPI_COMM_WORLD, a20.p, b20.p).rel_l2, 0.1);
    EXPECT_GT(mw::field_error(MPI_COMM_WORLD, a60.p, b60.p).rel_l2, 0.1);
    // The held-out experiment's energy drift is against its own reference: 0 for exact predictions.
    EXPECT_LT(std::fabs(out.energy_drift.back()), 1e-9);
  }
  if (rank_of_world() == 0) {
    std::string json = slurp(dir + "/report.json");
    json.erase(std::remove_if(json.begin(), json.end(), [](char ch) { return ch == ' ' || ch == '\n'; }),
               json.end());
    for (const char* key :
         {"\"train_experiments\":[0,2]", "\"heldout_experiments\":[1]", "\"window\":\"held-outexperiment1\"",
          "\"experiment\":1", "\"in_sample_only\":false"})
      EXPECT_NE(json.find(key), std::string::npos) << key;
    const auto md = slurp(dir + "/report.md");
    EXPECT_NE(md.find("| surrogate-fp64-experiment1 | held-out experiment 1 | 20 | 40 |"), std::string::npos)
        << md;
    EXPECT_NE(md.find("campaign.surrogate.heldout_experiments"), std::string::npos) << md;
    EXPECT_EQ(md.find("In-sample only"), std::string::npos);
  }
  // A stop in the reference's experiment 1 (campaign step 90: 60 of experiment 0, 30 of 1) or
  // experiment 2 (150) and a resume give the same numbers, bit for bit: the held-out snapshots and
  // the training states' experiments travel in the checkpoint.
  for (const std::int64_t stop : {90, 150}) {
    SCOPED_TRACE("stop after campaign step " + std::to_string(stop));
    auto cfg = experiments_config();
    cfg.stop_after_step = stop;
    const std::string d2 = scratch("experiments-" + std::to_string(stop));
    run_resumable(cfg, reg, d2, false, mw::Campaign::Outcome::stopped);
    mw::StopSignals::clear();
    const auto again = run_resumable(cfg, reg, d2, true, mw::Campaign::Outcome::finished);
    EXPECT_EQ(again.training.samples, r.training.samples);
    EXPECT_EQ(again.training.one_step_rel_l2, r.training.one_step_rel_l2);
    const auto& o2 = by_name(again, "surrogate-fp64-experiment1");
    EXPECT_EQ(o2.rel_l2, out.rel_l2);
    EXPECT_EQ(o2.energy_drift, out.energy_drift);
    EXPECT_EQ(o2.traces, out.traces);
    ASSERT_EQ(o2.baseline_persistence.size(), out.baseline_persistence.size());
    for (std::size_t i = 0; i < out.baseline_persistence.size(); ++i)  // NaN before the hand-over
      if (!std::isnan(out.baseline_persistence[i]) || !std::isnan(o2.baseline_persistence[i])) {
        EXPECT_EQ(o2.baseline_persistence[i], out.baseline_persistence[i]) << i;
      }
  }
}

TEST(WorkflowHeldout, BadExperimentListsNameTheKey) {
  const auto reg = mw::test::test_registry(three_experiments());
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid());
  auto expect_refused = [&](const mw::CampaignConfig& cfg, const std::string& key, const std::string& what,
                            bool at_run) {
    try {
      mw::Campaign c(cfg, reg, {nullptr, &decomp}, scratch("bad-experiments"), false);
      if (at_run) c.run();
      FAIL() << "accepted: " << what;
    } catch (const mantissa::Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  auto both = experiments_config();
  both.surrogate.heldout_experiments = {2};
  expect_refused(both, "campaign.surrogate.heldout_experiments", "an experiment in both lists", false);
  auto none = experiments_config();
  none.surrogate.train_experiments = {};
  expect_refused(none, "campaign.surrogate.train_experiments", "no training experiment", false);
  auto twice = experiments_config();
  twice.surrogate.train_experiments = {0, 0};
  expect_refused(twice, "campaign.surrogate.train_experiments", "an experiment named twice", false);
  auto missing = experiments_config();
  missing.surrogate.heldout_experiments = {3};
  expect_refused(missing, "campaign.surrogate.heldout_experiments", "experiment 3 of 3", true);
}

TEST(WorkflowHeldout, SpeedPlacementPutsTheSurrogateBesideThePhysics) {
  // Hand-made results: the reference takes 0.01 s per step; a K = 2 rollout of 10 predictions
  // after 20 physics steps spends 0.5 s predicting; a prediction is 1 GFLOP and the GEMM rate
  // 100 GFLOP/s.
  mw::VariantResult ref, roll, phys;
  ref.name = "reference";
  ref.kind = "reference";
  ref.steps_done = 100;
  ref.time.steps = 1.0;
  phys.name = "fp32";
  phys.kind = "physics";
  phys.steps_done = 100;
  phys.time.steps = 0.5;
  roll.name = "surrogate-fp32";
  roll.kind = "surrogate";
  roll.steps_done = 40;
  roll.physics_steps = 20;
  roll.surrogate_steps = 10;
  roll.time.inference = 0.5;
  roll.time.steps = 0.2;
  mw::TrainingResult t;
  t.flops_per_prediction = 1e9;
  t.gemm_peak_flops = 1e11;
  t.gemm_peak_what = "test";
  const auto ps = mw::speed_placement({ref, phys, roll}, t);
  ASSERT_EQ(ps.size(), 1u);  // pure rollouts only
  EXPECT_EQ(ps[0].name, "surrogate-fp32");
  EXPECT_EQ(ps[0].stride, 2);
  EXPECT_DOUBLE_EQ(ps[0].physics_s_per_step, 0.01);
  EXPECT_DOUBLE_EQ(ps[0].s_per_prediction, 0.05);
  EXPECT_DOUBLE_EQ(ps[0].s_per_simulated_step, 0.025);
  EXPECT_DOUBLE_EQ(ps[0].ratio, 2.5);
  EXPECT_DOUBLE_EQ(ps[0].achieved_flops, 2e10);
  EXPECT_DOUBLE_EQ(ps[0].break_even_k_measured, 5.0);  // one prediction costs 5 physics steps
  EXPECT_DOUBLE_EQ(ps[0].break_even_k_peak, 1.0);      // at 100 GFLOP/s: 0.01 s = one physics step
  // Without a GEMM measurement the peak column is absent (0), the measured one stays.
  t.gemm_peak_flops = 0.0;
  const auto qs = mw::speed_placement({ref, roll}, t);
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_EQ(qs[0].break_even_k_peak, 0.0);
  EXPECT_DOUBLE_EQ(qs[0].break_even_k_measured, 5.0);
  const auto md = mw::speed_placement_md({ref, roll}, t);
  EXPECT_NE(md.find("Where the surrogate pays"), std::string::npos);
  EXPECT_NE(md.find("| surrogate-fp32 | 2 | 0.05 | 0.025 | 2.5 | 20 | 5 | n/a |"), std::string::npos) << md;
}
