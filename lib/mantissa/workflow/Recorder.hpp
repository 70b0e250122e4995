#pragma once
// What the campaign records of a variant while it steps, beyond the fields it compares: the
// hook a physics uses for its own observations. The campaign calls record() at step 0 of every
// experiment and after every `trace_stride` physics steps (the probes' stride, times the
// surrogate's where a surrogate steps), and finish() once a variant's own experiment is done.
//
// The base class samples the probes (PhysicsModel::probes) into VariantResult::traces (or the
// experiment's record) and fails the variant on a non-finite probe value; that is all a physics
// without a recorder of its own gets. A physics' recorder (registered with it, Registry.hpp)
// derives from it to add summary metrics (seismic: receiver misfit and cross-correlation).
// A recorder keeps nothing between calls: what it records lives in the VariantResult, so the
// checkpoint and the report carry it with the rest.
#include <mantissa/workflow/CampaignConfig.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/Results.hpp>

#include <cstdint>
#include <string>

namespace mantissa::workflow {

class Recorder {
 public:
  virtual ~Recorder() = default;

  // Records the model's observations at `step` of `experiment` into r.traces_of(experiment):
  // r's own record (r.experiment: 0, or the held-out one a rollout runs) or that of a later
  // experiment of a variant that runs them all. Collective. Returns "" or what is wrong (the
  // variant then fails with that message).
  virtual std::string record(VariantResult& r, int experiment, std::int64_t step, const PhysicsModel& model);

  // After r's own experiment (r.experiment) has ended (ok or failed): summary metrics
  // (VariantResult::set_metric) against the reference's record of that experiment. Set every
  // metric also for a failed variant (NaN), so that the report has the same keys for every
  // variant. Not collective.
  virtual void finish(VariantResult& /*r*/, const VariantResult& /*reference*/,
                      const CampaignConfig& /*config*/) const {}
};

}  // namespace mantissa::workflow
