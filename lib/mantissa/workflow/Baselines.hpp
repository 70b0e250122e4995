#pragma once
// What a learned surrogate must beat: three predictions that cost nothing, scored exactly as the
// surrogate is (relative L2 of the primary field against the reference, field_error), and the
// split of the reference into states the surrogate trains on and states it is scored on.
// (STYLE.md 24: a learned model is scored on data it has not seen, beside baselines that cost
// nothing; The Well, docs/benchmarks.md; PDEArena.)
//
// The baselines see only what the surrogate sees, the state handed over at the rollout's start
// (p^n and p^{n-1}), and predict the state `steps` physics steps later:
//  - zero field:           0 (its error is 1 whenever the reference is not zero);
//  - persistence:          p^n (nothing changes; error 0 after 0 steps);
//  - linear extrapolation: p^n + steps (p^n - p^{n-1}) (the state's own rate of change).
#include <mantissa/workflow/Metrics.hpp>

#include <cstdint>

namespace mantissa::workflow {

struct RolloutErrors {
  double model = 0.0;        // the prediction under test
  double zero = 0.0;         // zero field
  double persistence = 0.0;  // p^n held
  double linear = 0.0;       // p^n + steps (p^n - p^{n-1})
};

// p^n + steps (p^n - p^{n-1}) on the owned points (ghosts copied from `start`).
HostField linear_extrapolation(const HostField& start, const HostField& start_old, std::int64_t steps);

// Relative L2 errors of `test` and of the three baselines against `ref`, `steps` physics steps
// after the hand-over state (start, start_old). Collective over comm.
RolloutErrors rollout_errors(MPI_Comm comm, const HostField& test, const HostField& ref,
                             const HostField& start, const HostField& start_old, std::int64_t steps);

// A time window held out from training: the states from `start` to `horizon` (physics steps,
// every `stride`) are split so that the first (1 - heldout_fraction) train the surrogate and the
// rest are only predicted. Both parts hold at least one stride; the boundary is a multiple of
// the stride. Throws mantissa::Error naming `key` when the window is too short to split.
struct TimeSplit {
  std::int64_t train_begin = 0, train_end = 0;      // training states: [train_begin, train_end]
  std::int64_t heldout_begin = 0, heldout_end = 0;  // scored only: (heldout_begin, heldout_end]
};
TimeSplit split_time_window(std::int64_t start, std::int64_t horizon, std::int64_t stride,
                            double heldout_fraction, const char* key);

// The campaign's split (campaign.surrogate.heldout_fraction): as split_time_window, but the
// boundary is a sample step (a multiple of sample_every, which the surrogate's stride divides),
// so that the reference has a snapshot where the in-sample rollout ends and the held-out one
// starts. heldout_fraction 0: no split (training and the in-sample rollout cover [start,
// horizon], heldout_begin = heldout_end = horizon). Throws mantissa::Error naming `key` when no
// sample step lies strictly between start and horizon.
TimeSplit campaign_time_split(std::int64_t start, std::int64_t horizon, std::int64_t sample_every,
                              double heldout_fraction, const char* key);

}  // namespace mantissa::workflow
