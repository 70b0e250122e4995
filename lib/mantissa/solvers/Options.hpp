#pragma once
// What the Poisson solver is told: boundaries, cycle, smoother, per-level precision, Krylov
// and refinement tolerances. Parsers name the offending value and the choices.
#include <mantissa/core/Precision.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mantissa::solvers {

// Boundary of the cell-centred grid, on the face between the last cell and the outside.
enum class BoundaryKind { dirichlet, neumann, periodic };

struct Boundary {
  // x-, x+, y-, y+, z-, z+ (z ignored in 2D). Periodic must be set on both faces of an axis
  // and agree with the grid's periodic flag.
  std::array<BoundaryKind, 6> face{BoundaryKind::dirichlet, BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                   BoundaryKind::dirichlet, BoundaryKind::dirichlet, BoundaryKind::dirichlet};
  static Boundary all(BoundaryKind k) {
    Boundary b;
    b.face.fill(k);
    return b;
  }
  // No Dirichlet face: the constant is in the nullspace.
  bool singular(int dim) const {
    for (int f = 0; f < 2 * dim; ++f)
      if (face[std::size_t(f)] == BoundaryKind::dirichlet) return false;
    return true;
  }
};

enum class Cycle { v, f };
// How a mixed-precision multigrid reaches the fp64 tolerance: the fp64 CG preconditioned by
// the mixed multigrid (cg), or iterative refinement around an fp32 CG (refinement).
enum class Outer { cg, refinement };
enum class Smoother { jacobi, chebyshev, rbgs };

struct MultigridOptions {
  Cycle cycle = Cycle::v;
  Smoother smoother = Smoother::rbgs;
  int pre_sweeps = 1;   // Chebyshev: the polynomial degree
  int post_sweeps = 1;  // as many as pre_sweeps keeps the cycle symmetric (CG needs that)
  // Red-black Gauss-Seidel: post-smoothing in the reverse colour order (black, red), so the
  // cycle is a symmetric operator as CG needs. As a stationary iteration this repeats a
  // colour between cycles (measured V(1,1) contraction 0.34 / 0.42 in 2D / 3D against 0.19 /
  // 0.26 for red-black both times); false is for the stationary use.
  bool symmetric = true;
  double jacobi_weight = 0.0;  // 0: 6/7 in 3D, 4/5 in 2D (the optimal smoothing weights)
  // Storage precision per level, finest first; the last entry repeats for coarser levels.
  // fp64 computes in fp64, the others in fp32. {fp32, bf16}: "progressive" (16-bit on coarse
  // levels only).
  std::vector<Precision> precisions{Precision::fp64};
  // A distributed level with at most this many cells is gathered onto every rank and the
  // levels below it are solved redundantly (no communication, same answer everywhere).
  std::int64_t agglomerate_cells = 4096;
  // The coarsest level is solved by a dense Cholesky factorisation when it has at most this
  // many cells, by coarse_sweeps symmetric Gauss-Seidel sweeps otherwise.
  std::int64_t direct_cells = 1000;
  int coarse_sweeps = 50;
};

struct SolverOptions {
  double tolerance = 1e-10;  // relative residual ||b - A x|| / ||b|| in fp64
  int max_iterations = 200;  // preconditioner applications, all steps together
  MultigridOptions multigrid;
  // Mixed precision (any level not fp64), Outer::cg (the default): CG in fp64 with the mixed
  // multigrid as its preconditioner, so the Krylov space is never restarted and every matrix
  // product is fp64 (an fp32 product of a smooth correction loses ~eps32 * condition, which
  // caps an fp32 inner solve near 1e-4 per step at 128^3; measured: 3 refinement steps and
  // 1.25x the fp64 iterations, docs/performance.md). Outer::refinement: iterative refinement
  // with the fp64 residual outside and an fp32 CG with the multigrid inside, solved to
  // inner_tolerance per step.
  Outer outer = Outer::cg;
  double inner_tolerance = 1e-5;
  // Storage of the fp64 CG's search direction p when the multigrid is mixed (an all-fp64
  // solve ignores it and stays fp64 throughout): fp64, or fp32 ("compressed" Krylov vectors as
  // in CB-GMRES: x and r stay fp64, every product, dot and update is computed in fp64 from the
  // fp32 p, which converts exactly, so the true residual still reaches the fp64 tolerance; A p
  // and z are never stored, A p is recomputed from p where it is read). Saves ~28 of the CG's
  // ~104 bytes per cell and iteration. 16-bit is refused (the directions lose conjugacy).
  // A stall of a compressed CG raises p to fp64 first (a logged, counted fallback).
  Precision krylov_storage = Precision::fp64;
  // A stall raises the inner precision one step (16-bit -> fp32 -> fp64), logged and counted:
  // refinement: a step that reduces the fp64 residual by less than stall_factor; cg: a window
  // of stall_window iterations that reduces it by less than stall_factor, or a preconditioned
  // residual that is not finite or not positive, (z, r) <= 0. CG restarts from the current x.
  double stall_factor = 0.5;
  int stall_window = 5;
  bool fallback = true;
};

// One precision change after a stall.
struct Fallback {
  int at_iteration = 0;
  std::string from, to, reason;
};

struct SolveStats {
  bool converged = false;
  int iterations = 0;              // multigrid cycles (preconditioner applications)
  int refinement_steps = 0;        // fp64 residuals taken by the refinement loop (0 for fp64)
  double relative_residual = 0.0;  // true fp64 residual at the end
  double initial_residual = 0.0;   // ||b - A x0|| / ||b||
  double seconds = 0.0;
  std::vector<Fallback> fallbacks;
  std::vector<double> history;  // relative residual after each iteration (recurrence)
  std::string precisions;       // the levels' storage at the end, "fp32,bf16,..."
  std::string krylov_storage;   // the CG's p at the end, "fp64" or "fp32"
};

Cycle parse_cycle(std::string_view text, std::string_view where = {});
Outer parse_outer(std::string_view text, std::string_view where = {});
Smoother parse_smoother(std::string_view text, std::string_view where = {});
BoundaryKind parse_boundary_kind(std::string_view text, std::string_view where = {});
// "fp64", "fp32", "bf16", "fp16" (every level), "progressive_bf16" / "progressive_fp16"
// (fp32 finest, 16-bit below), or a comma list "fp32,fp32,bf16" (finest first).
std::vector<Precision> parse_level_precisions(std::string_view text, std::string_view where = {});
std::string to_string(Cycle c);
std::string to_string(Outer o);
std::string to_string(Smoother s);
std::string to_string(BoundaryKind k);
std::string level_precisions_string(const std::vector<Precision>& p);

}  // namespace mantissa::solvers
