#pragma once
// The campaign's report: report.json (versioned schema, docs/report-schema.md), report.md (the
// tables a person reads), report.h5 (time series, receiver traces, final snapshots) with an
// XDMF sidecar (snapshots.xmf) so ParaView opens the snapshots directly. A physics adds its own
// columns, keys and files through its ReportSection (ReportSection.hpp).
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/StepTimer.hpp>

#include <string>
#include <vector>

namespace mantissa::workflow {

// 2: the speed column is the median of timed stretches (speed.timing), with the measured bounds
// (context.bounds, speed.bound), the step's fixed part and the subnormal census (issue 11).
// 3: the timed stretches are interleaved over the variants (speed.timing.sequence); a surrogate's
// speed-up and its speed placement are against the reference's timed median (speed.speedup_method,
// surrogate.speed_placement.physics_method), a pure rollout's time per step is its predictions'
// (speed.method "predictions"), and surrogates have no effective bandwidth.
inline constexpr int report_schema_version = 3;
// A variant's step whose fixed part (halo exchanges, boundary fills, launches) is at least this
// fraction of its time per step is too small to tell precisions apart: the report warns.
inline constexpr double fixed_cost_warning_fraction = 0.5;

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
  // Seconds per physics step (or physics-step equivalent): the median of the timed stretches
  // where the variant was timed; a pure rollout's inference time per simulated step of its
  // predictions; else the accuracy run's own stepping time per step.
  double time_per_step = 0.0;
  std::string method;  // "timed" | "predictions" | "in-run": which of those time_per_step is
  // reference_time_per_step / time_per_step (in-run against in-run when the reference was not timed).
  double speedup = 0.0;
  double reference_time_per_step = 0.0;  // the reference's timed median (else its in-run time); NaN: none
  std::string speedup_method;            // "timed", "<method> vs timed reference", or "in-run"
  double cell_updates_per_s = 0.0;       // 0: not counted
  double bandwidth_gbs = 0.0;            // effective, from the physics' traffic model; 0: not counted
  double gflops = 0.0;                   // 0: not counted

  bool timed = false;                 // time_per_step is the median of timed stretches
  TimingSummary timing;               // of the timed stretches (when timed)
  double in_run_time_per_step = 0.0;  // the accuracy run's stepping / its steps (NaN: none)
  bool speedup_within_noise = false;  // timed, not the reference, and its range overlaps the reference's
  double triad_gbs = 0.0;             // the measured memory bound (the reference's triad); NaN: not measured
  double bandwidth_fraction = 0.0;    // bandwidth_gbs / triad_gbs; NaN: either not there
  double fixed_step_seconds = 0.0;  // the step's fixed part (physics' own, else a launch); NaN: not measured
  double fixed_fraction = 0.0;      // fixed_step_seconds / time_per_step; NaN: not measured
  std::string warning;              // non-empty: the step is too small to tell precisions apart
};
SpeedSummary speed_summary(const VariantResult& r, const VariantResult& reference);

}  // namespace mantissa::workflow
