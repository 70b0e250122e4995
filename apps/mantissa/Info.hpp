#pragma once
// `mantissa info`: what this build and this machine offer.
#include <ostream>

namespace mantissa::app {

// Collective over MPI_COMM_WORLD (rank count); prints on rank 0 only. verbose adds Kokkos'
// own configuration report.
void print_info(std::ostream& os, bool verbose);

// Before Kokkos starts: when the user set neither OMP_PROC_BIND nor OMP_PLACES, set
// OMP_PROC_BIND=false, which is what the OpenMP runtimes (libgomp, libomp) do anyway in that
// case (no pinning), so nothing changes but Kokkos' start-up warning about the unset variable,
// printed on every rank, which the user could not act on from inside a run. Not `spread`: with
// a launcher that does not bind ranks (Slurm task/none, mpirun --bind-to none) every rank's
// threads would be pinned to the same first cores. `mantissa info` says what is in effect.
// Returns whether it set the variable.
bool apply_default_openmp_binding();

}  // namespace mantissa::app
