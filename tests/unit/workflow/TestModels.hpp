#pragma once
// A small physics and a small surrogate for testing the campaign independently of
// apps/seismic and surrogates/ (which the workflow library must not depend on).
//
// TestWave<T>: the 2D scalar wave equation p_tt = c^2 (p_xx + p_yy) on a periodic grid with
// the second-order leapfrog scheme, all in T (fp64 or fp32). Its discrete energy
//   E^n = 1/2 sum (p^n - p^{n-1})^2 / dt^2 + 1/2 c^2 sum grad+ p^n . grad+ p^{n-1}
// is exactly conserved by the scheme (up to round-off), so energy drift is a real test.
//
// LinearStencilSurrogate: learns p^{n+1} = a p^n + b p^{n-1} + g lap(p^n) by least squares on
// the reference trajectory (the physics has a = 2, b = -1, g = (c dt / h)^2, so training on it
// recovers the scheme) and predicts in fp64, fp32 or bf16 by rounding each new value.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/ExactSum.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/mesh/HaloExchange.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/SurrogateModel.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace mantissa::workflow::test {

struct TestWaveOptions {
  double c = 1.0;
  double courant = 0.5;           // c dt / h
  std::int64_t nan_at_step = -1;  // inject a NaN at this step (failure handling tests)
  int nan_experiment = -1;        // ... of this experiment only (-1: of every experiment)
  std::array<std::int64_t, 3> nan_point{3, 5, 0};
  int experiments = 1;        // experiment s starts the pulse at x = (0.4 + 0.2 s) of the domain
  int record_every = 1;       // probe stride (Probes::stride)
  double step_seconds = 0.0;  // wall time each step sleeps (the wall-time limit's tests)
};

template <class T>
class TestWave final : public PhysicsModel {
 public:
  using field_t = Field<T>;

  TestWave(const Decomposition& decomp, TestWaveOptions opt)
      : m_decomp(decomp),
        m_opt(opt),
        m_p("mantissa::test::TestWave::p", decomp, 1),
        m_pp("mantissa::test::TestWave::p_prev", decomp, 1),
        m_pn("mantissa::test::TestWave::p_next", decomp, 1),
        m_halo(decomp, 1, 2) {
    m_h = decomp.grid().spacing[0];
    m_dt = opt.courant * m_h / opt.c;
  }

  std::string describe() const override {
    return std::string("test wave (leapfrog, periodic) in ") + (sizeof(T) == 8 ? "fp64" : "fp32");
  }
  PrecisionSet precision() const override {
    const Precision p = sizeof(T) == 8 ? Precision::fp64 : Precision::fp32;
    return {{role::storage, p}, {role::compute, p}};
  }
  std::string precision_support() const override { return "native"; }

  void initialize() override {
    // A Gaussian pulse at rest: p^{-1} = p^0.
    const auto& g = m_decomp.grid();
    const double cx = pulse_x(m_experiment);
    const double cy = g.origin[1] + 0.5 * double(g.n[1] - 1) * g.spacing[1];
    const double w = 4.0 * g.spacing[0];
    const double ox = g.origin[0], oy = g.origin[1], hx = g.spacing[0], hy = g.spacing[1];
    // Plain integers, not the std::arrays: std::array::operator[] is a constexpr host function,
    // which nvcc warns about (#20013-D) when a device lambda calls it.
    const std::int64_t sx = m_p.offset()[0] - m_p.ghosts()[0], sy = m_p.offset()[1] - m_p.ghosts()[1];
    auto p = m_p.view();
    auto pp = m_pp.view();
    Kokkos::parallel_for(
        "mantissa::test::TestWave::initialize", m_p.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
          const double x = ox + double(i + sx) * hx, y = oy + double(j + sy) * hy;
          const double r2 = ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (w * w);
          p(k, j, i) = T(math::exp(-r2));
          pp(k, j, i) = p(k, j, i);
        });
    m_step = 0;
    m_time = 0.0;
    fence("mantissa::test::TestWave::initialize");
  }

  void step(std::int64_t n) override {
    for (std::int64_t s = 0; s < n; ++s) {
      if (m_opt.step_seconds > 0.0)
        std::this_thread::sleep_for(std::chrono::duration<double>(m_opt.step_seconds));
      m_halo.exchange({&m_p, &m_pp});
      const T g2 = T(m_opt.courant * m_opt.courant);
      auto p = m_p.view();
      auto pp = m_pp.view();
      auto pn = m_pn.view();
      Kokkos::parallel_for(
          "mantissa::test::TestWave::step", m_p.owned_policy(),
          KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
            const T lap =
                p(k, j, i + 1) + p(k, j, i - 1) + p(k, j + 1, i) + p(k, j - 1, i) - T(4) * p(k, j, i);
            pn(k, j, i) = T(2) * p(k, j, i) - pp(k, j, i) + g2 * lap;
          });
      std::swap(m_pp, m_p);  // p_prev <- p
      std::swap(m_p, m_pn);  // p <- p_next
      ++m_step;
      m_time = double(m_step) * m_dt;
      if (m_step == m_opt.nan_at_step && (m_opt.nan_experiment < 0 || m_opt.nan_experiment == m_experiment))
        inject_nan();
    }
    fence("mantissa::test::TestWave::step");
  }

  std::int64_t step_index() const override { return m_step; }
  double time() const override { return m_time; }
  double dt() const override { return m_dt; }

  State state() const override {
    State s;
    s.push_back({"p", to_double(m_p)});
    s.push_back({"p_prev", to_double(m_pp)});
    return s;
  }

  void set_state(const State& s, std::int64_t step, double time) override {
    from_double(s.at(0).field, m_p);
    from_double(s.at(1).field, m_pp);
    m_step = step;
    m_time = time;
  }

  Diagnostics diagnostics() const override {
    const_cast<TestWave*>(this)->m_halo.exchange({const_cast<field_t*>(&m_p), const_cast<field_t*>(&m_pp)});
    auto p = m_p.view();
    auto pp = m_pp.view();
    const double dt = m_dt, c2 = m_opt.c * m_opt.c, h = m_h;
    // An exact sum (core/ExactSum.hpp): the energy has the same bits at any rank count.
    ExactAccumulator e;
    int bad = 0;
    Kokkos::parallel_reduce(
        "mantissa::test::TestWave::energy", m_p.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i,
                      ExactAccumulator& acc) {
          const double v = (double(p(k, j, i)) - double(pp(k, j, i))) / dt;
          const double gx =
              (double(p(k, j, i + 1)) - double(p(k, j, i))) * (double(pp(k, j, i + 1)) - double(pp(k, j, i)));
          const double gy =
              (double(p(k, j + 1, i)) - double(p(k, j, i))) * (double(pp(k, j + 1, i)) - double(pp(k, j, i)));
          acc.add(0.5 * v * v * h * h + 0.5 * c2 * (gx + gy));
        },
        ExactSum<>(e));
    Kokkos::parallel_reduce(
        "mantissa::test::TestWave::finite", m_p.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, int& b) {
          if (!math::isfinite(double(p(k, j, i)))) b += 1;
        },
        bad);
    Diagnostics d;
    const double energy = exact_allreduce(e, m_decomp.comm());
    d.values = {{"energy", energy}, {"max_abs_p", max_abs_p()}};
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, m_decomp.comm());
    d.finite = any == 0;
    if (!d.finite) d.where = "field 'p' (" + std::to_string(any) + " non-finite points)";
    return d;
  }

  std::array<std::array<std::int64_t, 2>, 2> probe_points() const {
    const auto& g = m_decomp.grid();
    return {{{g.n[0] / 4, g.n[1] / 2}, {3 * g.n[0] / 4, g.n[1] / 3}}};
  }
  double pulse_x(int experiment) const {
    const auto& g = m_decomp.grid();
    return g.origin[0] + (0.4 + 0.2 * experiment) * double(g.n[0] - 1) * g.spacing[0];
  }
  Probes probes() const override {
    Probes r;
    r.names = {"r0", "r1"};
    const auto& g = m_decomp.grid();
    for (const auto& p : probe_points())
      r.positions.push_back(
          {g.origin[0] + double(p[0]) * g.spacing[0], g.origin[1] + double(p[1]) * g.spacing[1], 0.0});
    r.stride = m_opt.record_every;
    r.quantity = "p";
    r.unit = "1";
    return r;
  }
  int num_experiments() const override { return m_opt.experiments; }
  void select_experiment(int e) override {
    if (e < 0 || e >= m_opt.experiments) throw Error("testwave: no experiment " + std::to_string(e));
    m_experiment = e;
  }
  std::vector<double> sample_probes() const override {
    const auto pts = probe_points();
    std::vector<double> local(2, 0.0), global(2, 0.0);
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_p.view());
    for (std::size_t r = 0; r < pts.size(); ++r) {
      const auto o = m_p.owned(GlobalIndex{{pts[r][0], pts[r][1], 0}});
      if (o.i[0] >= 0 && o.i[0] < m_p.extent()[0] && o.i[1] >= 0 && o.i[1] < m_p.extent()[1]) {
        const auto s = m_p.storage(o);
        local[r] = double(host(s[2], s[1], s[0]));
      }
    }
    MPI_Allreduce(local.data(), global.data(), 2, MPI_DOUBLE, MPI_SUM, m_decomp.comm());
    return global;
  }
  // A second named diagnostic: max |p| over the grid (collective).
  double max_abs_p() const {
    auto p = m_p.view();
    double m = 0.0;
    Kokkos::parallel_reduce(
        "mantissa::test::TestWave::max_abs", m_p.owned_policy(),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
          const double v = math::fabs(double(p(k, j, i)));
          if (v > acc) acc = v;
        },
        Kokkos::Max<double>(m));
    double g = 0.0;
    MPI_Allreduce(&m, &g, 1, MPI_DOUBLE, MPI_MAX, m_decomp.comm());
    return g;
  }

  StepCost cost_per_step() const override {
    const double n = double(m_decomp.grid().num_points());
    return {n, n * 3.0 * sizeof(T), n * 8.0};
  }

  // Public only because nvcc rejects extended device lambdas in private member functions.
  Field<double> to_double(const field_t& f) const {
    Field<double> d(f.label() + "::fp64", m_decomp, 1);
    auto src = f.view();
    auto dst = d.view();
    Kokkos::parallel_for(
        "mantissa::test::TestWave::to_double", Kokkos::RangePolicy<>(0, src.span()),
        KOKKOS_LAMBDA(const std::size_t i) { dst.data()[i] = double(src.data()[i]); });
    fence("mantissa::test::TestWave::to_double");
    return d;
  }
  static void from_double(const Field<double>& d, field_t& f) {
    auto src = d.view();
    auto dst = f.view();
    Kokkos::parallel_for(
        "mantissa::test::TestWave::from_double", Kokkos::RangePolicy<>(0, src.span()),
        KOKKOS_LAMBDA(const std::size_t i) { dst.data()[i] = T(src.data()[i]); });
    fence("mantissa::test::TestWave::from_double");
  }
  void inject_nan() {
    const auto o = m_p.owned(GlobalIndex{m_opt.nan_point});
    if (o.i[0] < 0 || o.i[0] >= m_p.extent()[0] || o.i[1] < 0 || o.i[1] >= m_p.extent()[1]) return;
    const auto s = m_p.storage(o);
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_p.view());
    host(s[2], s[1], s[0]) = std::numeric_limits<T>::quiet_NaN();
    Kokkos::deep_copy(m_p.view(), host);
  }

 private:
  const Decomposition& m_decomp;
  TestWaveOptions m_opt;
  int m_experiment = 0;
  field_t m_p, m_pp, m_pn;
  HaloExchange<T> m_halo;
  double m_h = 1.0, m_dt = 1.0, m_time = 0.0;
  std::int64_t m_step = 0;
};

class LinearStencilSurrogate final : public SurrogateModel {
 public:
  // bias: added to the learned g after training (a deliberately wrong surrogate for hybrid
  // hand-over tests).
  // pold_error: the earlier time level it hands out is p^n - (1 + pold_error) (p^n - p^{n-1})
  // (its p^n exact: it predicts from the true p^{n-1}, kept inside), as a surrogate that predicts
  // both time levels, each with its own error, gets their difference wrong.
  explicit LinearStencilSurrogate(const Decomposition& decomp, double bias = 0.0, double pold_error = 0.0)
      : m_decomp(decomp), m_bias(bias), m_pold_error(pold_error), m_halo(decomp, 1, 1) {}

  std::string describe() const override {
    // Two lines, as the transformer's (model, then its GEMM paths): report.md shows the second once.
    return "linear stencil surrogate: a=" + std::to_string(m_coef[0]) + " b=" + std::to_string(m_coef[1]) +
           " g=" + std::to_string(m_coef[2]) + "\nGEMM paths: none (a stencil)";
  }
  int stride() const override { return 1; }
  bool time_levels() const override { return true; }

  void add_sample(const State& s) override {
    Field<double> p("mantissa::test::Surrogate::sample", m_decomp, 1);
    Kokkos::deep_copy(p.view(), s.at(0).field.view());
    m_samples.push_back(p);
  }
  // A triple counts only inside one trajectory (a sample index where a new one starts).
  void end_trajectory() override {
    if (m_starts.empty() || m_starts.back() != m_samples.size()) m_starts.push_back(m_samples.size());
  }

  TrainStats train(const std::function<bool()>& /*stop: trains in one piece*/) override {
    // Normal equations over all consecutive triples (p^{n-1}, p^n) -> p^{n+1}.
    double ata[9] = {}, atb[3] = {};
    auto crosses = [&](std::size_t n) {  // samples n - 1 and n + 1 in different trajectories
      for (const std::size_t b : m_starts)
        if (b > n - 1 && b <= n + 1) return true;
      return false;
    };
    for (std::size_t n = 1; n + 1 < m_samples.size(); ++n) {
      if (crosses(n)) continue;
      ++m_triples;
      m_halo.exchange({&m_samples[n]});
      auto pm = m_samples[n - 1].view();
      auto p = m_samples[n].view();
      auto pn = m_samples[n + 1].view();
      const auto& f = m_samples[n];
      for (std::int64_t j = 1; j <= f.extent()[1]; ++j)
        for (std::int64_t i = 1; i <= f.extent()[0]; ++i) {
          const double x[3] = {
              p(0, j, i), pm(0, j, i),
              p(0, j, i + 1) + p(0, j, i - 1) + p(0, j + 1, i) + p(0, j - 1, i) - 4.0 * p(0, j, i)};
          for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) ata[3 * a + b] += x[a] * x[b];
            atb[a] += x[a] * pn(0, j, i);
          }
        }
    }
    double g_ata[9], g_atb[3];
    MPI_Allreduce(ata, g_ata, 9, MPI_DOUBLE, MPI_SUM, m_decomp.comm());
    MPI_Allreduce(atb, g_atb, 3, MPI_DOUBLE, MPI_SUM, m_decomp.comm());
    // Cramer's rule on the 3x3 system.
    auto det3 = [](const double* m) {
      return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
             m[2] * (m[3] * m[7] - m[4] * m[6]);
    };
    const double d = det3(g_ata);
    for (int c = 0; c < 3; ++c) {
      double m[9];
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) m[3 * r + k] = (k == c) ? g_atb[r] : g_ata[3 * r + k];
      m_coef[c] = det3(m) / d;
    }
    m_coef[2] += m_bias;
    TrainStats st;
    st.samples = static_cast<std::int64_t>(m_samples.size());
    st.iterations = 1;
    m_samples.clear();
    m_starts.clear();
    return st;
  }

  void set_precision(Precision p) override {
    if (p != Precision::fp64 && p != Precision::fp32 && p != Precision::bf16)
      throw Error("test surrogate: precision " + std::string(to_string(p)) + " not supported");
    m_prec = p;
  }
  std::string precision_support(Precision p) const override {
    return p == Precision::bf16 ? "emulated" : "native";
  }

  void predict(State& s, int k) override {
    for (int n = 0; n < k; ++n) {
      m_halo.exchange({&s[0].field});
      auto p = s[0].field.view();
      // Its own earlier level when `s` holds one of its recent predictions (pold_error), else the
      // state's.
      const Field<double>* own = m_pold_error != 0.0 ? find_own(s[0].field) : nullptr;
      auto pp = own ? own->view() : s[1].field.view();
      Field<double> next("mantissa::test::Surrogate::next", m_decomp, 1);
      auto pn = next.view();
      const double a = m_coef[0], b = m_coef[1], g = m_coef[2];
      const int prec = m_prec == Precision::fp64 ? 0 : (m_prec == Precision::fp32 ? 1 : 2);
      Kokkos::parallel_for(
          "mantissa::test::Surrogate::predict", s[0].field.owned_policy(),
          KOKKOS_LAMBDA(const std::int64_t kk, const std::int64_t j, const std::int64_t i) {
            const double lap =
                p(kk, j, i + 1) + p(kk, j, i - 1) + p(kk, j + 1, i) + p(kk, j - 1, i) - 4.0 * p(kk, j, i);
            const double v = a * p(kk, j, i) + b * pp(kk, j, i) + g * lap;
            pn(kk, j, i) = prec == 0 ? v : (prec == 1 ? double(float(v)) : double(float(bf16(v))));
          });
      fence("mantissa::test::Surrogate::predict");
      if (m_pold_error != 0.0) {
        Field<double> true_old("mantissa::test::Surrogate::true_old", m_decomp, 1);
        Kokkos::deep_copy(true_old.view(), s[0].field.view());
        auto po = true_old.view();
        Field<double> handed("mantissa::test::Surrogate::pold", m_decomp, 1);
        auto ho = handed.view();
        const double e = 1.0 + m_pold_error;
        Kokkos::parallel_for(
            "mantissa::test::Surrogate::pold", s[0].field.owned_policy(),
            KOKKOS_LAMBDA(const std::int64_t kk, const std::int64_t j, const std::int64_t i) {
              ho(kk, j, i) = pn(kk, j, i) - e * (pn(kk, j, i) - po(kk, j, i));
            });
        fence("mantissa::test::Surrogate::pold");
        s[1].field = handed;
        s[0].field = next;
        Field<double> out("mantissa::test::Surrogate::out", m_decomp, 1);
        Kokkos::deep_copy(out.view(), next.view());
        m_own.push_back({out, true_old});
        if (m_own.size() > 3) m_own.erase(m_own.begin());
      } else {
        s[1].field = s[0].field;
        s[0].field = next;
      }
    }
  }

  // The true earlier level of a state whose primary field equals one of its recent predictions
  // (collective: the same answer on every rank).
  const Field<double>* find_own(const Field<double>& p) const {
    for (auto it = m_own.rbegin(); it != m_own.rend(); ++it) {
      auto a = p.view();
      auto b = it->first.view();
      int differ = 0, any = 0;
      Kokkos::parallel_reduce(
          "mantissa::test::Surrogate::find_own", p.owned_policy(),
          KOKKOS_LAMBDA(const std::int64_t kk, const std::int64_t j, const std::int64_t i, int& d) {
            d += a(kk, j, i) != b(kk, j, i) ? 1 : 0;
          },
          differ);
      MPI_Allreduce(&differ, &any, 1, MPI_INT, MPI_MAX, m_decomp.comm());
      if (any == 0) return &it->second;
    }
    return nullptr;
  }

  void save(const std::string& path) const override {
    int rank = 0;
    MPI_Comm_rank(m_decomp.comm(), &rank);
    if (rank == 0) {
      std::ofstream out(path + ".txt");
      out.precision(17);
      out << m_coef[0] << " " << m_coef[1] << " " << m_coef[2] << "\n";
    }
    MPI_Barrier(m_decomp.comm());
  }
  void load(const std::string& path) override {
    std::ifstream in(path + ".txt");
    if (!(in >> m_coef[0] >> m_coef[1] >> m_coef[2]))
      throw Error("test surrogate: cannot read '" + path + ".txt'");
  }

  const double* coefficients() const { return m_coef; }
  std::int64_t triples() const { return m_triples; }  // (p^{n-1}, p^n) -> p^{n+1} fitted, all calls

 private:
  const Decomposition& m_decomp;
  double m_bias;
  double m_pold_error;
  // Its last predictions' p^{n+1} and the true p^n each came from (pold_error).
  std::vector<std::pair<Field<double>, Field<double>>> m_own;
  HaloExchange<double> m_halo;
  std::vector<Field<double>> m_samples;
  std::vector<std::size_t> m_starts;  // where a trajectory ends and the next begins
  std::int64_t m_triples = 0;
  double m_coef[3] = {0.0, 0.0, 0.0};
  Precision m_prec = Precision::fp64;
};

// The test wave's precision table: fp64/fp64 and fp32/fp32.
inline PrecisionTable testwave_precisions() {
  using P = Precision;
  return {{role::storage, role::compute},
          {PrecisionSet{{role::storage, P::fp64}, {role::compute, P::fp64}},
           PrecisionSet{{role::storage, P::fp32}, {role::compute, P::fp32}}}};
}

// A registry with "testwave" (fp64/fp64 and fp32/fp32; the default recorder and no report
// section: nothing but the generic campaign) and the "linear" surrogate.
inline Registry test_registry(TestWaveOptions opt = {}, std::int64_t nan_at_step_fp32 = -1, double bias = 0.0,
                              double pold_error = 0.0) {
  Registry r;
  PhysicsEntry e;
  e.precisions = testwave_precisions();
  e.create = [opt, nan_at_step_fp32](const ModelContext& ctx,
                                     const PrecisionSet& precision) -> std::unique_ptr<PhysicsModel> {
    const Precision st = precision.get(role::storage), co = precision.get(role::compute);
    if (st != co) throw Error("testwave: storage and compute precision must agree");
    if (st == Precision::fp64) return std::make_unique<TestWave<double>>(*ctx.decomp, opt);
    if (st == Precision::fp32) {
      auto o = opt;
      o.nan_at_step = nan_at_step_fp32;
      return std::make_unique<TestWave<float>>(*ctx.decomp, o);
    }
    throw Error("testwave: precision " + std::string(to_string(st)) + " not supported");
  };
  r.add_physics("testwave", e);
  r.add_surrogate("linear", [bias, pold_error](const ModelContext& ctx) -> std::unique_ptr<SurrogateModel> {
    return std::make_unique<LinearStencilSurrogate>(*ctx.decomp, bias, pold_error);
  });
  return r;
}

}  // namespace mantissa::workflow::test
