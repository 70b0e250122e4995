#include <mantissa/core/Log.hpp>
#include <mantissa/core/Progress.hpp>

#include <fmt/format.h>

#include <cmath>

namespace mantissa {

namespace {

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.2f} h", s / 3600);
}

}  // namespace

Progress::Progress(std::string label, std::int64_t total_steps, double every_seconds, std::string unit,
                   double work_per_step)
    : m_label(std::move(label)),
      m_unit(std::move(unit)),
      m_total(total_steps),
      m_every(every_seconds),
      m_work(work_per_step),
      m_start(std::chrono::steady_clock::now()) {}

double Progress::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

bool Progress::due(double elapsed) const {
  return m_every > 0 && elapsed - m_last_print >= m_every;
}

std::string Progress::line(std::int64_t step, double sim_time, double elapsed, double rate) const {
  std::string s = m_label + ": step " + std::to_string(step);
  if (m_total > 0) {
    s += fmt::format("/{} ({:.1f}%)", m_total, 100.0 * double(step) / double(m_total));
  }
  if (std::isfinite(sim_time)) s += fmt::format(" t={:.4g}", sim_time);
  s += fmt::format(" | {:.4g} steps/s", rate);
  if (m_work > 0 && !m_unit.empty()) s += fmt::format(", {:.4g} {}/s", rate * m_work, m_unit);
  s += " | elapsed " + duration_text(elapsed);
  if (m_total > 0 && step > 0 && step < m_total) {
    const double avg = elapsed / double(step);
    s += ", ETA " + duration_text(avg * double(m_total - step));
  }
  return s;
}

void Progress::print(std::int64_t step, double sim_time, double elapsed) {
  const double dt = elapsed - m_last_print;
  const double rate = dt > 0 ? double(step - m_last_step) / dt : 0.0;
  log::info("{}", line(step, sim_time, elapsed, rate));
  m_last_print = elapsed;
  m_last_step = step;
  ++m_lines;
}

void Progress::update(std::int64_t step, double sim_time) {
  if (m_every <= 0) return;
  const double t = seconds_since_start();
  if (due(t)) print(step, sim_time, t);
}

void Progress::finish(std::int64_t step, double sim_time) {
  if (m_every < 0) return;
  // The final line reports the average over the whole loop.
  m_last_print = 0.0;
  m_last_step = 0;
  print(step, sim_time, seconds_since_start());
}

}  // namespace mantissa
