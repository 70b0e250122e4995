// Benchmark of the 3D 8th-order acoustic step (issue 3, Performance).
//
// Prints, from one run: STREAM triad bandwidth (McCalpin; a = b + s c, 24 bytes per element),
// the solver's step for fp64, fp32 and 16-bit storage in grid points per second and effective
// bandwidth (compulsory bytes per point x points per second), and the same stencil without
// Kokkos in plain C++/OpenMP compiled with the same flags (what Kokkos costs), both with the
// solver's row kernel and as a naive loop nest. Compulsory bytes per
// point of the in-place update p_old <- 2p - p_old + m L p: read p, read and write p_old (one
// array, so no write-allocate), read m: 3 sizeof(storage) + sizeof(model).
//
// Also the step with a CPML on every face against rigid walls in the same run (3D n^3 with 16
// cells, 2D (8n)^2 with 20), so that what the absorbing boundary costs is visible.
//
// Usage: mantissa_bench_seismic [n] [steps] [cpml] (cpml: only the CPML lines); run under OMP_NUM_THREADS=1 /
// 2 and under mpirun -np 2 for the three configurations of docs/performance.md.
#include <seismic/Solver.hpp>
#include <seismic/detail/HostStencil.hpp>
#include <seismic/detail/SolverKernels.hpp>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
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

// STREAM triad with plain OpenMP (the bandwidth peer), best of 5; every rank runs it at once.
double stream_triad_gbs(std::size_t n) {
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = 0.0;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const Stamp t0 = now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    MPI_Barrier(MPI_COMM_WORLD);
    best = std::min(best, seconds_since(t0));
  }
  volatile double sink = a[n / 2];
  (void)sink;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return 24.0 * double(n) * size / best / 1e9;
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
  const std::size_t total = std::size_t(nt) * nt * nt;
  std::vector<T> p(total, T(0)), q(total, T(0)), m(total, T(0.1));
  const double spacing[3] = {10.0, 10.0, 10.0};
  const auto w = make_stencil_weights<T, R>(3, spacing);
  const long sy = nt, sz = long(nt) * nt;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < total; ++i) p[i] = T(i % 7) * T(0.01);
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
  step(p.data(), q.data(), m.data());  // warm up
  const Stamp t0 = now();
  for (int s = 0; s < steps; ++s) {
    step(p.data(), q.data(), m.data());
    std::swap(p, q);
  }
  return double(n) * n * n * steps / seconds_since(t0);
}

// The interior kernel alone, as the solver launches it (Kokkos Views with ghost cells, the
// back-end's kernel), without boundary fills, halo exchange, sources or receivers: the peer
// of the plain loop. On a 64^3 grid (its three arrays, 9 MB, stay in the 32 MB L3) it shows
// the rate without DRAM traffic.
template <class S, class C>
double kernel_points_per_s(int n, int steps) {
  using M = std::conditional_t<(sizeof(S) >= 4), S, float>;
  constexpr int R = 4;
  const int nt = n + 2 * R;
  Kokkos::View<S***, Kokkos::LayoutRight, Kokkos::HostSpace> p("p", nt, nt, nt), q("q", nt, nt, nt);
  Kokkos::View<M***, Kokkos::LayoutRight, Kokkos::HostSpace> m("m", nt, nt, nt);
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

// The whole step. pml_cells = 0: rigid walls on every face (interior update and mirror fills
// only); pml_cells > 0: a CPML of that many cells on every face, the configuration of real decks
// (inputs/*.yaml), so the difference between the two is what the CPML costs.
template <class S, class C>
double solver_points_per_s(int n, int steps, int dim = 3, int pml_cells = 0) {
  Grid grid;
  grid.dim = dim;
  grid.n = {n, n, dim == 3 ? n : 1};
  grid.spacing = {10.0, 10.0, 10.0};
  Decomposition decomp(MPI_COMM_WORLD, grid);
  Config config;
  config.order = 8;
  config.quiet = true;
  const Boundary walls = pml_cells > 0 ? Boundary::pml : Boundary::rigid;
  for (auto& axis : config.boundary) axis = {walls, walls};
  config.pml_cells = std::max(pml_cells, 1);
  config.pml_frequency = 10.0;
  config.shots = {Shot{}};
  config.velocity.velocity = 2000.0;
  Solver<S, C> solver(decomp, config);
  solver.initialize(0);
  solver.run(2);  // warm up
  Kokkos::fence();
  MPI_Barrier(MPI_COMM_WORLD);
  const Stamp t0 = now();
  solver.run(steps);
  Kokkos::fence();
  MPI_Barrier(MPI_COMM_WORLD);
  return double(grid.num_points()) * steps / seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard guard(argc, argv);
    const int n = argc > 1 ? std::atoi(argv[1]) : 160;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
    const bool cpml_only = argc > 3 && std::string(argv[3]) == "cpml";  // only the CPML lines
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int threads = Kokkos::DefaultExecutionSpace::concurrency();
    const double triad = cpml_only ? 0.0 : stream_triad_gbs(std::size_t(1) << 25);
    if (rank == 0)
      std::printf(
          "seismic step bench: 3D order 8, %d^3 points, %d steps, %d rank(s) x %d thread(s)\n"
          "STREAM triad: %.2f GB/s%s\n",
          n, steps, size, threads, triad, use_cpu_time() ? " (CPU-time mode: compare variants only)" : "");
    struct Row {
      const char* name;
      double bytes;
      double rate;
      double fp64;  // the fp64 rate of the same kind (step, kernel, loop), for the ratio column
    };
    std::vector<Row> rows;
    if (!cpml_only) {
      const double step64 = solver_points_per_s<double, double>(n, steps);
      rows.push_back({"step fp64", 32.0, step64, step64});
      rows.push_back({"step fp32", 16.0, solver_points_per_s<float, float>(n, steps), step64});
      rows.push_back({"step bf16 (fp32 compute)", 10.0, solver_points_per_s<bf16, float>(n, steps), step64});
      rows.push_back({"step fp16 (fp32 compute)", 10.0, solver_points_per_s<fp16, float>(n, steps), step64});
    }
    // CPML on all faces against rigid walls, same grid, same run (best of 3 each, alternated,
    // so that a burst of load on a shared machine does not land on one of them only). 3D at n^3
    // with 16 cells, and a 2D deck of 8n x 8n points with 20 cells.
    struct CpmlRow {
      const char* name;
      int dim, n, cells;
      double rigid, cpml;
    };
    std::vector<CpmlRow> cpml_rows = {{"3D fp64", 3, n, 16, 0.0, 0.0}, {"2D fp64", 2, 8 * n, 20, 0.0, 0.0}};
    for (auto& c : cpml_rows) {
      const int st = c.dim == 3 ? steps : 4 * steps;
      for (int rep = 0; rep < 3; ++rep) {
        c.rigid = std::max(c.rigid, solver_points_per_s<double, double>(c.n, st, c.dim, 0));
        c.cpml = std::max(c.cpml, solver_points_per_s<double, double>(c.n, st, c.dim, c.cells));
      }
    }
    double kernel64 = 0.0, kernel32 = 0.0, plain64 = 0.0, plain32 = 0.0;
    if (size == 1 && !cpml_only) {  // kernels and plain loops are single-process
      kernel64 = kernel_points_per_s<double, double>(n, steps);
      kernel32 = kernel_points_per_s<float, float>(n, steps);
      rows.push_back({"kokkos kernel fp64", 32.0, kernel64, kernel64});
      rows.push_back({"kokkos kernel fp32", 16.0, kernel32, kernel64});
      rows.push_back({"kokkos kernel bf16", 10.0, kernel_points_per_s<bf16, float>(n, steps), kernel64});
      rows.push_back({"kokkos kernel fp16", 10.0, kernel_points_per_s<fp16, float>(n, steps), kernel64});
      plain64 = plain_loop_points_per_s<double>(n, steps, false);
      plain32 = plain_loop_points_per_s<float>(n, steps, false);
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
    }
    if (rank == 0) {
      for (const auto& r : rows) {
        const double gbs = r.bytes * r.rate / 1e9;
        std::printf(
            "%-28s %8.1f Mpoints/s  %6.2f GB/s effective (%2.0f B/pt)  %5.1f%% of triad-bound  %.2fx its "
            "fp64\n",
            r.name, r.rate / 1e6, gbs, r.bytes, 100.0 * gbs / triad, r.rate / r.fp64);
      }
      for (const auto& c : cpml_rows) {
        const double pts = double(c.n) * c.n * (c.dim == 3 ? c.n : 1);
        const double inner =
            double(c.n - 2 * c.cells) * (c.n - 2 * c.cells) * (c.dim == 3 ? c.n - 2 * c.cells : 1);
        // Time per step split into the rigid step's time per point times all points, and the rest.
        const double t_cpml = pts / c.cpml, t_rigid = pts / c.rigid;
        std::printf(
            "step %s %d^%d, CPML %2d cells all faces: %8.1f Mpoints/s, rigid walls %8.1f Mpoints/s (%.2fx); "
            "CPML points %.0f%%, CPML share of the step time %.0f%% (assuming rigid-step cost elsewhere)\n",
            c.name, c.n, c.dim, c.cells, c.cpml / 1e6, c.rigid / 1e6, c.rigid / c.cpml,
            100.0 * (pts - inner) / pts, 100.0 * (t_cpml - t_rigid * inner / pts) / t_cpml);
      }
      if (size == 1 && !cpml_only)
        std::printf(
            "kokkos kernel / plain loop: fp64 %.2f, fp32 %.2f; whole step / kernel: fp64 %.2f, fp32 %.2f\n",
            kernel64 / plain64, kernel32 / plain32, rows[0].rate / kernel64, rows[1].rate / kernel32);
    }
  }
  MPI_Finalize();
  return 0;
}
