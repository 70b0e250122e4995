#pragma once
// Linear extrapolation in time as a fixed skip path around the transformer
// (SurrogateConfig::extrapolation = linear). For a state (u^n, u^{n-1}) one solver step apart
// (input channels 0 and 1; seismic's p^n and p^{n-1}), extrapolating K steps ahead changes both by
// K (u^n - u^{n-1}). The model's output is that extrapolation plus the network's output, so the
// network learns only what extrapolation misses (the wave equation's c^2 dt^2 Laplacian terms, a
// fifth of the change at the quickstart's K = 2) instead of spending its residual stream (D wide)
// on reproducing a per-cell difference of its inputs.
//
// In the normalised token units the model works in (input channel j: x_j = in_j s_j + m_j;
// change of state channel c: d_c = out_c so_c + mo_c), the skip adds K (x_0 - x_1) / so_c, affine
// per cell:
//   out_c += a0_c in_0 + a1_c in_1 + b_c,
//   a0_c = K s_0 / so_c,  a1_c = -K s_1 / so_c,  b_c = K (m_0 - m_1) / so_c,
// so the change is d_c = net_c so_c + mo_c + K (x_0 - x_1): the prediction is the network's plus
// exactly the extrapolation (tstLevers). It has no parameters: gradients are the network's.
#include <surrogates/Dataset.hpp>
#include <surrogates/Tensor.hpp>

#include <mantissa/core/Error.hpp>

#include <string>
#include <vector>

namespace mantissa::surrogates {

struct LinearSkip {
  int patch_cells = 0;
  std::vector<double> a0, a1, b;  // per output channel
  bool empty() const { return a0.empty(); }
};

inline LinearSkip linear_extrapolation(const Normalization& nz, int K, int out_channels, int patch_cells) {
  if (nz.in_mean.size() < 2 || int(nz.out_mean.size()) != out_channels)
    throw Error(
        "surrogate.extrapolation = linear needs input channels 0 and 1 to be the state one solver step apart "
        "(in_channels >= 2)");
  LinearSkip s;
  s.patch_cells = patch_cells;
  for (int c = 0; c < out_channels; ++c) {
    s.a0.push_back(double(K) * nz.in_std[0] / nz.out_std[c]);
    s.a1.push_back(-double(K) * nz.in_std[1] / nz.out_std[c]);
    s.b.push_back(double(K) * (nz.in_mean[0] - nz.in_mean[1]) / nz.out_std[c]);
  }
  return s;
}

// out [N, C_out * pc] += the skip of in [N, C_in * pc] (features c * pc + cell, Patches.hpp).
template <class T>
void add_skip(const LinearSkip& s, const Matrix<T>& in, const Matrix<T>& out) {
  if (s.empty()) return;
  const int pc = s.patch_cells, cout = int(s.a0.size());
  if (out.extent(0) != in.extent(0) || std::int64_t(out.extent(1)) != std::int64_t(cout) * pc ||
      std::int64_t(in.extent(1)) < 2 * std::int64_t(pc))
    throw Error("surrogate: extrapolation skip got " + std::to_string(in.extent(0)) + "x" +
                std::to_string(in.extent(1)) + " inputs for " + std::to_string(out.extent(0)) + "x" +
                std::to_string(out.extent(1)) + " outputs (internal)");
  Kokkos::View<double* [3], MemSpace> k("mantissa::surrogates::Extrapolation::coefficients", cout);
  auto hk = Kokkos::create_mirror_view(k);
  for (int c = 0; c < cout; ++c) {
    hk(c, 0) = s.a0[c];
    hk(c, 1) = s.a1[c];
    hk(c, 2) = s.b[c];
  }
  Kokkos::deep_copy(k, hk);
  const std::int64_t fo = out.extent(1);
  Kokkos::parallel_for(
      "mantissa::surrogates::Extrapolation::add_skip",
      Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(out.extent(0)) * fo),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t row = e / fo, f = e % fo;
        const std::int64_t c = f / pc, q = f % pc;
        out(row, f) = T(double(out(row, f)) + k(c, 0) * double(in(row, q)) +
                        k(c, 1) * double(in(row, pc + q)) + k(c, 2));
      });
}

}  // namespace mantissa::surrogates
