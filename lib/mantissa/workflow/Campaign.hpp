#pragma once
// The precision campaign (issue 5, restructured in issue 10): a sequence of phase objects
// (Phase.hpp) that a campaign kind plans (CampaignKinds.hpp) - for the "precision" kind an fp64
// reference, physics variants in other precisions from the same initial state and
// decomposition, a surrogate trained on the reference and rolled out in several precisions,
// and a hybrid surrogate/physics run gated by an error indicator; every variant measured against
// the reference for accuracy and speed. The phases share one PhaseContext and see nothing else.
//
// Phases run one after another and only one model lives on the device at a time. The
// reference is kept as host snapshots of its primary field at the sample steps (plus, when the
// surrogate trains online, host copies of the training states until training is done), so no
// later phase re-reads anything from disk or re-runs the reference.
//
// A stop request (SIGTERM/SIGUSR1, see Signals.hpp) is honoured between steps: a checkpoint is
// written (phase, step, state, the reference snapshots and partial results), and run() returns
// Outcome::stopped. A Campaign built with resume = true continues from the latest checkpoint and
// produces the same fields and accuracy numbers bit for bit.
#include <mantissa/workflow/CampaignCheckpoint.hpp>
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/CampaignKinds.hpp>
#include <mantissa/workflow/PhaseContext.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/ReportSection.hpp>
#include <mantissa/workflow/Results.hpp>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mantissa::workflow {

// The campaign's own refusals of a configuration (keys that contradict each other, lists that
// name an experiment twice, ...), the same for `mantissa check` (apps/mantissa/Check.cpp) and
// for a Campaign, which calls it on construction. Throws mantissa::Error naming the deck key.
void validate_config(const CampaignConfig& cfg);
// The surrogate's experiment lists (train_experiments, heldout_experiments) against the
// `experiments` the physics has (`word`: what the message calls one, e.g. "shot"); throws
// mantissa::Error naming the key.
void check_experiment_range(const CampaignConfig& cfg, int experiments, const std::string& word);

class Campaign {
 public:
  enum class Outcome { finished, stopped };

  // Throws mantissa::Error for an inconsistent configuration (names the campaign.* key and the
  // remedy) before any model is built. `kinds`: the phase and campaign kinds (builtin()).
  Campaign(CampaignConfig config, const Registry& registry, ModelContext context, std::string run_dir,
           bool resume, const CampaignKinds& kinds = CampaignKinds::builtin());
  ~Campaign();

  Outcome run();

  const CampaignConfig& config() const { return m_cfg; }
  const std::vector<VariantResult>& results() const { return m_ctx->results(); }
  const TrainingResult& training() const { return m_ctx->training(); }
  const std::string& surrogate_description() const { return m_ctx->surrogate_description(); }
  // Final primary field of each finished phase, gathered on rank 0 (global (z, y, x) order).
  const std::map<std::string, std::vector<double>>& snapshots() const { return m_ctx->snapshots(); }
  std::array<std::int64_t, 3> global_shape() const;
  int dim() const;  // of the grid
  const Grid& grid() const;
  // The physics' probes, experiments and time step (noted by every phase from its model).
  const Probes& probes() const { return m_ctx->probes(); }
  int num_experiments() const { return m_ctx->num_experiments(); }
  double physics_dt() const { return m_ctx->physics_dt(); }
  // What the physics adds to the report (its ReportSection; the default adds nothing).
  const ReportSection& report_section() const { return *m_section; }
  const PrecisionTable& precisions() const { return m_ctx->precisions(); }
  std::string memory_note() const;
  std::string trained_path() const { return m_ctx->trained_path(); }
  const std::string& energy_source() const { return m_energy_source; }
  bool resumed() const { return m_resumed; }
  std::int64_t resumed_at_step() const { return m_resumed_global_step; }

 private:
  void validate() const;
  // The surrogate's experiment lists against the physics' experiments (makes a model if needed).
  void check_experiments() const;

  CampaignConfig m_cfg;
  const Registry& m_registry;
  ModelContext m_models;
  std::string m_dir;
  bool m_resume_requested = false, m_resumed = false;
  std::int64_t m_resumed_global_step = -1;
  std::unique_ptr<PhaseContext> m_ctx;
  std::unique_ptr<CampaignCheckpoint> m_ckpt;
  std::vector<std::unique_ptr<Phase>> m_phases;
  std::unique_ptr<ReportSection> m_section;
  std::string m_energy_source;
};

}  // namespace mantissa::workflow
