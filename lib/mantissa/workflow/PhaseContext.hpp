#pragma once
// Everything a phase of a campaign may use, and the only thing it sees (Phase.hpp): the
// configuration, the models (physics by precision set, the surrogate), the results, the
// reference store, the recorder, the checkpointer, the log, timers, progress and stop
// requests. The Campaign owns one and hands it to each phase in turn; phases never reach into
// the Campaign, so the dependencies run Campaign -> phases -> PhaseContext and no further.
//
// The helpers here are what every stepping phase does the same way: record a sample (fields
// against the reference, diagnostics, the recorder's probes), finish a variant (summary
// numbers, snapshot), fail it, checkpoint, poll for a stop.
#include <mantissa/core/Progress.hpp>
#include <mantissa/workflow/Baselines.hpp>
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/Metrics.hpp>
#include <mantissa/workflow/Recorder.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/Results.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mantissa::workflow {

class PhaseContext;

// A number for a log line or report text: 4 significant digits ("0.01037", "1.5e-07").
std::string fmt_g(double v);

// Where the running campaign is, as checkpointed.
struct Cursor {
  std::size_t phase = 0;
  std::int64_t step = 0;
  std::int64_t experiment = 0;                      // physics phases: the experiment being run
  std::int64_t global_steps = 0;                    // campaign steps so far (all phases): paces checkpoints
  std::map<std::string, std::int64_t> phase_state;  // a phase's own counters (rollout: physics_left, ...)

  std::int64_t get(const std::string& k) const {
    auto it = phase_state.find(k);
    return it == phase_state.end() ? 0 : it->second;
  }
};

// The reference kept for the later phases (host memory): its primary field at the sample
// steps and, while the surrogate trains online, the full training states.
struct ReferenceStore {
  std::map<std::int64_t, HostField> snapshots;  // experiment 0's primary field at its sample steps
  // The held-out experiments' primary field at their sample steps (heldout_experiments).
  std::map<int, std::map<std::int64_t, HostField>> experiment_snapshots;
  std::vector<std::vector<HostField>> train_samples;
  std::vector<int> train_experiment;  // the experiment of each training sample (in order)
  std::vector<std::string> state_names;
  double snapshot_mib = 0.0, train_mib = 0.0;  // on the largest rank
};

// Wall-clock seconds of a region, fenced at the end so that asynchronous kernels are counted,
// and entered as a region into core's Timers tree (and Kokkos profiling) under `name`.
// Regions nest: stop the inner before the outer.
class PhaseTimer {
 public:
  explicit PhaseTimer(const char* name);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  // Stops the region (once) and returns its seconds.
  double stop();

 private:
  const char* m_name;
  std::chrono::steady_clock::time_point m_t0;
  bool m_open = true;
  double m_seconds = 0.0;
};

// The checkpoint hooks a phase uses (CampaignCheckpoint.cpp implements them).
class Checkpointer {
 public:
  virtual ~Checkpointer() = default;
  // Collective: the running phase's state (null between phases) at simulated time `time`, the
  // cursor, the results so far and the reference store.
  virtual void write(PhaseContext& ctx, const State* state, double time) = 0;
  // Collective: fills `state` (shaped by the model) with the checkpointed state; returns its time.
  virtual double load_state(PhaseContext& ctx, State& state) = 0;
  // After write(): what it cost (seconds on this rank, bytes of its fields), kept beside the
  // checkpoints so that a resumed process knows the newest write's cost (run.wall_time_limit).
  virtual void record_cost(PhaseContext& /*ctx*/, double /*seconds*/, double /*bytes*/) {}
};

class PhaseContext {
 public:
  PhaseContext(const CampaignConfig& config, const Registry& registry, ModelContext models,
               std::string run_dir);
  ~PhaseContext();

  const CampaignConfig& config() const { return m_cfg; }
  MPI_Comm comm() const;
  int rank() const { return m_rank; }
  const std::string& run_dir() const { return m_dir; }
  const Decomposition& decomposition() const { return *m_models.decomp; }

  // Models.
  const PrecisionTable& precisions() const;
  // Every role at the campaign's reference precision.
  const PrecisionSet& reference_precision() const { return m_reference; }
  std::unique_ptr<PhysicsModel> make_physics(const PrecisionSet& precision) const;
  bool has_surrogate() const { return m_cfg.surrogate.enabled; }
  // Created once (from the registry) on first use; throws naming a key its stride does not divide.
  SurrogateModel& surrogate();
  const std::string& surrogate_description() const { return m_surrogate_description; }
  void set_surrogate_description(std::string d) { m_surrogate_description = std::move(d); }
  std::string trained_path() const;  // the trained surrogate's files in the run directory
  // The surrogate's training and held-out windows (campaign.surrogate.heldout_fraction).
  TimeSplit surrogate_split() const;
  // Notes the physics' probes, time step and experiments for the report (every phase calls it
  // with the model it builds).
  void note_model(const PhysicsModel& model);
  const Probes& probes() const { return m_probes; }
  int num_experiments() const { return m_num_experiments; }
  double physics_dt() const { return m_dt; }

  // Results: one per phase that has one, in phase order; the first is the reference.
  std::vector<VariantResult>& results() { return m_results; }
  const std::vector<VariantResult>& results() const { return m_results; }
  VariantResult& result(const std::string& name);
  const VariantResult& reference() const { return m_results.front(); }
  TrainingResult& training() { return m_training; }
  const TrainingResult& training() const { return m_training; }
  ReferenceStore& reference_store() { return m_ref; }
  const ReferenceStore& reference_store() const { return m_ref; }
  // Final primary field of each finished variant, gathered on rank 0 (global (z, y, x) order).
  std::map<std::string, std::vector<double>>& snapshots() { return m_snapshots; }
  const std::map<std::string, std::vector<double>>& snapshots() const { return m_snapshots; }
  Recorder& recorder() { return *m_recorder; }
  EnergyMeter& energy_meter() { return *m_energy; }

  // The cursor, the phase names (for checkpoints and messages) and the checkpointer.
  Cursor& cursor() { return m_cur; }
  const Cursor& cursor() const { return m_cur; }
  std::vector<std::string>& phase_names() { return m_phase_names; }
  // The running phase's name; k_end_phase_name once every phase has run (a checkpoint written
  // after the last phase, before the report).
  const std::string& phase_name() const;
  static const std::string k_end_phase_name;
  void set_checkpointer(Checkpointer* c) { m_ckpt = c; }
  void write_checkpoint(const State* state, double time);
  // The longest checkpoint write so far in seconds: this process's, or the one a resumed
  // checkpoint carries (the largest of the ranks' when it was written), so that a resumed
  // process's wall-time margin and cost guard know what a write costs before its first one.
  double longest_checkpoint() const { return m_longest_checkpoint; }
  void carry_longest_checkpoint(double seconds, double bytes) {
    if (seconds > m_longest_checkpoint) {
      m_longest_checkpoint = seconds;
      m_longest_checkpoint_bytes = bytes;
    }
  }
  double longest_checkpoint_bytes() const { return m_longest_checkpoint_bytes; }
  // Whether the newest checkpoint is one between phases at exactly this point of the campaign
  // (checkpoint.phase_end wrote it when the phase before ended): a stop here need not write it
  // again.
  bool between_phases_checkpoint_current() const {
    return m_between_written && m_between_phase == m_cur.phase && m_between_steps == m_cur.global_steps;
  }
  double load_checkpoint_state(State& state);

  // Stop requests and the campaign step counter. Collective: a signal on any rank, or the
  // wall-time limit (CampaignConfig::wall_time_limit) too close to go on: at every poll the
  // time left must cover the next stretch to a poll (twice the longest so far), the work of the
  // running phase's end and the next phase's set-up (the longest such unpolled stretch so far,
  // or the phase's own forecast, expect_end_work) and a checkpoint there (write_estimate());
  // otherwise it stops at this poll, and its stop checkpoint is the one the phase's end would
  // have written. A phase end that does not fit into a whole start is not budgeted for (the
  // log warns that it may pass the limit). The limit is not acted on before the process has made progress
  // (note_progress), so every start does: a chain of starts under a limit too short for the
  // forecast still ends.
  bool stop_requested() const;
  // A unit of work that a stop checkpoint keeps is done: a campaign step (after_step), an
  // optimizer step, a timed stretch, a phase.
  void note_progress() { m_progressed = true; }
  // Campaign: a phase has ended, or is about to start; the stretch until the next poll is a
  // phase boundary's (end work, set-up), measured apart from the stepping stretches. It also
  // forgets the ended phase's forecast.
  void mark_phase_boundary();
  // The running phase's forecast of its work after its last poll in seconds (training: its
  // weights' save and the one-step error over every training pair), for stop_requested().
  void expect_end_work(double seconds) { m_end_forecast = seconds; }
  // The forecast of a checkpoint's write at the running phase's end (or at a stop), in seconds:
  // k_write_safety times a fixed part (two durable commits, each at least probe_write_cost()'s
  // write) plus the rest of the longest write so far (this process's, or the one the resumed
  // checkpoint knew of), scaled by the bytes that checkpoint will hold against that write's.
  double write_estimate() const;
  // The same forecast for a checkpoint of `bytes` (checkpoint_bytes(): a stop's checkpoint here).
  double write_estimate(double bytes) const;
  // Collective: times one small durable write into the run directory (rank 0), the prior of
  // write_estimate() before the first checkpoint of a process; with a wall-time limit only.
  void probe_write_cost();
  // Bytes of the campaign checkpoint as it is now (with a running state of the reference's
  // number of fields when `with_state`), and as it will be at the running phase's end (the
  // reference's phase grows by its snapshots and training states).
  double checkpoint_bytes(bool with_state) const;
  double projected_checkpoint_bytes() const;
  // The safety factor of write_estimate(): a checkpoint's write may take up to this many times
  // the forecast from the measured ones (on the loaded 2-core machine, writes of one size
  // varied up to 1.9x within a run; see tests/regression/campaign/run_wall_time.sh).
  static constexpr double k_write_safety = 2.0;
  // Testing aid (tests/slurm): MANTISSA_TEST_HOLD=point[,point...] makes every rank wait at
  // each named point until a stop signal has arrived (polled collectively, at most 600 s), so
  // that a signal from outside can be aimed at a phase that lasts milliseconds. A point is a
  // phase's name (held at its start unless the run resumed in it) or "training@N" (held after
  // optimizer step N). Without the variable nothing happens. Collective.
  void test_hold(const std::string& point) const;
  // Why stop_requested() said yes ("SIGTERM", "run.wall_time_limit ..."); empty before.
  const std::string& stop_reason() const { return m_stop_reason; }
  // While paused, stop_requested() ignores the wall-time limit (a phase that repeats from its
  // start after a resume must reach its end once).
  void set_wall_time_limit_paused(bool paused) { m_wall_paused = paused; }
  // After every physics step of any phase: counts campaign steps (the stop_after_step test hook
  // raises SIGTERM here) and says whether a periodic checkpoint is due: checkpoint.every campaign
  // steps, or checkpoint.interval seconds since the last checkpoint (decided collectively in the
  // last stop_requested(), so every rank agrees), or, with a wall-time limit, no checkpoint's
  // cost known yet (every rank has written the same ones, so every rank agrees).
  bool after_step();
  // Collective: whether the end of a phase gets a checkpoint (checkpoint.phase_end, and at least
  // CampaignConfig::checkpoint_cost_ratio times the longest checkpoint write since the last one on some
  // rank).
  bool phase_end_checkpoint_due() const;
  // A progress line printer for a stepping loop of `total` steps (logging.progress_every).
  Progress progress(const std::string& label, std::int64_t total, double work_per_step = 0.0) const;

  // One line on rank 0 (core log, "[campaign] ...").
  void log(const std::string& line) const;

  // Shared measurement.
  bool is_sample_step(std::int64_t step, std::int64_t last) const;
  // Records `step` of `experiment`: the recorder's probes at multiples of trace_stride, and at
  // the sample steps the fields against the reference (of experiment r.experiment: 0, or a
  // held-out one for a rollout on it), the diagnostics, and (the reference's experiments of
  // campaign.surrogate.train_experiments, when the surrogate trains online) the training states;
  // the reference keeps the held-out experiments' primary field at their sample steps. `last` is
  // the phase's final step (always sampled).
  void record(VariantResult& r, PhysicsModel& model, int experiment, std::int64_t step, int trace_stride,
              std::int64_t last, bool is_reference);
  // Summary numbers of experiment 0, the recorder's metrics, memory, the snapshot.
  void finish(VariantResult& r, PhysicsModel& model);
  void fail(VariantResult& r, std::int64_t step, double time, const std::string& what);
  std::string locate_nonfinite(PhysicsModel& model) const;
  // campaign.surrogate.heldout_experiments names it (and the surrogate is enabled).
  bool is_heldout_experiment(int experiment) const;
  // The reference's primary field of `experiment` (0 or a held-out one) at a sample step.
  const HostField& reference_snapshot(int experiment, std::int64_t step) const;

 private:
  double energy_error(int experiment, std::int64_t step, double energy, bool is_ref) const;
  void gather_snapshot(const std::string& name, PhysicsModel& model);

  const CampaignConfig& m_cfg;
  const Registry& m_registry;
  ModelContext m_models;
  std::string m_dir;
  int m_rank = 0;
  PrecisionSet m_reference;

  std::vector<VariantResult> m_results;
  TrainingResult m_training;
  ReferenceStore m_ref;
  Cursor m_cur;
  std::vector<std::string> m_phase_names;
  Checkpointer* m_ckpt = nullptr;
  // The wall-time limit's clock (stop_requested).
  std::chrono::steady_clock::time_point m_t0;
  mutable std::chrono::steady_clock::time_point m_last_poll;
  mutable bool m_polled = false;
  // Seconds between two polls, less the checkpoint writes in between: inside a phase (steps,
  // optimizer steps, timed stretches) and across a phase boundary (end work, set-up).
  mutable double m_longest_step = 0.0;
  mutable double m_longest_boundary = 0.0;
  mutable double m_written_since_poll = 0.0;  // seconds of checkpoint writes since the last poll
  mutable bool m_boundary_since_poll = false;
  bool m_progressed = false;
  mutable double m_first_poll_elapsed = 0.0;  // seconds from the campaign's construction to its first poll
  // The phase whose end stop_requested() has warned does not fit into a start.
  mutable std::size_t m_unfittable_warned = std::numeric_limits<std::size_t>::max();
  double m_end_forecast = 0.0;
  double m_longest_checkpoint = 0.0;        // seconds of the longest checkpoint write
  double m_longest_checkpoint_bytes = 0.0;  // and its bytes
  double m_probe_seconds = 0.0;             // probe_write_cost()
  mutable std::int64_t m_train_final = -1;  // projected_checkpoint_bytes(): the reference's training states
  // When the last checkpoint was written (the campaign's construction before the first), and
  // whether the last stop_requested() found checkpoint.interval passed on some rank.
  std::chrono::steady_clock::time_point m_last_checkpoint;
  mutable bool m_interval_due = false;
  // The newest checkpoint, when it was written between phases: the phase and campaign step.
  bool m_between_written = false;
  std::size_t m_between_phase = 0;
  std::int64_t m_between_steps = -1;
  mutable std::string m_stop_reason;
  bool m_wall_paused = false;

  Probes m_probes;
  int m_num_experiments = 1;
  double m_dt = 0.0;
  std::unique_ptr<SurrogateModel> m_surrogate;
  std::string m_surrogate_description;
  std::map<std::string, std::vector<double>> m_snapshots;
  std::unique_ptr<Recorder> m_recorder;
  std::unique_ptr<EnergyMeter> m_energy;
};

}  // namespace mantissa::workflow
