#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Recorder.hpp>

#include <cmath>

namespace mantissa::workflow {

std::string Recorder::record(VariantResult& r, int experiment, std::int64_t /*step*/,
                             const PhysicsModel& model) {
  const auto v = model.sample_probes();
  if (experiment == r.experiment) r.num_probes = static_cast<std::int64_t>(v.size());
  std::vector<double>* traces = r.traces_of(experiment);
  MANTISSA_ASSERT(traces, "no record for experiment " << experiment);
  traces->insert(traces->end(), v.begin(), v.end());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) {
      const auto names = model.probes().names;
      return "non-finite value at probe '" + (i < names.size() ? names[i] : std::to_string(i)) + "'";
    }
  return "";
}

}  // namespace mantissa::workflow
