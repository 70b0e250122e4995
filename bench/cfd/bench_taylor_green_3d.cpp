// The 3D Taylor-Green vortex at Re 1600 (Brachet et al. 1983; the case of the International
// Workshops on High-Order CFD Methods): u = sin x cos y cos z, v = -cos x sin y cos z, w = 0 on the
// periodic cube [0, 2 pi]^3, nu = 1 / Re, run to t = 20 on one grid (any rank count). Prints, as
// it goes, the volume-averaged kinetic energy E, its dissipation rate -dE/dt (the difference of
// consecutive steps' energies) and the enstrophy-based rate 2 nu zeta (zeta = <|omega|^2> / 2;
// the two differ by the scheme's numerical dissipation, which for this energy-conserving
// advection is only the time integrator's), and at the end the peak of -dE/dt and its time
// against the reference: the pseudo-spectral 512^3 solution (van Rees, Leonard, Pullin and
// Koumoutsakos, J. Comput. Phys. 230 (2011) 2794-2805; the workshop's reference data), peak
// 0.01286 at t = 8.97 (convective units L / U), and the exact initial rate 2 nu x 3/8.
//
//   mpirun -np R mantissa_bench_taylor_green_3d [--n 64] [--re 1600] [--t-end 20] [--cfl 0.5]
//          [--solver fp64] [--every 0.25] [--csv tg3d.csv]
//
// --csv writes every step (t, E, -dE/dt at the half step, 2 nu zeta, multigrid cycles, seconds).
// A benchmark run (minutes to hours), not CI: tests/unit/cfd/tstFlow3d.cpp checks the energy
// budget -dE/dt = 2 nu zeta on a small grid.
#include <cfd/Solver.hpp>
#include <mantissa/core/KokkosCompat.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {
// A named namespace holds the using-directives: at file scope (or in the unnamed namespace)
// they would make mantissa::log visible to global lookup, where the stub code nvcc appends
// calls ::log unqualified ("reference to 'log' is ambiguous").
namespace taylor_green {

using namespace mantissa;
using namespace mantissa::cfd;

constexpr double reference_peak = 0.01286;
constexpr double reference_peak_time = 8.97;

struct Args {
  std::int64_t n = 64;
  double re = 1600.0, t_end = 20.0, cfl = 0.5, every = 0.25;
  std::string solver = "fp64", csv;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has = i + 1 < argc;
    if (k == "--n" && has)
      a.n = std::atoll(argv[++i]);
    else if (k == "--re" && has)
      a.re = std::atof(argv[++i]);
    else if (k == "--t-end" && has)
      a.t_end = std::atof(argv[++i]);
    else if (k == "--cfl" && has)
      a.cfl = std::atof(argv[++i]);
    else if (k == "--every" && has)
      a.every = std::atof(argv[++i]);
    else if (k == "--solver" && has)
      a.solver = argv[++i];
    else if (k == "--csv" && has)
      a.csv = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: mantissa_bench_taylor_green_3d [--n 64] [--re 1600] [--t-end 20] [--cfl 0.5] "
                   "[--solver fp64|fp32|bf16|fp16] [--every 0.25] [--csv FILE]\n");
      std::exit(2);
    }
  }
  return a;
}

Precision parse_precision(const std::string& s) {
  if (s == "fp64") return Precision::fp64;
  if (s == "fp32") return Precision::fp32;
  if (s == "bf16") return Precision::bf16;
  if (s == "fp16") return Precision::fp16;
  std::fprintf(stderr, "--solver %s: use fp64, fp32, bf16 or fp16\n", s.c_str());
  std::exit(2);
}

int run(const Args& a) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double two_pi = 2.0 * std::acos(-1.0);
  Grid g;
  g.dim = 3;
  g.n = {a.n, a.n, a.n};
  g.spacing = {two_pi / double(a.n), two_pi / double(a.n), two_pi / double(a.n)};
  g.periodic = {true, true, true};
  Decomposition decomp(MPI_COMM_WORLD, g);
  Config c;
  c.viscosity = 1.0 / a.re;
  c.initial = InitialKind::taylor_green;
  c.amplitude = 1.0;
  for (auto& s : c.side) s = {Side::periodic, Side::periodic};
  c.solver = parse_precision(a.solver);
  // dt: a whole number of steps to t_end at or below cfl x the stable limit
  Config probe = c;
  probe.cfl = a.cfl;
  const double dt0 = choose_dt(g, probe);
  const int steps = int(std::ceil(a.t_end / dt0));
  c.dt = a.t_end / double(steps);
  FlowSolver<double> s(decomp, c);
  s.initialize();
  const double volume = two_pi * two_pi * two_pi;
  auto d = s.diagnostics();
  double e_prev = d.kinetic_energy / volume;
  const double eps0 = 2.0 * c.viscosity * d.enstrophy / volume;
  std::FILE* csv = nullptr;
  if (rank == 0) {
    char host[256] = "?";
    gethostname(host, sizeof(host));
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf(
        "taylor-green 3D Re %.0f: %lld^3 cells, %d ranks (%d x %d x %d), %d thread(s)/rank, dt %.6g, %d "
        "steps to "
        "t = %.3g, multigrid %s, %s on %s\n",
        a.re, (long long)a.n, size, decomp.dims()[0], decomp.dims()[1], decomp.dims()[2],
        mantissa::concurrency<Kokkos::DefaultExecutionSpace>(), c.dt, steps, a.t_end, a.solver.c_str(), date,
        host);
    std::printf(
        "t = 0: E = %.8f (exact 0.125), 2 nu zeta = %.6e (exact 2 nu x 3/8 = %.6e, the 2nd-order "
        "Laplacian's (k h)^2/4 below)\n",
        e_prev, eps0, 0.75 * c.viscosity);
    std::printf("%8s %12s %12s %12s %8s %10s\n", "t", "E", "-dE/dt", "2 nu zeta", "cycles", "s/step");
    std::fflush(stdout);
    if (!a.csv.empty()) {
      csv = std::fopen(a.csv.c_str(), "w");
      if (!csv) {
        std::fprintf(stderr, "cannot write %s\n", a.csv.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      std::fprintf(csv, "t,E,dissipation_dEdt,t_half,dissipation_enstrophy,cycles,seconds\n");
    }
  }
  // the peak of -dE/dt over the steps (at the half steps), refined by the parabola through the
  // three values around the largest
  std::vector<double> rate, rate_t;
  double next_print = a.every, elapsed = 0.0;
  int cycles = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    s.step();
    d = s.diagnostics();
    const double dt_step = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    elapsed += dt_step;
    cycles += s.last_solves().iterations;
    const double e = d.kinetic_energy / volume;
    const double r = -(e - e_prev) / c.dt;
    const double th = s.time() - 0.5 * c.dt;
    rate.push_back(r);
    rate_t.push_back(th);
    e_prev = e;
    const double eps_z = 2.0 * c.viscosity * d.enstrophy / volume;
    if (!d.finite) {
      if (rank == 0) std::printf("t = %.4f: the velocity is not finite; stopping\n", s.time());
      return 1;
    }
    if (rank == 0 && csv)
      std::fprintf(csv, "%.6f,%.10e,%.10e,%.6f,%.10e,%d,%.4f\n", s.time(), e, r, th, eps_z,
                   s.last_solves().iterations, dt_step);
    if (rank == 0 && (s.time() >= next_print - 1e-9 || k == steps - 1)) {
      std::printf("%8.3f %12.8f %12.6e %12.6e %8d %10.4f\n", s.time(), e, r, eps_z,
                  s.last_solves().iterations, elapsed / double(k + 1));
      std::fflush(stdout);
      if (csv) std::fflush(csv);
      next_print += a.every;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) {
    std::size_t m = 0;
    for (std::size_t q = 1; q < rate.size(); ++q)
      if (rate[q] > rate[m]) m = q;
    double peak = rate[m], peak_t = rate_t[m];
    if (m > 0 && m + 1 < rate.size()) {
      const double y0 = rate[m - 1], y1 = rate[m], y2 = rate[m + 1];
      const double den = y0 - 2.0 * y1 + y2;
      if (den < 0.0) {
        const double x = 0.5 * (y0 - y2) / den;
        peak = y1 - 0.25 * (y0 - y2) * x;
        peak_t = rate_t[m] + x * c.dt;
      }
    }
    std::printf(
        "peak -dE/dt %.6e at t = %.3f; reference (spectral 512^3) %.5f at t = %.2f: %+.2f %% in the peak, "
        "%+.3f "
        "in its time\n",
        peak, peak_t, reference_peak, reference_peak_time, 100.0 * (peak / reference_peak - 1.0),
        peak_t - reference_peak_time);
    std::printf("%d steps in %.1f s (%.4f s/step, %.3g cells x steps / s), %.2f multigrid cycles per step\n",
                steps, wall, wall / double(steps), double(g.num_points()) * double(steps) / wall,
                double(cycles) / double(steps));
    if (csv) std::fclose(csv);
  }
  return 0;
}

int bench_main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    rc = run(parse(argc, argv));
  }
  MPI_Finalize();
  return rc;
}

}  // namespace taylor_green
}  // namespace

int main(int argc, char** argv) {
  return taylor_green::bench_main(argc, argv);
}
