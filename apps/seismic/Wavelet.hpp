#pragma once
// Source time functions, evaluated on the host once per step (the amplitude is passed to the
// injection kernel as a scalar).
#include <seismic/Config.hpp>

#include <string>
#include <vector>

namespace mantissa::seismic {

class Wavelet {
 public:
  // Throws mantissa::Error when a file wavelet cannot be read (names the file and the line).
  explicit Wavelet(const Source& source);
  // Amplitude at time t (zero outside a file wavelet's time range).
  double operator()(double t) const;
  double delay() const { return m_delay; }

 private:
  WaveletKind m_kind;
  double m_frequency;
  double m_delay;
  double m_amplitude;
  std::vector<double> m_t, m_v;
};

// Ricker wavelet (second derivative of a Gaussian, unit peak): (1 - 2 a) exp(-a),
// a = (pi f (t - t0))^2.
double ricker(double t, double frequency, double delay);
// First derivative of a Gaussian, scaled to unit peak: -sqrt(2 e) pi f tau exp(-(pi f tau)^2).
double gaussian_derivative(double t, double frequency, double delay);

}  // namespace mantissa::seismic
