// The default memory space's multigrid and Poisson solver are compiled once, here.
#include <mantissa/solvers/Multigrid.hpp>
#include <mantissa/solvers/PoissonSolver.hpp>

namespace mantissa::solvers {
template class Multigrid<Kokkos::DefaultExecutionSpace::memory_space>;
template class PoissonSolver<Cell, Kokkos::DefaultExecutionSpace::memory_space>;
}  // namespace mantissa::solvers
