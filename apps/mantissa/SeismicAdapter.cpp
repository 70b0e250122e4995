#include "SeismicAdapter.hpp"

#if __has_include(<seismic/SeismicDeck.hpp>)  // only when the seismic module is built

#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/PrecisionSupport.hpp>
#include <seismic/SeismicDeck.hpp>
#include <seismic/Solver.hpp>

#include <sstream>

namespace mantissa::app {

namespace {

// The campaign's state is a plain Field<double> (unpadded rows); the solver's fields may have
// padded rows (Solver::row_align_bytes), so both copies go point by point over the owned points
// and ghosts of every row, not over the span.
template <class S>
Kokkos::MDRangePolicy<typename Field<S>::execution_space, Kokkos::Rank<3>> points(const Field<S>& f) {
  using Policy = Kokkos::MDRangePolicy<typename Field<S>::execution_space, Kokkos::Rank<3>>;
  using I = typename Policy::index_type;
  const auto& v = f.view();
  return Policy({0, 0, 0}, {I(v.extent(0)), I(v.extent(1)), I(f.extent()[0] + 2 * f.ghost(0))});
}

template <class S>
Field<double> to_fp64(const Field<S>& f, const Decomposition& decomp, const std::string& label) {
  Field<double> d(label, decomp, f.ghost(0));
  auto src = f.view();
  auto dst = d.view();
  Kokkos::parallel_for(
      "mantissa::app::SeismicModel::to_fp64", points(f),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        dst(k, j, i) = static_cast<double>(src(k, j, i));
      });
  return d;
}

template <class S>
void from_fp64(const Field<double>& d, Field<S>& f) {
  if (d.extent() != f.extent() || d.ghosts() != f.ghosts())
    throw Error("seismic: a state field does not match the solver's field '" + f.label() +
                "' (another mesh or ghost width?)");
  auto src = d.view();
  auto dst = f.view();
  Kokkos::parallel_for(
      "mantissa::app::SeismicModel::from_fp64", points(f),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        dst(k, j, i) = S(src(k, j, i));
      });
}

template <class Storage, class Compute>
class SeismicModel final : public workflow::PhysicsModel {
 public:
  using solver_type = seismic::Solver<Storage, Compute>;

  SeismicModel(const Decomposition& decomp, const seismic::Config& config)
      : m_decomp(decomp), m_solver(decomp, config) {
    // Receiver interpolation: the solver's stencils (point_stencil, same order), evaluated here
    // from the current pressure so that a state handed over by a surrogate is sampled too.
    const auto& grid = decomp.grid();
    const auto& off = decomp.offset();
    const auto& ext = decomp.extent();
    m_first.push_back(0);
    std::vector<std::array<std::int64_t, 3>> local;
    for (const auto& r : config.receivers) {
      const auto st = seismic::point_stencil(r, grid, config.order);
      for (std::size_t e = 0; e < st.index.size(); ++e) {
        bool owned = true;
        for (int a = 0; a < 3; ++a)
          owned = owned && st.index[e][a] >= off[a] && st.index[e][a] < off[a] + ext[a];
        local.push_back(owned ? st.index[e] : std::array<std::int64_t, 3>{-1, -1, -1});
        m_weight.push_back(st.weight[e]);
      }
      m_first.push_back(m_weight.size());
      std::ostringstream os;
      os << "(" << r[0] << ", " << r[1] << (grid.dim == 3 ? ", " + std::to_string(r[2]) : std::string())
         << ")";
      m_names.push_back(os.str());
    }
    m_local = local;
  }

  std::string describe() const override {
    std::ostringstream os;
    const auto& c = m_solver.config();
    os << "seismic acoustic, order " << c.order << ", " << to_string(c.storage) << " storage / "
       << to_string(c.compute) << " compute, dt " << m_solver.dt();
    return os.str();
  }
  workflow::PrecisionSet precision() const override {
    return {{workflow::role::storage, m_solver.config().storage},
            {workflow::role::compute, m_solver.config().compute}};
  }
  std::string precision_support() const override {
    for (const auto& s : mantissa::precision_support())
      if (s.precision == m_solver.config().storage)
        return s.storage_native && s.arithmetic_native ? "native" : "emulated";
    return "emulated";
  }

  void initialize() override { m_solver.initialize(m_shot); }
  void step(std::int64_t n) override { m_solver.run(static_cast<int>(n)); }
  std::int64_t step_index() const override { return m_solver.step_index(); }
  double time() const override { return m_solver.time(); }
  double dt() const override { return m_solver.dt(); }

  workflow::State state() const override {
    auto& s = const_cast<solver_type&>(m_solver);  // state_fields() hands out pointers; we only read
    workflow::State out;
    for (const auto& f : s.state_fields())
      out.push_back({f.first, to_fp64(*f.second, m_decomp, "mantissa::app::SeismicModel::" + f.first)});
    for (const auto& f : s.memory_fields())
      out.push_back({f.first, to_fp64(*f.second, m_decomp, "mantissa::app::SeismicModel::" + f.first)});
    fence("mantissa::app::SeismicModel::state");
    return out;
  }

  void set_state(const workflow::State& st, std::int64_t step, double /*time*/) override {
    std::size_t i = 0;
    for (const auto& f : m_solver.state_fields()) {
      if (i >= st.size() || st[i].name != f.first)
        throw Error("seismic: state field " + std::to_string(i) + " should be '" + f.first + "'");
      from_fp64(st[i++].field, *f.second);
    }
    for (const auto& f : m_solver.memory_fields())
      if (i < st.size() && st[i].name == f.first) from_fp64(st[i++].field, *f.second);
    fence("mantissa::app::SeismicModel::set_state");
    const seismic::Traces traces = m_solver.traces();
    m_solver.restore(m_shot, static_cast<int>(step), traces);
  }

  workflow::Diagnostics diagnostics() const override {
    const auto d = m_solver.diagnostics();
    workflow::Diagnostics out;
    out.values = {{"energy", d.energy}};
    out.finite = d.finite;
    if (!d.finite) out.where = "the pressure field (seismic solver, step " + std::to_string(d.step) + ")";
    return out;
  }

  std::vector<double> sample_probes() const override {
    if (m_weight.empty()) return {};
    // Each stencil entry is read by its owner, the others add zero: the all-reduce is exact, and
    // the weighted sums run in a fixed order, so traces do not depend on the rank count.
    const auto& p = m_solver.pressure();
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.view());
    std::vector<double> vals(m_local.size(), 0.0), all(m_local.size(), 0.0);
    for (std::size_t e = 0; e < m_local.size(); ++e) {
      if (m_local[e][0] < 0) continue;
      const auto s = p.storage(p.owned(GlobalIndex{m_local[e]}));
      vals[e] = static_cast<double>(host(s[2], s[1], s[0]));
    }
    MPI_Allreduce(vals.data(), all.data(), static_cast<int>(vals.size()), MPI_DOUBLE, MPI_SUM,
                  m_decomp.comm());
    std::vector<double> out(m_names.size(), 0.0);
    for (std::size_t r = 0; r < m_names.size(); ++r)
      for (std::size_t e = m_first[r]; e < m_first[r + 1]; ++e) out[r] += m_weight[e] * all[e];
    return out;
  }

  // The receivers are the probes.
  workflow::Probes probes() const override {
    workflow::Probes rec;
    rec.names = m_names;
    rec.positions = m_solver.config().receivers;
    rec.stride = m_solver.config().record_every;
    rec.quantity = "pressure";
    // The wave equation is linear and the sources inject amplitude x wavelet per unit volume:
    // pressures are in the units of seismic.sources[].amplitude (Pa when amplitudes are).
    rec.unit = "source amplitude units";
    return rec;
  }

  // The shots are the experiments.
  int num_experiments() const override { return static_cast<int>(m_solver.config().shots.size()); }
  void select_experiment(int shot) override {
    if (shot < 0 || shot >= num_experiments())
      throw Error("seismic: shot " + std::to_string(shot) + " does not exist; the deck has " +
                  std::to_string(num_experiments()) + " shots (seismic.sources[].shot)");
    m_shot = shot;
  }
  std::string experiment_name(int shot) const override { return "shot " + std::to_string(shot); }

  // p and p_old in the storage type, the CPML memory variables in the compute type (state()'s order).
  std::vector<Precision> state_storage() const override {
    auto& s = const_cast<solver_type&>(m_solver);  // the field lists hand out pointers; we only count
    std::vector<Precision> out(s.state_fields().size(), m_solver.config().storage);
    out.insert(out.end(), s.memory_fields().size(), m_solver.config().compute);
    return out;
  }
  double fixed_step_seconds() override { return m_solver.fixed_step_seconds(); }

  workflow::StepCost cost_per_step() const override {
    // Roofline model of the interior update: read p^n, p^{n-1} and (c dt)^2, write p^{n+1}
    // (4 words per point); flops: per axis `order` multiply-adds of the centred stencil plus the
    // leapfrog combination. PML boxes and halo traffic are not counted.
    const auto& c = m_solver.config();
    const double n = double(m_decomp.grid().num_points());
    const int dim = m_decomp.grid().dim;
    const double bytes = n * (3.0 * sizeof(Storage) + sizeof(typename solver_type::model_type));
    const double flops = n * (double(dim) * (c.order + 1) + 4.0);
    return {n, bytes, flops};
  }

 private:
  const Decomposition& m_decomp;
  solver_type m_solver;
  int m_shot = 0;
  std::vector<std::array<std::int64_t, 3>> m_local;
  std::vector<double> m_weight;
  std::vector<std::size_t> m_first;
  std::vector<std::string> m_names;
};

seismic::Config config_for(const workflow::ModelContext& ctx, Precision storage, Precision compute) {
  if (!ctx.deck) throw Error("seismic: the physics needs the deck's seismic: section");
  seismic::Config c = seismic::config_from_deck(*ctx.deck);
  c.storage = storage;
  c.compute = compute;
  c.quiet = true;
  return c;
}

}  // namespace

workflow::PrecisionTable seismic_precisions() {
  using P = Precision;
  const auto pair = [](P st, P co) {
    return workflow::PrecisionSet{{workflow::role::storage, st}, {workflow::role::compute, co}};
  };
  // The solver's instantiations (apps/seismic/Solver_*.cpp); make_seismic_model dispatches on them.
  return {{workflow::role::storage, workflow::role::compute},
          {pair(P::fp64, P::fp64), pair(P::fp64, P::fp32), pair(P::fp32, P::fp64), pair(P::fp32, P::fp32),
           pair(P::bf16, P::fp32), pair(P::fp16, P::fp32)}};
}

std::unique_ptr<workflow::PhysicsModel> make_seismic_model(const workflow::ModelContext& ctx,
                                                           const workflow::PrecisionSet& precision) {
  const Precision storage = precision.get(workflow::role::storage);
  const Precision compute = precision.get(workflow::role::compute);
  const auto c = config_for(ctx, storage, compute);
  const auto& d = *ctx.decomp;
  using P = Precision;
  if (storage == P::fp64 && compute == P::fp64) return std::make_unique<SeismicModel<double, double>>(d, c);
  if (storage == P::fp64 && compute == P::fp32) return std::make_unique<SeismicModel<double, float>>(d, c);
  if (storage == P::fp32 && compute == P::fp64) return std::make_unique<SeismicModel<float, double>>(d, c);
  if (storage == P::fp32 && compute == P::fp32) return std::make_unique<SeismicModel<float, float>>(d, c);
  if (storage == P::bf16 && compute == P::fp32) return std::make_unique<SeismicModel<bf16, float>>(d, c);
  if (storage == P::fp16 && compute == P::fp32) return std::make_unique<SeismicModel<fp16, float>>(d, c);
  throw Error("seismic: no solver for " + precision.describe() + "; use one of " +
              seismic_precisions().describe() + " (campaign.variants[].storage/compute)");
}

Field<double> seismic_velocity(const workflow::ModelContext& ctx) {
  const auto c = config_for(ctx, Precision::fp64, Precision::fp64);
  seismic::Solver<double, double> s(*ctx.decomp, c);
  Field<double> v("mantissa::app::seismic_velocity", *ctx.decomp, s.velocity().ghost(0));
  copy_points(s.velocity(), v);  // the solver's rows are padded, the campaign's are not
  return v;
}

}  // namespace mantissa::app

#endif
