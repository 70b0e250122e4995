#pragma once
// `mantissa run DECK [key=value ...] [--resume] [--overwrite]`: main.cpp validates the deck,
// then hands it to run_command (Run.cpp, the campaign workflow).
#include <mantissa/core/Deck.hpp>

#include <string>
#include <vector>

namespace mantissa::app {

struct RunOptions {
  bool resume = false;                 // continue from the newest checkpoint of the run directory
  bool overwrite = false;              // replace an existing run directory instead of refusing
  std::string deck_path;               // as given on the command line
  std::vector<std::string> overrides;  // "key.path=value", already applied to the deck
};

// Runs on every rank; returns the process exit code. Throws mantissa::Error for user errors.
int run_command(const Deck& deck, const RunOptions& opts);

}  // namespace mantissa::app
