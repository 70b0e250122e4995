// Prints the cost of one ScopedTimer region next to a bare steady_clock pair, and of
// Deck::from_string on a small deck next to yaml-cpp parsing the same text alone.
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Timers.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <yaml-cpp/yaml.h>
#include <Kokkos_Core.hpp>

#include <chrono>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const char* const deck_text = R"(physics: seismic
run: {name: bench, steps: 20}
mesh:
  dim: 2
  n: [64, 48]
  spacing: [10.0]
  periodic: [true, false]
logging: {level: info}
)";

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    constexpr int n = 1000000;
    volatile double sink = 0.0;

    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      const auto a = std::chrono::steady_clock::now();
      sink = sink + std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    }
    const double bare = seconds_since(t0) / n;

    mantissa::Timers timers;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) mantissa::ScopedTimer t("bench::region", timers);
    const double scoped = seconds_since(t0) / n;
    {
      mantissa::ScopedTimer outer("bench::outer", timers);
      t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) mantissa::ScopedTimer t("bench::nested", timers);
    }
    const double nested = seconds_since(t0) / n;

    mantissa::Schema schema;
    mantissa::register_core_schema(schema);
    constexpr int m = 2000;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < m; ++i) sink = sink + double(YAML::Load(deck_text).size());
    const double yaml_only = seconds_since(t0) / m;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < m; ++i)
      sink = sink + double(mantissa::Deck::from_string(deck_text, "b.yaml", schema).hash().size());
    const double deck = seconds_since(t0) / m;

    fmt::print(
        "timer region (ScopedTimer, no fence, no Kokkos tool): {:8.1f} ns   peer: steady_clock pair {:8.1f} "
        "ns\n",
        scoped * 1e9, bare * 1e9);
    fmt::print("timer region nested one level deep:                  {:8.1f} ns\n", nested * 1e9);
    fmt::print(
        "Deck::from_string (core schema, 9-line deck):        {:8.1f} us   peer: YAML::Load alone {:8.1f} "
        "us\n",
        deck * 1e6, yaml_only * 1e6);
  }
  MPI_Finalize();
  return 0;
}
