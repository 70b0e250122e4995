// Poisson, 7-point, 3D, cell-centred, Dirichlet faces, to a relative residual of 1e-10:
// mantissa's solver with every inner precision beside hypre's PFMG (as CG preconditioner and
// alone) on the same problem and tolerance, and the smoother / residual kernels' bandwidth as
// a fraction of STREAM triad, all in the same run. Each mixed run must reach the fp64 run's
// relative residual (HPG-MxP rule); the table gives time, iterations, the iteration penalty
// and the true fp64 residual at the end.
//
// The breakdown (unless --no-breakdown) says where a mixed solve's time goes: one multigrid
// application (the preconditioner, with the scaling and conversions of the residual in and the
// correction out) timed alone per variant, and the rest of an iteration (the fp64 CG: matrix
// product, dots, vector updates, the convergence test) as (best solve - iterations x
// application) / iterations. The application timed alone writes the correction out (one
// conversion pass the CG fuses into its dots instead), so the rest is a slight underestimate.
// Solves and the breakdown are timed as process CPU time too (the shared machine's other jobs
// do not count in it); the CPU columns are the ones to compare under load.
//
//   mantissa_bench_solvers [--n 128] [--reps 3] [--no-hypre] [--no-pfmg-alone] [--no-kernels]
//   [--no-breakdown] [--history] [--rhs smooth|broadband] [--kernels-only]
//                          (--history: each variant's residual after every iteration, once;
//                          --rhs: see fill_rhs, default smooth)
//                          [--only "fp64;fp32;fp64@2;fp32@2;fp32+k32"]   (@2: V(2,2) instead of V(1,1);
//                          +k32: the CG's search direction in fp32, SolverOptions::krylov_storage;
//                          ^f: F-cycles instead of V-cycles, e.g. "fp16^f@2")
#include <mantissa/solvers/PoissonSolver.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#if defined(MANTISSA_BENCH_HYPRE)
#include <HYPRE_struct_ls.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace {
// A named namespace holds the using-directives: at file scope (or in the unnamed namespace)
// they would make mantissa::log visible to global lookup, where the stub code nvcc appends
// calls ::log unqualified ("reference to 'log' is ambiguous").
namespace poisson {

using namespace mantissa;
using namespace mantissa::solvers;
using Clock = std::chrono::steady_clock;
constexpr double pi = 3.14159265358979323846;

int g_rank = 0;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of the whole process (every thread): on a shared, loaded machine it counts what this
// process ran, not the time slices other jobs took (with 1 thread it is the solve's own work).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// STREAM triad a = b + s c (McCalpin), best of 10, bytes counted as STREAM does (3 arrays).
double stream_triad_gbs() {
  const std::size_t n = std::size_t(1) << 25;
  Kokkos::View<double*> a("mantissa::bench::triad::a", n), b("mantissa::bench::triad::b", n),
      c("mantissa::bench::triad::c", n);
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(c, 2.0);
  double best = 1e30;
  for (int rep = 0; rep < 10; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    Kokkos::parallel_for(
        "mantissa::bench::triad", Kokkos::RangePolicy<>(0, n),
        KOKKOS_LAMBDA(const std::size_t i) { a(i) = b(i) + 3.0 * c(i); });
    Kokkos::fence();
    double t = seconds_since(t0);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, t);
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return double(size) * 3.0 * 8.0 * double(n) / best / 1e9;
}

template <class T>
void kernel_bandwidth(const Decomposition& decomp, double triad) {
  MultigridOptions mo;
  mo.precisions = std::vector<Precision>{precision_traits<T>::precision};
  Multigrid<> mg(decomp, Boundary::all(BoundaryKind::dirichlet), mo);
  auto& lv = mg.level(0);
  auto& d = std::get<typename Multigrid<>::template LevelData<T>>(lv.data);
  Kokkos::deep_copy(d.x.view(), T(0.5f));
  Kokkos::deep_copy(d.f.view(), T(1.0f));
  using C = mantissa::solvers::detail::compute_t<T>;
  const auto s = level_stencil<C>(lv, 3);
  const double cells = double(decomp.grid().num_points());
  auto best_of = [&](auto&& f) {
    double best = 1e30;
    for (int rep = 0; rep < 6; ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = Clock::now();
      f();
      Kokkos::fence();
      double t = seconds_since(t0);
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rep > 0) best = std::min(best, t);
    }
    return best;
  };
  const Kokkos::DefaultExecutionSpace space;
  // bytes: the ideal traffic (read x and f, write one array), as STREAM counts
  const double bytes = 3.0 * sizeof(T) * cells;
  const double t_res = best_of(
      [&] { mantissa::solvers::detail::residual(space, lv.place, s, d.x.view(), d.f.view(), d.r.view()); });
  const double t_jac = best_of([&] {
    mantissa::solvers::detail::jacobi(space, lv.place, s, C(0.8), d.x.view(), d.x2.view(), d.f.view(), false);
  });
  const double t_gs = best_of([&] {
    mantissa::solvers::detail::rbgs(space, lv.place, s, d.x.view(), d.f.view(), 0);
    mantissa::solvers::detail::rbgs(space, lv.place, s, d.x.view(), d.f.view(), 1);
  });
  // a V(2,2) smoothing step as the multigrid runs it on a single-rank level (every face
  // physical): its four colour passes in one sweep over the planes (detail::rbgs_passes)
  const int colours[4] = {0, 1, 0, 1};
  const double t_gs4 = best_of([&] {
    mantissa::solvers::detail::rbgs_passes(space, lv.place, s, d.x.view(), d.f.view(), colours, 4, lv.mirror);
  });
  double t_apply = 0.0;
  if constexpr (std::is_same<T, double>::value) {
    // the fp64 CG's matrix product with its dot (p, Ap), which every inner precision pays
    t_apply =
        best_of([&] { mantissa::solvers::detail::apply_dot(space, lv.place, s, d.x.view(), d.r.view()); });
  }
  // the CG's two passes that read z from level 0 in T: the preconditioned dots (z, r), (z, Ap)
  // (z 2-8 bytes a cell, r and Ap 16; (z, r) alone: 8) and the direction update x += a p,
  // p = z + b p (z, and x and p read and written: 32)
  double t_dots = 0.0, t_dot1 = 0.0, t_dir = 0.0, t_ap64 = 0.0, t_fold = 0.0, t_fold32 = 0.0, t_r64 = 0.0,
         t_r32 = 0.0;
  {
    // the CG's fp64 fields as the solver allocates them (rows aligned), on the level's ghosts
    const int g = d.x.ghost(0);
    const std::size_t al = mantissa::solvers::detail::row_align_bytes;
    // (the Fields own the memory of their aligned views: they stay in scope)
    const Field<double> fr("mantissa::bench::r", decomp, g, al), fap("mantissa::bench::ap", decomp, g, al),
        fp("mantissa::bench::p", decomp, g, al), fxk("mantissa::bench::xk", decomp, g, al);
    const auto &r = fr.view(), &ap = fap.view(), &p = fp.view(), &xk = fxk.view();
    Kokkos::deep_copy(r, 0.25);
    Kokkos::deep_copy(ap, 0.5);
    Kokkos::deep_copy(p, 0.125);
    t_dots = best_of([&] {
      (void)mantissa::solvers::detail::precond_dots_from(space, lv.place, lv.place, d.x.view(), 1.0, r, ap,
                                                         false);
    });
    // the standard beta's (z, r) alone (no level in bf16: PoissonSolver_impl.hpp), Ap not read
    t_dot1 = best_of([&] {
      (void)mantissa::solvers::detail::precond_dots_from(space, lv.place, lv.place, d.x.view(), 1.0, r, ap,
                                                         false, false);
    });
    t_dir = best_of([&] {
      mantissa::solvers::detail::update_p_from(space, lv.place, lv.place, d.x.view(), 1.0, 0.0, 0.5, p, 1e-3,
                                               xk);
    });
    // the fp64 CG's A p of the new direction, then the two in one sweep as a single rank runs
    // them (every face physical: detail::update_p_apply)
    if constexpr (mantissa::solvers::detail::host::is_host<Kokkos::DefaultExecutionSpace>()) {
      const auto s64 = mantissa::solvers::detail::make_stencil<double>(lv.coef, 3);
      t_ap64 = best_of([&] { (void)mantissa::solvers::detail::apply_dot(space, lv.place, s64, p, ap); });
      t_fold = best_of([&] {
        (void)mantissa::solvers::detail::update_p_apply(space, lv.place, lv.place, d.x.view(), 1.0, 0.0, 0.5,
                                                        p, 1e-3, xk, s64, ap, lv.mirror);
      });
      // the same with the search direction in fp32 (krylov_storage: fp32): A p not stored
      const Field<float> fp32("mantissa::bench::p32", decomp, g, al);
      const auto& p32 = fp32.view();
      Kokkos::deep_copy(p32, 0.125f);
      t_fold32 = best_of([&] {
        (void)mantissa::solvers::detail::update_p_apply(space, lv.place, lv.place, d.x.view(), 1.0, 0.0, 0.5,
                                                        p32, 1e-3, xk, s64, std::decay_t<decltype(ap)>(),
                                                        lv.mirror);
      });
      // the r update with the multigrid's entry (an fp64 or fp32 level 0): from the stored A p,
      // and with A p recomputed from the fp32 p
      if constexpr (std::is_same<T, double>::value || std::is_same<T, float>::value) {
        t_r64 = best_of([&] {
          (void)mantissa::solvers::detail::update_r_entry(space, lv.place, 1e-3, r, ap, lv.place, s,
                                                          d.f.view(), d.x.view(), 1.0);
        });
        t_r32 = best_of([&] {
          (void)mantissa::solvers::detail::update_r_compressed(space, lv.place, 1e-3, r, s64, p32, true,
                                                               lv.place, s, d.f.view(), d.x.view());
        });
      }
    }
  }
  if (g_rank == 0) {
    std::printf("  %-5s CG dots from z %6.2f GB/s  %5.1f%% of triad (%.2f ms)\n", precision_traits<T>::name,
                (sizeof(T) + 16.0) * cells / t_dots / 1e9,
                100.0 * (sizeof(T) + 16.0) * cells / t_dots / 1e9 / triad, 1e3 * t_dots);
    std::printf("  %-5s CG dot (z, r)  %6.2f GB/s  %5.1f%% of triad (%.2f ms)\n", precision_traits<T>::name,
                (sizeof(T) + 8.0) * cells / t_dot1 / 1e9,
                100.0 * (sizeof(T) + 8.0) * cells / t_dot1 / 1e9 / triad, 1e3 * t_dot1);
    std::printf("  %-5s CG direction   %6.2f GB/s  %5.1f%% of triad (%.2f ms)\n", precision_traits<T>::name,
                (sizeof(T) + 32.0) * cells / t_dir / 1e9,
                100.0 * (sizeof(T) + 32.0) * cells / t_dir / 1e9 / triad, 1e3 * t_dir);
    if (t_fold > 0.0)
      std::printf("  %-5s CG direction + A p in one sweep %.2f ms (apart: %.2f + %.2f ms)\n",
                  precision_traits<T>::name, 1e3 * t_fold, 1e3 * t_dir, 1e3 * t_ap64);
    if (t_fold32 > 0.0)
      std::printf("  %-5s CG direction + (p, Ap), p in fp32: %.2f ms\n", precision_traits<T>::name,
                  1e3 * t_fold32);
    if (t_r64 > 0.0)
      std::printf("  %-5s CG r update with the entry: A p stored %.2f ms, A p from the fp32 p %.2f ms\n",
                  precision_traits<T>::name, 1e3 * t_r64, 1e3 * t_r32);
    if (t_apply > 0.0)
      std::printf("  %-5s CG A p, (p, Ap) %5.2f GB/s  %5.1f%% of triad (%.2f ms)\n",
                  precision_traits<T>::name, 2.0 * sizeof(T) * cells / t_apply / 1e9,
                  100.0 * 2.0 * sizeof(T) * cells / t_apply / 1e9 / triad, 1e3 * t_apply);
    std::printf("  %-5s residual      %7.2f GB/s  %5.1f%% of triad\n", precision_traits<T>::name,
                bytes / t_res / 1e9, 100.0 * bytes / t_res / 1e9 / triad);
    std::printf("  %-5s jacobi sweep  %7.2f GB/s  %5.1f%% of triad\n", precision_traits<T>::name,
                bytes / t_jac / 1e9, 100.0 * bytes / t_jac / 1e9 / triad);
    // each colour streams x and f and writes x (the other colour's cache lines come along)
    std::printf("  %-5s red-black GS  %7.2f GB/s  %5.1f%% of triad (per colour pass; both colours %.2f ms)\n",
                precision_traits<T>::name, 2 * bytes / t_gs / 1e9, 100.0 * 2 * bytes / t_gs / 1e9 / triad,
                1e3 * t_gs);
    std::printf(
        "  %-5s red-black GS, 4 passes swept together: %.2f ms (%.2f ns a cell and pass; separate "
        "passes %.2f)\n",
        precision_traits<T>::name, 1e3 * t_gs4, 1e9 * t_gs4 / (4 * cells), 1e9 * t_gs / (2 * cells));
  }
}

// The right-hand side. smooth: the smoothest mode plus one more (a few modes: the fp64 CG
// resolves them within its first three iterations, which no rounding-limited inner precision
// does). broadband: the same plus a value in [-1, 1) per cell times 3 pi^2, a function of the
// global cell index only (the same at any rank count), so every mode of the grid is present, as
// in a projection method's right-hand side (the divergence of an intermediate velocity).
void fill_rhs(const Decomposition& decomp, Field<double>& b, bool broadband) {
  const auto& g = decomp.grid();
  auto h = Kokkos::create_mirror_view(b.view());
  const auto o = decomp.offset(), e = decomp.extent();
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i) {
        const double x = (double(o[0] + i) + 0.5) * g.spacing[0], y = (double(o[1] + j) + 0.5) * g.spacing[1],
                     z = (double(o[2] + k) + 0.5) * g.spacing[2];
        double v = 3 * pi * pi * std::sin(pi * x) * std::sin(pi * y) * std::sin(pi * z) +
                   std::sin(17.0 * x + 3.0 * y * z);  // not only the smoothest mode
        if (broadband) {
          // splitmix64 of the global index
          std::uint64_t u = std::uint64_t((o[2] + k) * g.n[1] + (o[1] + j)) * std::uint64_t(g.n[0]) +
                            std::uint64_t(o[0] + i) + 0x9E3779B97F4A7C15ULL;
          u = (u ^ (u >> 30)) * 0xBF58476D1CE4E5B9ULL;
          u = (u ^ (u >> 27)) * 0x94D049BB133111EBULL;
          u ^= u >> 31;
          v += 3 * pi * pi * (double(u >> 11) * (2.0 / 9007199254740992.0) - 1.0);
        }
        h(k + 1, j + 1, i + 1) = v;
      }
  Kokkos::deep_copy(b.view(), h);
}

struct Row {
  std::string name;
  double seconds = 0, median = 0, setup = 0, residual = 0;  // seconds: the best solve (wall)
  double cpu = 0, cpu_median = 0, cpu_max = 0;              // process CPU time of the solves
  int iterations = 0, steps = 0, fallbacks = 0;
};

#if defined(MANTISSA_BENCH_HYPRE)
// hypre Struct: the same scaled operator L = h^2 (-lap_h) with the Dirichlet mirror rows,
// right-hand side h^2 b, on this rank's box of the same decomposition.
Row run_hypre(const Decomposition& decomp, const Field<double>& b, bool with_pcg, int reps,
              double& true_res) {
  Row row;
  row.name = with_pcg ? "hypre PCG+PFMG" : "hypre PFMG";
  const auto o = decomp.offset(), e = decomp.extent();
  const auto n = decomp.grid().n;
  const double h2 = decomp.grid().spacing[0] * decomp.grid().spacing[0];
  HYPRE_Int ilower[3] = {HYPRE_Int(o[0]), HYPRE_Int(o[1]), HYPRE_Int(o[2])};
  HYPRE_Int iupper[3] = {HYPRE_Int(o[0] + e[0] - 1), HYPRE_Int(o[1] + e[1] - 1), HYPRE_Int(o[2] + e[2] - 1)};
  HYPRE_StructGrid grid;
  HYPRE_StructGridCreate(MPI_COMM_WORLD, 3, &grid);
  HYPRE_StructGridSetExtents(grid, ilower, iupper);
  HYPRE_StructGridAssemble(grid);
  HYPRE_StructStencil stencil;
  HYPRE_StructStencilCreate(3, 7, &stencil);
  HYPRE_Int offs[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  for (int s = 0; s < 7; ++s) HYPRE_StructStencilSetElement(stencil, s, offs[s]);
  HYPRE_StructMatrix A;
  HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid, stencil, &A);
  HYPRE_StructMatrixSetSymmetric(A, 0);
  HYPRE_StructMatrixInitialize(A);
  const std::size_t cells = std::size_t(e[0] * e[1] * e[2]);
  std::vector<double> vals(cells * 7);
  std::size_t q = 0;
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i, ++q) {
        const std::int64_t g[3] = {o[0] + i, o[1] + j, o[2] + k};
        double diag = 6.0;
        for (int a = 0; a < 3; ++a)
          for (int side = 0; side < 2; ++side) {
            const bool out = side == 0 ? g[a] == 0 : g[a] == n[std::size_t(a)] - 1;
            double& v = vals[q * 7 + std::size_t(1 + 2 * a + side)];
            v = out ? 0.0 : -1.0;
            if (out) diag += 1.0;  // ghost = -interior (Dirichlet on the face)
          }
        vals[q * 7] = diag;
      }
  HYPRE_Int entries[7] = {0, 1, 2, 3, 4, 5, 6};
  HYPRE_StructMatrixSetBoxValues(A, ilower, iupper, 7, entries, vals.data());
  HYPRE_StructMatrixAssemble(A);
  HYPRE_StructVector hb, hx;
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &hb);
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &hx);
  HYPRE_StructVectorInitialize(hb);
  HYPRE_StructVectorInitialize(hx);
  auto bh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.view());
  std::vector<double> rhs(cells), zero(cells, 0.0), sol(cells);
  q = 0;
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i) rhs[q++] = h2 * bh(k + 1, j + 1, i + 1);
  HYPRE_StructVectorSetBoxValues(hb, ilower, iupper, rhs.data());
  HYPRE_StructVectorAssemble(hb);
  std::vector<double> times, cpu_times;
  for (int rep = 0; rep <= reps; ++rep) {
    HYPRE_StructVectorSetBoxValues(hx, ilower, iupper, zero.data());
    HYPRE_StructVectorAssemble(hx);
    HYPRE_StructSolver solver, pfmg;
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = Clock::now();
    HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &pfmg);
    HYPRE_StructPFMGSetRAPType(pfmg, 0);    // Galerkin coarse operators
    HYPRE_StructPFMGSetRelaxType(pfmg, 2);  // symmetric red-black Gauss-Seidel
    HYPRE_StructPFMGSetNumPreRelax(pfmg, 1);
    HYPRE_StructPFMGSetNumPostRelax(pfmg, 1);
    HYPRE_StructPFMGSetSkipRelax(pfmg, 0);
    if (with_pcg) {
      HYPRE_StructPFMGSetMaxIter(pfmg, 1);
      HYPRE_StructPFMGSetTol(pfmg, 0.0);
      HYPRE_StructPFMGSetZeroGuess(pfmg);
      HYPRE_StructPCGCreate(MPI_COMM_WORLD, &solver);
      HYPRE_StructPCGSetTol(solver, 1e-10);
      HYPRE_StructPCGSetTwoNorm(solver, 1);
      HYPRE_StructPCGSetMaxIter(solver, 200);
      HYPRE_StructPCGSetPrecond(solver, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pfmg);
      HYPRE_StructPCGSetup(solver, A, hb, hx);
    } else {
      HYPRE_StructPFMGSetMaxIter(pfmg, 200);
      HYPRE_StructPFMGSetLogging(pfmg, 1);  // else its final residual reads 0
      HYPRE_StructPFMGSetTol(pfmg, 1e-10);
      HYPRE_StructPFMGSetup(pfmg, A, hb, hx);
    }
    double setup = seconds_since(t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = Clock::now();
    const double c0 = cpu_seconds();
    HYPRE_Int its = 0;
    HYPRE_Real res = 0;
    if (with_pcg) {
      HYPRE_StructPCGSolve(solver, A, hb, hx);
      HYPRE_StructPCGGetNumIterations(solver, &its);
      HYPRE_StructPCGGetFinalRelativeResidualNorm(solver, &res);
    } else {
      HYPRE_StructPFMGSolve(pfmg, A, hb, hx);
      HYPRE_StructPFMGGetNumIterations(pfmg, &its);
      HYPRE_StructPFMGGetFinalRelativeResidualNorm(pfmg, &res);
    }
    double tc[2] = {seconds_since(t0), cpu_seconds() - c0};
    MPI_Allreduce(MPI_IN_PLACE, tc, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rep > 0) {
      times.push_back(tc[0]);
      cpu_times.push_back(tc[1]);
    }
    row.setup = setup;
    row.iterations = int(its);
    row.residual = double(res);
    if (with_pcg) HYPRE_StructPCGDestroy(solver);
    HYPRE_StructPFMGDestroy(pfmg);
  }
  row.seconds = *std::min_element(times.begin(), times.end());
  row.median = median(times);
  row.cpu = *std::min_element(cpu_times.begin(), cpu_times.end());
  row.cpu_max = *std::max_element(cpu_times.begin(), cpu_times.end());
  row.cpu_median = median(cpu_times);
  // true relative residual of hypre's answer with a plain loop (halo by a gather of planes is
  // not needed: recompute from the assembled matrix row by row through hypre's own matvec)
  HYPRE_StructVectorGetBoxValues(hx, ilower, iupper, sol.data());
  {
    HYPRE_StructVector hr;
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &hr);
    HYPRE_StructVectorInitialize(hr);
    HYPRE_StructVectorSetBoxValues(hr, ilower, iupper, rhs.data());
    HYPRE_StructVectorAssemble(hr);
    HYPRE_StructMatrixMatvec(-1.0, A, hx, 1.0, hr);
    std::vector<double> r(cells);
    HYPRE_StructVectorGetBoxValues(hr, ilower, iupper, r.data());
    double s[2] = {0, 0};
    for (std::size_t c = 0; c < cells; ++c) {
      s[0] += r[c] * r[c];
      s[1] += rhs[c] * rhs[c];
    }
    MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    true_res = std::sqrt(s[0] / s[1]);
    HYPRE_StructVectorDestroy(hr);
  }
  HYPRE_StructVectorDestroy(hb);
  HYPRE_StructVectorDestroy(hx);
  HYPRE_StructMatrixDestroy(A);
  HYPRE_StructStencilDestroy(stencil);
  HYPRE_StructGridDestroy(grid);
  return row;
}
#endif

int bench_main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::int64_t n = 128;
  int reps = 3;
  bool hypre = true, kernels = true, breakdown = true, pfmg_alone = true, history = false, broadband = false,
       kernels_only = false;
  std::vector<std::string> variants{"fp64", "fp32", "progressive_bf16", "progressive_fp16",
                                    "bf16", "fp16", "fp32/refinement",  "progressive_bf16/refinement"};
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--n") && a + 1 < argc)
      n = std::atoll(argv[++a]);
    else if (!std::strcmp(argv[a], "--reps") && a + 1 < argc)
      reps = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--no-hypre"))
      hypre = false;
    else if (!std::strcmp(argv[a], "--no-pfmg-alone"))
      pfmg_alone = false;
    else if (!std::strcmp(argv[a], "--no-kernels"))
      kernels = false;
    else if (!std::strcmp(argv[a], "--kernels-only"))
      kernels_only = true;
    else if (!std::strcmp(argv[a], "--no-breakdown"))
      breakdown = false;
    else if (!std::strcmp(argv[a], "--history"))
      history = true;
    else if (!std::strcmp(argv[a], "--rhs") && a + 1 < argc) {
      const std::string r = argv[++a];
      if (r != "smooth" && r != "broadband") {
        std::fprintf(stderr, "mantissa_bench_solvers: --rhs %s: use smooth or broadband\n", r.c_str());
        MPI_Finalize();
        return 2;
      }
      broadband = r == "broadband";
    } else if (!std::strcmp(argv[a], "--only") && a + 1 < argc) {
      variants.clear();
      std::string list = argv[++a];
      for (std::size_t p = 0; p <= list.size();) {
        const std::size_t q = std::min(list.find(';', p), list.size());
        variants.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    }
  }
  if (reps < 1 || n < 4) {
    // best and median need one timed solve at least (0 would index an empty list)
    std::fprintf(stderr, "mantissa_bench_solvers: --reps %d --n %lld: use --reps >= 1 and --n >= 4\n", reps,
                 static_cast<long long>(n));
    MPI_Finalize();
    return 2;
  }
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
#if defined(MANTISSA_BENCH_HYPRE)
    HYPRE_Init();
#endif
    Grid g;
    g.dim = 3;
    g.n = {n, n, n};
    g.spacing = {1.0 / double(n), 1.0 / double(n), 1.0 / double(n)};
    Decomposition decomp(MPI_COMM_WORLD, g);
    if (g_rank == 0)
      std::printf(
          "Poisson 7-point 3D, %lld^3 cells, Dirichlet faces, %s right-hand side, relative residual 1e-10; "
          "%d ranks x %d threads, best and median of %d solves after a warm-up\n",
          (long long)n, broadband ? "broadband" : "smooth", size,
          Kokkos::DefaultExecutionSpace().concurrency(), reps);
    const double triad = stream_triad_gbs();
    if (g_rank == 0) std::printf("STREAM triad (same run): %.2f GB/s\nkernels on the finest level:\n", triad);
    if (kernels) {
      kernel_bandwidth<double>(decomp, triad);
      kernel_bandwidth<float>(decomp, triad);
      kernel_bandwidth<bf16>(decomp, triad);
      kernel_bandwidth<fp16>(decomp, triad);
    }
    if (!kernels_only) {
      Field<double> b("mantissa::bench::b", decomp, 1), x("mantissa::bench::x", decomp, 1);
      fill_rhs(decomp, b, broadband);
      std::vector<Row> rows;
      // Every variant's solver first, then the repetitions round-robin over the variants, so a
      // change of the shared machine's load falls on all of them alike; the ratios use the best
      // solve of each (the one the other jobs on the machine disturbed least).
      std::vector<std::unique_ptr<PoissonSolver<>>> solvers;
      std::vector<SolverOptions> options;
      std::vector<std::vector<double>> times(variants.size()), cpu_times(variants.size());
      for (const std::string& prec : variants) {
        SolverOptions opt;
        // "fp32/refinement": the same inner precision through iterative refinement; "fp32@2":
        // V(2,2) (pre and post sweeps), for comparing cycles within one run
        // The suffixes may come in any order ("fp16@2+k32" and "fp16+k32@2" are one variant):
        // "+k32" and "^f" are taken out of the whole name first, then "@n" and "/outer".
        std::string spec = prec;
        // "fp32+k32": the CG's search direction stored in fp32 (SolverOptions::krylov_storage)
        if (const std::size_t plus = spec.find("+k32"); plus != std::string::npos) {
          opt.krylov_storage = Precision::fp32;
          spec.erase(plus, 4);
        }
        // "fp16^f": F-cycles (MultigridOptions::cycle)
        if (const std::size_t caret = spec.find("^f"); caret != std::string::npos) {
          opt.multigrid.cycle = Cycle::f;
          spec.erase(caret, 2);
        }
        if (const std::size_t slash = spec.find('/'); slash != std::string::npos) {
          const std::size_t end = spec.find('@', slash);
          opt.outer = parse_outer(spec.substr(slash + 1, end == std::string::npos ? end : end - slash - 1));
          spec.erase(slash, end == std::string::npos ? end : end - slash);
        }
        const std::size_t at = spec.find('@');
        const std::string base = spec.substr(0, at);
        if (at != std::string::npos) {
          const int sweeps = std::atoi(spec.c_str() + at + 1);
          if (sweeps < 1) {
            if (g_rank == 0)
              std::fprintf(stderr, "bench: '%s': the sweeps after @ must be >= 1\n", prec.c_str());
            MPI_Abort(MPI_COMM_WORLD, 2);
          }
          opt.multigrid.pre_sweeps = opt.multigrid.post_sweeps = sweeps;
        }
        opt.multigrid.precisions = parse_level_precisions(base);
        Row row;
        row.name = std::string("mantissa ") + prec;
        auto t0 = Clock::now();
        solvers.push_back(
            std::make_unique<PoissonSolver<>>(decomp, Boundary::all(BoundaryKind::dirichlet), opt));
        row.setup = seconds_since(t0);
        options.push_back(opt);
        rows.push_back(row);
      }
      for (int rep = 0; rep <= reps; ++rep)
        for (std::size_t v = 0; v < variants.size(); ++v) {
          Row& row = rows[v];
          Kokkos::deep_copy(x.view(), 0.0);
          solvers[v]->set_precisions(options[v].multigrid.precisions);  // undo a fallback of an earlier rep
          MPI_Barrier(MPI_COMM_WORLD);
          const double c0 = cpu_seconds();
          const auto st = solvers[v]->solve(b, x);
          double tc[2] = {st.seconds, cpu_seconds() - c0};
          MPI_Allreduce(MPI_IN_PLACE, tc, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          const double t = tc[0];
          if (rep > 0) {
            times[v].push_back(t);
            cpu_times[v].push_back(tc[1]);
          }
          row.iterations = st.iterations;
          row.steps = st.refinement_steps;
          row.residual = st.relative_residual;
          row.fallbacks = int(st.fallbacks.size());
          if (g_rank == 0) {
            std::printf("  rep %d %-36s %8.3f s  cpu %8.3f s  %3d it  residual %.2e%s\n", rep,
                        row.name.c_str(), t, tc[1], row.iterations, row.residual,
                        rep == 0 ? " (warm-up)" : "");
            if (history && rep == 0) {
              std::printf("    relative residual after each iteration:");
              for (const double h : st.history) std::printf(" %.2e", h);
              std::printf("\n");
            }
            std::fflush(stdout);
          }
        }
      for (std::size_t v = 0; v < variants.size(); ++v) {
        rows[v].seconds = *std::min_element(times[v].begin(), times[v].end());
        rows[v].median = median(times[v]);
        rows[v].cpu = *std::min_element(cpu_times[v].begin(), cpu_times[v].end());
        rows[v].cpu_max = *std::max_element(cpu_times[v].begin(), cpu_times[v].end());
        rows[v].cpu_median = median(cpu_times[v]);
      }
      if (breakdown) {
        // one preconditioner application per variant, best of 3 rounds of `iterations`
        // applications each, round-robin over the variants like the solves
        Field<double> z("mantissa::bench::z", decomp, 1);
        std::vector<double> apply_s(variants.size(), 1e30);
        for (int round = 0; round < 3; ++round)
          for (std::size_t v = 0; v < variants.size(); ++v) {
            auto& mg = solvers[v]->multigrid();
            mg.set_precisions(options[v].multigrid.precisions);
            const int k = std::max(1, rows[v].iterations);
            MPI_Barrier(MPI_COMM_WORLD);
            const double c0 = cpu_seconds();
            for (int q = 0; q < k; ++q) mg.apply(b, z, 1.0);
            Kokkos::fence();
            double t = (cpu_seconds() - c0) / double(k);
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            apply_s[v] = std::min(apply_s[v], t);
          }
        if (g_rank == 0) {
          std::printf(
              "\nbreakdown per iteration, process CPU time (best solve / iterations = one multigrid "
              "application + "
              "the rest):\n"
              "| solver | per iteration s | multigrid application s | of fp64's | rest (fp64 CG) s | of "
              "fp64's "
              "| "
              "application share |\n| --- | --- | --- | --- | --- | --- | --- |\n");
          const double it0 = rows[0].cpu / double(std::max(1, rows[0].iterations));
          const double rest0 = it0 - apply_s[0];
          for (std::size_t v = 0; v < variants.size(); ++v) {
            const double it = rows[v].cpu / double(std::max(1, rows[v].iterations));
            const double rest = it - apply_s[v];
            std::printf("| %s | %.4f | %.4f | %.3f | %.4f | %.3f | %.0f %% |\n", rows[v].name.c_str(), it,
                        apply_s[v], apply_s[v] / apply_s[0], rest, rest / rest0, 100.0 * apply_s[v] / it);
          }
          std::fflush(stdout);
        }
      }
      std::vector<std::pair<Row, double>> peers;
#if defined(MANTISSA_BENCH_HYPRE)
      if (hypre)
        for (bool pcg : {true, false}) {
          if (!pcg && !pfmg_alone) continue;
          double tr = 0;
          Row r = run_hypre(decomp, b, pcg, reps, tr);
          peers.push_back({r, tr});
          if (g_rank == 0) {
            std::printf("  %-26s %8.3f s  cpu %8.3f s  %3d it  residual %.2e (hypre's own %.2e)\n",
                        r.name.c_str(), r.seconds, r.cpu, r.iterations, tr, r.residual);
            std::fflush(stdout);
          }
        }
#else
      (void)hypre;
      (void)pfmg_alone;
#endif
      if (g_rank == 0) {
        const Row& ref = rows.front();
        std::printf(
            "\n| solver | best solve s | median s | setup s | iterations | penalty | refinement steps | "
            "fallbacks | final rel. residual | best / mantissa fp64 | CPU s best [median, max] | CPU best / "
            "fp64 [median / median] |\n");
        std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (const auto& r : rows)
          std::printf(
              "| %s | %.3f | %.3f | %.3f | %d | %.2fx | %d | %d | %.2e | %.3f | %.3f [%.3f, %.3f] | %.3f "
              "[%.3f] |\n",
              r.name.c_str(), r.seconds, r.median, r.setup, r.iterations,
              double(r.iterations) / double(ref.iterations), r.steps, r.fallbacks, r.residual,
              r.seconds / ref.seconds, r.cpu, r.cpu_median, r.cpu_max, r.cpu / ref.cpu,
              r.cpu_median / ref.cpu_median);
        for (const auto& [r, tr] : peers)
          std::printf(
              "| %s | %.3f | %.3f | %.3f | %d | - | - | - | %.2e | %.3f | %.3f [%.3f, %.3f] | %.3f [%.3f] "
              "|\n",
              r.name.c_str(), r.seconds, r.median, r.setup, r.iterations, tr, r.seconds / ref.seconds, r.cpu,
              r.cpu_median, r.cpu_max, r.cpu / ref.cpu, r.cpu_median / ref.cpu_median);
        // Ratios within a round: each round solved every variant once, in turn, so a ratio of two
        // solves of one round cancels the shared machine's slower drifts, which best-of-N and
        // medians of each variant do not. Against the round's fastest all-fp64 variant (the
        // fastest fp64 cycle, as the goals compare), wall clock.
        std::vector<std::size_t> fp64_variants;
        for (std::size_t v = 0; v < variants.size(); ++v) {
          bool all64 = true;
          for (const Precision q : options[v].multigrid.precisions) all64 = all64 && q == Precision::fp64;
          if (all64) fp64_variants.push_back(v);
        }
        if (!fp64_variants.empty() && reps >= 1) {
          std::printf(
              "\n| solver | solve time / the same round's fastest fp64 solve: median [min, max] over %d "
              "rounds "
              "|\n| --- | --- |\n",
              reps);
          for (std::size_t v = 0; v < variants.size(); ++v) {
            std::vector<double> ratio;
            for (std::size_t r = 0; r < times[v].size(); ++r) {
              double best64 = 1e300;
              for (const std::size_t f : fp64_variants) best64 = std::min(best64, times[f][r]);
              ratio.push_back(times[v][r] / best64);
            }
            std::printf("| %s | %.3f [%.3f, %.3f] |\n", rows[v].name.c_str(), median(ratio),
                        *std::min_element(ratio.begin(), ratio.end()),
                        *std::max_element(ratio.begin(), ratio.end()));
          }
        }
      }
    }  // !kernels_only
#if defined(MANTISSA_BENCH_HYPRE)
    HYPRE_Finalize();
#endif
  }
  MPI_Finalize();
  return 0;
}

}  // namespace poisson
}  // namespace

int main(int argc, char** argv) {
  return poisson::bench_main(argc, argv);
}
