#pragma once
// The campaign's report: report.json (versioned schema, docs/report-schema.md), report.md (the
// tables a person reads), report.h5 (time series, receiver traces, final snapshots) with an
// XDMF sidecar (snapshots.xmf) so ParaView opens the snapshots directly. A physics adds its own
// columns, keys and files through its ReportSection (ReportSection.hpp).
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/Machine.hpp>

#include <string>
#include <vector>

namespace mantissa::workflow {

inline constexpr int report_schema_version = 1;

struct ReportInfo {
  MachineInfo machine;
  double wall_seconds = 0.0;  // whole command, this process (after resume: this part only)
  std::string command;        // the command line
  std::string mantissa_version;
};

// Rank 0 writes the files into `dir`; other ranks return at once.
// Files: report.h5, snapshots.xmf, the physics' report section's own files (seismic:
// gathers.h5), report.md, report.json (last: its presence means the others are complete).
// Returns the names of the section's files (rank 0).
std::vector<std::string> write_report(const Campaign& campaign, const ReportInfo& info,
                                      const std::string& dir);
// The main table (markdown), as printed at the end of a run.
std::string main_table(const Campaign& campaign);

// Derived speed numbers of one variant, shared by the writers (and tested).
struct SpeedSummary {
  double time_per_step = 0.0;       // seconds per physics step (or physics-step equivalent)
  double speedup = 0.0;             // reference time per step / this time per step
  double cell_updates_per_s = 0.0;  // 0: not counted
  double bandwidth_gbs = 0.0;       // effective, from the physics' traffic model; 0: not counted
  double gflops = 0.0;              // 0: not counted
};
SpeedSummary speed_summary(const VariantResult& r, const VariantResult& reference);

}  // namespace mantissa::workflow
