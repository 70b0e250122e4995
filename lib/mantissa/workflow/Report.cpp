#include <mantissa/core/Error.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/io/Xdmf.hpp>
#include <mantissa/workflow/Report.hpp>
#include <mantissa/workflow/RolloutReport.hpp>
#include <mantissa/workflow/detail/H5Archive.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace mantissa::workflow {

namespace {

std::string num(double v, int prec = 3) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(prec);
  os << v;
  return os.str();
}

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// " (surrogate)" for the variants a surrogate stepped (their result kind), else "".
std::string kind_note(const VariantResult& r) {
  return r.kind == "reference" || r.kind == "physics" ? std::string() : " (" + r.kind + ")";
}

double stepping_seconds(const VariantResult& r) {
  return r.time.steps + r.time.inference;
}

}  // namespace

SpeedSummary speed_summary(const VariantResult& r, const VariantResult& reference);

namespace {
// "0.153 [0.150-0.160]" (ms) for a timed variant, "0.153 (in-run)" otherwise.
std::string step_cell(const SpeedSummary& sp) {
  if (!sp.timed) return num(sp.time_per_step * 1e3) + " (" + sp.method + ")";
  return num(sp.timing.median * 1e3) + " [" + num(sp.timing.min * 1e3) + "-" + num(sp.timing.max * 1e3) + "]";
}
// "1.36", or "1.02 (noise)" when the ranges of the repeats overlap the reference's.
std::string speedup_cell(const SpeedSummary& sp) {
  return num(sp.speedup) + (sp.speedup_within_noise ? " (noise)" : "");
}
bool is_physics(const VariantResult& r) {
  return r.kind == "reference" || r.kind == "physics";
}

// Temporary, fsync, rename, fsync of the directory (io/DurableFile.hpp): a full disk or a
// crash leaves no truncated file under the final name, and the error names file and cause.
void write_file(const std::string& path, const std::string& text) {
  io::write_file_durably(path, text);
}
}  // namespace

SpeedSummary speed_summary(const VariantResult& r, const VariantResult& reference) {
  SpeedSummary s;
  const double nan = std::nan("");
  const double t = stepping_seconds(r);
  s.in_run_time_per_step = (r.steps_done > 0 && t > 0.0) ? t / double(r.steps_done) : nan;
  s.timed = !r.timed_seconds_per_step.empty();
  if (s.timed) s.timing = summarize(r.timed_seconds_per_step, r.timed_steps_per_repeat, r.timed_warmup_steps);
  // A pure rollout's own cost is its predictions: their inference time per simulated step (its
  // physics lead-in steps are the physics', whose speed the timed stretches measure).
  const std::int64_t predicted = r.steps_done - r.physics_steps;
  const bool predictions =
      !s.timed && r.kind == "surrogate" && r.surrogate_steps > 0 && predicted > 0 && r.time.inference > 0.0;
  s.method = s.timed ? "timed" : predictions ? "predictions" : "in-run";
  s.time_per_step = s.timed       ? s.timing.median
                    : predictions ? r.time.inference / double(predicted)
                                  : s.in_run_time_per_step;
  if (s.time_per_step > 0.0) {
    s.cell_updates_per_s = r.steps_done > 0 ? r.cell_updates / double(r.steps_done) / s.time_per_step : 0.0;
    s.gflops = r.steps_done > 0 ? r.flops / double(r.steps_done) / s.time_per_step * 1e-9 : 0.0;
  }
  // Bandwidth only where the physics did all the stepping (the traffic model is the physics').
  if (is_physics(r) && r.time.steps > 0.0 && r.bytes > 0.0 && r.steps_done > 0 && s.time_per_step > 0.0) {
    const double bytes_per_step = r.bytes / double(r.steps_done);
    s.bandwidth_gbs =
        bytes_per_step / (s.timed ? s.time_per_step : r.time.steps / double(r.steps_done)) * 1e-9;
  }
  // Speed-up against the reference's timed median whenever the reference was timed: a variant
  // without timed stretches (a surrogate) is placed against it too, never against the reference's
  // in-run time (one fenced step at a time, with the recording around it: on a loaded machine
  // many times the timed step). Without timed stretches of the reference, in-run against in-run.
  const bool ref_timed = !reference.timed_seconds_per_step.empty();
  double tref = 0.0;
  if (ref_timed) {
    tref = summarize(reference.timed_seconds_per_step).median;
  } else {
    const double tr = stepping_seconds(reference);
    tref = reference.steps_done > 0 && tr > 0.0 ? tr / double(reference.steps_done) : 0.0;
  }
  s.reference_time_per_step = tref > 0.0 ? tref : nan;
  const double mine = s.timed && !ref_timed ? s.in_run_time_per_step : s.time_per_step;
  s.speedup = (tref > 0.0 && mine > 0.0) ? tref / mine : nan;
  s.speedup_method =
      ref_timed ? (s.timed ? std::string("timed") : s.method + " vs timed reference") : std::string("in-run");
  s.speedup_within_noise = s.timed && ref_timed && &r != &reference && r.name != reference.name &&
                           difference_within_noise(summarize(reference.timed_seconds_per_step), s.timing);
  s.triad_gbs = reference.triad_gbs > 0.0 ? reference.triad_gbs : nan;
  s.bandwidth_fraction = s.bandwidth_gbs > 0.0 && s.triad_gbs > 0.0 ? s.bandwidth_gbs / s.triad_gbs : nan;
  s.fixed_step_seconds =
      r.fixed_step_seconds >= 0.0 ? r.fixed_step_seconds : (r.launch_seconds >= 0.0 ? r.launch_seconds : nan);
  s.fixed_fraction =
      s.fixed_step_seconds >= 0.0 && s.time_per_step > 0.0 ? s.fixed_step_seconds / s.time_per_step : nan;
  if (s.fixed_fraction >= fixed_cost_warning_fraction) {
    std::ostringstream os;
    os.precision(3);
    os << r.name << ": the step (" << s.time_per_step * 1e3 << " ms) is close to its fixed part ("
       << s.fixed_step_seconds * 1e3
       << " ms: halo exchanges, boundary fills, launches), so it is too small to tell precisions apart; "
          "time a larger grid (campaign.timing, mesh.n)";
    s.warning = os.str();
  }
  return s;
}

std::string main_table(const Campaign& c) {
  const auto& res = c.results();
  const auto& ref = res.front();
  const auto& sec = c.report_section();
  const auto extra = sec.table_columns();
  std::ostringstream os;
  os << "| variant | storage/compute | status | time/step [ms] median [min-max] | speed-up vs " << ref.storage
     << " | rel. L2 (final) | max error | ";
  for (const auto& h : extra) os << h << " | ";
  os << "energy drift | t(err > " << num(c.config().error_threshold) << ") |\n";
  os << "|---|---|---|---:|---:|---:|---:|";
  for (std::size_t i = 0; i < extra.size(); ++i) os << "---:|";
  os << "---:|---:|\n";
  for (const auto& r : res) {
    const auto sp = speed_summary(r, ref);
    os << "| " << r.name << " | " << r.storage << "/" << r.compute << kind_note(r) << " | " << r.status
       << " | " << step_cell(sp) << " | " << speedup_cell(sp) << " | " << num(r.final_rel_l2) << " | "
       << num(r.final_max_error) << " | ";
    const auto cells = sec.table_cells(r);
    MANTISSA_ASSERT(cells.size() == extra.size(),
                    "report section: " << cells.size() << " cells for " << extra.size() << " columns");
    for (const auto& x : cells) os << x << " | ";
    os << num(r.final_energy_drift) << " | "
       << (r.threshold_time < 0 ? std::string("never") : num(r.threshold_time)) << " |\n";
  }
  return os.str();
}

namespace {

// The keyed calls report_json() makes, on core's json::Writer (a key of "" inside an array).
class J {
 public:
  J& begin_object(const std::string& k = {}) {
    key(k);
    m_w.begin_object();
    return *this;
  }
  J& end_object() {
    m_w.end_object();
    return *this;
  }
  J& begin_array(const std::string& k = {}) {
    key(k);
    m_w.begin_array();
    return *this;
  }
  J& end_array() {
    m_w.end_array();
    return *this;
  }
  template <class T>
  J& value(const std::string& k, const T& v) {
    key(k);
    m_w.value(v);
    return *this;
  }
  J& null(const std::string& k) {
    key(k);
    m_w.null();
    return *this;
  }
  json::Writer& writer() { return m_w; }
  std::string str() const { return m_w.str() + "\n"; }

 private:
  void key(const std::string& k) {
    if (!k.empty()) m_w.key(k);
  }
  json::Writer m_w;
};

std::string report_json(const Campaign& c, const ReportInfo& info) {
  const auto& cfg = c.config();
  const auto& res = c.results();
  const auto& m = info.machine;
  J j;
  j.begin_object();
  j.value("schema", "mantissa-report").value("schema_version", report_schema_version);
  j.value("created", now_iso());
  j.begin_object("mantissa")
      .value("version", info.mantissa_version)
      .value("command", info.command)
      .end_object();
  j.begin_object("context");
  j.value("hostname", m.hostname).value("nodes", m.nodes).value("cpu", m.cpu).value("cores", m.cores);
  j.value("backend", m.backend);
  j.begin_array("devices");
  for (const auto& d : m.devices) j.value("", d);
  j.end_array();
  j.value("kokkos_version", m.kokkos_version)
      .value("mpi_version", m.mpi_version)
      .value("hdf5_version", m.hdf5_version);
  j.value("ranks", m.ranks).value("threads_per_rank", m.threads_per_rank);
  j.begin_object("precisions");
  std::map<std::string, std::string> support;
  for (const auto& r : res)
    if (!r.precision_support.empty())
      support[r.storage + (r.kind == "reference" || r.kind == "physics" ? "" : " (surrogate)")] =
          r.precision_support;
  for (const auto& kv : support) j.value(kv.first, kv.second);
  j.end_object();
  j.begin_object("deck")
      .value("file", cfg.deck_file)
      .value("hash", cfg.deck_hash)
      .value("resolved", cfg.deck_resolved);
  j.end_object();
  j.value("resumed", c.resumed());
  if (c.resumed()) j.value("resumed_at_campaign_step", c.resumed_at_step());
  j.value("wall_seconds", info.wall_seconds);
  j.value("memory_note", c.memory_note());
  j.value("energy_meter", c.energy_source());
  // The machine's bounds, measured in this job (the reference phase, before any variant stepped).
  const auto& ref0 = res.front();
  if (ref0.triad_gbs > 0.0) {
    j.begin_object("bounds");
    j.value("triad_GBps", ref0.triad_gbs).value("triad_median_GBps", ref0.triad_median_gbs);
    j.value("triad_rank_min_GBps", ref0.triad_rank_min_gbs)
        .value("triad_rank_max_GBps", ref0.triad_rank_max_gbs);
    j.value("triad_elements_per_rank", ref0.triad_elements).value("where", ref0.triad_where);
    j.end_object();
  } else {
    j.null("bounds");
  }
  j.end_object();

  j.begin_object("campaign");
  j.value("physics", cfg.physics).value("kind", cfg.kind).value("steps", cfg.steps);
  j.value("sample_every", cfg.sample_every);
  j.value("error_threshold", cfg.error_threshold)
      .value("reference", std::string(to_string(cfg.reference_precision)));
  const auto shape = c.global_shape();
  j.begin_array("grid_shape_zyx");
  for (auto n : shape) j.value("", n);
  j.end_array();
  c.report_section().campaign_json(j.writer(), c);
  j.end_object();

  j.begin_object("surrogate");
  j.value("enabled", cfg.surrogate.enabled);
  if (cfg.surrogate.enabled) {
    const auto& t = c.training();
    j.value("model", cfg.surrogate.model).value("description", c.surrogate_description());
    j.begin_object("training")
        .value("mode", t.mode)
        .value("samples", t.samples)
        .value("iterations", t.iterations);
    j.value("initial_loss", t.initial_loss).value("final_loss", t.final_loss).value("seconds", t.seconds);
    if (t.flops > 0 && t.seconds > 0)
      j.value("gflops", t.flops / t.seconds * 1e-9);
    else
      j.null("gflops");
    if (std::isfinite(t.one_step_rel_l2)) {
      j.begin_object("one_step")
          .value("rel_l2", t.one_step_rel_l2)
          .value("pairs", t.one_step_pairs)
          .value("precision", t.one_step_precision)
          .end_object();
    } else {
      j.null("one_step");
    }
    j.end_object();
    j.value("start_step", cfg.surrogate.start);
    evaluation_json(j.writer(), cfg);          // the training and held-out windows (RolloutReport.hpp)
    speed_placement_json(j.writer(), res, t);  // where the surrogate pays (RolloutReport.hpp)
  }
  j.end_object();

  j.begin_array("variants");
  for (const auto& r : res) {
    const auto sp = speed_summary(r, res.front());
    j.begin_object();
    j.value("name", r.name).value("kind", r.kind).value("storage", r.storage).value("compute", r.compute);
    j.value("precision_support", r.precision_support).value("description", r.description);
    j.value("status", r.status);
    if (r.status == "failed")
      j.begin_object("failure").value("message", r.failure).value("step", r.failure_step).end_object();
    else
      j.null("failure");
    j.begin_object("accuracy");
    // false: a timing campaign (campaign.kind timing), nothing compared; the numbers are null.
    j.value("measured", !r.steps.empty());
    j.value("final_rel_l2", r.final_rel_l2).value("max_rel_l2", r.max_rel_l2);
    j.value("final_max_error", r.final_max_error);
    for (const auto& metric : r.metrics) {
      // A metric that is an integer (a lag in steps) is written as one; NaN as null.
      if (metric.integer && std::isfinite(metric.value))
        j.value(metric.name, static_cast<std::int64_t>(metric.value));
      else
        j.value(metric.name, metric.value);
    }
    j.value("final_energy_drift", r.final_energy_drift).value("max_abs_energy_drift", r.max_abs_energy_drift);
    if (r.threshold_time >= 0)
      j.value("threshold_time", r.threshold_time);
    else
      j.null("threshold_time");
    j.value("samples", std::int64_t(r.steps.size()));
    j.end_object();
    j.begin_object("speed");
    j.begin_object("phases_s").value("setup", r.time.setup).value("steps", r.time.steps);
    j.value("training", r.time.training).value("inference", r.time.inference).value("io", r.time.io);
    j.value("analysis", r.time.analysis).value("timing", r.time.timing).end_object();
    j.value("steps", r.steps_done)
        .value("surrogate_steps", r.surrogate_steps)
        .value("physics_steps", r.physics_steps);
    j.value("time_per_step_s", sp.time_per_step).value("speedup_vs_reference", sp.speedup);
    j.value("method", sp.method).value("speedup_method", sp.speedup_method);
    j.value("reference_time_per_step_s", sp.reference_time_per_step);
    j.value("in_run_time_per_step_s", sp.in_run_time_per_step);
    if (sp.timed) {
      const auto& t = sp.timing;
      j.begin_object("timing");
      j.value("median_s", t.median).value("q1_s", t.q1).value("q3_s", t.q3).value("min_s", t.min);
      j.value("max_s", t.max).value("relative_spread", t.relative_spread()).value("repeats", t.repeats());
      j.value("steps_per_repeat", t.steps_per_repeat).value("warmup_steps", t.warmup_steps);
      j.begin_array("samples_s");
      for (double x : t.samples) j.value("", x);
      j.end_array();
      // Where each sample fell in the job's sequence of timed stretches (interleaved over the variants).
      j.begin_array("sequence");
      for (auto x : r.timed_sequence) j.value("", x);
      j.end_array().end_object();
    } else {
      j.null("timing");
    }
    if (sp.timed && r.kind != "reference")
      j.value("speedup_within_noise", sp.speedup_within_noise);
    else
      j.null("speedup_within_noise");
    j.begin_object("bound")
        .value("triad_GBps", sp.triad_gbs)
        .value("fraction_of_triad", sp.bandwidth_fraction);
    j.end_object();
    j.value("fixed_step_s", sp.fixed_step_seconds);
    j.value("launch_s", r.launch_seconds >= 0.0 ? r.launch_seconds : std::nan(""));
    j.value("fixed_step_fraction", sp.fixed_fraction);
    if (sp.warning.empty())
      j.null("warning");
    else
      j.value("warning", sp.warning);
    j.value("cell_updates_per_s", sp.cell_updates_per_s > 0 ? sp.cell_updates_per_s : std::nan(""));
    j.value("effective_bandwidth_GBps", sp.bandwidth_gbs > 0 ? sp.bandwidth_gbs : std::nan(""));
    j.value("gflops", sp.gflops > 0 ? sp.gflops : std::nan(""));
    j.value("memory_hwm_MiB", r.memory_hwm_mib);
    if (r.energy_joules >= 0)
      j.value("energy_J", r.energy_joules);
    else
      j.null("energy_J");
    j.value("energy_note", r.energy_joules >= 0 ? c.energy_source() : std::string("not measured"));
    j.end_object();
    if (!r.subnormals_requested.empty()) {
      j.begin_object("subnormals");
      j.value("requested", r.subnormals_requested).value("in_force", r.subnormals_in_force);
      j.value("control", r.subnormals_control).value("mechanism", r.subnormals_mechanism);
      j.begin_array("census_steps");
      for (auto st : r.census_steps) j.value("", st);
      j.end_array();
      j.begin_array("census");
      for (const auto& f : r.census) {
        j.begin_object().value("field", f.name).value("storage", f.storage).value("values", f.values);
        j.begin_array("subnormal");
        for (auto x : f.subnormal) j.value("", x);
        j.end_array().begin_array("zero");
        for (auto x : f.zero) j.value("", x);
        j.end_array().begin_array("subnormal_share");
        double mx = 0.0;
        for (auto x : f.subnormal) {
          const double sh = f.values > 0 ? double(x) / double(f.values) : 0.0;
          mx = std::fmax(mx, sh);
          j.value("", sh);
        }
        j.end_array().value("max_subnormal_share", mx).end_object();
      }
      j.end_array().end_object();
    } else {
      j.null("subnormals");
    }
    if (r.kind == "hybrid") hybrid_json(j.writer(), r, cfg.surrogate.hybrid);
    rollout_json(j.writer(), r);  // surrogate and hybrid: window and baselines (RolloutReport.hpp)
    j.end_object();
  }
  j.end_array();
  j.begin_object("outputs").value("json", "report.json").value("markdown", "report.md");
  j.value("timeseries", "report.h5").value("snapshots_xdmf", "snapshots.xmf").value("log", "run.log");
  j.value("checkpoints", "checkpoints/");
  c.report_section().outputs_json(j.writer(), c);
  j.end_object();
  j.end_object();
  return j.str();
}

// The speed column, read the way docs/user-guide.md ("Reading the speed column") explains.
std::string speed_md(const Campaign& c) {
  const auto& res = c.results();
  const auto& ref = res.front();
  std::ostringstream os;
  os << "## Speed\n\n";
  if (ref.triad_gbs > 0.0)
    os << "Memory bound measured in this job (STREAM triad, " << ref.triad_where << ", "
       << num(double(ref.triad_elements) * 24.0 / 1048576.0) << " MiB per rank): " << num(ref.triad_gbs)
       << " GB/s best, " << num(ref.triad_median_gbs) << " GB/s median; per rank "
       << num(ref.triad_rank_min_gbs) << "-" << num(ref.triad_rank_max_gbs) << " GB/s.\n\n";
  else
    os << "Memory bound: not measured (campaign.timing.repeats = 0).\n\n";
  os << "| variant | subnormals | time/step median [ms] | q1-q3 [ms] | min-max [ms] | spread | repeats x "
        "steps | "
        "speed-up | bandwidth [GB/s] | of triad | fixed part [ms] | in-run [ms] |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<std::string> warnings;
  for (const auto& r : res) {
    const auto sp = speed_summary(r, ref);
    const auto& t = sp.timing;
    auto pct = [](double f) { return std::isfinite(f) ? num(100.0 * f) + " %" : std::string("n/a"); };
    os << "| " << r.name << kind_note(r) << " | "
       << (r.subnormals_in_force.empty() ? "-" : r.subnormals_in_force) << " | ";
    if (sp.timed)
      os << num(t.median * 1e3) << " | " << num(t.q1 * 1e3) << "-" << num(t.q3 * 1e3) << " | "
         << num(t.min * 1e3) << "-" << num(t.max * 1e3) << " | " << pct(t.relative_spread()) << " | "
         << t.repeats() << " x " << t.steps_per_repeat << " | ";
    else
      os << num(sp.time_per_step * 1e3) << " (" << sp.method << ") | - | - | - | - | ";
    os << speedup_cell(sp) << " | " << (sp.bandwidth_gbs > 0.0 ? num(sp.bandwidth_gbs) : std::string("n/a"))
       << " | " << pct(sp.bandwidth_fraction) << " | "
       << (std::isfinite(sp.fixed_step_seconds) ? num(sp.fixed_step_seconds * 1e3) : std::string("n/a"))
       << " | " << num(sp.in_run_time_per_step * 1e3) << " |\n";
    if (!sp.warning.empty()) warnings.push_back(sp.warning);
  }
  os << "\nTime per step: the median of the timed stretches (each the same trajectory as the accuracy run, "
        "from the initial state after untimed warm-up steps, nothing recorded inside it; the slowest rank's "
        "time), interleaved: round r timed stretch r of every variant in turn, starting with the r-th "
        "variant "
        "(rotated), so a load burst falls on all of them alike; spread = (max - min) / median; \"(noise)\": "
        "the repeats' range overlaps the "
        "reference's, so the speed-up is inside the noise. In-run: the accuracy run's own stepping, one "
        "fenced step at a time (with the recording around it; not a speed measurement); predictions: a "
        "rollout's inference time per simulated step, in-run. Every speed-up divides the reference's timed "
        "median (surrogates included) when the reference was timed. Bandwidth: the physics' minimum-traffic "
        "model per step / time per step, and as a fraction of the triad. Fixed part: the step's halo "
        "exchanges and boundary fills (or one kernel launch + fence) timed alone in this job.\n\n";
  for (const auto& w : warnings) os << "**Warning** " << w << ".\n\n";
  return os.str();
}

// The subnormal mode in force per variant, the census, and what flushing changed where a deck
// ran the same precision with and without it.
std::string subnormals_md(const Campaign& c) {
  const auto& res = c.results();
  std::ostringstream os;
  os << "## Subnormals\n\n";
  for (const auto& r : res) {
    if (r.subnormals_requested.empty()) continue;
    os << "- " << r.name << ": " << r.subnormals_mechanism;
    bool any = false;
    for (const auto& f : r.census) {
      double mx = 0.0;
      std::int64_t at = 0;
      for (std::size_t i = 0; i < f.subnormal.size(); ++i) {
        const double sh = f.values > 0 ? double(f.subnormal[i]) / double(f.values) : 0.0;
        if (sh > mx) {
          mx = sh;
          at = i < r.census_steps.size() ? r.census_steps[i] : 0;
        }
      }
      if (mx <= 0.0) continue;
      any = true;
      const double last =
          f.subnormal.empty() || f.values == 0 ? 0.0 : double(f.subnormal.back()) / double(f.values);
      os << "; " << f.name << " (" << f.storage << "): " << num(100.0 * mx, 3)
         << " % subnormal at most (step " << at << "), " << num(100.0 * last, 3) << " % at the end";
    }
    if (r.census_steps.empty())
      os << "; census not taken (no sample steps: a timing campaign)";
    else if (!any)
      os << "; no subnormal value in any of its " << r.census.size() << " state fields at the "
         << r.census_steps.size() << " sample steps";
    os << "\n";
  }
  // Same precision, one flushing and one not: what flushing changed.
  for (std::size_t a = 0; a < res.size(); ++a)
    for (std::size_t b = a + 1; b < res.size(); ++b) {
      const auto &x = res[a], &y = res[b];
      if (!is_physics(x) || !is_physics(y) || x.precision != y.precision || x.subnormals_in_force.empty() ||
          x.subnormals_in_force == y.subnormals_in_force)
        continue;
      const auto sx = speed_summary(x, res.front()), sy = speed_summary(y, res.front());
      os << "\nFlushing, same precision (" << x.precision << "): " << x.name << " (" << x.subnormals_in_force
         << ") rel. L2 " << num(x.final_rel_l2) << ", " << num(sx.time_per_step * 1e3) << " ms/step; "
         << y.name << " (" << y.subnormals_in_force << ") rel. L2 " << num(y.final_rel_l2) << ", "
         << num(sy.time_per_step * 1e3) << " ms/step.\n";
    }
  os << "\nShares are of the owned points of each state field that are subnormal in the type the field is "
        "stored in, at the sample steps of the first experiment (counted on the bits, so flushing does not "
        "hide them from the count). fp16 storage rounds what would be fp32 subnormals to zero; its own "
        "subnormals "
        "(below 6.1e-5) are normal numbers once converted to the fp32 the update computes in, so they cost "
        "the arithmetic nothing.\n\n";
  return os.str();
}

std::string report_md(const Campaign& c, const ReportInfo& info) {
  const auto& cfg = c.config();
  const auto& res = c.results();
  const auto& m = info.machine;
  std::ostringstream os;
  os << "# mantissa " << (cfg.kind == "timing" ? "timing" : "precision") << " campaign: " << cfg.physics
     << "\n\n";
  os << "Deck `" << cfg.deck_file << "` (hash `" << cfg.deck_hash << "`), " << cfg.steps
     << " steps, grid (z, y, x) = (" << c.global_shape()[0] << ", " << c.global_shape()[1] << ", "
     << c.global_shape()[2] << "), fields compared every " << cfg.sample_every << " steps. Error threshold "
     << num(cfg.error_threshold) << ".\n\n";
  os << "Machine: " << m.hostname << " (" << m.nodes << " node(s)), " << m.cpu << ", " << m.cores
     << " hardware threads; Kokkos " << m.kokkos_version << " (" << m.backend << ", " << m.threads_per_rank
     << " threads per rank); " << m.mpi_version << ", " << m.ranks << " ranks; HDF5 " << m.hdf5_version
     << ".\n\n";
  os << c.report_section().md_intro(c);
  if (c.resumed())
    os << "This run was resumed from a checkpoint at campaign step " << c.resumed_at_step() << ".\n\n";
  if (cfg.kind == "timing") {
    os << "## Accuracy\n\nNot measured: this is a timing campaign (campaign.kind: timing). Each variant ran "
          "only its timed stretches (campaign.timing), with nothing recorded and nothing compared with the "
          "reference; run the same deck with campaign.kind: precision (at a size where that is affordable) "
          "for the accuracy column.\n\n";
  } else {
    os << "## Accuracy and speed against the reference\n\n" << main_table(c) << "\n";
    os << "rel. L2 and max error: primary field against the reference at the last sample; "
       << c.report_section().md_legend()
       << "energy drift: (E(t) - E(0)) / |E(0)| at the end; t(err > threshold): first sample "
          "time the relative L2 passed the threshold. Definitions: docs/user-guide.md.\n\n";
  }
  os << speed_md(c);
  os << subnormals_md(c);
  os << "## Speed details\n\n| variant | set-up [s] | steps [s] | inference [s] | analysis [s] | cell "
        "updates/s | "
        "bandwidth [GB/s] | GFLOP/s | memory HWM [MiB] | energy [J] "
        "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : res) {
    const auto sp = speed_summary(r, res.front());
    auto opt = [](double v) { return v > 0 ? num(v) : std::string("not counted"); };
    os << "| " << r.name << " | " << num(r.time.setup) << " | " << num(r.time.steps) << " | "
       << num(r.time.inference) << " | " << num(r.time.analysis) << " | " << opt(sp.cell_updates_per_s)
       << " | " << opt(sp.bandwidth_gbs) << " | " << opt(sp.gflops) << " | " << num(r.memory_hwm_mib, 4)
       << " | " << (r.energy_joules >= 0 ? num(r.energy_joules) : std::string("not measured")) << " |\n";
  }
  os << "\nTime per step counts stepping (physics steps, surrogate inference and the hybrid's indicator), "
        "not "
        "set-up or analysis. Memory HWM is the process peak so far (it never decreases). Energy: "
     << c.energy_source() << ".\n\n";
  os << "## Precisions\n\nThe physics' combinations (" << c.precisions().describe() << ").\n\n";
  for (const auto& r : res)
    os << "- " << r.name << ": " << r.storage << " storage, " << r.compute << " compute, "
       << r.precision_support << " — " << r.description << "\n";
  if (cfg.surrogate.enabled) {
    const auto& t = c.training();
    os << "\n## Surrogate\n\n"
       << c.surrogate_description() << "\n\nTraining (" << t.mode << "): " << t.samples << " samples, "
       << t.iterations << " iterations, loss " << num(t.initial_loss) << " -> " << num(t.final_loss) << ", "
       << num(t.seconds) << " s.\n";
    if (cfg.surrogate.start > 0)
      os << "\nThe physics runs steps 0 to " << cfg.surrogate.start
         << " in every rollout and in the hybrid (campaign.surrogate.start); the surrogate takes over there"
         << (t.mode == "online" ? " and trained on the reference states from there on" : "")
         << (cfg.surrogate.heldout_fraction > 0.0
                 ? " (to the split; the held-out rollouts hand over at the split)"
                 : "")
         << ".\n";
    if (std::isfinite(t.one_step_rel_l2))
      os << "\nOne-step error (one prediction from each of " << t.one_step_pairs << " reference states, "
         << t.one_step_precision << "): rel. L2 " << num(t.one_step_rel_l2)
         << ". A rollout compounds it once per prediction.\n";
    // The rollouts' error beside the free baselines, in-sample and held out (RolloutReport.hpp).
    os << rollout_md(cfg, res);
    os << speed_placement_md(res, t);
    for (const auto& r : res)
      if (r.kind == "hybrid") os << hybrid_md(r, cfg.surrogate.hybrid);
  }
  bool any_failed = false;
  for (const auto& r : res) any_failed = any_failed || r.status == "failed";
  if (any_failed) {
    os << "\n## Failures\n\n";
    for (const auto& r : res)
      if (r.status == "failed") os << "- " << r.name << ": " << r.failure << "\n";
  }
  os << "\n## Memory\n\n" << c.memory_note() << ".\n";
  return os.str();
}

void write_xdmf(const Campaign& c, const std::string& path) {
  // The grid's real origin and spacing (io/Xdmf.hpp), so ParaView and VisIt show metres, not
  // point indices; report.h5 stores a 2D snapshot as (1, ny, nx).
  std::vector<io::XdmfField> fields;
  for (const auto& kv : c.snapshots()) fields.push_back({kv.first, "report.h5", "/snapshots/" + kv.first, 8});
  io::XdmfOptions o;
  o.as_3d = c.dim() == 2;
  io::write_xdmf(path, c.grid(), "final", fields, o);
}

void write_h5(const Campaign& c, const std::string& path) {
  // Through io's handle layer (io/H5File.hpp): every dataset with its checksum and element type,
  // written under a temporary name that is renamed durably once the file is complete.
  io::PendingFile out(path);
  {
    io::H5File f = io::H5File::create(out);
    f.set("schema", std::string("mantissa-report"));
    f.set("schema_version", std::int64_t(report_schema_version));
    // The probes' names ("receiver_names": the report.h5 layout of schema version 1).
    std::string names;
    for (const auto& n : c.probes().names) names += (names.empty() ? "" : "\n") + n;
    f.set("receiver_names", names);
    const io::H5Group gv = f.create_group("variants");
    for (auto r : c.results()) {  // a copy: serialize() takes non-const references
      const io::H5Group g = gv.create_group(r.name);
      detail::H5ArchiveWriter w(g);
      serialize(w, r);
      // The physics' metrics also as attributes of the variant, like every other scalar.
      for (const auto& m : r.metrics) {
        if (m.integer && std::isfinite(m.value))
          g.set(m.name, static_cast<std::int64_t>(m.value));
        else
          g.set(m.name, m.value);
      }
    }
    const io::H5Group gs = f.create_group("snapshots");
    const auto s = c.global_shape();
    for (const auto& kv : c.snapshots()) gs.write<double>(kv.first, {s[0], s[1], s[2]}, kv.second.data());
    f.close();
  }
  out.commit();
}
}  // namespace

std::vector<std::string> write_report(const Campaign& campaign, const ReportInfo& info,
                                      const std::string& dir) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return {};
  write_h5(campaign, dir + "/report.h5");
  write_xdmf(campaign, dir + "/snapshots.xmf");
  auto files = campaign.report_section().write_files(campaign, dir);
  write_file(dir + "/report.md", report_md(campaign, info));
  // report.json last: its presence means the run finished and every other file is complete.
  write_file(dir + "/report.json", report_json(campaign, info));
  return files;
}

}  // namespace mantissa::workflow
