#include "CfdAdapter.hpp"

#if __has_include(<cfd/CfdDeck.hpp>)  // only when the cfd module is built

#include <cfd/CfdDeck.hpp>
#include <cfd/Solver.hpp>
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/PrecisionSupport.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/ReportSection.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace mantissa::app {

namespace {

template <class S>
Field<double> to_fp64(const Field<S>& f, const Decomposition& decomp, const std::string& label) {
  Field<double> d(label, decomp, f.ghost(0));
  auto src = f.view();
  auto dst = d.view();
  Kokkos::parallel_for(
      "mantissa::app::CfdModel::to_fp64",
      Kokkos::RangePolicy<typename Field<S>::execution_space>(0, src.span()),
      KOKKOS_LAMBDA(const std::size_t i) { dst.data()[i] = static_cast<double>(src.data()[i]); });
  return d;
}

template <class S>
void from_fp64(const Field<double>& d, Field<S>& f, const std::string& name) {
  if (d.view().span() != f.view().span())
    throw Error("cfd: state field '" + name + "' does not match the solver's field '" + f.label() +
                "' (another mesh or ghost width?)");
  auto src = d.view();
  auto dst = f.view();
  Kokkos::parallel_for(
      "mantissa::app::CfdModel::from_fp64",
      Kokkos::RangePolicy<typename Field<S>::execution_space>(0, src.span()),
      KOKKOS_LAMBDA(const std::size_t i) { dst.data()[i] = S(src.data()[i]); });
}

template <class Storage, class Compute>
class CfdModel final : public workflow::PhysicsModel {
 public:
  using solver_type = cfd::FlowSolver<Storage, Compute>;

  CfdModel(const Decomposition& decomp, const cfd::Config& config)
      : m_decomp(decomp), m_solver(decomp, config) {}

  std::string describe() const override {
    const auto& c = m_solver.config();
    const auto& g = m_decomp.grid();
    std::ostringstream os;
    os << "cfd incompressible " << g.dim << "D MAC " << g.n[0] << "x" << g.n[1];
    if (g.dim == 3) os << "x" << g.n[2];
    os << ", nu " << c.viscosity << ", " << to_string(c.storage) << " storage / " << to_string(c.compute)
       << " compute / " << to_string(c.solver) << " multigrid, dt " << m_solver.dt();
    return os.str();
  }
  workflow::PrecisionSet precision() const override {
    const auto& c = m_solver.config();
    return {{workflow::role::storage, c.storage},
            {workflow::role::compute, c.compute},
            {workflow::role::solver, c.solver}};
  }
  std::string precision_support() const override {
    for (const auto& s : mantissa::precision_support())
      if (s.precision == m_solver.config().storage)
        return s.storage_native && s.arithmetic_native ? "native" : "emulated";
    return "emulated";
  }

  void initialize() override { m_solver.initialize(); }
  void step(std::int64_t n) override { m_solver.run(static_cast<int>(n)); }
  std::int64_t step_index() const override { return m_solver.step_index(); }
  double time() const override { return m_solver.time(); }
  double dt() const override { return m_solver.dt(); }

  workflow::State state() const override {
    const std::string base = "mantissa::app::CfdModel::";
    workflow::State out;
    out.push_back({"u", to_fp64(m_solver.u(), m_decomp, base + "u")});
    out.push_back({"v", to_fp64(m_solver.v(), m_decomp, base + "v")});
    if (m_solver.dim() == 3) out.push_back({"w", to_fp64(m_solver.w(), m_decomp, base + "w")});
    for (int s = 0; s < 2; ++s) {
      const std::string name = "phi_stage" + std::to_string(s + 1);
      Field<double> p(base + name, m_decomp, m_solver.phi(s).ghost(0));
      Kokkos::deep_copy(p.view(), m_solver.phi(s).view());
      out.push_back({name, p});
    }
    fence("mantissa::app::CfdModel::state");
    return out;
  }

  void set_state(const workflow::State& st, std::int64_t step, double time) override {
    const bool three = m_solver.dim() == 3;
    const std::vector<std::string> names =
        three ? std::vector<std::string>{"u", "v", "w", "phi_stage1", "phi_stage2"}
              : std::vector<std::string>{"u", "v", "phi_stage1", "phi_stage2"};
    if (st.size() != names.size())
      throw Error(std::string("cfd: a ") +
                  (three ? "3D state has the 5 fields u, v, w" : "2D state has the 4 fields u, v") +
                  ", phi_stage1, phi_stage2; got " + std::to_string(st.size()));
    for (std::size_t i = 0; i < names.size(); ++i)
      if (st[i].name != names[i])
        throw Error("cfd: state field " + std::to_string(i) + " is '" + st[i].name + "', expected '" +
                    names[i] + "'");
    from_fp64(st[0].field, m_solver.u(), "u");
    from_fp64(st[1].field, m_solver.v(), "v");
    if (three) from_fp64(st[2].field, m_solver.w(), "w");
    const std::size_t first_phi = three ? 3 : 2;
    for (int s = 0; s < 2; ++s) {
      const auto& f = st[first_phi + std::size_t(s)];
      if (f.field.view().span() != m_solver.phi(s).view().span())
        throw Error("cfd: state field '" + f.name + "' does not match the solver's");
      Kokkos::deep_copy(m_solver.phi(s).view(), f.field.view());
    }
    fence("mantissa::app::CfdModel::set_state");
    m_solver.restore(step, time);
  }

  // A surrogate's prediction: the flow's own pressure projection (FlowSolver::project_velocity,
  // the step's P with the deck's cfd.solver) makes its velocity divergence-free; the stage
  // potentials are left as the state has them.
  workflow::Constraint constrain(workflow::State& st, std::int64_t step, double time) override {
    set_state(st, step, time);
    const cfd::Projection pr = m_solver.project_velocity();
    const std::string base = "mantissa::app::CfdModel::";
    st[0].field = to_fp64(m_solver.u(), m_decomp, base + "u");
    st[1].field = to_fp64(m_solver.v(), m_decomp, base + "v");
    if (m_solver.dim() == 3) st[2].field = to_fp64(m_solver.w(), m_decomp, base + "w");
    fence("mantissa::app::CfdModel::constrain");
    workflow::Constraint c;
    c.name = "projection";
    c.measure = "divergence";
    c.what =
        "every prediction is projected to a divergence-free velocity by the flow's own pressure projection "
        "(the walls' normal velocity set to 0, -lap phi = -div u solved to cfd.solver.tolerance, u -= grad "
        "phi) "
        "before it is used as a state";
    c.before = pr.divergence_before;
    c.after = pr.divergence_after;
    return c;
  }

  workflow::Diagnostics diagnostics() const override {
    const auto d = m_solver.diagnostics();
    const auto& s = m_solver.last_solves();
    workflow::Diagnostics out;
    out.values = {{"kinetic_energy", d.kinetic_energy}, {"enstrophy", d.enstrophy},
                  {"divergence", d.divergence},         {"solver_iterations", double(s.iterations)},
                  {"solver_residual", s.max_residual},  {"cfl", d.cfl}};
    out.finite = d.finite;
    if (!d.finite)
      out.where = "the velocity (cfd solver, step " + std::to_string(m_solver.step_index()) + ")";
    return out;
  }

  workflow::Probes probes() const override {
    workflow::Probes p;
    const auto& c = m_solver.config();
    for (const auto& q : c.probes) {
      std::ostringstream os;
      os << "(" << q[0] << ", " << q[1];
      if (m_decomp.grid().dim == 3) os << ", " << q[2];
      os << ")";
      p.names.push_back(os.str());
    }
    p.positions = c.probes;
    p.stride = c.probe_every;
    p.quantity = "x velocity u";
    p.unit = "velocity units of the deck (cfd.lid_velocity, cfd.initial.amplitude)";
    p.length_unit = "mesh units";
    p.time_unit = "time units";
    return p;
  }
  std::vector<double> sample_probes() const override {
    if (m_solver.config().probes.empty()) return {};
    return m_solver.sample(0, m_solver.config().probes);
  }

  workflow::StepCost cost_per_step() const override {
    // Interior update per stage: read u, v (and u^n), write the stage (the momentum), then the
    // divergence (read u, v, write rhs), the correction (read phi, u, v, write u, v): about
    // 14 words per cell per stage of Storage plus 3 of fp64, two stages; the Poisson solve's
    // traffic is not counted (it varies with the iterations). Flops: ~60 per cell per stage.
    // 3D: three components, ~21 words of Storage and ~130 flops per cell per stage.
    const double n = double(m_decomp.grid().num_points());
    const bool three = m_decomp.grid().dim == 3;
    const double bytes = 2.0 * n * ((three ? 21.0 : 14.0) * sizeof(Storage) + 3.0 * sizeof(double));
    return {n, bytes, 2.0 * (three ? 130.0 : 60.0) * n};
  }

 private:
  const Decomposition& m_decomp;
  solver_type m_solver;
};

// The flow's numbers per variant: the solver role (the main table shows storage/compute only),
// the last sample's kinetic energy and enstrophy, the largest divergence norm over the samples,
// and the mean multigrid cycles per step over the samples (the HPG-MxP iteration penalty of a
// mixed-precision solve is the ratio to the reference's).
class CfdReport final : public workflow::ReportSection {
 public:
  static std::string solver_of(const workflow::VariantResult& r) {
    const auto at = r.precision.find("solver ");
    if (at == std::string::npos) return "-";
    const auto end = r.precision.find(',', at);
    return r.precision.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
  }
  static const std::vector<double>* series(const workflow::VariantResult& r, const std::string& name) {
    for (const auto& d : r.diagnostics)
      if (d.name == name) return &d.values;
    return nullptr;
  }
  static double last(const workflow::VariantResult& r, const std::string& name) {
    const auto* v = series(r, name);
    return v && !v->empty() ? v->back() : std::nan("");
  }
  static double max_of(const workflow::VariantResult& r, const std::string& name) {
    const auto* v = series(r, name);
    if (!v || v->empty()) return std::nan("");
    double m = 0.0;
    for (double x : *v) m = std::fmax(m, x);
    return m;
  }
  // Mean over the samples after step 0 (step 0 has had no solve).
  static double mean_after_first(const workflow::VariantResult& r, const std::string& name) {
    const auto* v = series(r, name);
    if (!v || v->size() < 2) return std::nan("");
    double s = 0.0;
    for (std::size_t i = 1; i < v->size(); ++i) s += (*v)[i];
    return s / double(v->size() - 1);
  }
  static std::string num(double x) {
    if (!std::isfinite(x)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.4g", x);
    return buf;
  }

  void campaign_json(json::Writer& j, const workflow::Campaign& c) const override {
    j.key("cfd").begin_object();
    for (const auto& r : c.results()) {
      j.key(r.name).begin_object();
      j.field("solver", solver_of(r));
      j.field("kinetic_energy_final", last(r, "kinetic_energy"));
      j.field("enstrophy_final", last(r, "enstrophy"));
      j.field("divergence_max", max_of(r, "divergence"));
      j.field("solver_iterations_per_step", mean_after_first(r, "solver_iterations"));
      j.field("solver_residual_max", max_of(r, "solver_residual"));
      // surrogate rollouts and the hybrid: every prediction projected (CfdModel::constrain)
      const double pb = r.metric("divergence_before_projection_max");
      if (!std::isnan(pb)) {
        j.key("projection").begin_object();
        j.field("projected", true);
        j.field("divergence_before_max", pb);
        j.field("divergence_before_mean", r.metric("divergence_before_projection_mean"));
        j.field("divergence_after_max", r.metric("divergence_after_projection_max"));
        j.field("predictions", r.metric("projections"));
        j.end_object();
      }
      j.end_object();
    }
    j.end_object();
  }
  std::vector<std::string> table_columns() const override {
    return {"multigrid",  "KE (final)",     "enstrophy (final)",
            "max div L2", "MG cycles/step", "div L2 predicted (max)"};
  }
  std::vector<std::string> table_cells(const workflow::VariantResult& r) const override {
    return {solver_of(r),
            num(last(r, "kinetic_energy")),
            num(last(r, "enstrophy")),
            num(max_of(r, "divergence")),
            num(mean_after_first(r, "solver_iterations")),
            num(r.metric("divergence_before_projection_max"))};
  }
  std::string md_legend() const override {
    return "multigrid: the pressure solve's inner precision (role solver; the outer iteration is fp64 to "
           "cfd.solver.tolerance); KE, enstrophy: at the last sample; max div L2: largest L2 norm of the "
           "velocity's divergence over the samples; MG cycles/step: multigrid cycles of both RK2 stages, "
           "mean over the samples after step 0 (a rollout's sample after a prediction: the cycles of its "
           "projection); div L2 predicted (max): surrogate rollouts and the hybrid only, the largest "
           "L2 norm of the divergence of a prediction before the flow's pressure projection made it "
           "divergence-free "
           "(every prediction is projected before it is used as a state; max div L2 is after it); ";
  }
};

}  // namespace

std::unique_ptr<workflow::ReportSection> make_cfd_report(const workflow::ModelContext& /*ctx*/) {
  return std::make_unique<CfdReport>();
}

workflow::PrecisionTable cfd_precisions() {
  using P = Precision;
  const auto set = [](P st, P co, P so) {
    return workflow::PrecisionSet{
        {workflow::role::storage, st}, {workflow::role::compute, co}, {workflow::role::solver, so}};
  };
  // The solver's instantiations (apps/cfd/Solver_fp64.cpp, Solver_fp32.cpp) times the multigrid's
  // precisions (cfd::solver_level_precisions); the first combination with a given storage is
  // the one a variant that names only storage/compute gets.
  return {{workflow::role::storage, workflow::role::compute, workflow::role::solver},
          {set(P::fp64, P::fp64, P::fp64), set(P::fp64, P::fp64, P::fp32), set(P::fp64, P::fp64, P::bf16),
           set(P::fp64, P::fp64, P::fp16), set(P::fp32, P::fp32, P::fp32), set(P::fp32, P::fp32, P::fp64),
           set(P::fp32, P::fp32, P::bf16)}};
}

std::vector<std::string> cfd_surrogate_channels(const Deck& deck) {
  if (grid_from_deck(deck).dim == 3) return {"u", "v", "w"};
  return {"u", "v"};
}

double cfd_bytes_per_point(const Deck& deck, Precision storage) {
  const cfd::Config c = cfd::config_from_deck(deck);
  try {
    (void)cfd::choose_dt(grid_from_deck(deck), c);
  } catch (const Error& e) {
    // the file and line of the key at fault first, as the schema's own refusals have them
    const char* key = (c.cfl > 0.0 && c.cfl <= 1.0) ? "cfd.dt" : "cfd.cfl";
    throw Error(deck.where(key) + ": " + e.what());
  }
  const double s = storage == Precision::fp64 ? 8.0 : storage == Precision::fp32 ? 4.0 : 2.0;
  // FlowSolver: u, v, u^n, v^n and the stage (u, v) in the storage precision; phi of both
  // stages and the divergence right-hand side in fp64. PoissonSolver: the fp64 CG's six work
  // fields. Multigrid: x, x2, f, r per level, 4/3 of the finest level's points over the 2D
  // hierarchy, in fp64 for the fp64 reference (the largest model: a mixed-precision
  // variant's fp32 CG work fields, 24 B, are less than what its fp32 or 16-bit levels save).
  // 3D: nine velocity fields (u, v, w three times) and 8/7 of the finest level's points over
  // the 3D hierarchy. A surrogate rollout's model adds the projection's own potential (fp64).
  const double projection = deck.get_bool("campaign.surrogate.enabled") ? 8.0 : 0.0;
  if (grid_from_deck(deck).dim == 3)
    return 9.0 * s + 3.0 * 8.0 + 6.0 * 8.0 + 4.0 * 8.0 * 8.0 / 7.0 + projection;
  return 6.0 * s + 3.0 * 8.0 + 6.0 * 8.0 + 4.0 * 8.0 * 4.0 / 3.0 + projection;
}

std::unique_ptr<workflow::PhysicsModel> make_cfd_model(const workflow::ModelContext& ctx,
                                                       const workflow::PrecisionSet& precision) {
  if (!ctx.deck) throw Error("cfd: the physics needs the deck's cfd: section");
  cfd::Config c = cfd::config_from_deck(*ctx.deck);
  c.storage = precision.get(workflow::role::storage);
  c.compute = precision.get(workflow::role::compute);
  c.solver = precision.get(workflow::role::solver);
  c.quiet = false;
  const auto& d = *ctx.decomp;
  using P = Precision;
  if (c.storage == P::fp64 && c.compute == P::fp64) return std::make_unique<CfdModel<double, double>>(d, c);
  if (c.storage == P::fp32 && c.compute == P::fp32) return std::make_unique<CfdModel<float, float>>(d, c);
  throw Error("cfd: no solver for " + precision.describe() + "; use one of " + cfd_precisions().describe() +
              " (campaign.variants[].storage/compute/solver)");
}

}  // namespace mantissa::app

#endif
