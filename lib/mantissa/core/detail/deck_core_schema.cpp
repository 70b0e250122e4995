// The core sections of every deck: physics, run, mesh, checkpoint, logging. (The output section,
// time-series snapshots, and run.seed were documented but read by nothing; they are gone. The
// surrogate's random streams have their own surrogate.seed; the final fields of every variant
// go to report.h5 + snapshots.xmf, campaign.snapshots.)
#include <mantissa/core/Schema.hpp>

#include <cstdint>
#include <limits>

namespace mantissa {

void register_core_schema(Schema& s) {
  constexpr auto imax = std::numeric_limits<std::int64_t>::max();
  constexpr double rmax = std::numeric_limits<double>::max();
  s.string("physics", "physics module to run: a key of the registry in apps/mantissa (e.g. seismic)",
           std::string("seismic"));

  s.section("run", "What to run and where its files go.");
  s.string("run.name", "name of the run; its files go to output_dir/name", std::string("mantissa"));
  s.string("run.output_dir", "directory that holds run directories (created if missing)",
           std::string("runs"));
  // 2^31 - 1: the physics count steps in 32 bits.
  s.integer("run.steps", "time steps of the reference run (when end_time is not given)", 100, 1,
            std::numeric_limits<std::int32_t>::max());
  s.real("run.end_time", "simulated time to stop at; when given it replaces steps", std::nullopt, 0.0, rmax,
         true);
  s.real("run.wall_time_limit",
         "seconds of wall time from the start of the process before which the run checkpoints and "
         "stops cleanly with exit 75, like a signal (0: no limit). Each poll stops the run when the "
         "time left would not cover twice the longest stretch between polls, the phase's end work "
         "and the next phase's set-up (the longest so far, or the phase's own forecast) and twice a "
         "checkpoint write; a run with a limit writes one checkpoint after its first step to measure "
         "that cost (kept for a resume in the run directory's .checkpoint-write-cost). Every start "
         "makes progress (a step, an optimizer step, a timed stretch or a phase) before the limit is "
         "acted on; a phase end that no start could fit, and a phase that cannot resume part-way "
         "and repeats from its start, run to their end and may pass the limit (the log says so). "
         "Not part of the deck's identity: a resumed job may give another limit",
         0.0, 0.0, rmax);

  s.section("mesh", "The global structured grid and its decomposition over MPI ranks.");
  s.integer("mesh.dim", "spatial dimension", 2, 2, 3);
  s.int_list("mesh.n", "grid points per axis (x, y[, z]); one entry per dimension", std::nullopt, 2, 3);
  s.real_list("mesh.spacing", "grid spacing per axis in metres; one value applies to every axis",
              std::vector<double>{1.0}, 1, 3);
  s.real_list("mesh.origin", "coordinate of the first grid point per axis; one value applies to every axis",
              std::vector<double>{0.0}, 1, 3);
  s.bool_list("mesh.periodic", "periodic boundary per axis; one value applies to every axis",
              std::vector<bool>{false}, 1, 3);
  s.int_list("mesh.process_grid", "MPI ranks per axis; 0 entries are chosen by MPI_Dims_create",
             std::vector<std::int64_t>{0, 0, 0}, 2, 3);
  // The ghost width is the physics' (its stencil's half width: seismic.order / 2); a key that
  // could only repeat it, or waste memory and halo traffic beyond it, helps no one.
  s.removed("mesh.ghost",
            "the ghost width follows the physics' stencil (seismic: seismic.order / 2); delete the key");

  s.section("checkpoint",
            "HDF5 checkpoints for restart (--resume): one collective file per checkpoint, readable at "
            "any rank count, checksummed; a damaged newest one falls back to the previous one.");
  s.boolean("checkpoint.enabled",
            "write the checkpoints of checkpoint.every, checkpoint.interval and checkpoint.phase_end "
            "(false: none of them); a stop by signal or run.wall_time_limit always writes one",
            true);
  s.integer("checkpoint.every",
            "campaign steps (every phase's steps in turn) between periodic checkpoints (0: none; a stop "
            "by signal or run.wall_time_limit always writes one)",
            0, 0, imax);
  // The defaults lose little to a kill -9 or a node failure: at most the work since the last
  // phase ended or the last interval passed. The cost guard keeps large states from spending
  // more than about 5 % of the run in checkpoint writes.
  s.real("checkpoint.interval",
         "seconds of wall time between periodic checkpoints in the stepping phases (reference, "
         "variants, rollouts, hybrid; 0: none); never more often than every 20 times the longest "
         "checkpoint write so far",
         600.0, 0.0, rmax);
  s.boolean("checkpoint.phase_end",
            "a checkpoint at the end of every phase, the last one before the report is written, "
            "unless less than 20 times the longest checkpoint write so far has passed since the last "
            "checkpoint; --resume then repeats at most the phase that was running",
            true);
  s.integer("checkpoint.keep",
            "how many of the newest checkpoints to keep (more: a damaged newest one has a fallback)", 2, 1,
            1000);
  s.string("checkpoint.dir",
           "checkpoint directory, relative to the run directory and inside it; its file 'latest' names "
           "the newest checkpoint",
           std::string("checkpoints"));

  s.section("logging", "What is printed, by whom, and how often.");
  s.choice("logging.level", "least severe message level printed", {"error", "warn", "info", "debug"},
           std::string("info"));
  s.boolean("logging.per_rank", "also write every rank's log to run_dir/logs/rank-N.log", false);
  s.real("logging.progress_every", "seconds between progress lines of long loops (0: never)", 10.0, 0.0,
         rmax);
  s.boolean("logging.timer_fence",
            "fence the device at timer start/stop so device work is measured "
            "(costs a little speed)",
            false);
}

}  // namespace mantissa
