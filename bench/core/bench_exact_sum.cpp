// Prints the cost of an exact global sum (core/ExactSum.hpp) next to the plain double
// reduction it replaced, over the same field in the same run: sum of squares of a 3D field
// (what field_error and the energy sum), as a Kokkos parallel_reduce on the default execution
// space and as the serial host loop field_error runs. The plain reduction reads 8 bytes per
// point and is bandwidth bound: its rate is the bound the exact sum is measured against.
// Median of 11 repetitions after a warm-up, with min and max (STYLE #20).
//   bench_exact_sum [n]   (n^3 points, default 128)
#include <mantissa/core/ExactSum.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

namespace {

struct Stats {
  double median, min, max;
};
template <class F>
Stats time_it(const F& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < 11; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const int n = argc > 1 ? std::atoi(argv[1]) : 128;
    const double points = double(n) * n * n;
    Kokkos::View<double***> u("mantissa::bench::ExactSum::u", n, n, n);
    Kokkos::parallel_for(
        "mantissa::bench::ExactSum::fill", Kokkos::MDRangePolicy<Kokkos::Rank<3>>({0, 0, 0}, {n, n, n}),
        KOKKOS_LAMBDA(int k, int j, int i) {
          u(k, j, i) = 1e-3 * double((i * 7 + j * 13 + k * 31) % 1001) - 0.5;
        });
    Kokkos::fence();
    using Policy = Kokkos::MDRangePolicy<Kokkos::Rank<3>>;
    const Policy policy({0, 0, 0}, {n, n, n});
    double plain = 0.0, exact = 0.0;
    const Stats t_plain = time_it([&] {
      Kokkos::parallel_reduce(
          "mantissa::bench::ExactSum::plain", policy,
          KOKKOS_LAMBDA(int k, int j, int i, double& acc) { acc += u(k, j, i) * u(k, j, i); }, plain);
      MPI_Allreduce(MPI_IN_PLACE, &plain, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    });
    const Stats t_exact = time_it([&] {
      mantissa::ExactAccumulator acc;
      Kokkos::parallel_reduce(
          "mantissa::bench::ExactSum::exact", policy,
          KOKKOS_LAMBDA(int k, int j, int i, mantissa::ExactAccumulator& a) {
            a.add(u(k, j, i) * u(k, j, i));
          },
          mantissa::ExactSum<>(acc));
      exact = mantissa::exact_allreduce(acc, MPI_COMM_WORLD);
    });
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
    const double* data = h.data();
    const std::size_t m = h.span();
    double host_plain = 0.0, host_exact = 0.0;
    const Stats th_plain = time_it([&] {
      double s = 0.0;
      for (std::size_t i = 0; i < m; ++i) s += data[i] * data[i];
      MPI_Allreduce(&s, &host_plain, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    });
    const Stats th_exact = time_it([&] {
      mantissa::ExactAccumulator a;
      for (std::size_t i = 0; i < m; ++i) a.add(data[i] * data[i]);
      host_exact = mantissa::exact_allreduce(a, MPI_COMM_WORLD);
    });
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      fmt::print("sum of squares over {}^3 = {:.3g} points, {} ({} threads)\n", n, points,
                 Kokkos::DefaultExecutionSpace::name(),
                 mantissa::concurrency<Kokkos::DefaultExecutionSpace>());
      auto row = [&](const char* what, const Stats& s, const Stats& peer) {
        fmt::print("  {:<34} {:8.3f} ns/point  (min {:.3f}, max {:.3f})  {:5.2f} x plain, {:6.2f} GB/s\n",
                   what, 1e9 * s.median / points, 1e9 * s.min / points, 1e9 * s.max / points,
                   s.median / peer.median, 8.0 * points / s.median * 1e-9);
      };
      row("Kokkos reduce, plain double", t_plain, t_plain);
      row("Kokkos reduce, ExactSum", t_exact, t_plain);
      row("host loop, plain double", th_plain, th_plain);
      row("host loop, ExactAccumulator", th_exact, th_plain);
      fmt::print("  values: plain {:a}, exact {:a}, host plain {:a}, host exact {:a}\n", plain, exact,
                 host_plain, host_exact);
    }
  }
  MPI_Finalize();
  return 0;
}
