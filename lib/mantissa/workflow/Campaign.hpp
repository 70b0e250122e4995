#pragma once
// The precision campaign (issue 5): an fp64 reference, physics variants in other precisions
// from the same initial state and decomposition, a surrogate trained on the reference and
// rolled out in several precisions, and a hybrid surrogate/physics run gated by an error
// indicator; every variant measured against the reference for accuracy and speed.
//
// Phases run one after another and only one model lives on the device at a time. The
// reference is kept as host snapshots of its primary field at the sample steps (plus, when the
// surrogate trains online, host copies of the training states until training is done), so no
// later phase re-reads anything from disk or re-runs the reference.
//
// A stop request (SIGTERM/SIGUSR1, see Signals.hpp) is honoured between steps: every rank
// writes its part of a checkpoint (phase, step, state, the reference snapshots and partial
// results), and run() returns Outcome::stopped. A Campaign built with resume = true continues
// from the latest checkpoint and produces the same fields and accuracy numbers bit for bit.
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/Metrics.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/Results.hpp>

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace mantissa::workflow {

class Campaign {
 public:
  enum class Outcome { finished, stopped };

  // `log` receives progress lines on rank 0 (may be null). Throws mantissa::Error for an
  // inconsistent configuration (names the campaign.* key and the remedy).
  Campaign(CampaignConfig config, const Registry& registry, ModelContext context, std::string run_dir,
           bool resume, std::ostream* log = nullptr);
  ~Campaign();

  Outcome run();

  const CampaignConfig& config() const { return m_cfg; }
  const std::vector<VariantResult>& results() const { return m_results; }
  const TrainingResult& training() const { return m_training; }
  const std::string& surrogate_description() const { return m_surrogate_description; }
  // Final primary field of each finished phase, gathered on rank 0 (global (z, y, x) order).
  const std::map<std::string, std::vector<double>>& snapshots() const { return m_snapshots; }
  std::array<std::int64_t, 3> global_shape() const;
  int dim() const;  // of the grid
  std::vector<std::string> receiver_names() const { return m_receiver_names; }
  // For the shot gathers: what the receivers record, the sources of every shot, the physics'
  // time step (set by every phase from its model).
  const Recording& recording() const { return m_recording; }
  const std::vector<std::vector<SourceInfo>>& shot_sources() const { return m_shot_sources; }
  double physics_dt() const { return m_dt; }
  std::string memory_note() const;
  std::string trained_path() const;  // prefix of the trained surrogate's files in the run directory
  const std::string& energy_source() const { return m_energy_source; }
  bool resumed() const { return m_resumed; }
  std::int64_t resumed_at_step() const { return m_resumed_global_step; }

 private:
  struct Phase {
    std::string kind;  // reference | physics | training | surrogate | hybrid
    std::string name;
    Precision storage = Precision::fp64, compute = Precision::fp64;
    int result = -1;  // index into m_results, -1 for training
  };
  // Progress of the phase being run, as checkpointed.
  struct Cursor {
    std::size_t phase = 0;
    std::int64_t step = 0;
    std::int64_t shot = 0;  // physics phases: the shot being run
    std::int64_t global_steps = 0;
    std::int64_t physics_left = 0, since_check = 0;  // hybrid
  };

  void validate() const;
  void build_phases();
  bool run_physics_phase(const Phase& ph, bool resumed);
  bool run_training_phase();
  bool run_rollout_phase(const Phase& ph, bool resumed);
  void record(VariantResult& r, PhysicsModel& model, std::int64_t step, int trace_stride);
  // Shots after the first: receivers and energy only (nothing is compared with the reference).
  void record_extra_shot(VariantResult& r, PhysicsModel& model, int shot, std::int64_t step);
  void note_recording(const PhysicsModel& model);
  void finish(VariantResult& r, PhysicsModel& model);
  void fail(VariantResult& r, std::int64_t step, double time, const std::string& what);
  void after_step();  // counts campaign steps; the stop_after_step test hook
  bool periodic_checkpoint_due() const;
  double energy_error(std::int64_t step, double energy, bool is_ref) const;
  std::string locate_nonfinite(PhysicsModel& model) const;
  bool is_sample_step(std::int64_t s, std::int64_t last) const;
  std::unique_ptr<PhysicsModel> make_physics(Precision storage, Precision compute) const;
  void ensure_surrogate();
  void gather_snapshot(const std::string& name, PhysicsModel& model);
  void log(const std::string& line) const;
  MPI_Comm comm() const;

  // Checkpoints (CampaignCheckpoint.cpp).
  // Every rank writes its part (state, reference snapshots, training samples); rank 0 adds the
  // results so far. `state` is the running phase's state (null between phases).
  void write_checkpoint(const State* state, double time);
  // Restores the cursor, results, reference snapshots and training samples.
  void read_checkpoint();
  // Fills `state` (shaped by the model) with the checkpointed state; returns its time.
  double load_checkpoint_state(State& state);
  bool stop_requested();

  CampaignConfig m_cfg;
  const Registry& m_registry;
  ModelContext m_ctx;
  std::string m_dir;
  std::ostream* m_log;
  int m_rank = 0;
  bool m_resume_requested = false, m_resumed = false;
  std::int64_t m_resumed_global_step = -1;
  std::string m_checkpoint_dir;  // the one resumed from

  std::vector<Phase> m_phases;
  std::vector<VariantResult> m_results;
  TrainingResult m_training;
  Cursor m_cur;

  std::map<std::int64_t, HostField> m_ref_snapshots;    // primary field of the reference
  std::vector<std::vector<HostField>> m_train_samples;  // full states, for online training
  std::vector<std::string> m_state_names;
  std::vector<std::string> m_receiver_names;
  Recording m_recording;
  std::vector<std::vector<SourceInfo>> m_shot_sources;
  double m_dt = 0.0;
  std::unique_ptr<SurrogateModel> m_surrogate;
  std::string m_surrogate_description;
  std::map<std::string, std::vector<double>> m_snapshots;
  std::unique_ptr<EnergyMeter> m_energy;
  std::string m_energy_source = "not measured";
  double m_reference_mib = 0.0, m_train_mib = 0.0;
};

}  // namespace mantissa::workflow
