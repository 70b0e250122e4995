// Held-out rollout study of the transformer surrogate on a seismic deck: trains on shot A's
// reference trajectory from campaign.surrogate.start, rolls out on shot A (in-sample) and on a
// shot it never saw (held-out: another source position), and prints, per prediction n, the
// relative L2 error of the pressure against the fp64 reference beside the three baselines that
// cost nothing (zero field, persistence, linear extrapolation), the mean over predictions 13-30
// and the value at the end. Used to measure the accuracy levers of issue 12 (docs/performance.md).
//   usage: mpirun -np R rollout_study DECK [key=value ...] [--train-shot A] [--heldout-shot B]
//          [--predictions N] [--precision fp32|bf16|fp8_e4m3] [--train-until STEP] [--rest-correction]
//          [--pml-channel]
// --train-shot takes a comma-separated list (several trajectories train the model). --pml-channel
// adds a fourth input channel, the depth into the absorbing layers (0 in the interior, 1 at the
// outer edge), so that a model without position encoding knows where waves must die out.
// --rest-correction also rolls out with the model's prediction from a state at rest (zero
// pressure, the same velocity) subtracted from every prediction, so that zero in gives zero out
// (one lever of issue 12, at inference only: the weights are the same).
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Schema.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/workflow/Baselines.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/Schema.hpp>
#include <seismic/SeismicDeck.hpp>
#include <seismic/Solver.hpp>
#include <surrogates/Gemm.hpp>
#include <surrogates/Surrogate.hpp>
#include <surrogates/SurrogateDeck.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ms = mantissa::surrogates;
namespace mw = mantissa::workflow;
using mantissa::Field;

namespace {

Field<double> copy(const Field<double>& f, const mantissa::Decomposition& d, const char* label) {
  Field<double> c(label, d, f.ghost(0));
  mantissa::copy_points(f, c);  // the solver's rows may be padded, c's are not
  return c;
}

struct Trajectory {
  std::vector<Field<double>> p, p_old;  // states at start, start + K, ...
};

Trajectory reference(mantissa::seismic::Solver<double, double>& s, const mantissa::Decomposition& d, int shot,
                     int start, int K, int count) {
  Trajectory t;
  s.initialize(shot);
  s.run(start);
  for (int i = 0; i < count; ++i) {
    if (i > 0) s.run(K);
    t.p.push_back(copy(s.pressure(), d, "study::p"));
    t.p_old.push_back(copy(s.previous_pressure(), d, "study::p_old"));
  }
  return t;
}

Field<double> diff(const Field<double>& a, const Field<double>& b, const mantissa::Decomposition& d) {
  Field<double> r("study::diff", d, a.ghost(0));
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.view());
  auto hr = Kokkos::create_mirror_view(r.view());
  for (std::size_t i = 0; i < ha.size(); ++i) hr.data()[i] = ha.data()[i] - hb.data()[i];
  Kokkos::deep_copy(r.view(), hr);
  return r;
}

void add(Field<double>& a, const Field<double>& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.view());
  for (std::size_t i = 0; i < ha.size(); ++i) ha.data()[i] += hb.data()[i];
  Kokkos::deep_copy(a.view(), ha);
}

struct Scores {
  std::vector<mw::RolloutErrors> rows;  // per prediction 1..N
  // Diagnostics per prediction: ||prediction|| / ||reference||, the relative L2 error over the
  // interior only (cells outside every absorbing layer), and ||reference|| / ||reference at n=0||.
  std::vector<double> norm_ratio, interior, ref_decay;
};

// 1 in the cells of an absorbing layer (PML), 0 elsewhere: what the surrogate's state does not
// describe (the CPML memory variables) and where the reference loses energy.
bool in_pml(const mantissa::seismic::Config& c, const mantissa::Grid& g,
            const std::array<std::int64_t, 3>& i) {
  for (int a = 0; a < g.dim; ++a) {
    if (c.boundary[a][0] == mantissa::seismic::Boundary::pml && i[a] < c.pml_cells) return true;
    if (c.boundary[a][1] == mantissa::seismic::Boundary::pml && i[a] >= g.n[a] - c.pml_cells) return true;
  }
  return false;
}

// The depth into the absorbing layers, 0 in the interior and 1 at the outer edge (the larger over
// the axes): a static input channel that tells a position-free model where waves must die out.
Field<double> pml_depth(const mantissa::seismic::Config& c, const mantissa::Decomposition& d, int ghost) {
  Field<double> f("study::pml_depth", d, ghost);
  auto h = Kokkos::create_mirror_view(f.view());
  Kokkos::deep_copy(h, 0.0);
  const auto& g = d.grid();
  const auto e = d.extent(), o = d.offset();
  const auto gh = f.ghosts();
  for (std::int64_t z = 0; z < e[2]; ++z)
    for (std::int64_t y = 0; y < e[1]; ++y)
      for (std::int64_t x = 0; x < e[0]; ++x) {
        const std::array<std::int64_t, 3> i{x + o[0], y + o[1], z + o[2]};
        double v = 0.0;
        for (int a = 0; a < g.dim; ++a) {
          const double L = double(c.pml_cells);
          if (c.boundary[a][0] == mantissa::seismic::Boundary::pml && i[a] < c.pml_cells)
            v = std::max(v, (L - double(i[a]) - 0.5) / L);
          if (c.boundary[a][1] == mantissa::seismic::Boundary::pml && i[a] >= g.n[a] - c.pml_cells)
            v = std::max(v, (double(i[a]) + 0.5 - double(g.n[a] - c.pml_cells)) / L);
        }
        h(z + gh[2], y + gh[1], x + gh[0]) = v;
      }
  Kokkos::deep_copy(f.view(), h);
  return f;
}

struct Norms {
  double pred2 = 0.0, ref2 = 0.0, err_int2 = 0.0, ref_int2 = 0.0;
};
static_assert(sizeof(Norms) == 4 * sizeof(double), "Norms is all-reduced as 4 doubles");
Norms norms(MPI_Comm comm, const mw::HostField& t, const mw::HostField& r, const mantissa::seismic::Config& c,
            const mantissa::Grid& g) {
  Norms n;
  for (std::int64_t z = 0; z < t.extent[2]; ++z)
    for (std::int64_t y = 0; y < t.extent[1]; ++y)
      for (std::int64_t x = 0; x < t.extent[0]; ++x) {
        const double a = t.view(z + t.ghost[2], y + t.ghost[1], x + t.ghost[0]);
        const double b = r.view(z + r.ghost[2], y + r.ghost[1], x + r.ghost[0]);
        n.pred2 += a * a;
        n.ref2 += b * b;
        if (!in_pml(c, g, {x + t.offset[0], y + t.offset[1], z + t.offset[2]})) {
          n.err_int2 += (a - b) * (a - b);
          n.ref_int2 += b * b;
        }
      }
  MPI_Allreduce(MPI_IN_PLACE, &n, 4, MPI_DOUBLE, MPI_SUM, comm);
  return n;
}

void subtract(Field<double>& a, const Field<double>& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.view());
  for (std::size_t i = 0; i < ha.size(); ++i) ha.data()[i] -= hb.data()[i];
  Kokkos::deep_copy(a.view(), ha);
}

// The static input channels after (p^n, p^{n-1}): the velocity, and the PML depth when asked.
std::vector<const Field<double>*> statics;
const mantissa::seismic::Config* study_config = nullptr;

std::vector<const Field<double>*> inputs(const Field<double>& p, const Field<double>& p_old) {
  std::vector<const Field<double>*> v{&p, &p_old};
  v.insert(v.end(), statics.begin(), statics.end());
  return v;
}

Scores rollout(ms::Surrogate& s, const Trajectory& ref, const Field<double>& /*vel*/,
               const mantissa::Decomposition& d, int K, int N, mantissa::Precision p, int rank,
               const char* name, bool rest = false) {
  Field<double> cur = copy(ref.p[0], d, "study::cur"), old = copy(ref.p_old[0], d, "study::old");
  const auto h0 = mw::to_host(ref.p[0], "study::h0"), h0old = mw::to_host(ref.p_old[0], "study::h0old");
  // The prediction from a state at rest (zero pressure fields, the same velocity).
  Field<double> z("study::zero", d, cur.ghost(0)), dp0("study::dp0", d, cur.ghost(0)),
      dpo0("study::dpo0", d, cur.ghost(0));
  if (rest) {
    s.predict(inputs(z, z), {&dp0, &dpo0}, p);
    // ||f(0)|| / ||p^n||: field_error's ref_l2 is the norm of its second argument.
    const auto zh = mw::to_host(z, "study::z");
    const double n0 = mw::field_error(d.comm(), zh, mw::to_host(dp0, "study::r")).ref_l2;
    const double np = mw::field_error(d.comm(), zh, mw::to_host(ref.p[0], "study::p0")).ref_l2;
    if (rank == 0)
      std::printf("\n%s: the predicted change from rest has %.4g of the hand-over state's norm\n", name,
                  np > 0.0 ? n0 / np : std::nan(""));
  }
  Scores sc;
  const double ref0 = norms(d.comm(), h0, h0, *study_config, d.grid()).ref2;
  for (int n = 1; n <= N; ++n) {
    Field<double> dp("study::dp", d, cur.ghost(0)), dpo("study::dpo", d, cur.ghost(0));
    s.predict(inputs(cur, old), {&dp, &dpo}, p);
    if (rest) {
      subtract(dp, dp0);
      subtract(dpo, dpo0);
    }
    add(cur, dp);
    add(old, dpo);
    const auto r = mw::to_host(ref.p[n], "study::ref");
    const auto ht = mw::to_host(cur, "study::test");
    sc.rows.push_back(mw::rollout_errors(d.comm(), ht, r, h0, h0old, n * K));
    const Norms nn = norms(d.comm(), ht, r, *study_config, d.grid());
    sc.norm_ratio.push_back(nn.ref2 > 0.0 ? std::sqrt(nn.pred2 / nn.ref2) : std::nan(""));
    sc.interior.push_back(nn.ref_int2 > 0.0 ? std::sqrt(nn.err_int2 / nn.ref_int2) : std::nan(""));
    sc.ref_decay.push_back(ref0 > 0.0 ? std::sqrt(nn.ref2 / ref0) : std::nan(""));
  }
  if (rank == 0) {
    std::printf("\n%s rollout (%s%s), rel. L2 of the pressure vs the fp64 reference\n", name,
                std::string(mantissa::to_string(p)).c_str(),
                rest ? ", rest-state prediction subtracted" : "");
    std::printf("%4s %10s %10s %10s %10s %12s %10s %12s\n", "n", "surrogate", "zero", "persist.", "linear",
                "|pred|/|ref|", "interior", "|ref|/|ref0|");
    for (int n = 1; n <= N; ++n)
      if (n <= 5 || n % 5 == 0 || n == N) {
        const auto& e = sc.rows[n - 1];
        std::printf("%4d %10.4f %10.4f %10.4f %10.4f %12.4f %10.4f %12.4f\n", n, e.model, e.zero,
                    e.persistence, e.linear, sc.norm_ratio[n - 1], sc.interior[n - 1], sc.ref_decay[n - 1]);
      }
    auto mean = [&](int a, int b, double mw::RolloutErrors::*m) {
      double s2 = 0.0;
      int c = 0;
      for (int n = a; n <= std::min(b, N); ++n, ++c) s2 += sc.rows[n - 1].*m;
      return c ? s2 / c : std::nan("");
    };
    std::printf("%s mean 13-30: surrogate %.4f zero %.4f persistence %.4f linear %.4f; end (n=%d): %.4f\n",
                name, mean(13, 30, &mw::RolloutErrors::model), mean(13, 30, &mw::RolloutErrors::zero),
                mean(13, 30, &mw::RolloutErrors::persistence), mean(13, 30, &mw::RolloutErrors::linear), N,
                sc.rows.back().model);
  }
  return sc;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    try {
      if (argc < 2) throw mantissa::Error("usage: rollout_study DECK [key=value ...] [--option value ...]");
      std::vector<std::string> overrides;
      int heldout_shot = 1, N = 30, train_until = -1;
      std::vector<int> train_shots{0};
      bool rest = false, pml_channel = false;
      mantissa::Precision prec = mantissa::Precision::fp32;
      for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
          if (i + 1 >= argc) throw mantissa::Error(a + " needs a value");
          return argv[++i];
        };
        if (a == "--train-shot") {
          // One shot, or several separated by commas (their trajectories all train the model).
          train_shots.clear();
          std::string list = next();
          for (std::size_t b = 0; b <= list.size();) {
            const std::size_t e = std::min(list.find(',', b), list.size());
            train_shots.push_back(std::stoi(list.substr(b, e - b)));
            b = e + 1;
          }
        } else if (a == "--pml-channel")
          pml_channel = true;
        else if (a == "--heldout-shot")
          heldout_shot = std::stoi(next());
        else if (a == "--predictions")
          N = std::stoi(next());
        else if (a == "--train-until")
          train_until = std::stoi(next());
        else if (a == "--rest-correction")
          rest = true;
        else if (a == "--precision")
          prec = mantissa::parse_precision(next(), "--precision");
        else
          overrides.push_back(a);
      }
      mantissa::Schema schema;
      mantissa::register_core_schema(schema);
      mantissa::seismic::register_schema(schema);
      ms::register_schema(schema);
      // The campaign keys' precision choices come from the registered physics' tables; this
      // bench links no apps/mantissa registry, so it states seismic's storage/compute pairs
      // that its decks use (apps/mantissa/SeismicAdapter.cpp seismic_precisions() has all).
      mw::Registry schema_registry;
      {
        using P = mantissa::Precision;
        const auto pair = [](P st, P co) {
          return mw::PrecisionSet{{mw::role::storage, st}, {mw::role::compute, co}};
        };
        mw::PhysicsEntry entry;
        entry.precisions = {
            {mw::role::storage, mw::role::compute},
            {pair(P::fp64, P::fp64), pair(P::fp32, P::fp32), pair(P::bf16, P::fp32), pair(P::fp16, P::fp32)}};
        // The registry requires a creator; this one is never called (the schema only reads the table).
        entry.create = [](const mw::ModelContext&,
                          const mw::PrecisionSet&) -> std::unique_ptr<mw::PhysicsModel> {
          throw mantissa::Error("rollout_study: the schema registry creates no physics");
        };
        schema_registry.add_physics("seismic", std::move(entry));
      }
      mw::register_schema(schema, schema_registry);
      const auto deck = mantissa::Deck::from_file(argv[1], schema, overrides);
      const auto grid = mantissa::grid_from_deck(deck);
      mantissa::Decomposition d(MPI_COMM_WORLD, grid, mantissa::process_grid_from_deck(deck));
      auto sc = mantissa::seismic::config_from_deck(deck);
      sc.quiet = true;
      mantissa::seismic::Solver<double, double> solver(d, sc);
      auto cfg = ms::config_from_deck(deck);
      study_config = &sc;
      if (pml_channel) cfg.model.in_channels = 3 + 1;
      const int K = cfg.steps_per_prediction;
      const int start = int(deck.get_int("campaign.surrogate.start"));
      const int steps = int(deck.get_int("run.steps"));
      const int train_states = (steps - start) / K + 1;
      const int eval_states = N + 1;
      const double dt = solver.dt();
      if (rank == 0) {
        const double window = double(cfg.model.window * cfg.model.patch) * grid.spacing[0];
        std::printf("deck %s: K = %d, dt = %.4g s, start %d, %d training states (to step %d)%s\n", argv[1], K,
                    dt, start, train_states, steps, train_until > 0 ? " limited" : "");
        std::printf("the wave moves %.0f-%.0f m per 10 predictions; a window is %.0f m wide\n",
                    10.0 * K * dt * solver.min_velocity(), 10.0 * K * dt * solver.max_velocity(), window);
      }
      std::vector<Trajectory> trs;
      for (int shot : train_shots)
        trs.push_back(reference(solver, d, shot, start, K, std::max(train_states, eval_states)));
      const Trajectory& tr = trs.front();
      const int train_shot = train_shots.front();
      const Trajectory ho = reference(solver, d, heldout_shot, start, K, eval_states);
      const Field<double> vel = copy(solver.velocity(), d, "study::velocity");
      const Field<double> pml = pml_depth(sc, d, vel.ghost(0));
      statics = {&vel};
      if (pml_channel) statics.push_back(&pml);
      ms::Surrogate s(cfg, d);
      const int last = train_until > 0 ? std::min(train_states, (train_until - start) / K + 1) : train_states;
      for (const auto& t : trs)
        for (int i = 0; i + 1 < last; ++i) {
          const auto a = diff(t.p[i + 1], t.p[i], d), b = diff(t.p_old[i + 1], t.p_old[i], d);
          s.add_sample(inputs(t.p[i], t.p_old[i]), {&a, &b});
        }
      const auto t0 = std::chrono::steady_clock::now();
      const auto st = s.train(cfg.optimizer.total_steps);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (rank == 0) {
        std::printf("%s\n", s.describe().c_str());
        std::printf(
            "trained on %lld samples, %zu steps in %.1f s: loss %.4g -> %.4g (mean of last 50: %.4g)\n",
            (long long)s.num_samples(), st.loss.size(), secs, st.loss.front(), st.loss.back(), [&] {
              double m = 0.0;
              const std::size_t k = std::min<std::size_t>(50, st.loss.size());
              for (std::size_t i = st.loss.size() - k; i < st.loss.size(); ++i) m += st.loss[i];
              return m / double(k);
            }());
      }
      // One-step error on the held-out trajectory (teacher forcing).
      {
        double e2 = 0.0, r2 = 0.0;
        for (int i = 0; i + 1 < eval_states; ++i) {
          Field<double> cur = copy(ho.p[i], d, "study::cur");
          Field<double> dp("study::dp", d, cur.ghost(0)), dpo("study::dpo", d, cur.ghost(0));
          s.predict(inputs(ho.p[i], ho.p_old[i]), {&dp, &dpo}, prec);
          add(cur, dp);
          const auto e = mw::field_error(d.comm(), mw::to_host(cur, "a"), mw::to_host(ho.p[i + 1], "b"));
          e2 += e.rel_l2 * e.rel_l2 * e.ref_l2 * e.ref_l2;
          r2 += e.ref_l2 * e.ref_l2;
        }
        if (rank == 0) std::printf("held-out one-step error: %.4f\n", std::sqrt(e2 / r2));
      }
      const auto t1 = std::chrono::steady_clock::now();
      rollout(s, tr, vel, d, K, N, prec, rank, "in-sample (training shot)");
      rollout(s, ho, vel, d, K, N, prec, rank, "held-out (other shot)");
      if (rest) {
        rollout(s, tr, vel, d, K, N, prec, rank, "in-sample (training shot)", true);
        rollout(s, ho, vel, d, K, N, prec, rank, "held-out (other shot)", true);
      }
      if (rank == 0)
        std::printf("rollouts: %.2f s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
      // Speed placement: the surrogate's cost per simulated physics step beside the physics' own
      // (both measured here, best of 3), and the stride K at which a prediction running at the
      // measured fp32 GEMM peak would cost what K physics steps cost.
      {
        using Clock = std::chrono::steady_clock;
        auto best_of = [&](auto&& f) {
          double b = 1e30;
          for (int r = 0; r < 3; ++r) {
            MPI_Barrier(MPI_COMM_WORLD);
            const auto a = Clock::now();
            f();
            MPI_Barrier(MPI_COMM_WORLD);
            b = std::min(b, std::chrono::duration<double>(Clock::now() - a).count());
          }
          return b;
        };
        solver.initialize(train_shot);
        solver.run(start);
        const int nphys = 20;
        const double t_phys = best_of([&] { solver.run(nphys); }) / nphys;
        Field<double> cur = copy(tr.p[0], d, "study::cur"), old = copy(tr.p_old[0], d, "study::old");
        Field<double> dp("study::dp", d, cur.ghost(0)), dpo("study::dpo", d, cur.ghost(0));
        const double t_pred = best_of([&] { s.predict(inputs(cur, old), {&dp, &dpo}, prec); });
        const int n = 1024;
        auto A = ms::make_matrix<float>("study::A", n, n), B = ms::make_matrix<float>("study::B", n, n),
             Cm = ms::make_matrix<float>("study::C", n, n);
        Kokkos::deep_copy(A, 0.5f);
        Kokkos::deep_copy(B, 0.25f);
        const bool dnnl = ms::onednn_available();
        auto gemm = [&] {
          if (dnnl)
            ms::gemm_onednn_f32('N', 'T', 1.0f, A, B, 0.0f, Cm);
          else
            ms::gemm<float>('N', 'T', 1.0f, A, B, 0.0f, Cm);
          Kokkos::fence();
        };
        gemm();
        const double peak = 2.0 * n * double(n) * n / best_of(gemm);  // flop/s, every rank at once
        double peak_all = 0.0;
        MPI_Allreduce(&peak, &peak_all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        const double flops = s.flops_per_prediction();
        const double t_peak = flops / peak_all;
        if (rank == 0) {
          std::printf(
              "\nspeed (%d rank(s), this run): physics fp64 step %.3g s; surrogate prediction (%s) %.3g s = "
              "%.3g s per simulated step (K = %d), %.1fx the physics\n",
              d.size(), t_phys, std::string(mantissa::to_string(prec)).c_str(), t_pred, t_pred / K, K,
              t_pred / K / t_phys);
          std::printf(
              "surrogate %.3g GFLOP per prediction = %.1f GFLOP/s achieved; fp32 GEMM peak (%s 1024^3, "
              "all ranks) %.1f GFLOP/s: a prediction at that peak takes %.3g s, break-even at K = %.1f "
              "physics steps per prediction (this deck: K = %d)\n",
              flops / 1e9, flops / t_pred / 1e9, dnnl ? "oneDNN" : "BLAS", peak_all / 1e9, t_peak,
              t_peak / t_phys, K);
        }
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rollout_study: %s\n", e.what());
      rc = 1;
    }
  }
  MPI_Finalize();
  return rc;
}
