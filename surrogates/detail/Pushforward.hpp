#pragma once
// Pushforward training's batch arithmetic (Surrogate::train_steps, Brandstetter et al., ICLR 2022),
// in a header of its own so that it can be tested on its own (tests/mpi/surrogates/tstLevers.cpp):
// given the model's prediction from sample i, the batch becomes the step from the predicted state
// to the state after sample i+1. With an exact prediction the batch is sample i+1's, in sample
// i's units.
#include <surrogates/Dataset.hpp>
#include <surrogates/ModelConfig.hpp>
#include <surrogates/Tensor.hpp>

#include <vector>

namespace mantissa::surrogates::detail {

// Pushforward batch arithmetic in normalised token units. The state channels of tokens `in`
// (sample i) advance by the prediction `pred`, and the target becomes the rest of the way to the
// state after sample i+1: t' = t_i + r t_{i+1}^(phys) - pred, all per channel affine.
// r = amplitude(i+1) / amplitude(i) rescales sample i+1's change into sample i's units.
template <class T>
void pushforward_batch(const Matrix<T>& in, const Matrix<T>& t0, const Matrix<T>& t1, const Matrix<T>& pred,
                       const std::vector<double>& ratio, std::int64_t tokens_per_tile, const ModelConfig& mc,
                       const Normalization& nz) {
  const int pc = mc.patch_cells(), cout = mc.out_channels;
  Kokkos::View<double*, MemSpace> r("mantissa::surrogates::Surrogate::pushforward_ratio", ratio.size());
  Kokkos::View<double**, MemSpace> k("mantissa::surrogates::Surrogate::pushforward_channels", cout, 4);
  {
    auto hr = Kokkos::create_mirror_view(r);
    for (std::size_t i = 0; i < ratio.size(); ++i) hr(i) = ratio[i];
    Kokkos::deep_copy(r, hr);
    auto hk = Kokkos::create_mirror_view(k);
    for (int c = 0; c < cout; ++c) {
      hk(c, 0) = nz.out_std[c] / nz.in_std[c];  // normalised change -> normalised input
      hk(c, 1) = nz.out_mean[c] / nz.in_std[c];
      hk(c, 2) = nz.out_mean[c] / nz.out_std[c];  // mean of a change in normalised target units
      hk(c, 3) = 0.0;
    }
    Kokkos::deep_copy(k, hk);
  }
  const std::int64_t rows = pred.extent(0), fo = pred.extent(1);
  // One token (row) per iteration, its features channel by channel: no index division per value.
  Kokkos::parallel_for(
      "mantissa::surrogates::Surrogate::pushforward", Kokkos::RangePolicy<ExecSpace>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t row) {
        const double rr = r(row / tokens_per_tile);
        for (int c = 0; c < cout; ++c)
          for (std::int64_t f = std::int64_t(c) * pc; f < std::int64_t(c + 1) * pc && f < fo; ++f) {
            const double q = double(pred(row, f));
            // x' = x + (q s_out + m_out); t' = (d_i + r d_{i+1} - (q s_out + m_out) - m_out) / s_out
            in(row, f) = T(double(in(row, f)) + q * k(c, 0) + k(c, 1));
            const double t1phys = double(t1(row, f)) + k(c, 2);  // d_{i+1} / s_out
            t0(row, f) = T(double(t0(row, f)) + rr * t1phys - q - k(c, 2));
          }
      });
}

}  // namespace mantissa::surrogates::detail
