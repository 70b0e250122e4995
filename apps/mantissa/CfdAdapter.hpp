#pragma once
// cfd::FlowSolver<Storage, Compute> behind workflow::PhysicsModel, registered as "cfd"
// (Registry.cpp) with its precision table: storage/compute fp64 or fp32, and the pressure
// solve's multigrid (role `solver`) in fp64, fp32 or progressive bf16 / fp16. The state is
// (u, v, phi_stage1, phi_stage2), in 3D (u, v, w, phi_stage1, phi_stage2); u is the primary
// field the campaign compares. Diagnostics:
// kinetic_energy (first, the energy the campaign tracks), enstrophy, divergence (L2 norm of the
// velocity's divergence), solver_iterations (multigrid cycles of the last step, both stages),
// solver_residual, cfl. Probes: u at cfd.probes. Its report section adds the solver role and the
// flow's numbers to report.md's table and report.json's campaign.cfd, and for surrogate rollouts
// the divergence of the predictions before the projection that constrain() applies to each.
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Precision.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/ReportSection.hpp>

#include <memory>
#include <string>
#include <vector>

namespace mantissa::app {

workflow::PrecisionTable cfd_precisions();
std::unique_ptr<workflow::PhysicsModel> make_cfd_model(const workflow::ModelContext& ctx,
                                                       const workflow::PrecisionSet& precision);
std::unique_ptr<workflow::ReportSection> make_cfd_report(const workflow::ModelContext& ctx);

// Bytes per grid point (ghosts included) of one cfd model with this velocity storage, for
// Estimate.cpp (what `mantissa check` prints and `run` checks before allocating). It first puts
// the deck's cfd section through the solver's own checks without allocating anything
// (cfd::config_from_deck's cross-key rules, cfd::choose_dt's stability limit), so `check`
// refuses an unstable cfd.dt with the message `run` would give.
double cfd_bytes_per_point(const Deck& deck, Precision storage);

// The flow's state as the surrogate's channels (TransformerAdapter's SurrogateChannels): the
// velocity components u, v (3D: u, v, w), the first fields of state(), each on its own faces
// stored index-aligned with the cells (u(i, j) is the x velocity on cell (i, j)'s low x face; a
// wall's high face is a boundary value, not stored), so state -> channels -> state is exact. The
// stage potentials are not channels: a prediction keeps them (they are the next solve's initial
// guess), and CfdModel::constrain projects the predicted velocity before it is used.
std::vector<std::string> cfd_surrogate_channels(const Deck& deck);

}  // namespace mantissa::app
