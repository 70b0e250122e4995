#pragma once
// Logging: levels error < warn < info < debug; rank 0 prints by default; every rank can also
// write its own file run_dir/logs/rank-N.log. Each line carries the elapsed time since the
// process started logging, which is what matters when reading a job's output.
//
//   mantissa::log::info("step {} of {}", step, total);
#include <fmt/format.h>

#include <ostream>
#include <string>
#include <utility>

namespace mantissa {
class Deck;
}

namespace mantissa::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

// "error", "warn", "info", "debug"; throws mantissa::Error for anything else.
Level parse_level(const std::string& text);
const char* to_string(Level level);

// level: the least severe level printed. per_rank_dir: when not empty, every rank also writes
// all its messages to per_rank_dir/rank-N.log (the directory is created). Call on every rank.
void configure(Level level, const std::string& per_rank_dir = "");
// From the deck's logging section: logging.level; logging.per_rank writes
// run_dir/logs/rank-N.log; logging.timer_fence turns on fencing of Timers::global().
// Call on every rank once the run directory exists.
void configure_from_deck(const Deck& deck, const std::string& run_dir);
Level level();
bool enabled(Level level);
// Where rank 0's console lines go (std::cout unless changed; tests capture it).
void set_console(std::ostream* os);
// Rank 0 also appends every console line to `path` (a run's run.log); "" stops it. Throws
// mantissa::Error naming the file when it cannot be opened.
void set_console_copy(const std::string& path);
// Seconds since logging started (the first call into this module or the last reset_clock()).
double elapsed();
void reset_clock();

// Writes one message: on rank 0 to the console, on every rank to its file when configured.
void write(Level level, const std::string& message);
// Writes to the console from whichever rank calls it, prefixed with the rank: for problems
// only one rank sees.
void write_any_rank(Level level, const std::string& message);

template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::error)) write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::warn)) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::info)) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::debug)) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn_any_rank(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::warn)) write_any_rank(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace mantissa::log
