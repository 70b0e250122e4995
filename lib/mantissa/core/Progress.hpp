#pragma once
// Progress of a long loop, printed through log::info at most every `every_seconds`:
//   seismic::reference: step 1200/5000 (24.0%) t=1.2e-01 | 85.3 steps/s, 104.2 Mcell/s |
//   elapsed 14.1 s, ETA 44.5 s
// Throughput is measured over the interval since the previous line (what the loop does now);
// the ETA uses the average since the start (steadier). update() costs one clock read when it
// does not print.
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace mantissa {

class Progress {
 public:
  // work_per_step: units of work per step for the second throughput figure, e.g. the number of
  // grid points in millions with unit "Mcell"; 0 leaves it out. every_seconds <= 0: silent
  // until finish().
  Progress(std::string label, std::int64_t total_steps, double every_seconds, std::string unit = "",
           double work_per_step = 0.0);

  // Call after step `step` (1-based count of steps done). sim_time: simulated time, NaN if none.
  void update(std::int64_t step, double sim_time = std::numeric_limits<double>::quiet_NaN());
  // Prints the final line (always, unless every_seconds < 0).
  void finish(std::int64_t step, double sim_time = std::numeric_limits<double>::quiet_NaN());

  // The text of one line at `elapsed` seconds after construction, with `rate` steps/s now;
  // public for tests.
  std::string line(std::int64_t step, double sim_time, double elapsed, double rate) const;
  // Whether update() at `elapsed` seconds would print; public for tests.
  bool due(double elapsed) const;
  int lines_printed() const { return m_lines; }

 private:
  double seconds_since_start() const;
  void print(std::int64_t step, double sim_time, double elapsed);

  std::string m_label, m_unit;
  std::int64_t m_total;
  double m_every, m_work;
  std::chrono::steady_clock::time_point m_start;
  double m_last_print = 0.0;
  std::int64_t m_last_step = 0;
  int m_lines = 0;
};

}  // namespace mantissa
