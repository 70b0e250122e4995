#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Log.hpp>
#include <mantissa/core/Timers.hpp>

#include <mpi.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>

namespace mantissa::log {

namespace {

struct State {
  std::mutex mutex;
  Level level = Level::info;
  std::ostream* console = &std::cout;
  std::unique_ptr<std::ofstream> file;
  std::unique_ptr<std::ofstream> copy;  // rank 0's console lines, again (set_console_copy)
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

State& state() {
  static State s;
  return s;
}

int world_rank() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

std::string line(Level level, double t, const std::string& msg) {
  return fmt::format("[{:10.3f}s] {:<5} {}\n", t, to_string(level), msg);
}

}  // namespace

Level parse_level(const std::string& text) {
  if (text == "error") return Level::error;
  if (text == "warn") return Level::warn;
  if (text == "info") return Level::info;
  if (text == "debug") return Level::debug;
  throw Error("logging level '" + text + "' is not one of error, warn, info, debug");
}

const char* to_string(Level level) {
  switch (level) {
    case Level::error:
      return "error";
    case Level::warn:
      return "warn";
    case Level::info:
      return "info";
    case Level::debug:
      return "debug";
  }
  return "?";
}

void configure(Level lvl, const std::string& per_rank_dir) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.level = lvl;
  s.file.reset();
  if (per_rank_dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(per_rank_dir, ec);
  const std::string path = per_rank_dir + "/rank-" + std::to_string(world_rank()) + ".log";
  auto f = std::make_unique<std::ofstream>(path, std::ios::app);
  if (!*f) {
    throw Error(
        fmt::format("cannot open the per-rank log file '{}' ({}); check that the run directory is "
                    "writable or set logging.per_rank: false",
                    path, ec ? ec.message() : "open failed"));
  }
  s.file = std::move(f);
}

void configure_from_deck(const Deck& deck, const std::string& run_dir) {
  configure(parse_level(deck.get_string("logging.level")),
            deck.get_bool("logging.per_rank") ? run_dir + "/logs" : std::string());
  Timers::global().set_fence(deck.get_bool("logging.timer_fence"));
}

Level level() {
  return state().level;
}
bool enabled(Level lvl) {
  return static_cast<int>(lvl) <= static_cast<int>(state().level);
}

void set_console(std::ostream* os) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.console = os ? os : &std::cout;
}

void set_console_copy(const std::string& path) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.copy.reset();
  if (path.empty() || world_rank() != 0) return;
  auto f = std::make_unique<std::ofstream>(path, std::ios::app);
  if (!*f)
    throw Error(fmt::format("cannot open the log file '{}'; check that the run directory is writable", path));
  s.copy = std::move(f);
}

double elapsed() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - state().start).count();
}

void reset_clock() {
  state().start = std::chrono::steady_clock::now();
}

void write(Level lvl, const std::string& message) {
  State& s = state();
  const std::string text = line(lvl, elapsed(), message);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (world_rank() == 0) {
    *s.console << text;
    s.console->flush();
    if (s.copy) {
      *s.copy << text;
      s.copy->flush();
    }
  }
  if (s.file) {
    *s.file << text;
    s.file->flush();
  }
}

void write_any_rank(Level lvl, const std::string& message) {
  State& s = state();
  const std::string text = line(lvl, elapsed(), fmt::format("(rank {}) {}", world_rank(), message));
  std::lock_guard<std::mutex> lock(s.mutex);
  *s.console << text;
  s.console->flush();
  if (s.file) {
    *s.file << text;
    s.file->flush();
  }
}

}  // namespace mantissa::log
