#pragma once
// The campaign's checkpoints (CampaignCheckpoint.cpp says where and how they are written).
#include <mantissa/workflow/PhaseContext.hpp>

#include <string>

namespace mantissa::workflow {

class CampaignCheckpoint final : public Checkpointer {
 public:
  void write(PhaseContext& ctx, const State* state, double time) override;
  double load_state(PhaseContext& ctx, State& state) override;
  // Collective: restores the cursor, results, training result, reference store and snapshots
  // from the newest checkpoint of the run directory; throws mantissa::Error naming the file
  // and what is wrong.
  void read(PhaseContext& ctx);
  // The checkpoint read() restored from.
  const std::string& source() const { return m_source; }

 private:
  std::string m_source;
};

}  // namespace mantissa::workflow
