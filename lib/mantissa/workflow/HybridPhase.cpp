// The hybrid: a rollout whose state goes back to the physics when an error indicator says the
// surrogate has gone wrong (campaign.surrogate.hybrid).
#include <mantissa/workflow/HybridPhase.hpp>

#include <cmath>
#include <limits>
#include <sstream>

namespace mantissa::workflow {

namespace {
constexpr const char* k_physics_left = "physics_left";  // shared with RolloutPhase
constexpr const char* k_since_check = "since_check";    // surrogate steps since the last check
}  // namespace

std::string HybridPhase::describe_extra(const PhaseContext& ctx) const {
  const auto& hs = ctx.config().surrogate.hybrid;
  std::ostringstream os;
  os << "; hybrid: K=" << hs.k << ", check every " << hs.check_every << " surrogate steps, energy tol "
     << hs.energy_tol << ", residual tol " << hs.residual_tol << ", " << hs.physics_steps
     << " physics steps per hand-over";
  return os.str();
}

void HybridPhase::after_prediction(PhaseContext& ctx, VariantResult& r, PhysicsModel& physics, State& s,
                                   std::int64_t step) {
  const auto& cfg = ctx.config();
  const auto& hs = cfg.surrogate.hybrid;
  auto& cur = ctx.cursor();
  SurrogateModel& sur = ctx.surrogate();
  const int stride = sur.stride();
  const double dt = physics.dt();
  std::int64_t& since_check = cur.phase_state[k_since_check];
  ++since_check;
  // The indicator runs at the end of a block of K once at least M surrogate steps have passed
  // since the last check or hand-back.
  if (!(since_check >= hs.check_every && since_check % hs.k == 0)) return;
  since_check = 0;
  // The indicator (its cost is part of the hybrid's time), from the current state s: one
  // surrogate step and one physics step; the energy drift is the relative energy difference of
  // the two results (energy the surrogate creates or loses in one step) and the residual the
  // relative L2 difference of their primary fields on a sample of the domain (the physics'
  // discrete equation applied to the surrogate's update).
  PhaseTimer si("campaign::indicator");
  State probe = physics.state();
  sur.predict(probe, 1);
  physics.step(stride);
  const auto d_phys = physics.diagnostics();
  const auto p_phys = to_host(physics.state()[0].field, "mantissa::workflow::HybridPhase::probe");
  // the indicator's prediction is made admissible as every prediction is (RolloutPhase)
  (void)physics.constrain(probe, step + stride, double(step + stride) * dt);
  physics.set_state(probe, step + stride, double(step + stride) * dt);
  const auto d = physics.diagnostics();
  const auto p_sur = to_host(probe[0].field, "mantissa::workflow::HybridPhase::probe");
  const double drift = energy_drift(d_phys.energy(), d.energy());
  const double residual = field_error(ctx.comm(), p_sur, p_phys, hs.sample_stride).rel_l2;
  physics.set_state(s, step, double(step) * dt);
  r.time.inference += si.stop();
  // What the indicator cannot see: the hybrid's state against the reference, at the sample steps
  // (the reference keeps only those), so the report can say whether it handed over before the true
  // error passed campaign.surrogate.hybrid.error_limit (analysis time, not the hybrid's).
  PhaseTimer sa("campaign::indicator_truth");
  const std::int64_t horizon = cfg.surrogate.horizon < 0 ? cfg.steps : cfg.surrogate.horizon;
  double truth = std::numeric_limits<double>::quiet_NaN();
  if (ctx.is_sample_step(step, horizon))
    truth = field_error(ctx.comm(), to_host(s[0].field, "mantissa::workflow::HybridPhase::truth"),
                        ctx.reference_snapshot(r.experiment, step))
                .rel_l2;
  r.time.analysis += sa.stop();
  std::string reason;
  if (!d.finite)
    reason = "non-finite";
  else if (!(std::fabs(drift) <= hs.energy_tol))
    reason = "energy";
  else if (!(residual <= hs.residual_tol))
    reason = "residual";
  r.indicator_checks.push_back({step, drift, residual, truth, reason.empty() ? "continue" : reason});
  if (!reason.empty()) {
    r.handovers.push_back({step, double(step) * dt, reason, drift, residual, truth});
    cur.phase_state[k_physics_left] = hs.physics_steps;
    ctx.log(r.name + ": hand-over to the physics at step " + std::to_string(step) + " (" + reason +
            ": energy drift " + fmt_g(drift) + ", residual " + fmt_g(residual) + ")");
  }
}

}  // namespace mantissa::workflow
