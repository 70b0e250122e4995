// Uses the installed headers and libraries: decompose a grid and exchange a halo on 1 rank.
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/HaloExchange.hpp>

#include <cstdio>

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
    std::printf("consumer: %s\n", rc == 0 ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return rc;
}
