#pragma once
// `mantissa predict DECK --weights FILE --state FILE --output FILE [--predictions N]
// [--precision P] [--fields A,B[,C]] [key=value ...]`: runs a trained surrogate on a state a user
// has and writes the prediction (HDF5, through lib/mantissa/io) with an XDMF sidecar.
//
// The deck is the one the surrogate was trained with (or one with the same mesh, surrogate
// section and static inputs, e.g. the velocity model): it gives the grid, the decomposition, the
// model and its static input fields. The state file holds the surrogate's channels (seismic: the
// two pressure levels p, p_old; cfd: the velocity u, v, and w in 3D), as global datasets (y, x) /
// (z, y, x) without ghosts, fp64 or fp32:
//  - /NAME for each (what `mantissa predict` writes, so a prediction can be fed back), or
//  - /fields/NAME for each (a solver's own checkpoint), or
//  - /fields/state.<i> of a campaign checkpoint (checkpoints/campaign-*.h5), by the names in its
//    campaign.state attribute, or
//  - the datasets named with --fields, one per channel.
// A cfd prediction is projected to a divergence-free velocity by the flow's own pressure
// projection after every prediction (PhysicsModel::constrain), as in the campaign. The output
// holds the channels after N predictions (N K solver steps), attributes that say where it came
// from (format "mantissa-prediction"), and OUTPUT.xmf beside it for ParaView.
#include <mantissa/core/Deck.hpp>

#include <string>
#include <vector>

namespace mantissa::app {

struct PredictOptions {
  std::string deck_path;
  std::vector<std::string> overrides;
  std::string weights;  // the surrogate's weights file (surrogate-trained.h5 or save_weights + .h5)
  std::string state;    // the state file
  std::string output;   // the prediction file (.h5); its sidecar is the same name with .xmf
  int predictions = 1;  // predictions chained from the state (each advances K solver steps)
  std::string precision = "fp32";
  std::string fields;  // "P,P_OLD" / "U,V[,W]": the channels' dataset paths (empty: found by layout)
};

// Collective over MPI_COMM_WORLD; returns the exit code. Throws mantissa::Error for user errors.
int predict_command(const Deck& deck, const PredictOptions& opts);

}  // namespace mantissa::app
