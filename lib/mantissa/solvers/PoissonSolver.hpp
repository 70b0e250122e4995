#pragma once
// Solves -lap_h x = b for a cell-centred field (7-point in 3D, 5-point in 2D) to an fp64
// relative residual ||b - A x|| / ||b|| <= tolerance, with the geometric multigrid as
// preconditioner in the storage precision of each level (Cabana's structured solvers take
// the same shape: scalar, entity/location, mesh, memory space; ReferenceStructuredSolver.hpp).
//
//  - preconditioned CG in fp64 (the flexible Polak-Ribiere beta where a level is bf16, whose
//    rounding makes the multigrid measurably nonlinear; the standard beta otherwise, which
//    needs no (z, Ap)) around the multigrid in whatever storage its levels have: the
//    default for every precision (SolverOptions::outer = cg). The residual is scaled to max 1
//    on its way into the multigrid, so 16-bit levels see values near 1. A mixed run is
//    watched: a window of stall_window iterations that cuts the residual by less than
//    stall_factor, or a broken preconditioner ((z, r) not finite or not positive), raises the
//    inner precision (16-bit levels to fp32, then all fp64), logs a warning, records it in
//    SolveStats::fallbacks and restarts CG from the current x;
//  - outer = refinement (mixed only): iterative refinement. The residual is taken in fp64, scaled to max 1,
//  solved
//    to inner_tolerance by CG in fp32 with the mixed-precision multigrid, and the correction
//    added in fp64, until the fp64 residual meets the tolerance (the HPG-MxP rule: a mixed
//    run counts only at the fp64 run's residual). A step that reduces the fp64 residual by
//    less than stall_factor raises the inner precision (16-bit levels to fp32, then all fp64),
//    logs a warning and records the change in SolveStats::fallbacks.
//
// Boundaries sit on the faces of the outer cells: Dirichlet (x = 0 on the face), Neumann
// (zero normal derivative) or periodic. A non-zero boundary value is the caller's: move it
// into b (Dirichlet g on a face: b_cell += 2 g / h^2). Without a Dirichlet face the constant
// is in the nullspace: b is projected to zero mean and the returned x has zero mean.
#include <mantissa/mesh/Location.hpp>
#include <mantissa/solvers/Multigrid.hpp>
#include <mantissa/solvers/detail/KrylovKernels.hpp>

#include <memory>
#include <type_traits>

namespace mantissa::solvers {

template <class Location = Cell, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class PoissonSolver {
  static_assert(std::is_same<Location, Cell>::value,
                "PoissonSolver: only cell-centred (Cell) fields are implemented");

 public:
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  using location = Location;

  PoissonSolver(const Decomposition& decomp, const Boundary& bc, const SolverOptions& options);

  // x holds the initial guess on entry and the solution on return; b and x are fields of
  // the decomposition given at construction with at least one ghost layer (x's ghosts are
  // left as the solver used them).
  SolveStats solve(const Field<double, MemorySpace>& b, Field<double, MemorySpace>& x);

  Multigrid<MemorySpace>& multigrid() { return *m_mg; }
  const SolverOptions& options() const { return m_options; }
  // Changes the inner precision for later solves (the fallback does the same) and restores the
  // Krylov storage to SolverOptions::krylov_storage (undoing a fallback).
  void set_precisions(const std::vector<Precision>& p);

  template <class K>
  struct Work {
    Field<K, MemorySpace> b, x, r, p, ap, z;
    std::shared_ptr<HaloExchange<K, MemorySpace>> halo;
  };

  // Public for nvcc; not an interface.
  template <class K>
  void fill(Work<K>& w, Field<K, MemorySpace>& f);
  template <class K>
  // stall_window > 0: return early when that many iterations reduce the residual by less than
  // the stall factor (the reason in *stall), or when the preconditioner breaks down.
  // residual (not zero_initial): w.r already holds b - L x for the current x, x's ghosts
  // filled, with these norms (as true_residual returns them), so the first pass is skipped.
  int pcg(Work<K>& w, double target, int max_iterations, bool zero_initial, bool& healthy,
          double history_scale, SolveStats& stats, int stall_window, std::string* stall,
          const detail::NormMax* residual = nullptr);
  detail::NormMax true_residual();

 private:
  const Decomposition* m_decomp;
  Boundary m_bc;
  SolverOptions m_options;
  std::unique_ptr<Multigrid<MemorySpace>> m_mg;
  Work<double> m_w64;
  Work<float> m_w32;
  detail::Placement m_place;  // ghost 1
  int m_dim = 3;

  template <class K>
  void allocate(Work<K>& w);
  bool all_fp64() const;
  // p in fp32 (m_w32.p) this solve: asked for, not fallen back, multigrid not all fp64
  bool krylov_compressed() const { return m_krylov32 && !all_fp64(); }
  bool m_krylov32 = false;
  bool raise_precision(const std::string& reason, int iteration, SolveStats& stats);
};

extern template class PoissonSolver<Cell, Kokkos::DefaultExecutionSpace::memory_space>;

}  // namespace mantissa::solvers

#include <mantissa/solvers/PoissonSolver_impl.hpp>
