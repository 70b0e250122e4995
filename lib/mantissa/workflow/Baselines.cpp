#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Baselines.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace mantissa::workflow {

HostField linear_extrapolation(const HostField& start, const HostField& start_old, std::int64_t steps) {
  MANTISSA_ASSERT(start.extent == start_old.extent && start.ghost == start_old.ghost,
                  "linear_extrapolation: fields differ in shape");
  HostField out = start;
  out.view = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::workflow::linear_extrapolation"),
      start.view.extent(0), start.view.extent(1), start.view.extent(2));
  Kokkos::deep_copy(out.view, start.view);
  const auto& g = start.ghost;
  const double s = double(steps);
  for (std::int64_t k = 0; k < start.extent[2]; ++k)
    for (std::int64_t j = 0; j < start.extent[1]; ++j)
      for (std::int64_t i = 0; i < start.extent[0]; ++i) {
        const double p = start.view(k + g[2], j + g[1], i + g[0]);
        const double q = start_old.view(k + g[2], j + g[1], i + g[0]);
        out.view(k + g[2], j + g[1], i + g[0]) = p + s * (p - q);
      }
  return out;
}

RolloutErrors rollout_errors(MPI_Comm comm, const HostField& test, const HostField& ref,
                             const HostField& start, const HostField& start_old, std::int64_t steps) {
  RolloutErrors e;
  e.model = field_error(comm, test, ref).rel_l2;
  HostField zero = start;
  zero.view = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>(
      "mantissa::workflow::zero_baseline", start.view.extent(0), start.view.extent(1), start.view.extent(2));
  e.zero = field_error(comm, zero, ref).rel_l2;
  e.persistence = field_error(comm, start, ref).rel_l2;
  e.linear = field_error(comm, linear_extrapolation(start, start_old, steps), ref).rel_l2;
  return e;
}

TimeSplit split_time_window(std::int64_t start, std::int64_t horizon, std::int64_t stride,
                            double heldout_fraction, const char* key) {
  if (stride < 1)
    throw Error(std::string(key) + ": the stride " + std::to_string(stride) + " must be at least 1");
  if (!(heldout_fraction > 0.0 && heldout_fraction < 1.0))
    throw Error(std::string(key) + " = " + std::to_string(heldout_fraction) +
                ": the held-out fraction must be strictly between 0 and 1");
  const std::int64_t strides = (horizon - start) / stride;
  if (strides < 2)
    throw Error(std::string(key) + ": the window from step " + std::to_string(start) + " to " +
                std::to_string(horizon) + " holds " + std::to_string(std::max<std::int64_t>(strides, 0)) +
                " surrogate steps of " + std::to_string(stride) +
                "; at least 2 are needed to hold one out (a longer run or a smaller stride)");
  std::int64_t held = std::int64_t(std::llround(heldout_fraction * double(strides)));
  held = std::min<std::int64_t>(std::max<std::int64_t>(held, 1), strides - 1);
  TimeSplit s;
  s.train_begin = start;
  s.train_end = start + (strides - held) * stride;
  s.heldout_begin = s.train_end;
  s.heldout_end = start + strides * stride;
  return s;
}

TimeSplit campaign_time_split(std::int64_t start, std::int64_t horizon, std::int64_t sample_every,
                              double heldout_fraction, const char* key) {
  TimeSplit s;
  s.train_begin = start;
  s.train_end = horizon;
  s.heldout_begin = s.heldout_end = horizon;
  if (heldout_fraction == 0.0) return s;
  if (!(heldout_fraction > 0.0 && heldout_fraction < 1.0))
    throw Error(std::string(key) + " = " + std::to_string(heldout_fraction) +
                ": the held-out fraction must be 0 (none) or strictly between 0 and 1");
  if (sample_every < 1) throw Error(std::string(key) + ": campaign.sample_every must be at least 1");
  // Sample steps strictly inside (start, horizon).
  const std::int64_t first = (start / sample_every + 1) * sample_every;
  const std::int64_t last = ((horizon - 1) / sample_every) * sample_every;
  if (first > last || first >= horizon)
    throw Error(std::string(key) +
                ": no sample step (a multiple of campaign.sample_every = " + std::to_string(sample_every) +
                ") lies between campaign.surrogate.start = " + std::to_string(start) + " and the horizon " +
                std::to_string(horizon) +
                " to split the window at; a longer run, a smaller sample_every or heldout_fraction 0");
  const double target = double(start) + (1.0 - heldout_fraction) * double(horizon - start);
  std::int64_t b = std::int64_t(std::llround(target / double(sample_every))) * sample_every;
  b = std::min(std::max(b, first), last);
  s.train_end = b;
  s.heldout_begin = b;
  s.heldout_end = horizon;
  return s;
}

}  // namespace mantissa::workflow
