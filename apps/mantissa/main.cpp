// mantissa: the one executable, a thin CLI over the libraries (ExaMPM examples/dam_break.cpp).
//   mantissa run DECK [key=value ...] [--resume] [--overwrite]
//   mantissa check DECK [key=value ...] [--resolved]
//   mantissa predict DECK --weights FILE --state FILE --output FILE [--predictions N] [...]
//   mantissa info [--verbose]
//   mantissa deck-doc
//   mantissa --help | SUB --help | --version | --kokkos-help
// User errors print "mantissa: error: <message>" once and every rank exits 1. --help and
// --version print mantissa's text only and exit 0; --kokkos-help prints Kokkos' options (once,
// whatever the rank count) and exits 0, with or without a subcommand. Arguments starting with --kokkos- go to
// Kokkos; Kokkos is initialised only for the subcommands that use it (run, info).
#include "Check.hpp"
#include "Estimate.hpp"
#include "Info.hpp"
#include "Predict.hpp"
#include "Run.hpp"
#include "Schema.hpp"

#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Version.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/Schema.hpp>
#include <mantissa/workflow/Signals.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// `check`: validates the deck, refuses what `run` would refuse (Check.hpp) and what cannot fit
// (Estimate.hpp), allocates nothing.
int check_command(const std::string& path, const std::vector<std::string>& overrides, bool print_resolved) {
  const mantissa::Deck deck = mantissa::Deck::from_file(path, mantissa::app::full_schema(), overrides);
  const mantissa::Grid grid = mantissa::grid_from_deck(deck);
  const auto procs = mantissa::process_grid_from_deck(deck);
  // Memory, files and work before anything is allocated (Estimate.hpp), for the ranks the
  // deck's process grid names (else the ranks `check` runs on); refused when it cannot fit.
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (procs[0] > 0 && procs[1] > 0 && (grid.dim == 2 || procs[2] > 0)) {
    ranks = procs[0] * procs[1] * (grid.dim == 3 ? procs[2] : 1);
  } else {
    // A partial process grid ([2, 0]): the ranks check runs on when they fit it, else the
    // fewest that do.
    int fixed = 1;
    for (int a = 0; a < grid.dim; ++a) fixed *= std::max(1, procs[a]);
    if (ranks % fixed != 0) ranks = fixed;
  }
  // What `run` would refuse (Check.hpp): the decomposition against the stencil, the physics'
  // rules, the input files.
  mantissa::app::preflight(deck, ranks, MPI_COMM_WORLD);
  const auto estimate =
      mantissa::app::estimate_run(deck, ranks, deck.has("run.end_time") ? 0 : deck.get_int("run.steps"));
  mantissa::app::check_memory(estimate, MPI_COMM_WORLD);
  if (world_rank() != 0) return 0;
  std::size_t given = 0, defaulted = 0, cmdline = 0;
  for (const auto& key : deck.schema().keys()) {
    if (key.path.find("[]") != std::string::npos || !deck.has(key.path)) continue;
    if (deck.given(key.path)) {
      ++given;
      cmdline += deck.where(key.path).rfind("command line", 0) == 0 ? 1 : 0;
    } else {
      ++defaulted;
    }
  }
  std::string n, h, periodic, pg;
  for (int a = 0; a < grid.dim; ++a) {
    const char* sep = a ? " x " : "";
    n += fmt::format("{}{}", sep, grid.n[a]);
    h += fmt::format("{}{}", sep, grid.spacing[a]);
    if (grid.periodic[a]) periodic += std::string(periodic.empty() ? "" : ",") + "xyz"[a];
    pg += fmt::format("{}{}", sep, procs[a] == 0 ? std::string("auto") : std::to_string(procs[a]));
  }
  std::cout << fmt::format("{}: ok\n", path);
  std::cout << fmt::format("  physics  {}\n", deck.get_string("physics"));
  std::cout << fmt::format(
      "  mesh     {}D, {} points ({} total), spacing {}, periodic {}, ghost {}, ranks {}\n", grid.dim, n,
      grid.num_points(), h, periodic.empty() ? "none" : periodic, mantissa::app::physics_ghost_width(deck),
      pg);
  const std::string stop = deck.has("run.end_time")
                               ? fmt::format("until t = {}", deck.get_real("run.end_time"))
                               : fmt::format("{} steps", deck.get_int("run.steps"));
  std::cout << fmt::format("  run      {}, {}, output {}/{}\n", deck.get_string("run.name"), stop,
                           deck.get_string("run.output_dir"), deck.get_string("run.name"));
  // The job scripts (scripts/slurm) read the last word: where `latest` names the newest checkpoint.
  const auto campaign = mantissa::workflow::config_from_deck(deck);
  std::string when;
  const auto add = [&when](const std::string& w) { when += (when.empty() ? "" : ", ") + w; };
  if (campaign.checkpoint_every > 0) add(fmt::format("every {} campaign steps", campaign.checkpoint_every));
  if (campaign.checkpoint_interval > 0.0)
    add(fmt::format("every {:g} s of stepping", campaign.checkpoint_interval));
  if (campaign.checkpoint_phase_end) add("at every phase end");
  add("when stopped");
  std::cout << fmt::format("  checkpoint {}; keep {}, in {}/{}/{}\n", when, campaign.checkpoint_keep,
                           deck.get_string("run.output_dir"), deck.get_string("run.name"),
                           campaign.checkpoint_dir);
  std::cout << fmt::format("  keys     {} given ({} on the command line), {} defaults\n", given, cmdline,
                           defaulted);
  std::cout << fmt::format("  hash     {}\n", deck.hash());
  std::cout << estimate.summary();
  if (print_resolved) std::cout << "\n" << deck.resolved_yaml();
  std::cout.flush();
  return 0;
}

// Every rank reports whether it failed; the lowest failing rank prints its message (rank 0's
// when every rank failed alike, as for deck errors) and all ranks return 1. A failed rank
// whose peers do not arrive within the grace period (they may wait in a collective for it)
// prints its own message and aborts the job rather than hang.
int settle(bool failed, const std::string& message, int rc) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = failed ? rank : size, first = size;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
  if (failed) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int done = 0;
    while (!done) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (!done && std::chrono::steady_clock::now() > deadline) {
        std::cerr << fmt::format("mantissa: error: (rank {}) {}\n", rank, message);
        std::cerr.flush();
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } else {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  if (first < size) {
    if (rank == first) {
      std::cerr << (rank == 0 ? fmt::format("mantissa: error: {}\n", message)
                              : fmt::format("mantissa: error: (rank {}) {}\n", rank, message));
      std::cerr.flush();
    }
    return 1;
  }
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

// The command line split in two: Kokkos' own arguments (--kokkos-*, e.g.
// --kokkos-num-threads=4) and mantissa's. CLI11 would reject the former, and Kokkos must not
// see the latter: Kokkos 3.4 and 4.x also act on unprefixed --help and print their banner.
struct SplitArgs {
  std::vector<char*> app;     // argv[0] and mantissa's arguments, for CLI11
  std::vector<char*> kokkos;  // argv[0] and the --kokkos-* arguments, for Kokkos::initialize
  bool kokkos_help = false;   // --kokkos-help: print Kokkos' own option list
};

SplitArgs split_args(int argc, char** argv) {
  SplitArgs s;
  s.app.push_back(argv[0]);
  s.kokkos.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kokkos-help") {
      s.kokkos_help = true;
    } else if (a.rfind("--kokkos-", 0) == 0) {
      s.kokkos.push_back(argv[i]);
    } else {
      s.app.push_back(argv[i]);
    }
  }
  return s;
}

}  // namespace

int mantissa_main(int argc, char** argv) {
  // SIGTERM/SIGUSR1 are stop requests for the whole life of the process (Signals.hpp), also
  // during MPI/Kokkos start-up and while the report is written.
  mantissa::workflow::StopSignals::install_for_process();
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  int rc = 0;
  {
    SplitArgs args = split_args(argc, argv);
    // --kokkos-help prints Kokkos' option list and ends the job, as --help does. Kokkos 4's
    // initialize ends the process itself after printing it (std::exit(EXIT_SUCCESS)); 3.4
    // returns. So every rank finishes MPI first and rank 0 alone then hands Kokkos the flag:
    // one listing and exit status 0 with either, and no rank left without MPI_Finalize.
    if (args.kokkos_help) {
      MPI_Finalize();
      if (rank == 0) {
        mantissa::app::apply_default_openmp_binding();
        std::string help_flag = "--kokkos-help";
        args.kokkos.push_back(help_flag.data());
        int kargc = static_cast<int>(args.kokkos.size());
        args.kokkos.push_back(nullptr);
        const Kokkos::ScopeGuard guard(kargc, args.kokkos.data());
      }
      return 0;
    }
    CLI::App app{"mantissa: FP64 physics, lower precisions and transformer surrogates, side by side"};
    app.require_subcommand(1);
    app.set_version_flag("--version",
                         std::string(MANTISSA_VERSION_STRING) + " (git " + MANTISSA_GIT_HASH + ")");
    app.footer(
        "Arguments starting with --kokkos- (e.g. --kokkos-num-threads=N) go to Kokkos;\n"
        "`mantissa --kokkos-help` lists those this build's Kokkos knows.\n"
        "`mantissa SUBCOMMAND --help` describes one subcommand.");
    // Usage errors in the project's form, with the remedy.
    app.failure_message([](const CLI::App* failed_app, const CLI::Error& e) {
      std::string where;  // the subcommand being parsed, if any
      for (const CLI::App* sub : failed_app->get_subcommands()) where = " " + sub->get_name();
      return fmt::format("mantissa: error: {}\nRun `mantissa{} --help` for the usage{}.\n", e.what(), where,
                         where.empty() ? " and the subcommands (run, check, predict, info, deck-doc)" : "");
    });

    mantissa::app::RunOptions run_opts;
    auto* run = app.add_subcommand(
        "run", "Run the campaign of a deck: FP64 reference, precision variants, surrogate");
    run->add_option("deck", run_opts.deck_path, "YAML input deck")->required();
    run->add_option("overrides", run_opts.overrides, "key.path=value overrides, e.g. mesh.n=[128,128]");
    run->add_flag("--resume", run_opts.resume, "continue from the newest checkpoint in the run directory");
    run->add_flag("--overwrite", run_opts.overwrite, "replace an existing run directory");
    run->footer(
        "Exit status: 0 done, 1 error, 75 stopped by SIGTERM/SIGUSR1 with a checkpoint "
        "(run again with --resume).");

    std::string check_deck;
    std::vector<std::string> check_overrides;
    bool check_resolved = false;
    auto* check =
        app.add_subcommand("check", "Validate a deck without allocating or running; print a summary");
    check->add_option("deck", check_deck, "YAML input deck")->required();
    check->add_option("overrides", check_overrides, "key.path=value overrides, e.g. mesh.n=[128,128]");
    check->add_flag("--resolved", check_resolved, "also print the whole deck with defaults filled in");

    mantissa::app::PredictOptions predict_opts;
    auto* predict = app.add_subcommand(
        "predict", "Run a trained surrogate on a state (HDF5) and write its prediction with an XDMF sidecar");
    predict->add_option("deck", predict_opts.deck_path, "the deck the surrogate was trained with")
        ->required();
    predict->add_option("overrides", predict_opts.overrides, "key.path=value overrides");
    predict
        ->add_option("--weights", predict_opts.weights,
                     "the surrogate's weights file (a run's surrogate-trained.h5, or save_weights + .h5)")
        ->required();
    predict
        ->add_option("--state", predict_opts.state,
                     "HDF5 file with the state: /p and /p_old, or a campaign checkpoint (/fields/state.0, "
                     "/fields/state.1), or the datasets named by --fields")
        ->required();
    predict->add_option("--output", predict_opts.output, "the prediction file (.h5); the sidecar gets .xmf")
        ->required();
    predict->add_option("--predictions", predict_opts.predictions,
                        "predictions chained from the state, each K solver steps (default 1)");
    predict->add_option("--precision", predict_opts.precision,
                        "inference precision: fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 (default fp32)");
    predict->add_option(
        "--fields", predict_opts.fields,
        "the state's channel datasets: seismic P,P_OLD (the two pressure levels), cfd U,V[,W]");
    predict->footer("docs/user-guide.md, \"Running a trained surrogate on your own state\".");

    bool info_verbose = false;
    auto* info = app.add_subcommand("info", "Print version, back-ends, MPI, HDF5 and precision support");
    info->add_flag("--verbose", info_verbose, "add Kokkos' full configuration");

    auto* doc =
        app.add_subcommand("deck-doc", "Print the deck reference (Markdown) generated from the schema");

    std::optional<Kokkos::ScopeGuard> kokkos;  // finalised after settle(), as MPI is after it
    bool failed = false;
    bool parsed = false;
    std::string message;
    try {
      try {
        app.parse(static_cast<int>(args.app.size()), args.app.data());
        parsed = true;
      } catch (const CLI::ParseError& e) {
        // The same on every rank: rank 0 prints usage, help, version or the parse error;
        // --help and --version exit 0 and run nothing.
        rc = rank == 0 ? app.exit(e) : e.get_exit_code();
      }
      // Kokkos only where it is used: help, version, check and deck-doc start no back-end
      // (and so print none of its start-up messages).
      if (rc == 0 && parsed && (*run || *info || *predict)) {
        mantissa::app::apply_default_openmp_binding();
        int kargc = static_cast<int>(args.kokkos.size());
        args.kokkos.push_back(nullptr);
        // Kokkos 4's ScopeGuard is [[nodiscard]]; the guard lives in the optional.
        static_cast<void>(kokkos.emplace(kargc, args.kokkos.data()));
      }
      if (rc == 0 && parsed && *run) {
        const mantissa::Deck deck =
            mantissa::Deck::from_file(run_opts.deck_path, mantissa::app::full_schema(), run_opts.overrides);
        rc = mantissa::app::run_command(deck, run_opts);
      } else if (rc == 0 && parsed && *predict) {
        const mantissa::Deck deck = mantissa::Deck::from_file(
            predict_opts.deck_path, mantissa::app::full_schema(), predict_opts.overrides);
        rc = mantissa::app::predict_command(deck, predict_opts);
      } else if (rc == 0 && parsed && *check) {
        rc = check_command(check_deck, check_overrides, check_resolved);
      } else if (rc == 0 && parsed && *info) {
        mantissa::app::print_info(std::cout, info_verbose);
      } else if (rc == 0 && parsed && *doc) {
        if (rank == 0) std::cout << mantissa::app::full_schema().to_markdown() << std::flush;
      }
    } catch (const mantissa::Error& e) {
      failed = true;
      message = e.what();
    } catch (const std::exception& e) {
      failed = true;
      message = std::string("internal error (a bug, please report it): ") + e.what();
    }
    rc = settle(failed, message, rc);
  }
  MPI_Finalize();
  return rc;
}

// Whatever escapes the handlers inside (an exception while the command line itself is set up)
// ends the job with the message instead of std::terminate.
int main(int argc, char** argv) {
  try {
    return mantissa_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "mantissa: internal error (a bug, please report it): " << e.what() << std::endl;
  } catch (...) {
    std::cerr << "mantissa: internal error (a bug, please report it): unknown exception" << std::endl;
  }
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized != 0 && finalized == 0) MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}
