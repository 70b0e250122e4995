#pragma once
// What a campaign measured, per variant (reference, physics variants, surrogate rollouts,
// hybrid). The same on every rank (all numbers are global). serialize() lists every member
// once for the HDF5 writer and reader, so report.h5 and the checkpoint cannot drift apart from
// the struct.
//
// Physics-neutral: probe traces are the physics' observation points (Probes); what a physics
// derives from them (seismic: receiver misfit and cross-correlation) its recorder adds as named
// metrics. The HDF5 names of the probe members ("traces", "num_receivers", "trace_stride",
// "extra_shots") are the report.h5 layout of schema version 1 (docs/report-schema.md).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace mantissa::workflow {

struct HandOver {
  std::int64_t step = 0;
  double time = 0.0;
  std::string reason;  // "energy" | "residual" | "non-finite"
  double energy_drift = 0.0;
  double residual = 0.0;
  // The hybrid's primary field against the reference at this step (relative L2, the campaign's
  // measure); NaN where the step is not a sample step (the reference keeps only those).
  double true_error = std::numeric_limits<double>::quiet_NaN();
};

// One evaluation of the hybrid's error indicator (HybridPhase): what it measured, the true error
// the campaign measures against the reference at the same step, and what it decided.
struct IndicatorCheck {
  std::int64_t step = 0;
  double energy_drift = 0.0;
  double residual = 0.0;
  double true_error = std::numeric_limits<double>::quiet_NaN();  // as HandOver::true_error
  std::string action;                                            // "continue", or the hand-over's reason
};

// An experiment after the first one (PhysicsModel::num_experiments): its probe traces (as
// VariantResult::traces, same stride) and its energy at the sample steps.
struct ExperimentRecord {
  std::vector<double> traces;
  std::vector<std::int64_t> steps;
  std::vector<double> times, energy;
};

// One named diagnostic (Diagnostics::values) at the sample steps.
struct DiagnosticSeries {
  std::string name;
  std::vector<double> values;
};

// A summary number a physics' recorder derives (Recorder::finish), written into the variant's
// accuracy section of report.json in this order; NaN: undefined (null).
struct Metric {
  std::string name;
  double value = 0.0;
  int integer = 0;  // 1: written as an integer (a lag in steps)
};

// One state field's subnormal census at the sample steps (SubnormalCensus.hpp): values that are
// subnormal in the type the field is stored in, one count per sample step of experiment 0.
struct CensusSeries {
  std::string name;
  std::string storage;                  // the field's storage precision
  std::int64_t values = 0;              // owned points over all ranks
  std::vector<std::int64_t> subnormal;  // per sample step (VariantResult::census_steps)
  std::vector<std::int64_t> zero;       // exactly +-0, per sample step
};

struct PhaseTimes {
  double setup = 0.0, steps = 0.0, training = 0.0, inference = 0.0, io = 0.0;  // seconds
  double analysis = 0.0;  // comparisons against the reference, diagnostics, probes (not in time per step)
  double timing = 0.0;    // the timed stretches and the fixed-cost measurement after the accuracy run
};

struct VariantResult {
  std::string name;
  std::string kind;  // the phase's result kind: "reference" | "physics" | "surrogate" | "hybrid" | ...
  std::string storage, compute;    // the storage and compute roles (report columns)
  std::string precision;           // every role: PrecisionSet::describe()
  std::string precision_support;   // "native" | "emulated"
  std::string status = "pending";  // "pending" | "running" | "ok" | "failed"
  std::string failure;             // diagnostic when failed: what, where, when
  std::int64_t failure_step = -1;
  std::string description;

  // Time series at the sample steps.
  std::vector<std::int64_t> steps;
  std::vector<double> times, rel_l2, max_error, energy, energy_drift;
  std::vector<DiagnosticSeries> diagnostics;  // every named diagnostic
  // Probe traces: one value per probe per recorded step (row = step, column = probe).
  std::vector<double> traces;
  std::int64_t num_probes = 0;
  std::int64_t trace_stride = 1;  // physics steps between two trace rows
  // Experiments 1, 2, ... (extra_experiments[i] is experiment i + 1); the members above are
  // experiment 0's, or, for a rollout on a held-out experiment, that experiment's (`experiment`).
  std::vector<ExperimentRecord> extra_experiments;

  // Summary accuracy (NaN where undefined; the report writes null).
  double final_rel_l2 = 0.0, max_rel_l2 = 0.0, final_max_error = 0.0;
  double final_energy_drift = 0.0, max_abs_energy_drift = 0.0;
  double threshold_time = -1.0;  // < 0: never crossed
  std::vector<Metric> metrics;   // the physics' own (Recorder::finish)

  // Speed.
  PhaseTimes time;
  std::int64_t steps_done = 0;                          // physics steps (or physics-step equivalents)
  std::int64_t surrogate_steps = 0;                     // surrogate steps (rollout, hybrid)
  std::int64_t physics_steps = 0;                       // physics steps inside hybrid
  double cell_updates = 0.0, bytes = 0.0, flops = 0.0;  // totals over the phase; 0: not counted
  double memory_hwm_mib = 0.0;  // process high-water mark after the phase (max over ranks)
  double energy_joules = -1.0;  // < 0: not measured
  // Timed stretches after the physics phases (SpeedPhase, StepTimer; campaign.timing): seconds per
  // step of each repeat, in the order run; empty: not timed (the speed column is the in-run time).
  std::vector<double> timed_seconds_per_step;
  std::int64_t timed_steps_per_repeat = 0, timed_warmup_steps = 0;
  // Where each of those stretches fell in the job's sequence of timed stretches (0-based; the
  // variants' stretches are interleaved: round r has stretch r of every variant, in an order that
  // starts with variant r mod n; StepTimer's interleaved_stepper).
  std::vector<std::int64_t> timed_sequence;
  // The step's fixed part, measured in the same job right after the timing (max over ranks, s):
  // the physics' own (halo exchanges, boundary fills; PhysicsModel::fixed_step_seconds) and one
  // kernel launch + fence; < 0: not measured.
  double fixed_step_seconds = -1.0, launch_seconds = -1.0;
  // The machine's memory bound (Machine.hpp measure_triad), measured once at the start of the
  // reference phase (the campaign's first) and kept in the reference's result; < 0: not measured.
  double triad_gbs = -1.0, triad_median_gbs = -1.0, triad_rank_min_gbs = -1.0, triad_rank_max_gbs = -1.0;
  std::int64_t triad_elements = 0;
  std::string triad_where;

  // Floating-point environment while the physics stepped (core/FloatEnv.hpp); empty for
  // phases that set none (surrogates run in the campaign's mode).
  std::string subnormals_requested;  // "flush" | "keep"
  std::string subnormals_in_force;   // "flush" | "keep" | "mixed"
  std::string subnormals_control;    // "run-time" | "compile-time" | "none"
  std::string subnormals_mechanism;  // FloatEnvReport::describe()
  // Subnormal census of every state field at the sample steps of experiment 0.
  std::vector<std::int64_t> census_steps;
  std::vector<CensusSeries> census;

  // Hybrid: its hand-overs and every evaluation of its indicator.
  std::vector<HandOver> handovers;
  std::vector<IndicatorCheck> indicator_checks;

  // Surrogate rollouts and the hybrid (RolloutPhase, Baselines.hpp): the window the rollout is
  // scored on ("in-sample": the states the surrogate trained on; "held-out": states it never
  // trained on; "whole run": the hybrid), the step where the physics handed the state to the
  // surrogate, and the three free baselines from that hand-over state, scored as rel_l2 is, at
  // the same samples (NaN before the hand-over).
  std::string window;
  std::int64_t handover_step = -1;
  // The experiment its series are of (PhysicsModel::select_experiment): 0, or the held-out
  // experiment of a rollout on one (campaign.surrogate.heldout_experiments).
  std::int64_t experiment = 0;
  std::vector<double> baseline_zero, baseline_persistence, baseline_linear;

  // The metric's value; NaN when the recorder did not set it.
  double metric(const std::string& n) const {
    for (const auto& m : metrics)
      if (m.name == n) return m.value;
    return std::numeric_limits<double>::quiet_NaN();
  }
  void set_metric(const std::string& n, double v, bool integer = false) {
    for (auto& m : metrics)
      if (m.name == n) {
        m.value = v;
        m.integer = integer ? 1 : 0;
        return;
      }
    metrics.push_back({n, v, integer ? 1 : 0});
  }
  // The probe traces of experiment e in this result: its own (`traces`, e == experiment) or
  // extra_experiments[e - 1]; nullptr where it holds no record of e.
  const std::vector<double>* traces_of(std::int64_t e) const {
    if (e == experiment) return &traces;
    if (e < 1 || std::size_t(e) > extra_experiments.size()) return nullptr;
    return &extra_experiments[std::size_t(e - 1)].traces;
  }
  std::vector<double>* traces_of(std::int64_t e) {
    return const_cast<std::vector<double>*>(static_cast<const VariantResult&>(*this).traces_of(e));
  }
};

struct TrainingResult {
  bool done = false;
  std::string mode;  // "online" | "file"
  std::int64_t samples = 0, iterations = 0;
  double initial_loss = 0.0, final_loss = 0.0, seconds = 0.0, flops = 0.0;
  // Teacher-forced one-step error on the online training pairs (NaN: not measured, e.g. weights
  // loaded from a file): relative L2 of the primary field after one prediction.
  double one_step_rel_l2 = std::numeric_limits<double>::quiet_NaN();
  std::int64_t one_step_pairs = 0;
  std::string one_step_precision;
  // Speed placement (RolloutReport.hpp): one prediction's global floating-point operations, and
  // the GEMM rate measured in this run (SurrogateModel::gemm_peak_flops; 0: not measured).
  double flops_per_prediction = 0.0;
  double gemm_peak_flops = 0.0;
  std::string gemm_peak_what;
};

template <class Archive>
void serialize(Archive& a, HandOver& h) {
  a("step", h.step);
  a("time", h.time);
  a("reason", h.reason);
  a("energy_drift", h.energy_drift);
  a("residual", h.residual);
  a("true_error", h.true_error);
}

template <class Archive>
void serialize(Archive& a, IndicatorCheck& c) {
  a("step", c.step);
  a("energy_drift", c.energy_drift);
  a("residual", c.residual);
  a("true_error", c.true_error);
  a("action", c.action);
}

template <class Archive>
void serialize(Archive& a, ExperimentRecord& s) {
  a("traces", s.traces);
  a("step", s.steps);
  a("time", s.times);
  a("energy", s.energy);
}

template <class Archive>
void serialize(Archive& a, DiagnosticSeries& s) {
  a("name", s.name);
  a("values", s.values);
}

template <class Archive>
void serialize(Archive& a, Metric& m) {
  a("name", m.name);
  a("value", m.value);
  a("integer", m.integer);
}

template <class Archive>
void serialize(Archive& a, CensusSeries& c) {
  a("name", c.name);
  a("storage", c.storage);
  a("values", c.values);
  a("subnormal", c.subnormal);
  a("zero", c.zero);
}

template <class Archive>
void serialize(Archive& a, VariantResult& r) {
  a("name", r.name);
  a("kind", r.kind);
  a("storage", r.storage);
  a("compute", r.compute);
  a("precision", r.precision);
  a("precision_support", r.precision_support);
  a("status", r.status);
  a("failure", r.failure);
  a("failure_step", r.failure_step);
  a("description", r.description);
  a("step", r.steps);
  a("time", r.times);
  a("rel_l2", r.rel_l2);
  a("max_error", r.max_error);
  a("energy", r.energy);
  a("energy_drift", r.energy_drift);
  a.list("diagnostics", r.diagnostics);
  a("traces", r.traces);
  a("num_receivers", r.num_probes);
  a("final_rel_l2", r.final_rel_l2);
  a("max_rel_l2", r.max_rel_l2);
  a("final_max_error", r.final_max_error);
  a("final_energy_drift", r.final_energy_drift);
  a("max_abs_energy_drift", r.max_abs_energy_drift);
  a("threshold_time", r.threshold_time);
  a.list("metrics", r.metrics);
  a("time_setup", r.time.setup);
  a("time_steps", r.time.steps);
  a("time_training", r.time.training);
  a("time_inference", r.time.inference);
  a("time_io", r.time.io);
  a("time_analysis", r.time.analysis);
  a("time_timing", r.time.timing);
  a("trace_stride", r.trace_stride);
  a("steps_done", r.steps_done);
  a("surrogate_steps", r.surrogate_steps);
  a("physics_steps", r.physics_steps);
  a("cell_updates", r.cell_updates);
  a("bytes", r.bytes);
  a("flops", r.flops);
  a("memory_hwm_mib", r.memory_hwm_mib);
  a("energy_joules", r.energy_joules);
  a.list("handovers", r.handovers);
  a.list("indicator_checks", r.indicator_checks);
  a.list("extra_shots", r.extra_experiments);
  a("window", r.window);
  a("handover_step", r.handover_step);
  a("experiment", r.experiment);
  a("baseline_zero", r.baseline_zero);
  a("baseline_persistence", r.baseline_persistence);
  a("baseline_linear", r.baseline_linear);
  a("timed_seconds_per_step", r.timed_seconds_per_step);
  a("timed_steps_per_repeat", r.timed_steps_per_repeat);
  a("timed_warmup_steps", r.timed_warmup_steps);
  a("timed_sequence", r.timed_sequence);
  a("fixed_step_seconds", r.fixed_step_seconds);
  a("launch_seconds", r.launch_seconds);
  a("triad_gbs", r.triad_gbs);
  a("triad_median_gbs", r.triad_median_gbs);
  a("triad_rank_min_gbs", r.triad_rank_min_gbs);
  a("triad_rank_max_gbs", r.triad_rank_max_gbs);
  a("triad_elements", r.triad_elements);
  a("triad_where", r.triad_where);
  a("subnormals_requested", r.subnormals_requested);
  a("subnormals_in_force", r.subnormals_in_force);
  a("subnormals_control", r.subnormals_control);
  a("subnormals_mechanism", r.subnormals_mechanism);
  a("census_steps", r.census_steps);
  a.list("subnormal_census", r.census);
}

template <class Archive>
void serialize(Archive& a, TrainingResult& t) {
  int done = t.done ? 1 : 0;
  a("done", done);
  t.done = done != 0;
  a("mode", t.mode);
  a("samples", t.samples);
  a("iterations", t.iterations);
  a("initial_loss", t.initial_loss);
  a("final_loss", t.final_loss);
  a("seconds", t.seconds);
  a("flops", t.flops);
  a("one_step_rel_l2", t.one_step_rel_l2);
  a("one_step_pairs", t.one_step_pairs);
  a("one_step_precision", t.one_step_precision);
  a("flops_per_prediction", t.flops_per_prediction);
  a("gemm_peak_flops", t.gemm_peak_flops);
  a("gemm_peak_what", t.gemm_peak_what);
}

}  // namespace mantissa::workflow
