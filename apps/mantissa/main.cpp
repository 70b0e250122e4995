// mantissa: the one executable, a thin CLI over the libraries (ExaMPM examples/dam_break.cpp).
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Version.hpp>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <iostream>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    CLI::App app{"mantissa: FP64 physics, lower precisions and transformer surrogates, side by side"};
    app.require_subcommand(1);
    auto* info = app.add_subcommand("info", "Print version, back-ends, MPI, HDF5 and precision support");
    try {
      app.parse(argc, argv);
      if (*info && rank == 0) {
        std::cout << "mantissa " << MANTISSA_VERSION_STRING << " (" << MANTISSA_GIT_HASH << ")\n"
                  << "Kokkos " << mantissa::kokkos_version_string() << "\n";
      }
    } catch (const CLI::ParseError& e) {
      rc = app.exit(e);
    } catch (const mantissa::Error& e) {
      if (rank == 0) std::cerr << "mantissa: error: " << e.what() << "\n";
      rc = 1;
    }
  }
  MPI_Finalize();
  return rc;
}
