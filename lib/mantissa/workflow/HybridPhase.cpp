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
// The primary field x physics steps after p (x = -1: the step before), from the quadratic through
// the surrogate's own primary fields one prediction (k steps) before (prev), at (p) and after
// (next): Lagrange weights x (x - k) / (2 k^2), (k^2 - x^2) / k^2, x (x + k) / (2 k^2). Exact for
// k = 1 and on any trajectory quadratic in time; its difference from the neighbouring level is the
// physics' velocity.
HostField interpolated_level(const HostField& p, const HostField& next, const HostField& prev, int k, int x) {
  HostField out = p;
  out.view = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::workflow::HybridPhase::earlier_level"),
      p.view.extent(0), p.view.extent(1), p.view.extent(2));
  const double kk = double(k), xx = double(x), k2 = kk * kk;
  const double wp = xx * (xx - kk) / (2.0 * k2), w0 = (k2 - xx * xx) / k2, wn = xx * (xx + kk) / (2.0 * k2);
  for (std::size_t a = 0; a < p.view.extent(0); ++a)
    for (std::size_t b = 0; b < p.view.extent(1); ++b)
      for (std::size_t i = 0; i < p.view.extent(2); ++i)
        out.view(a, b, i) = wp * prev.view(a, b, i) + w0 * p.view(a, b, i) + wn * next.view(a, b, i);
  return out;
}

}  // namespace

void HybridPhase::before_prediction(PhaseContext& ctx, VariantResult& r, const State& s, std::int64_t step) {
  if (ctx.config().surrogate.hybrid.time_level != "interpolated" || !ctx.surrogate().time_levels()) return;
  PhaseTimer t("campaign::indicator");
  m_prev = to_host(s[0].field, "mantissa::workflow::HybridPhase::previous");
  m_prev_step = step;
  r.time.inference += t.stop();
}

std::string HybridPhase::describe_extra(const PhaseContext& ctx) const {
  const auto& hs = ctx.config().surrogate.hybrid;
  std::ostringstream os;
  os << "; hybrid: K=" << hs.k << ", check every " << hs.check_every << " surrogate steps, energy tol "
     << hs.energy_tol << ", residual tol " << hs.residual_tol << ", " << hs.physics_steps
     << " physics steps per hand-over";
  os << ", earlier time level " << hs.time_level;
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
  // A surrogate whose state holds the primary field at two successive steps (seismic p, p_old)
  // predicts both, each with its own error; the physics' velocity is their difference, which is far
  // less accurate (quickstart 2026-12-07: p 18 % off after 4 predictions, p - p_old 44 %), and the
  // leapfrog carries it on: the physics from such a state was worse after K steps than the
  // surrogate (26 % against 20 %), the residual measured that more than the surrogate's error, and
  // the hybrid ended worse than the pure rollout. So the physics gets p_old interpolated from the
  // surrogate's own p one prediction before, at and after this step (time_level: interpolated).
  PhaseTimer si("campaign::indicator");
  State probe = physics.state();
  sur.predict(probe, 1);
  const bool interpolated =
      hs.time_level == "interpolated" && sur.time_levels() && m_prev_step == step - stride;
  State handed = s;  // what the physics continues from on a hand-over
  // The energy drift compares the surrogate's prediction with the physics from the same levels
  // (the surrogate's own): its energy, (p - p_old)^2 included, measures both with the velocity the
  // surrogate's two levels give (with the interpolated p_old against the prediction's own the
  // quickstart's drift read 0.16-0.23 and handed over on energy alone).
  physics.step(stride);
  const auto d_phys = physics.diagnostics();
  if (interpolated) {
    // The residual: the physics from this step with p_old interpolated from the surrogate's p.
    physics.set_state(s, step, double(step) * dt);
    handed = physics.state();
    from_host(interpolated_level(to_host(s[0].field, "mantissa::workflow::HybridPhase::p"),
                                 to_host(probe[0].field, "mantissa::workflow::HybridPhase::next"), m_prev,
                                 stride, -1),
              handed[1].field);
    physics.set_state(handed, step, double(step) * dt);
    physics.step(stride);
  }
  const auto p_phys = to_host(physics.state()[0].field, "mantissa::workflow::HybridPhase::probe");
  // the indicator's prediction is made admissible as every prediction is (RolloutPhase)
  (void)physics.constrain(probe, step + stride, double(step + stride) * dt);
  physics.set_state(probe, step + stride, double(step + stride) * dt);
  const auto d = physics.diagnostics();
  const auto p_sur = to_host(probe[0].field, "mantissa::workflow::HybridPhase::probe");
  const double drift = energy_drift(d_phys.energy(), d.energy());
  const double residual = field_error(ctx.comm(), p_sur, p_phys, hs.sample_stride).rel_l2;
  // The surrogate goes on from its own state; the physics, after a hand-over, from `handed`.
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
    if (interpolated) physics.set_state(handed, step, double(step) * dt);
    ctx.log(r.name + ": hand-over to the physics at step " + std::to_string(step) + " (" + reason +
            ": energy drift " + fmt_g(drift) + ", residual " + fmt_g(residual) + ")");
  }
}

}  // namespace mantissa::workflow
