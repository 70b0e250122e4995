// Halo exchange bandwidth at the run's rank count (meant for 2 ranks), for a small halo (64^3
// points per rank, width 1) and a large one (256 x 256 x 128 per rank, width 4), both periodic
// along x so each rank exchanges two faces. Printed beside two peers measured in the same run:
// std::memcpy of the same number of bytes (the memory-bandwidth ceiling of pack + unpack on one
// node), and MPI_Sendrecv of the same bytes from contiguous buffers (the transport alone).
// Bandwidth = bytes sent by one rank per exchange / time per exchange.
#include <mantissa/mesh/HaloExchange.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of fn, median over `reps` timings of `inner` calls each; the max over ranks.
template <class F>
double time_it(F&& fn, int reps, int inner) {
  fn();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = clock_type::now();
    for (int i = 0; i < inner; ++i) fn();
    t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count() / inner);
  }
  double local = median(t), global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

void run_case(const char* name, std::array<std::int64_t, 3> local, int width, int inner) {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mantissa::Grid grid;
  grid.dim = 3;
  grid.n = {local[0] * size, local[1], local[2]};
  grid.periodic = {true, false, false};
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid, {size, 1, 1});
  mantissa::Field<double> f("mantissa::bench::halo::f", decomp, width);
  Kokkos::deep_copy(f.view(), 1.0);
  mantissa::HaloExchange<double> halo(decomp, width, 1, mantissa::HaloPattern::faces);
  const std::size_t bytes = halo.bytes_per_exchange();
  const double t_halo = time_it([&] { halo.exchange({&f}); }, 7, inner);

  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const double t_memcpy = time_it([&] { std::memcpy(dst.data(), src.data(), bytes); }, 7, inner);

  const int peer = decomp.neighbor(1, 0, 0);
  const int chunk = int(bytes / 2);  // two faces, as two messages like the exchange
  const double t_mpi = time_it(
      [&] {
        MPI_Sendrecv(src.data(), chunk, MPI_BYTE, peer, 1, dst.data(), chunk, MPI_BYTE,
                     decomp.neighbor(-1, 0, 0), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(src.data() + chunk, chunk, MPI_BYTE, decomp.neighbor(-1, 0, 0), 2, dst.data() + chunk,
                     chunk, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      },
      7, inner);
  if (rank == 0) {
    const double gb = double(bytes) / 1e9;
    std::printf("%-6s local %lldx%lldx%lld width %d, %zu bytes/rank/exchange, %d ranks\n", name,
                static_cast<long long>(local[0]), static_cast<long long>(local[1]),
                static_cast<long long>(local[2]), width, bytes, size);
    std::printf("  halo exchange     %9.1f us  %7.2f GB/s\n", t_halo * 1e6, gb / t_halo);
    std::printf("  peer memcpy       %9.1f us  %7.2f GB/s  (halo at %.0f%% of memcpy)\n", t_memcpy * 1e6,
                gb / t_memcpy, 100.0 * t_memcpy / t_halo);
    std::printf("  peer MPI_Sendrecv %9.1f us  %7.2f GB/s  (halo at %.0f%% of raw MPI)\n", t_mpi * 1e6,
                gb / t_mpi, 100.0 * t_mpi / t_halo);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::printf("mantissa halo exchange bandwidth (Kokkos %s, %s, %d threads/rank)\n",
                  mantissa::kokkos_version_string().c_str(), Kokkos::DefaultExecutionSpace::name(),
                  mantissa::concurrency<Kokkos::DefaultExecutionSpace>());
    run_case("small", {64, 64, 64}, 1, 200);
    run_case("large", {256, 256, 128}, 4, 10);
  }
  MPI_Finalize();
  return 0;
}
