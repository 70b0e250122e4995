#include "TransformerAdapter.hpp"

#if __has_include(<surrogates/Surrogate.hpp>)  // only when the surrogate module is built

#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/PrecisionSupport.hpp>
#include <surrogates/Gemm.hpp>
#include <surrogates/Surrogate.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>

namespace mantissa::app {

namespace {

// The transformer learns the change of the physics' state channels (SurrogateChannels: the first
// fields of its state, seismic (p^n, p^{n-1}), a flow (u, v[, w])) over K solver steps from those
// channels and the static inputs (seismic: the velocity; surrogates/ModelConfig.hpp); a prediction
// adds that change to the channels and leaves the state's other fields as they are.
class TransformerSurrogate final : public workflow::SurrogateModel {
 public:
  TransformerSurrogate(const surrogates::SurrogateConfig& cfg, const Decomposition& decomp,
                       SurrogateChannels channels, int train_steps)
      : m_decomp(decomp), m_s(cfg, decomp), m_ch(std::move(channels)), m_train_steps(train_steps) {
    const int n = int(m_ch.state.size()), ns = int(m_ch.statics.size());
    if (cfg.model.in_channels != n + ns || cfg.model.out_channels != n)
      throw Error("surrogate.model: the " + m_ch.physics + " campaign feeds " + std::to_string(n + ns) +
                  " input channels (" + m_ch.describe() + ") and predicts " + std::to_string(n) +
                  " (their change); set surrogate.in_channels: " + std::to_string(n + ns) +
                  " and surrogate.out_channels: " + std::to_string(n));
    if (cfg.extrapolation == surrogates::TimeExtrapolation::linear && !m_ch.time_levels)
      throw Error(
          "surrogate.extrapolation: linear extrapolates from input channels 0 and 1 as one field one "
          "solver step apart; the " +
          m_ch.physics + " state channels (" + m_ch.describe() +
          ") are not; set surrogate.extrapolation: none");
  }

  std::string describe() const override {
    // The first line names the model (K included), the next the GEMM paths (RolloutPhase keeps
    // the first line per rollout; report.md shows the whole once).
    return m_s.describe();
  }
  int stride() const override { return m_s.config().steps_per_prediction; }
  bool time_levels() const override { return m_ch.time_levels; }

  // The state's first fields must be the channels, by name, in order.
  void check_state(const workflow::State& s) const {
    if (s.size() < m_ch.state.size())
      throw Error("transformer surrogate: the " + m_ch.physics + " state has " + std::to_string(s.size()) +
                  " fields, fewer than its " + std::to_string(m_ch.state.size()) + " channels (" +
                  m_ch.describe() + ")");
    for (std::size_t i = 0; i < m_ch.state.size(); ++i)
      if (s[i].name != m_ch.state[i])
        throw Error("transformer surrogate: state field " + std::to_string(i) + " is '" + s[i].name +
                    "', expected the channel '" + m_ch.state[i] + "'");
  }

  void add_sample(const workflow::State& s) override {
    check_state(s);
    const std::size_t n = m_ch.state.size();
    if (!m_prev.empty()) {
      std::vector<Field<double>> d;
      d.reserve(n);
      for (std::size_t i = 0; i < n; ++i) d.push_back(difference(s[i].field, m_prev[i]));
      std::vector<const Field<double>*> in, out;
      in.reserve(m_prev.size() + m_ch.statics.size());
      out.reserve(d.size());
      for (const auto& f : m_prev) in.push_back(&f);
      for (const auto& f : m_ch.statics) in.push_back(&f.field);
      for (const auto& f : d) out.push_back(&f);
      m_s.add_sample(in, out);
    }
    m_prev.clear();
    m_prev.reserve(n);
    for (std::size_t i = 0; i < n; ++i) m_prev.push_back(s[i].field);
  }

  // The next sample starts another trajectory (surrogates::Surrogate finds its pushforward
  // chains from the samples themselves, so they do not cross into it).
  void end_trajectory() override { m_prev.clear(); }

  workflow::TrainStats train(const std::function<bool()>& stop) override {
    const auto st = m_s.train(m_train_steps, stop);
    workflow::TrainStats out;
    out.samples = m_s.num_samples();
    out.iterations = st.steps_done;
    out.first_iteration = st.first_step;
    out.stopped = st.stopped;
    out.initial_loss = st.loss.empty() ? 0.0 : st.loss.front();
    out.final_loss = st.loss.empty() ? 0.0 : st.loss.back();
    if (st.stopped) return out;
    m_prev.clear();
    return out;
  }

  void set_precision(Precision p) override { m_prec = p; }
  std::string precision_support(Precision p) const override {
    for (const auto& s : mantissa::precision_support())
      if (s.precision == p) return s.arithmetic_native ? "native" : "emulated";
    return "emulated";
  }

  void predict(workflow::State& s, int k) override {
    check_state(s);
    const std::size_t n = m_ch.state.size();
    for (int i = 0; i < k; ++i) {
      std::vector<Field<double>> d;
      d.reserve(n);
      for (std::size_t c = 0; c < n; ++c)
        d.emplace_back("mantissa::app::Transformer::change_" + m_ch.state[c], m_decomp, s[c].field.ghost(0));
      std::vector<const Field<double>*> in;
      std::vector<Field<double>*> out;
      in.reserve(n + m_ch.statics.size());
      out.reserve(n);
      for (std::size_t c = 0; c < n; ++c) in.push_back(&s[c].field);
      for (const auto& f : m_ch.statics) in.push_back(&f.field);
      for (auto& f : d) out.push_back(&f);
      m_s.predict(in, out, m_prec);
      for (std::size_t c = 0; c < n; ++c) add_owned(s[c].field, d[c]);
    }
    fence("mantissa::app::Transformer::predict");
  }

  // One surrogate step is one prediction (K solver steps); global operations.
  double flops_per_step() const override { return m_s.flops_per_prediction(); }

  // A 1024^3 fp32 GEMM on the path the surrogate's fp32 GEMMs take (gemm_fp32: oneDNN or the
  // BLAS TPL on hosts, cuBLAS / rocBLAS on GPUs), every rank at once, best of 3, flop/s summed
  // over the ranks. Measured once per process (about 0.1 s on a CPU core).
  double gemm_peak_flops() override {
    if (m_gemm_peak > 0.0) return m_gemm_peak;
    const std::int64_t n = 1024;
    auto A = surrogates::make_matrix<float>("mantissa::app::Transformer::gemm_peak_A", n, n);
    auto B = surrogates::make_matrix<float>("mantissa::app::Transformer::gemm_peak_B", n, n);
    auto C = surrogates::make_matrix<float>("mantissa::app::Transformer::gemm_peak_C", n, n);
    Kokkos::deep_copy(A, 0.5f);
    Kokkos::deep_copy(B, 0.25f);
    auto run = [&] {
      surrogates::gemm_fp32('N', 'T', 1.0f, A, B, 0.0f, C);
      fence("mantissa::app::Transformer::gemm_peak");
    };
    run();  // warm-up (JIT, threads, page faults)
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      MPI_Barrier(m_decomp.comm());
      const auto t0 = std::chrono::steady_clock::now();
      run();
      MPI_Barrier(m_decomp.comm());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double mine = 2.0 * double(n) * double(n) * double(n) / best;
    MPI_Allreduce(&mine, &m_gemm_peak, 1, MPI_DOUBLE, MPI_SUM, m_decomp.comm());
    int ranks = 1;
    MPI_Comm_size(m_decomp.comm(), &ranks);
    m_gemm_what = "fp32 GEMM 1024^3 on the " +
                  std::string(surrogates::to_string(surrogates::gemm_path(Precision::fp32))) + " path, " +
                  std::to_string(ranks) + " rank(s) at once, best of 3";
    return m_gemm_peak;
  }
  std::string gemm_peak_describe() const override { return m_gemm_what; }

  workflow::SurrogateProvenance provenance() const override {
    const auto& p = m_s.provenance();
    workflow::SurrogateProvenance o;
    o.deck_hash = p.deck_hash;
    o.deck_file = p.deck_file;
    o.samples = p.samples;
    o.steps_trained = p.steps_trained;
    o.initial_loss = p.initial_loss;
    o.final_loss = p.final_loss;
    return o;
  }
  void set_provenance(const workflow::SurrogateProvenance& o) override {
    surrogates::Provenance p;
    p.deck_hash = o.deck_hash;
    p.deck_file = o.deck_file;
    p.samples = o.samples;
    p.steps_trained = o.steps_trained;
    p.initial_loss = o.initial_loss;
    p.final_loss = o.final_loss;
    m_s.set_provenance(p);
  }

  workflow::State static_inputs() const override { return m_ch.statics; }

  void save(const std::string& path) const override { m_s.save(path + ".h5"); }
  void load(const std::string& path) override { m_s.load(path + ".h5"); }

  // Public only because nvcc rejects extended device lambdas inside private or protected
  // member functions (found by the CUDA compile check, docs/portability.md).
  Field<double> difference(const Field<double>& a, const Field<double>& b) const {
    Field<double> d("mantissa::app::Transformer::target", m_decomp, a.ghost(0));
    auto va = a.view(), vb = b.view(), vd = d.view();
    Kokkos::parallel_for(
        "mantissa::app::Transformer::difference", a.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t z, const std::int64_t y, const std::int64_t x) {
          vd(z, y, x) = va(z, y, x) - vb(z, y, x);
        });
    return d;
  }
  static void add_owned(Field<double>& f, const Field<double>& d) {
    auto vf = f.view(), vd = d.view();
    Kokkos::parallel_for(
        "mantissa::app::Transformer::add", f.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t z, const std::int64_t y, const std::int64_t x) {
          vf(z, y, x) += vd(z, y, x);
        });
  }

 private:
  const Decomposition& m_decomp;
  surrogates::Surrogate m_s;
  SurrogateChannels m_ch;
  int m_train_steps;
  std::vector<Field<double>> m_prev;  // the last sample's channels (empty: none yet)
  Precision m_prec = Precision::fp32;
  double m_gemm_peak = 0.0;
  std::string m_gemm_what;
};

}  // namespace

std::string SurrogateChannels::describe() const {
  std::string out;
  for (const auto& n : state) out += (out.empty() ? "" : ", ") + n;
  for (const auto& f : statics) out += (out.empty() ? "" : ", ") + f.name + " (static)";
  return out;
}

std::unique_ptr<workflow::SurrogateModel> make_transformer(const surrogates::SurrogateConfig& cfg,
                                                           const Decomposition& decomp,
                                                           SurrogateChannels channels, int train_steps) {
  return std::make_unique<TransformerSurrogate>(cfg, decomp, std::move(channels), train_steps);
}

}  // namespace mantissa::app

#endif
