// Benchmark of the 8th-order acoustic step (issues 3 and 11, Performance).
//
// Prints, from one run: the subnormal mode in force (core/FloatEnv: flush by default, as the
// campaign's default; MANTISSA_BENCH_SUBNORMALS=keep for IEEE subnormals), the STREAM triad
// bound and the cost of an empty launch measured the way the campaign measures them
// (workflow/Machine), then the whole solver step per storage precision (fp64, fp32, bf16 and
// fp16 storage with fp32 compute) for rigid walls and for the example decks' CPML (3D n^3 with
// 16 cells on every face; 2D (8n)^2 with 20 cells and a free surface on top), each timed as
// 5 stretches of `steps` steps (2D: 4 x steps) after as many warm-up steps, with a Ricker source
// so that the field is a travelling wave: median ms/step [min-max], points/s, effective
// bandwidth (compulsory bytes of the interior update per point x points/s: 3 sizeof(storage) +
// sizeof(model) = 32, 16, 10, 10 B), its fraction of the triad-bound rate, and the ratio to fp64
// with "(inside the noise)" when the repeats' ranges overlap; under each, the step's fixed part
// (Solver::fixed_step_seconds: halo exchanges and boundary fills timed alone, wall time) and a
// warning when it is more than half the step. Then the goal line of issue 11.
//
// With `all` (default) on one rank also: the interior kernel alone (Kokkos Views, no boundary
// fills), the same row kernel driven by a plain OpenMP loop (what Kokkos costs), the naive loop
// nest, and the kernel at 64^3 (L3-resident), one sample each.
//
// Usage: mantissa_bench_seismic [n=128] [steps=20] [all|steps|cpml3d|2d]; run under OMP_NUM_THREADS=1 / 2
// and under mpirun -np 2 for the configurations of docs/performance.md. `cpml3d` times only the
// 3D CPML case and skips the triad and launch measurements: for instruction counts under
// valgrind --tool=callgrind (small n, few steps), not for the record. `2d` times only the 2D
// case ((8n)^2), so that it can be taken at a size past the last-level cache (n = 512: 4096^2,
// 134 MB per fp64 field) without a 3D grid of the same n.
#include <mantissa/core/FloatEnv.hpp>
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/StepTimer.hpp>
#include <seismic/Solver.hpp>
#include <seismic/detail/HostStencil.hpp>
#include <seismic/detail/SolverKernels.hpp>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace mantissa;
using namespace mantissa::seismic;
namespace host = mantissa::seismic::detail::host;
namespace sk = mantissa::seismic::detail;
using clock_type = std::chrono::steady_clock;

// Wall-clock time, or with MANTISSA_BENCH_CPU_TIME=1 the process's CPU time divided by the
// thread count: on a shared, loaded machine that counts only the time this process actually ran
// (caches and memory bandwidth are still shared, so such numbers are for comparing variants
// against each other, not for docs/performance.md).
bool use_cpu_time() {
  static const bool on = [] {
    const char* e = std::getenv("MANTISSA_BENCH_CPU_TIME");
    return e != nullptr && e[0] == '1';
  }();
  return on;
}

struct Stamp {
  clock_type::time_point wall;
  double cpu;
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

Stamp now() {
  return {clock_type::now(), use_cpu_time() ? process_cpu_seconds() : 0.0};
}

// The threads the plain-OpenMP loops run on: 1 where the build has no OpenMP (a CUDA or HIP
// build with a Serial host space links no OpenMP runtime; its pragmas are then ignored).
int host_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

double seconds_since(const Stamp& t0) {
  if (use_cpu_time()) return (process_cpu_seconds() - t0.cpu) / host_threads();
  return std::chrono::duration<double>(clock_type::now() - t0.wall).count();
}

// The arrays have the solver's row layout (Solver::row_align_bytes, as Field lays it out): with
// an alignment, rows of a multiple of its values and each row's first owned point on it.
template <class T>
using HostView3 = Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
template <class T>
HostView3<T> solver_rows(std::vector<Kokkos::View<char*, Kokkos::HostSpace>>& owners, int nt, int ghost,
                         std::size_t align_bytes) {
  const std::size_t per = std::max<std::size_t>(1, align_bytes / sizeof(T));
  const std::size_t row = (std::size_t(nt) + per - 1) / per * per;
  owners.emplace_back("mantissa::bench::seismic::kernel", (std::size_t(nt) * nt * row + per) * sizeof(T));
  T* base = reinterpret_cast<T*>(owners.back().data());
  while (per > 1 && reinterpret_cast<std::uintptr_t>(base + ghost) % align_bytes != 0) ++base;
  return HostView3<T>(base, nt, nt, row);
}

// The same in-place 8th-order update without Kokkos, on raw arrays with ghost cells, timed
// like the solver. `rows`: the solver's row kernel (host::update_row, the same tiles
// along y swept in z) driven by a plain OpenMP loop, so the difference to the solver is what
// Kokkos and the solver's bookkeeping cost. `naive`: the textbook one-pass loop nest (all
// 4R+1 neighbours in one expression), to show what the row kernel's organisation buys.
template <class T>
double plain_loop_points_per_s(int n, int steps, bool naive) {
  constexpr int R = 4;
  const int g = R, nt = n + 2 * g;
  std::vector<Kokkos::View<char*, Kokkos::HostSpace>> owners;  // the solver's rows, as the kernel has them
  const std::size_t align = Solver<T, T>::template row_align_bytes<T>(3);
  auto pv = solver_rows<T>(owners, nt, g, align), qv = solver_rows<T>(owners, nt, g, align),
       mv = solver_rows<T>(owners, nt, g, align);
  const std::size_t total = pv.span();
  T* p = pv.data();
  T* q = qv.data();
  T* const m = mv.data();
  const double spacing[3] = {10.0, 10.0, 10.0};
  const auto w = make_stencil_weights<T, R>(3, spacing);
  const long sy = long(pv.stride(1)), sz = long(pv.stride(0));
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < total; ++i) {
    p[i] = T(i % 7) * T(0.01);
    q[i] = T(0);
    m[i] = T(0.1);
  }
  const int tiles = (n + host::tile_rows - 1) / host::tile_rows;
  auto step = [&](const T* __restrict pp, T* __restrict qq, const T* __restrict mm) {
    if (naive) {
#pragma omp parallel for schedule(static)
      for (int r = 0; r < n * n; ++r) {
        const long row = (g + r / n) * sz + (g + r % n) * sy;
        for (int i = g; i < g + n; ++i) {
          const long x = row + i;
          T lap = w.center * pp[x];
          for (int s = 1; s <= R; ++s)
            lap += w.d2[0][s] * (pp[x - s] + pp[x + s]) + w.d2[1][s] * (pp[x - s * sy] + pp[x + s * sy]) +
                   w.d2[2][s] * (pp[x - s * sz] + pp[x + s * sz]);
          qq[x] = T(2) * pp[x] - qq[x] + mm[x] * lap;
        }
      }
      return;
    }
#pragma omp parallel
    {
      host::RowScratch<T> scratch;
      scratch.reserve(n);
      const T* zm[R];
      const T* zp[R];
#pragma omp for schedule(static)
      for (int tile = 0; tile < tiles; ++tile)
        for (int k = g; k < g + n; ++k)
          for (int j = g + tile * host::tile_rows; j < std::min(g + n, g + (tile + 1) * host::tile_rows);
               ++j) {
            const long x = k * sz + j * sy + g;
            for (int s = 1; s <= R; ++s) {
              zm[s - 1] = pp + x - s * sz;
              zp[s - 1] = pp + x + s * sz;
            }
            host::update_row<R, 3>(pp + x, sy, zm, zp, qq + x, mm + x, n, w, scratch);
          }
    }
  };
  step(p, q, m);  // warm up
  const Stamp t0 = now();
  for (int s = 0; s < steps; ++s) {
    step(p, q, m);
    std::swap(p, q);
  }
  return double(n) * n * n * steps / seconds_since(t0);
}

// The interior kernel alone, as the solver launches it (Kokkos Views with ghost cells and the
// solver's rows, the back-end's kernel), without boundary fills, halo exchange, sources or receivers: the
// peer of the plain loop. On a 64^3 grid (its three arrays, 9 MB, stay in the 32 MB L3) it shows the rate
// without DRAM traffic.
template <class S, class C>
double kernel_points_per_s(int n, int steps) {
  using M = std::conditional_t<(sizeof(S) >= 4), S, float>;
  using Layout = Solver<S, C>;
  constexpr int R = 4;
  const int nt = n + 2 * R;
  std::vector<Kokkos::View<char*, Kokkos::HostSpace>> owners;
  auto p = solver_rows<S>(owners, nt, R, Layout::template row_align_bytes<S>(3));
  auto q = solver_rows<S>(owners, nt, R, Layout::template row_align_bytes<S>(3));
  auto m = solver_rows<M>(owners, nt, R, Layout::template row_align_bytes<M>(3));
  Kokkos::parallel_for("init", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, nt), [=](int k) {
    for (int j = 0; j < nt; ++j)
      for (int i = 0; i < nt; ++i) {
        p(k, j, i) = S(float((k + j + i) % 7) * 0.01f);
        m(k, j, i) = M(0.1f);
      }
  });
  const double spacing[3] = {10.0, 10.0, 10.0};
  const auto w = make_stencil_weights<C, R>(3, spacing);
  sk::Box box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = R;
    box.hi[a] = R + n;
  }
  const Kokkos::DefaultHostExecutionSpace space;
  sk::interior_update<R>(space, box, p, q, m, w);
  space.fence();
  const Stamp t0 = now();
  for (int s = 0; s < steps; ++s) {
    sk::interior_update<R>(space, box, p, q, m, w);
    std::swap(p, q);
  }
  space.fence();
  return double(n) * n * n * steps / seconds_since(t0);
}

// The whole step, as a deck runs it: a Ricker source in the middle of the grid so that the
// field holds a travelling wave (with its subnormal tail ahead of the front and in the CPML),
// `repeats` stretches of `steps` steps each timed as a whole, each after `warmup` untimed steps
// (barriers, one fence per stretch, slowest rank; the four precisions interleaved, step_timings
// below). Boundaries: rigid on
// every face, or the example decks' CPML: 3D every face (inputs/seismic_3d_homogeneous.yaml),
// 2D a free surface on top and CPML on the other three sides (inputs/seismic_2d_*.yaml).
enum class Walls { rigid, cpml };

struct StepTiming {
  workflow::TimingSummary t;
  double fixed = 0.0;  // Solver::fixed_step_seconds: halo exchanges + boundary fills alone, slowest rank
};

Config step_config(int dim, int n, Walls walls, int cells) {
  Config config;
  config.order = 8;
  config.quiet = true;
  const Boundary b = walls == Walls::cpml ? Boundary::pml : Boundary::rigid;
  for (auto& axis : config.boundary) axis = {b, b};
  if (walls == Walls::cpml && dim == 2) config.boundary[1][0] = Boundary::free_surface;
  config.pml_cells = std::max(cells, 1);
  Source src;
  src.position = {0.5 * 10.0 * (n - 1), 0.5 * 10.0 * (n - 1), dim == 3 ? 0.5 * 10.0 * (n - 1) : 0.0};
  src.frequency = 20.0;
  src.delay = 0.03;
  config.shots = {Shot{{src}}};
  config.velocity.velocity = 2000.0;
  return config;
}

// One precision's solver as a stepper of workflow::time_stepping_interleaved (the lambdas own it).
struct Timed {
  workflow::Stepper stepper;
  std::function<double()> fixed;
};

template <class S, class C>
Timed timed_solver(const Decomposition& decomp, const Config& config) {
  auto solver = std::make_shared<Solver<S, C>>(decomp, config);
  solver->initialize(0);
  Timed t;
  t.stepper.advance = [solver](std::int64_t k) { solver->run(int(k)); };
  t.stepper.fence = [] { Kokkos::fence(); };
  t.fixed = [solver] { return solver->fixed_step_seconds(20); };
  return t;
}

// fp64, fp32, bf16 and fp16 storage on one case, timed interleaved (workflow::
// time_stepping_interleaved: round r times stretch r of every precision in turn, the order
// rotating, each stretch after `warmup` untimed steps), so a change of the shared machine's load
// falls on all four alike instead of on the one that happened to run then.
std::array<StepTiming, 4> step_timings(int dim, int n, Walls walls, int cells, int steps, int repeats,
                                       int warmup) {
  Grid grid;
  grid.dim = dim;
  grid.n = {n, n, dim == 3 ? n : 1};
  grid.spacing = {10.0, 10.0, 10.0};
  Decomposition decomp(MPI_COMM_WORLD, grid);
  const Config config = step_config(dim, n, walls, cells);
  std::vector<Timed> timed;
  timed.push_back(timed_solver<double, double>(decomp, config));
  timed.push_back(timed_solver<float, float>(decomp, config));
  timed.push_back(timed_solver<bf16, float>(decomp, config));
  timed.push_back(timed_solver<fp16, float>(decomp, config));
  workflow::TimingPlan plan;
  plan.repeats = repeats;
  plan.warmup_steps = warmup;
  plan.steps = steps;
  plan.cpu_time = use_cpu_time();
  plan.cpu_threads = host_threads();
  std::vector<workflow::Stepper> steppers;
  for (const auto& t : timed) steppers.push_back(t.stepper);
  const workflow::InterleavedTiming it = workflow::time_stepping_interleaved(MPI_COMM_WORLD, plan, steppers);
  std::array<StepTiming, 4> r;
  for (std::size_t p = 0; p < 4; ++p) {
    r[p].t = it.summaries[p];
    const double local = timed[p].fixed();
    MPI_Allreduce(&local, &r[p].fixed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard guard(argc, argv);
    const int n = argc > 1 ? std::atoi(argv[1]) : 128;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
    const std::string mode = argc > 3 ? std::string(argv[3]) : std::string("all");  // all|steps|cpml3d|2d
    const bool profile = mode == "cpml3d";
    const bool only_2d = mode == "2d";
    if (mode != "all" && mode != "steps" && !profile && !only_2d) {
      std::fprintf(stderr, "mantissa_bench_seismic: unknown mode '%s'; use all, steps, cpml3d or 2d\n",
                   mode.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char* sub_env = std::getenv("MANTISSA_BENCH_SUBNORMALS");
    const SubnormalMode sub = parse_subnormal_mode(sub_env ? sub_env : "flush", "MANTISSA_BENCH_SUBNORMALS");
    const auto fenv = apply_float_env(sub);
    const int repeats = 5;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int threads = Kokkos::DefaultExecutionSpace::concurrency();
    // The bound, measured as the campaign measures it (workflow::measure_triad), at the start.
    const auto triad =
        profile ? workflow::TriadBound{} : workflow::measure_triad(MPI_COMM_WORLD, std::size_t(1) << 25, 10);
    const double launch = profile ? 0.0 : workflow::measure_launch_seconds(MPI_COMM_WORLD, 200);
    if (rank == 0)
      std::printf(
          "seismic step bench: order 8, 3D %d^3 and 2D %d^2 points, %d rank(s) x %d thread(s); %d repeats of "
          "%d "
          "steps, each after %d warm-up steps, the precisions interleaved, median [min-max]\n"
          "subnormals: %s\n"
          "STREAM triad (Kokkos, all ranks at once, best of 10): %.2f GB/s (median %.2f; per rank "
          "%.2f-%.2f); "
          "empty launch + fence %.2f us%s\n",
          n, 8 * n, size, threads, repeats, steps, steps, fenv.describe().c_str(), triad.total_gbs,
          triad.median_total_gbs, triad.rank_gbs_min, triad.rank_gbs_max, 1e6 * launch,
          use_cpu_time() ? " (CPU-time mode: compare variants only)" : "");
    struct Case {
      const char* name;
      int dim, n;
      Walls walls;
      int cells;
    };
    const std::vector<Case> cases = {{"3D rigid walls", 3, n, Walls::rigid, 0},
                                     {"3D CPML 16 all faces", 3, n, Walls::cpml, 16},
                                     {"2D CPML 20, free top", 2, 8 * n, Walls::cpml, 20}};
    struct Prec {
      const char* name;
      double bytes;  // compulsory bytes per point of the interior update: 3 sizeof(S) + sizeof(model)
    };
    const Prec precs[4] = {
        {"fp64", 32.0}, {"fp32", 16.0}, {"bf16 (fp32 compute)", 10.0}, {"fp16 (fp32 compute)", 10.0}};
    std::vector<std::array<double, 4>> ratio(cases.size());
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      const auto& c = cases[ci];
      if (profile && c.walls != Walls::cpml) continue;
      if (profile && c.dim != 3) break;
      if (only_2d && c.dim != 2) continue;
      const int st = c.dim == 3 ? steps : 4 * steps;
      const std::array<StepTiming, 4> tt = step_timings(c.dim, c.n, c.walls, c.cells, st, repeats, st);
      const workflow::TimingSummary t[4] = {tt[0].t, tt[1].t, tt[2].t, tt[3].t};
      const double pts = double(c.n) * c.n * (c.dim == 3 ? c.n : 1);
      for (int p = 0; p < 4; ++p) {
        ratio[ci][p] = t[0].median / t[p].median;
        if (rank != 0) continue;
        const double gbs = precs[p].bytes * pts / t[p].median / 1e9;
        char bound[32] = "(no triad: cpml3d)";  // the profiling mode measures no triad
        if (triad.total_gbs > 0.0)
          std::snprintf(bound, sizeof(bound), "%5.1f%% of triad-bound", 100.0 * gbs / triad.total_gbs);
        std::printf("step %-21s %-20s %8.3f ms [%7.3f-%7.3f] %8.1f Mpts/s %7.2f GB/s eff. %s  %.2fx fp64%s\n",
                    c.name, precs[p].name, 1e3 * t[p].median, 1e3 * t[p].min, 1e3 * t[p].max,
                    pts / t[p].median / 1e6, gbs, bound, ratio[ci][p],
                    p > 0 && workflow::difference_within_noise(t[0], t[p]) ? " (inside the noise)" : "");
        // The part of the step that does not shrink with the grid, timed alone in the same run.
        const double share = tt[p].fixed / t[p].median;
        std::printf(
            "     fixed part (halo exchanges + boundary fills alone) %.3f ms = %.0f%% of the step%s\n",
            1e3 * tt[p].fixed, 100.0 * share,
            share > 0.5 ? ": WARNING, the step is too small to tell precisions apart" : "");
      }
    }
    auto verdict = [](bool ok) { return ok ? "met" : "NOT met"; };
    if (rank == 0 && only_2d) {
      std::printf(
          "goals (issue 11), 2D CPML at %d^2: fp32 >= 1.8x fp64: %.2fx %s; 16-bit >= 2.5x: bf16 %.2fx fp16 "
          "%.2fx %s\n",
          8 * n, ratio[2][1], verdict(ratio[2][1] >= 1.8), ratio[2][2], ratio[2][3],
          verdict(std::min(ratio[2][2], ratio[2][3]) >= 2.5));
    } else if (rank == 0 && profile) {
      std::printf(
          "goals (issue 11), 3D CPML at %d^3: fp32 >= 1.8x fp64: %.2fx %s; 16-bit >= 2.5x: bf16 %.2fx fp16 "
          "%.2fx %s\n",
          n, ratio[1][1], verdict(ratio[1][1] >= 1.8), ratio[1][2], ratio[1][3],
          verdict(std::min(ratio[1][2], ratio[1][3]) >= 2.5));
    } else if (rank == 0) {
      std::printf(
          "goals (issue 11), CPML as the decks have it: fp32 >= 1.8x fp64: 3D %.2fx %s, 2D %.2fx %s; 16-bit "
          ">= 2.5x: 3D bf16 %.2fx fp16 %.2fx %s, 2D bf16 %.2fx fp16 %.2fx %s\n",
          ratio[1][1], verdict(ratio[1][1] >= 1.8), ratio[2][1], verdict(ratio[2][1] >= 1.8), ratio[1][2],
          ratio[1][3], verdict(std::min(ratio[1][2], ratio[1][3]) >= 2.5), ratio[2][2], ratio[2][3],
          verdict(std::min(ratio[2][2], ratio[2][3]) >= 2.5));
    }
    if (mode == "all" && size == 1) {  // kernels and plain loops are single-process
      struct Row {
        const char* name;
        double bytes, rate, fp64;
      };
      std::vector<Row> rows;
      const double kernel64 = kernel_points_per_s<double, double>(n, steps);
      const double kernel32 = kernel_points_per_s<float, float>(n, steps);
      rows.push_back({"kokkos kernel fp64", 32.0, kernel64, kernel64});
      rows.push_back({"kokkos kernel fp32", 16.0, kernel32, kernel64});
      rows.push_back({"kokkos kernel bf16", 10.0, kernel_points_per_s<bf16, float>(n, steps), kernel64});
      rows.push_back({"kokkos kernel fp16", 10.0, kernel_points_per_s<fp16, float>(n, steps), kernel64});
      const double plain64 = plain_loop_points_per_s<double>(n, steps, false);
      const double plain32 = plain_loop_points_per_s<float>(n, steps, false);
      rows.push_back({"plain loop fp64 (row kernel)", 32.0, plain64, plain64});
      rows.push_back({"plain loop fp32 (row kernel)", 16.0, plain32, plain64});
      const double naive64 = plain_loop_points_per_s<double>(n, steps, true);
      rows.push_back({"naive loop nest fp64", 32.0, naive64, naive64});
      rows.push_back({"naive loop nest fp32", 16.0, plain_loop_points_per_s<float>(n, steps, true), naive64});
      const int small = 64,
                small_steps = std::max(1, int(double(steps) * n * n * n / (small * small * small)));
      const double cache64 = kernel_points_per_s<double, double>(small, small_steps);
      rows.push_back({"L3-resident kernel fp64 64^3", 32.0, cache64, cache64});
      rows.push_back({"L3-resident kernel fp32 64^3", 16.0,
                      kernel_points_per_s<float, float>(small, small_steps), cache64});
      for (const auto& r : rows) {
        const double gbs = r.bytes * r.rate / 1e9;
        std::printf(
            "%-28s %8.1f Mpoints/s  %6.2f GB/s effective (%2.0f B/pt)  %5.1f%% of triad-bound  %.2fx its "
            "fp64\n",
            r.name, r.rate / 1e6, gbs, r.bytes, 100.0 * gbs / triad.total_gbs, r.rate / r.fp64);
      }
      std::printf("kokkos kernel / plain loop: fp64 %.2f, fp32 %.2f (one sample each)\n", kernel64 / plain64,
                  kernel32 / plain32);
    }
  }
  MPI_Finalize();
  return 0;
}
