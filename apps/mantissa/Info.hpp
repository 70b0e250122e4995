#pragma once
// `mantissa info`: what this build and this machine offer.
#include <ostream>

namespace mantissa::app {

// Collective over MPI_COMM_WORLD (rank count); prints on rank 0 only. verbose adds Kokkos'
// own configuration report.
void print_info(std::ostream& os, bool verbose);

}  // namespace mantissa::app
