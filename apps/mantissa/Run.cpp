// `mantissa run DECK [--resume] [--overwrite]`: the precision campaign (issue 5). Builds the
// shared decomposition from the deck's mesh, the campaign from campaign.*, runs it into
// run.output_dir/run.name, writes the report and prints its main table. A stop by SIGTERM or
// SIGUSR1 writes a checkpoint and exits with 75 (EX_TEMPFAIL: "run again with --resume").
#include "Run.hpp"
#include "Check.hpp"
#include "Estimate.hpp"
#include "Registry.hpp"

#include <mantissa/core/Error.hpp>
#include <mantissa/core/Log.hpp>
#include <mantissa/core/Version.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/Report.hpp>
#include <mantissa/workflow/RunDirectory.hpp>
#include <mantissa/workflow/Schema.hpp>
#include <mantissa/workflow/Signals.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

namespace mantissa::app {

namespace {

constexpr int k_exit_stopped = 75;  // EX_TEMPFAIL

// Testing aid (tests/fault): MANTISSA_TEST_RAISE=startup|setup|report makes every rank raise
// SIGTERM at that point of the run, the same path as a signal from the batch system there.
void test_raise(const char* where) {
  const char* at = std::getenv("MANTISSA_TEST_RAISE");
  if (at != nullptr && std::string(at) == where) std::raise(SIGTERM);
}

// A stop request before the run directory is touched: nothing was written, the same command
// starts the run again (collective).
bool stopped_in_startup(int rank) {
  if (!workflow::StopSignals::received(MPI_COMM_WORLD)) return false;
  if (rank == 0)
    std::cout << "mantissa: stopped by " << workflow::StopSignals::name(workflow::StopSignals::last_signal())
              << " during start-up, before anything was written; run the same command again" << std::endl;
  return true;
}

}  // namespace

// The process's start (static initialization, before main() and MPI_Init): run.wall_time_limit
// counts from here, as a batch system's limit counts from the job's start.
const auto g_process_start = std::chrono::steady_clock::now();

int run_command(const Deck& deck, const RunOptions& opts) {
  const auto t0 = g_process_start;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (opts.resume && opts.overwrite)
    throw Error(
        "run: --resume and --overwrite exclude each other; --resume continues the run in the run "
        "directory, --overwrite replaces it");

  test_raise("startup");
  if (stopped_in_startup(rank)) return k_exit_stopped;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // What `mantissa check` refuses, refused here the same way before anything is allocated or
  // written (Check.hpp).
  preflight(deck, ranks, MPI_COMM_WORLD);
  const Grid grid = grid_from_deck(deck);
  Decomposition decomp(MPI_COMM_WORLD, grid, process_grid_from_deck(deck));
  workflow::CampaignConfig cfg = workflow::config_from_deck(deck);
  const workflow::Registry registry = make_registry();
  const workflow::ModelContext ctx{&deck, &decomp};
  // Refuse what cannot fit before the first allocation (Estimate.hpp): the mesh first, then,
  // once run.end_time has become steps, what the campaign keeps per step.
  check_memory(estimate_run(deck, ranks, deck.has("run.end_time") ? 0 : cfg.steps), MPI_COMM_WORLD);
  if (deck.has("run.end_time")) {
    // The deck gives a simulated time: the physics' own time step turns it into steps.
    const auto& table = registry.physics(cfg.physics).precisions;
    auto probe = registry.create_physics(
        cfg.physics, ctx, table.uniform(cfg.reference_precision, "deck key 'campaign.reference'"));
    cfg.steps = checked_steps(deck.get_real("run.end_time"), probe->dt());
    check_memory(estimate_run(deck, ranks, cfg.steps), MPI_COMM_WORLD);
  }

  const auto mode = opts.resume ? workflow::RunMode::resume
                                : (opts.overwrite ? workflow::RunMode::overwrite : workflow::RunMode::fresh);
  if (stopped_in_startup(rank)) return k_exit_stopped;
  // Locked, marked, inside run.output_dir, writable (RunDirectory.hpp).
  workflow::RunDirectory run_dir(MPI_COMM_WORLD, deck.get_string("run.output_dir"),
                                 deck.get_string("run.name"), mode, cfg.checkpoint_dir);
  const std::string dir = run_dir.path();
  check_disk(estimate_run(deck, ranks, cfg.steps), dir, MPI_COMM_WORLD);

  // Core's log (logging.level, logging.per_rank, logging.timer_fence); rank 0's lines also go to
  // run.log in the run directory.
  log::configure_from_deck(deck, dir);
  log::set_console_copy(dir + "/run.log");
  struct StopCopy {
    ~StopCopy() { log::set_console_copy(""); }
  } stop_copy;
  // A resume keeps the deck of the run it continues (a refused resume must not replace it).
  // Written durably (temporary, fsync, rename: io/DurableFile.hpp), so that a full disk leaves
  // no truncated deck.resolved.yaml and stops the run here on every rank, naming file and cause.
  if (!run_dir.resume()) {
    std::string err;
    if (rank == 0) {
      try {
        io::write_file_durably(dir + "/deck.resolved.yaml", deck.resolved_yaml());
      } catch (const std::exception& e) {
        err = e.what();
      }
    }
    int n = static_cast<int>(err.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    err.resize(static_cast<std::size_t>(n));
    MPI_Bcast(err.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!err.empty()) throw Error(err);
  }
  log::info("mantissa {} ({}): run {}{} into {}", MANTISSA_VERSION_STRING, MANTISSA_GIT_HASH, opts.deck_path,
            opts.resume ? " --resume" : "", dir);
  for (const auto& note : run_dir.notes()) log::info("[run directory] {}", note);

  // run.wall_time_limit counts from the start of the process (as a batch system's limit does):
  // the campaign gets what start-up left of it.
  if (deck.get_real("run.wall_time_limit") > 0.0) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cfg.wall_time_limit = std::max(deck.get_real("run.wall_time_limit") - spent, 1e-9);
  }
  workflow::Campaign campaign(cfg, registry, ctx, dir, run_dir.resume());
  test_raise("setup");
  run_dir.commit();  // set-up succeeded: an overwritten previous run may go now
  const auto outcome = campaign.run();
  if (outcome == workflow::Campaign::Outcome::stopped) {
    // Measured on the limit's own clock (from the start of the process), for the batch script
    // and the wall-time test (tests/regression/campaign/run_wall_time.sh).
    if (deck.get_real("run.wall_time_limit") > 0.0)
      log::info("stopped with a checkpoint after {:.3f} s of the process's run.wall_time_limit of {:.3f} s",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                deck.get_real("run.wall_time_limit"));
    return k_exit_stopped;
  }

  workflow::ReportInfo info;
  info.machine = workflow::machine_info(MPI_COMM_WORLD);
  info.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  info.mantissa_version = std::string(MANTISSA_VERSION_STRING) + " (" + MANTISSA_GIT_HASH + ")";
  info.command = "mantissa run " + opts.deck_path;
  for (const auto& o : opts.overrides) info.command += " " + o;
  if (opts.resume) info.command += " --resume";
  if (opts.overwrite) info.command += " --overwrite";
  test_raise("report");
  std::string files = "report.json, report.h5";
  for (const auto& f : workflow::write_report(campaign, info, dir)) files += ", " + f;
  // A stop request that arrived while the report was written: the report is complete, the run
  // has finished; say so rather than stop half-way (the handlers stay installed, Signals.hpp).
  const bool late_signal = workflow::StopSignals::received(MPI_COMM_WORLD);
  log::info("results:\n\n{}\nreport: {}/report.md ({})", workflow::main_table(campaign), dir, files);
  if (late_signal)
    log::info(
        "mantissa: {} arrived after the campaign had finished; the report is complete and the run is done "
        "(exit 0)",
        workflow::StopSignals::name(workflow::StopSignals::last_signal()));
  return 0;
}

}  // namespace mantissa::app
