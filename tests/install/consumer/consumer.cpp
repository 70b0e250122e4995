// Uses the installed headers and libraries: decompose a grid and exchange a halo on 1 rank,
// find the installed decks, link the surrogates library.
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/HaloExchange.hpp>

#if __has_include(<surrogates/Gemm.hpp>)
#include <surrogates/Gemm.hpp>
#define CONSUMER_HAS_SURROGATES 1
#endif

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    mantissa::Grid grid;
    grid.dim = 2;
    grid.n = {16, 8, 1};
    grid.periodic = {true, true, false};
    mantissa::Decomposition decomp(MPI_COMM_WORLD, grid);
    mantissa::Field<double> f("consumer::f", decomp, 1);
    Kokkos::deep_copy(f.view(), 1.0);
    mantissa::HaloExchange<double> halo(decomp, 1, 1);
    halo.exchange({&f});
    rc = (mantissa::to_string(mantissa::Precision::bf16) == "bf16" && decomp.num_owned() == 128) ? 0 : 1;
    // The package says where the installed decks are.
    if (!std::ifstream(std::string(MANTISSA_DATA_DIR) + "/inputs/quickstart.yaml")) {
      std::printf("consumer: no quickstart deck under Mantissa_DATA_DIR=%s\n", MANTISSA_DATA_DIR);
      rc = 1;
    }
#if defined(CONSUMER_HAS_SURROGATES)
    // Links the surrogates library and what it needs (oneDNN, Kokkos Kernels) from the package.
    if (mantissa::surrogates::gemm_backends().empty()) rc = 1;
#endif
    std::printf("consumer: %s\n", rc == 0 ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return rc;
}
