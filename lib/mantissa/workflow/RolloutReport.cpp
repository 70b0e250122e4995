#include <mantissa/workflow/RolloutReport.hpp>
#include <mantissa/workflow/StepTimer.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace mantissa::workflow {

namespace {

std::string num(double v, int prec = 3) {
  if (std::isnan(v)) return "n/a";
  std::ostringstream os;
  os.precision(prec);
  os << v;
  return os.str();
}

bool is_rollout(const VariantResult& r) {
  return (r.kind == "surrogate" || r.kind == "hybrid") && r.handover_step >= 0;
}

std::vector<std::string> beaten(const BaselineRow& b) {
  std::vector<std::string> out;
  if (!std::isfinite(b.model)) return {"zero", "persistence", "linear"};  // it blew up
  if (b.zero < b.model) out.push_back("zero");
  if (b.persistence < b.model) out.push_back("persistence");
  if (b.linear < b.model) out.push_back("linear");
  return out;
}

void row_json(json::Writer& w, const char* key, const BaselineRow& b) {
  w.key(key).begin_object();
  w.field("surrogate", b.model)
      .field("zero", b.zero)
      .field("persistence", b.persistence)
      .field("linear", b.linear);
  w.end_object();
}

// Which baselines the surrogate beats and which beat it, every one named (on a slowly changing
// flow linear extrapolation can beat a surrogate that beats the other two).
std::string verdict(const std::vector<std::string>& beaten_by) {
  const std::pair<const char*, const char*> names[] = {
      {"zero", "zero field"}, {"persistence", "persistence"}, {"linear", "linear extrapolation"}};
  std::vector<std::string> won, lost;
  for (const auto& n : names) {
    const bool beaten = std::find(beaten_by.begin(), beaten_by.end(), n.first) != beaten_by.end();
    (beaten ? lost : won).push_back(n.second);
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string o;
    for (std::size_t i = 0; i < v.size(); ++i) o += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return o;
  };
  if (lost.empty()) return "beats all three baselines";
  if (won.empty()) return "**loses to " + join(lost) + "**";
  return "beats " + join(won) + "; **loses to " + join(lost) + "**";
}

}  // namespace

RolloutScore rollout_score(const VariantResult& r) {
  RolloutScore s;
  if (!is_rollout(r) || r.baseline_zero.size() != r.steps.size() || r.steps.empty()) return s;
  if (r.kind == "surrogate" && r.surrogate_steps > 0)
    s.stride = (r.steps_done - r.physics_steps) / r.surrogate_steps;
  const std::size_t last = r.steps.size() - 1;
  if (r.steps[last] <= r.handover_step) return s;
  s.valid = true;
  s.end_step = r.steps[last];
  s.end_predictions = s.stride > 0 ? (s.end_step - r.handover_step) / s.stride : 0;
  s.end = {r.rel_l2[last], r.baseline_zero[last], r.baseline_persistence[last], r.baseline_linear[last]};
  if (r.status == "failed") s.end.model = std::nan("");
  BaselineRow sum{0.0, 0.0, 0.0, 0.0};
  for (std::size_t i = 0; i < r.steps.size() && s.stride > 0; ++i) {
    const std::int64_t n = (r.steps[i] - r.handover_step) / s.stride;
    if (r.steps[i] < r.handover_step || n < score_window_first || n > score_window_last) continue;
    sum.model += r.rel_l2[i];
    sum.zero += r.baseline_zero[i];
    sum.persistence += r.baseline_persistence[i];
    sum.linear += r.baseline_linear[i];
    ++s.mean_samples;
  }
  const double c = double(s.mean_samples);
  const double nan = std::nan("");
  s.mean_13_30 = s.mean_samples > 0
                     ? BaselineRow{sum.model / c, sum.zero / c, sum.persistence / c, sum.linear / c}
                     : BaselineRow{nan, nan, nan, nan};
  s.beaten_at_end = beaten(s.end);
  if (s.mean_samples > 0) s.beaten_13_30 = beaten(s.mean_13_30);
  return s;
}

HybridTruth hybrid_truth(const VariantResult& r, const HybridSpec& hs) {
  HybridTruth t;
  t.limit = hs.error_limit;
  if (r.surrogate_steps > 0) t.stride = (r.steps_done - r.physics_steps) / r.surrogate_steps;
  t.surrogate_covered = r.steps_done - r.physics_steps;
  t.physics_after_start = r.physics_steps - std::max<std::int64_t>(r.handover_step, 0);
  t.end_error = r.rel_l2.empty() ? std::nan("") : r.rel_l2.back();
  for (std::size_t i = 0; i < r.steps.size() && i < r.rel_l2.size(); ++i) {
    const std::int64_t s = r.steps[i];
    if (s <= r.handover_step || !(std::isnan(r.rel_l2[i]) || r.rel_l2[i] > t.limit)) continue;
    t.first_over = s;
    t.error_at_first_over = r.rel_l2[i];
    double at_handover = std::nan("");
    for (const auto& h : r.handovers)
      if (s > h.step && s <= h.step + hs.physics_steps) {
        t.passed_under_physics = true;
        t.physics_from = h.step;
        at_handover = h.true_error;
      }
    t.in_time = t.passed_under_physics && at_handover <= t.limit;
    t.in_time_known = !t.passed_under_physics || !std::isnan(at_handover);
    break;
  }
  return t;
}

void hybrid_json(json::Writer& w, const VariantResult& r, const HybridSpec& hs) {
  const auto t = hybrid_truth(r, hs);
  w.key("hybrid").begin_object();
  w.field("handovers", std::int64_t(r.handovers.size()))
      .field("surrogate_predictions", r.surrogate_steps)
      .field("steps_per_prediction", t.stride)
      .field("surrogate_steps_covered", t.surrogate_covered)
      .field("physics_steps_after_start", t.physics_after_start)
      .field("error_limit", t.limit);
  if (t.first_over >= 0)
    w.field("first_step_over_limit", t.first_over)
        .field("error_at_first_over", t.error_at_first_over)
        .field("passed_while", t.passed_under_physics ? "physics" : "surrogate");
  else
    w.key("first_step_over_limit").null().key("error_at_first_over").null().key("passed_while").null();
  if (t.in_time_known)
    w.field("handed_over_in_time", t.in_time);
  else
    w.key("handed_over_in_time").null();
  w.key("events").begin_array();
  for (const auto& h : r.handovers) {
    w.begin_object().field("step", h.step).field("time", h.time).field("reason", h.reason);
    w.field("energy_drift", h.energy_drift).field("residual", h.residual).field("true_error", h.true_error);
    w.end_object();
  }
  w.end_array().key("checks").begin_array();
  for (const auto& c : r.indicator_checks) {
    w.begin_object()
        .field("step", c.step)
        .field("energy_drift", c.energy_drift)
        .field("residual", c.residual);
    w.field("true_error", c.true_error).field("action", c.action).end_object();
  }
  w.end_array().end_object();
}

std::string hybrid_md(const VariantResult& r, const HybridSpec& hs) {
  const auto t = hybrid_truth(r, hs);
  std::ostringstream os;
  os << "\n### Hybrid " << r.name << ": " << r.handovers.size() << " hand-over(s), " << r.surrogate_steps
     << " surrogate predictions";
  if (t.stride > 0) os << " (" << t.surrogate_covered << " steps, K = " << t.stride << ")";
  os << ", " << r.physics_steps << " physics steps";
  if (r.handover_step > 0) os << " (" << r.handover_step << " of them the lead-in)";
  os << "\n\n";
  const std::int64_t after = t.surrogate_covered + t.physics_after_start;
  if (after > 0)
    os << "After the lead-in the surrogate took " << t.surrogate_covered << " of " << after << " steps ("
       << num(100.0 * double(t.surrogate_covered) / double(after)) << " %); rel. L2 against the reference at "
       << "the end " << num(t.end_error) << ".\n\n";
  os << "Against the reference (what the indicator cannot see; campaign.surrogate.hybrid.error_limit "
     << num(t.limit) << "): ";
  if (t.first_over < 0)
    os << "the true error never passed the limit";
  else
    os << "the true error first passed the limit at step " << t.first_over << " ("
       << num(t.error_at_first_over) << "), while the "
       << (t.passed_under_physics
               ? "physics ran after the hand-over at step " + std::to_string(t.physics_from)
               : std::string("surrogate ran"));
  if (!t.in_time_known)
    os << "; whether the indicator handed over in time is not known (that hand-over is not at a sample step: "
          "campaign.sample_every)";
  else
    os << "; the indicator " << (t.in_time ? "handed over in time" : "**did not hand over in time**");
  os << ".\n";
  if (!r.indicator_checks.empty()) {
    os << "\n| step | energy drift | residual | true error | decision |\n|---:|---:|---:|---:|---|\n";
    for (const auto& c : r.indicator_checks)
      os << "| " << c.step << " | " << num(c.energy_drift) << " | " << num(c.residual) << " | "
         << (std::isnan(c.true_error) ? std::string("-") : num(c.true_error)) << " | "
         << (c.action == "continue" ? std::string("continue") : "hand over (" + c.action + ")") << " |\n";
    os << "\nTrue error: rel. L2 of the hybrid's primary field against the reference at the step of the "
          "check (\"-\": not a sample step, the reference keeps only those).\n";
  }
  return os.str();
}

void rollout_json(json::Writer& w, const VariantResult& r) {
  if (!is_rollout(r)) return;
  const auto s = rollout_score(r);
  w.key("rollout").begin_object();
  w.field("window", r.window).field("handover_step", r.handover_step).field("experiment", r.experiment);
  if (s.stride > 0)
    w.field("stride", s.stride);
  else
    w.key("stride").null();
  if (!s.valid) {
    w.key("end").null().key("mean_13_30").null();
    w.end_object();
    return;
  }
  w.field("end_step", s.end_step).field("end_predictions", s.end_predictions);
  row_json(w, "end", s.end);
  w.field("beaten_at_end_by", s.beaten_at_end);
  if (s.mean_samples > 0) {
    row_json(w, "mean_13_30", s.mean_13_30);
    w.field("mean_13_30_samples", s.mean_samples);
    w.field("beaten_13_30_by", s.beaten_13_30);
  } else {
    w.key("mean_13_30").null();
  }
  // The series from the hand-over on (report.h5 has every sample).
  std::vector<std::int64_t> steps;
  std::vector<double> model, zero, persistence, linear;
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    if (r.steps[i] < r.handover_step) continue;
    steps.push_back(r.steps[i]);
    model.push_back(r.rel_l2[i]);
    zero.push_back(r.baseline_zero[i]);
    persistence.push_back(r.baseline_persistence[i]);
    linear.push_back(r.baseline_linear[i]);
  }
  w.key("series").begin_object();
  w.field("step", steps).field("surrogate", model).field("zero", zero).field("persistence", persistence);
  w.field("linear", linear);
  w.end_object();
  w.end_object();
}

void evaluation_json(json::Writer& w, const CampaignConfig& cfg) {
  const auto& s = cfg.surrogate;
  const std::int64_t horizon = s.horizon < 0 ? cfg.steps : s.horizon;
  const auto split = campaign_time_split(s.start, horizon, cfg.sample_every, s.heldout_fraction,
                                         "campaign.surrogate.heldout_fraction");
  w.key("evaluation").begin_object();
  w.field("heldout_fraction", s.heldout_fraction);
  w.key("train_steps").begin_array().value(split.train_begin).value(split.train_end).end_array();
  if (split.heldout_end > split.heldout_begin)
    w.key("heldout_steps").begin_array().value(split.heldout_begin).value(split.heldout_end).end_array();
  else
    w.key("heldout_steps").null();
  std::vector<std::int64_t> trained(s.train_experiments.begin(), s.train_experiments.end());
  std::vector<std::int64_t> heldout(s.heldout_experiments.begin(), s.heldout_experiments.end());
  w.field("train_experiments", trained).field("heldout_experiments", heldout);
  w.field("in_sample_only", !(split.heldout_end > split.heldout_begin) && heldout.empty());
  w.field("baselines", std::vector<std::string>{"zero", "persistence", "linear"});
  w.end_object();
}

std::string rollout_md(const CampaignConfig& cfg, const std::vector<VariantResult>& results) {
  std::ostringstream os;
  bool any = false;
  for (const auto& r : results) any = any || rollout_score(r).valid;
  if (!any) return "";
  const auto& sp = cfg.surrogate;
  const std::int64_t horizon = sp.horizon < 0 ? cfg.steps : sp.horizon;
  const auto split = campaign_time_split(sp.start, horizon, cfg.sample_every, sp.heldout_fraction,
                                         "campaign.surrogate.heldout_fraction");
  os << "\n### Rollouts beside the free baselines\n\n";
  std::string experiments;
  for (const auto& r : results)
    if (r.experiment > 0 && rollout_score(r).valid && experiments.find(r.window) == std::string::npos)
      experiments += (experiments.empty() ? "" : ", ") + r.window;
  auto list = [](const std::vector<int>& v) {
    std::string t;
    for (const int e : v) t += (t.empty() ? "" : ", ") + std::to_string(e);
    return t;
  };
  if (!sp.heldout_experiments.empty())
    os << "Online training used the reference trajectories of experiments " << list(sp.train_experiments)
       << " (campaign.surrogate.train_experiments); the rollouts marked held-out <experiment> ("
       << (experiments.empty() ? std::string("none ran") : experiments) << ") are scored from step "
       << sp.start << " to " << horizon
       << " of an experiment training never saw (campaign.surrogate.heldout_experiments). ";
  if (split.heldout_end > split.heldout_begin)
    os << "Online training used the reference states of steps " << split.train_begin << " to "
       << split.train_end << "; the in-sample rollouts are scored there, the held-out ones from step "
       << split.heldout_begin << " to " << split.heldout_end
       << ", on states training never saw (campaign.surrogate.heldout_fraction " << num(sp.heldout_fraction)
       << ").";
  else if (!sp.heldout_experiments.empty())
    os << "The other rollouts are scored on the trajectory the surrogate trained on (in-sample).";
  else
    os << "**In-sample only**: every rollout is scored on the trajectory the surrogate trained on "
          "(campaign.surrogate.heldout_fraction is 0); these numbers say nothing about states it has not "
          "seen.";
  os << " Relative L2 error of the primary field against the reference, beside three predictions that cost "
        "nothing, from the same hand-over state: the zero field, persistence (the hand-over state held) "
        "and linear extrapolation (its rate of change over the last physics step). n: surrogate "
        "predictions since the hand-over.\n\n";
  os << "| variant | window | hand-over | n at end | surrogate | zero | persistence | linear | at the end | "
        "mean "
        "n = 13-30: surrogate / zero / persistence / linear |\n";
  os << "|---|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& r : results) {
    const auto s = rollout_score(r);
    if (!s.valid) continue;
    os << "| " << r.name << " | " << r.window << " | " << r.handover_step << " | "
       << (s.end_predictions > 0 ? std::to_string(s.end_predictions) : std::string("-")) << " | "
       << num(s.end.model) << " | " << num(s.end.zero) << " | " << num(s.end.persistence) << " | "
       << num(s.end.linear) << " | " << verdict(s.beaten_at_end) << " | ";
    if (s.mean_samples > 0)
      os << num(s.mean_13_30.model) << " / " << num(s.mean_13_30.zero) << " / "
         << num(s.mean_13_30.persistence) << " / " << num(s.mean_13_30.linear) << " ("
         << verdict(s.beaten_13_30) << ")";
    else
      os << "n/a";
    os << " |\n";
  }
  // Per rollout: the error after n predictions beside the baselines (about every doubling of n).
  os << "\nRel. L2 after n predictions: surrogate (zero / persistence / linear); every sample is in "
        "report.h5 "
        "and report.json (`rollout.series`).\n\n";
  for (const auto& r : results) {
    const auto s = rollout_score(r);
    if (!s.valid || s.stride <= 0) continue;
    os << "- " << r.name << " (" << r.window << ")";
    std::int64_t shown = 0;
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      if (r.steps[i] < r.handover_step) continue;
      const std::int64_t n = (r.steps[i] - r.handover_step) / s.stride;
      if (n < 1 || (n < 2 * shown && i + 1 < r.steps.size())) continue;
      os << (shown > 0 ? "; " : ": ") << "n = " << n << ": " << num(r.rel_l2[i]) << " ("
         << num(r.baseline_zero[i]) << " / " << num(r.baseline_persistence[i]) << " / "
         << num(r.baseline_linear[i]) << ")";
      shown = n;
    }
    os << "\n";
  }
  return os.str();
}

std::vector<SpeedPlacement> speed_placement(const std::vector<VariantResult>& results,
                                            const TrainingResult& t) {
  std::vector<SpeedPlacement> out;
  if (results.empty()) return out;
  const auto& ref = results.front();
  const bool ref_timed = !ref.timed_seconds_per_step.empty();
  const double t_phys = ref_timed            ? summarize(ref.timed_seconds_per_step).median
                        : ref.steps_done > 0 ? (ref.time.steps + ref.time.inference) / double(ref.steps_done)
                                             : 0.0;
  if (!(t_phys > 0.0)) return out;
  std::string fastest;
  double t_fastest = 0.0;
  for (const auto& r : results) {
    if ((r.kind != "reference" && r.kind != "physics") || r.timed_seconds_per_step.empty()) continue;
    const double m = summarize(r.timed_seconds_per_step).median;
    if (m > 0.0 && (fastest.empty() || m < t_fastest)) {
      fastest = r.name;
      t_fastest = m;
    }
  }
  for (const auto& r : results) {
    if (r.kind != "surrogate" || r.surrogate_steps < 1 || !(r.time.inference > 0.0)) continue;
    SpeedPlacement p;
    p.name = r.name;
    p.stride = (r.steps_done - r.physics_steps) / r.surrogate_steps;
    if (p.stride < 1) continue;
    p.physics_s_per_step = t_phys;
    p.physics_method = ref_timed ? "timed" : "in-run";
    p.s_per_prediction = r.time.inference / double(r.surrogate_steps);
    p.s_per_simulated_step = p.s_per_prediction / double(p.stride);
    p.ratio = p.s_per_simulated_step / t_phys;
    p.fastest_physics = fastest;
    p.fastest_physics_s_per_step = t_fastest;
    p.ratio_to_fastest = t_fastest > 0.0 ? p.s_per_simulated_step / t_fastest : 0.0;
    p.achieved_flops = t.flops_per_prediction > 0.0 ? t.flops_per_prediction / p.s_per_prediction : 0.0;
    p.break_even_k_measured = p.s_per_prediction / t_phys;
    p.break_even_k_peak = t.gemm_peak_flops > 0.0 && t.flops_per_prediction > 0.0
                              ? t.flops_per_prediction / t.gemm_peak_flops / t_phys
                              : 0.0;
    out.push_back(p);
  }
  return out;
}

void speed_placement_json(json::Writer& w, const std::vector<VariantResult>& results,
                          const TrainingResult& t) {
  const auto ps = speed_placement(results, t);
  w.key("speed_placement").begin_object();
  w.field("physics_s_per_step", ps.empty() ? std::nan("") : ps.front().physics_s_per_step);
  w.field("physics_method", ps.empty() ? std::string("none") : ps.front().physics_method);
  if (!ps.empty() && !ps.front().fastest_physics.empty())
    w.field("fastest_physics", ps.front().fastest_physics)
        .field("fastest_physics_s_per_step", ps.front().fastest_physics_s_per_step);
  else
    w.key("fastest_physics").null().key("fastest_physics_s_per_step").null();
  w.field("flops_per_prediction", t.flops_per_prediction > 0.0 ? t.flops_per_prediction : std::nan(""));
  if (t.gemm_peak_flops > 0.0)
    w.field("gemm_gflops", t.gemm_peak_flops * 1e-9).field("gemm", t.gemm_peak_what);
  else
    w.key("gemm_gflops").null().field("gemm", std::string("not measured"));
  w.key("rollouts").begin_array();
  for (const auto& p : ps) {
    w.begin_object().field("name", p.name).field("stride", p.stride);
    w.field("s_per_prediction", p.s_per_prediction).field("s_per_simulated_step", p.s_per_simulated_step);
    w.field("ratio_to_physics", p.ratio);
    w.field("ratio_to_fastest_physics", p.ratio_to_fastest > 0.0 ? p.ratio_to_fastest : std::nan(""));
    w.field("achieved_gflops", p.achieved_flops > 0.0 ? p.achieved_flops * 1e-9 : std::nan(""));
    w.field("break_even_k_measured", p.break_even_k_measured);
    w.field("break_even_k_at_gemm_rate", p.break_even_k_peak > 0.0 ? p.break_even_k_peak : std::nan(""));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

std::string speed_placement_md(const std::vector<VariantResult>& results, const TrainingResult& t) {
  const auto ps = speed_placement(results, t);
  if (ps.empty()) return "";
  std::ostringstream os;
  const auto& f = ps.front();
  const bool fastest = !f.fastest_physics.empty();
  os << "\n### Where the surrogate pays\n\n";
  os << "Time per simulated physics step (s): the surrogate's inference time per prediction (measured in the "
        "rollout) divided by its stride K, beside the reference physics' time per step ("
     << num(f.physics_s_per_step) << " s, "
     << (f.physics_method == "timed"
             ? std::string("the median of its timed stretches")
             : std::string("**its in-run time**: campaign.timing.repeats is 0, so the "
                           "physics was not timed and this ratio is not a speed "
                           "measurement"))
     << ")";
  if (fastest)
    os << " and the fastest physics variant's (" << f.fastest_physics << ", "
       << num(f.fastest_physics_s_per_step) << " s, timed)";
  os << ", all measured in this run. "
     << "Break-even K: the stride at which one prediction costs what K reference physics steps cost, at the "
        "prediction's measured cost and at the measured GEMM rate ("
     << (t.gemm_peak_flops > 0.0 ? num(t.gemm_peak_flops * 1e-9) + " GFLOP/s, " + t.gemm_peak_what
                                 : std::string("not measured"))
     << ") for its " << num(t.flops_per_prediction * 1e-9) << " GFLOP; a stride above it pays.\n\n";
  // "x physics": s per simulated step / the reference's; "x <fastest>": / the fastest variant's
  // (a column only where a physics variant was timed).
  os << "| variant | K | s per prediction | s per simulated step | x physics | "
     << (fastest ? "x " + f.fastest_physics + " | " : std::string())
     << "GFLOP/s achieved | break-even K (measured) | break-even K (GEMM rate) |\n";
  os << "|---|---:|---:|---:|---:|" << (fastest ? "---:|" : "") << "---:|---:|---:|\n";
  for (const auto& p : ps)
    os << "| " << p.name << " | " << p.stride << " | " << num(p.s_per_prediction) << " | "
       << num(p.s_per_simulated_step) << " | " << num(p.ratio) << " | "
       << (fastest ? (p.ratio_to_fastest > 0.0 ? num(p.ratio_to_fastest) : std::string("n/a")) + " | "
                   : std::string())
       << (p.achieved_flops > 0.0 ? num(p.achieved_flops * 1e-9) : std::string("n/a")) << " | "
       << num(p.break_even_k_measured) << " | "
       << (p.break_even_k_peak > 0.0 ? num(p.break_even_k_peak) : std::string("n/a")) << " |\n";
  return os.str();
}

}  // namespace mantissa::workflow
