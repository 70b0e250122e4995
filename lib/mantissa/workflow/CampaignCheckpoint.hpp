#pragma once
// The campaign's checkpoints (CampaignCheckpoint.cpp says where and how they are written).
#include <mantissa/workflow/PhaseContext.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mantissa::io {
class CheckpointWriter;
class H5File;
}  // namespace mantissa::io

namespace mantissa::workflow {

class CampaignCheckpoint final : public Checkpointer {
 public:
  CampaignCheckpoint();
  ~CampaignCheckpoint() override;

  void write(PhaseContext& ctx, const State* state, double time) override;
  // Fills `state` with the state read() restored (once).
  double load_state(PhaseContext& ctx, State& state) override;
  // Rank 0 keeps the newest write's cost in RUN_DIR/.checkpoint-write-cost (a forecast hint,
  // written plainly: a lost or damaged one only loses the hint); read() carries it.
  void record_cost(PhaseContext& ctx, double seconds, double bytes) override;
  // Collective: restores the cursor, results, training result, reference store and snapshots
  // from the newest usable checkpoint (a damaged newest one falls back to the previous one with
  // a warning); throws mantissa::Error naming the file and what is wrong, changing nothing.
  void read(PhaseContext& ctx);
  // The checkpoint read() restored from.
  const std::string& source() const { return m_source; }
  // Whether it holds a running state (false: written between phases) not yet loaded.
  bool has_state() const { return !m_pending_names.empty(); }
  // Where the checkpoints go: checkpoint.dir, relative to the run directory unless absolute.
  std::string directory(const PhaseContext& ctx) const;
  // The running state an open campaign checkpoint file holds, for readers outside the campaign
  // (`mantissa predict`): (state field name, dataset path) in the state's order. Empty when the
  // file names no running state (written between phases, or not a campaign checkpoint).
  static std::vector<std::pair<std::string, std::string>> state_datasets(const io::H5File& f);

 private:
  void read_file(PhaseContext& ctx, const std::string& file);
  // Puts back the trained surrogate's files the checkpoint holds where they differ (collective).
  void restore_surrogate_files(PhaseContext& ctx);

  std::unique_ptr<io::CheckpointWriter> m_writer;  // plan object, built at the first write
  std::string m_source;
  std::vector<HostField> m_pending;  // the running phase's state, until load_state()
  std::vector<std::string> m_pending_names;
  double m_pending_time = 0.0;
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> m_surrogate_files;  // name, bytes
};

}  // namespace mantissa::workflow
