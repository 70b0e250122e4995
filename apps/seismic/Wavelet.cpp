#include <mantissa/core/Error.hpp>
#include <seismic/Wavelet.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace mantissa::seismic {

namespace {
constexpr double pi = 3.14159265358979323846;
}

double ricker(double t, double frequency, double delay) {
  const double x = pi * frequency * (t - delay);
  const double a = x * x;
  return (1.0 - 2.0 * a) * std::exp(-a);
}

double gaussian_derivative(double t, double frequency, double delay) {
  const double x = pi * frequency * (t - delay);
  return -std::sqrt(2.0 * std::exp(1.0)) * x * std::exp(-x * x);
}

Wavelet::Wavelet(const Source& source)
    : m_kind(source.wavelet),
      m_frequency(source.frequency),
      m_delay(source.delay >= 0.0 ? source.delay : 1.5 / source.frequency),
      m_amplitude(source.amplitude) {
  if (m_kind != WaveletKind::file) {
    if (!(source.frequency > 0.0))
      throw Error("seismic source: frequency " + std::to_string(source.frequency) +
                  " must be positive (set seismic.shots[].sources[].frequency)");
    return;
  }
  std::ifstream in(source.file);
  if (!in)
    throw Error("seismic source: cannot open wavelet file '" + source.file +
                "'; give a text file with two columns 'time value' per line");
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream is(line);
    double t = 0.0, v = 0.0;
    if (!(is >> t)) continue;  // blank or comment line
    if (!(is >> v))
      throw Error("seismic source: wavelet file '" + source.file + "' line " + std::to_string(number) +
                  " has a time but no value; each line must read 'time value'");
    if (!m_t.empty() && !(t > m_t.back()))
      throw Error("seismic source: wavelet file '" + source.file + "' line " + std::to_string(number) +
                  ": times must increase");
    m_t.push_back(t);
    m_v.push_back(v);
  }
  if (m_t.size() < 2)
    throw Error("seismic source: wavelet file '" + source.file + "' has fewer than 2 samples");
}

double Wavelet::operator()(double t) const {
  switch (m_kind) {
    case WaveletKind::ricker:
      return m_amplitude * ricker(t, m_frequency, m_delay);
    case WaveletKind::gaussian_derivative:
      return m_amplitude * gaussian_derivative(t, m_frequency, m_delay);
    case WaveletKind::file: {
      if (t < m_t.front() || t > m_t.back()) return 0.0;
      const auto it = std::upper_bound(m_t.begin(), m_t.end(), t);
      const std::size_t hi =
          std::min<std::size_t>(static_cast<std::size_t>(it - m_t.begin()), m_t.size() - 1);
      const std::size_t lo = hi - 1;
      const double w = (t - m_t[lo]) / (m_t[hi] - m_t[lo]);
      return m_amplitude * ((1.0 - w) * m_v[lo] + w * m_v[hi]);
    }
  }
  return 0.0;
}

}  // namespace mantissa::seismic
