#pragma once
// `mantissa predict DECK --weights FILE --state FILE --output FILE [--predictions N]
// [--precision P] [--fields P,P_OLD] [key=value ...]`: runs a trained surrogate on a state a user
// has and writes the prediction (HDF5, through lib/mantissa/io) with an XDMF sidecar.
//
// The deck is the one the surrogate was trained with (or one with the same mesh, surrogate
// section and static inputs, e.g. the velocity model): it gives the grid, the decomposition, the
// model and its static input fields. The state file holds the two pressure levels the surrogate
// starts from, as global datasets (y, x) / (z, y, x) without ghosts, fp64 or fp32:
//  - /p and /p_old (what `mantissa predict` writes, so a prediction can be fed back), or
//  - /fields/state.0 and /fields/state.1 (a campaign checkpoint, checkpoints/ckpt-*.h5), or
//  - any two datasets named with --fields.
// The output holds /p and /p_old after N predictions (N K solver steps), attributes that say
// where it came from (format "mantissa-prediction"), and OUTPUT.xmf beside it for ParaView.
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
  std::string fields;  // "P,P_OLD": dataset paths in the state file (empty: found by layout)
};

// Collective over MPI_COMM_WORLD; returns the exit code. Throws mantissa::Error for user errors.
int predict_command(const Deck& deck, const PredictOptions& opts);

}  // namespace mantissa::app
