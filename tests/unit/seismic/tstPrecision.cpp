// Every precision variant runs the same deck (a 2D two-layer model with a CPML, one shot,
// three receivers) and stays within a documented error of fp64. The measured errors are
// printed (and written to seismic_precision_errors.txt) so that the report and the docs can
// quote them.
#include "SeismicTestUtils.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace {

using mantissa::Decomposition;
using mantissa::Grid;
using namespace mantissa::seismic;
using namespace seismic_test;

Config deck() {
  Config c;
  c.order = 8;
  c.quiet = true;
  c.pml_cells = 20;
  c.boundary[1][0] = Boundary::free_surface;
  c.velocity.kind = ModelKind::layered;
  c.velocity.interfaces = {300.0};
  c.velocity.velocities = {1500.0, 2500.0};
  c.steps = 500;
  Source s;
  s.frequency = 10.0;
  // Pressure of order 1 at the receivers: with amplitude 1 the field would be ~1e-4 Pa and
  // fp16 (smallest normal 6e-5) would store it as subnormals. Scaling the state into a
  // format's range is the user's job; the deck sets the amplitude, as here.
  s.amplitude = 2e3;
  s.position = {400.0, 100.0, 0.0};
  c.shots = {Shot{{s}}};
  c.receivers = {{550.0, 20.0, 0.0}, {650.0, 20.0, 0.0}, {402.0, 450.0, 0.0}};
  return c;
}

Grid grid() {
  Grid g;
  g.dim = 2;
  g.n = {161, 121, 1};
  g.spacing = {5.0, 5.0, 1.0};
  return g;
}

template <class S, class C>
std::vector<std::vector<double>> run() {
  Decomposition decomp(MPI_COMM_SELF, grid());
  const Config c = deck();
  Solver<S, C> solver(decomp, c);
  solver.initialize(0);
  solver.run(c.steps);
  const auto d = solver.diagnostics();
  EXPECT_TRUE(d.finite);
  double peak = 0.0;
  for (const auto& t : solver.traces().data)
    for (double v : t) peak = std::max(peak, std::fabs(v));
  std::printf("[ seismic ] max |p| at the receivers %.3e, over the grid at the end %.3e\n", peak, d.max_abs);
  return solver.traces().data;
}

double misfit(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& ref) {
  double worst = 0.0;
  for (std::size_t r = 0; r < ref.size(); ++r) worst = std::max(worst, relative_l2(a[r], ref[r]));
  return worst;
}

// Bounds, relative L2 over the traces, worst receiver. Rounding of the state each step acts
// like a random forcing of relative size u (unit roundoff) per step; it grows at most like
// steps * u for coherent errors (here 500 steps) and the traces see a fraction of it. With
// u = 1.1e-16 (fp64), 6e-8 (fp32), 3.9e-3 (bf16), 4.9e-4 (fp16):
//  - fp64 storage, fp32 compute: the stencil in fp32 each step: 500 * 6e-8 = 3e-5; measured 2.6e-5 -> 1e-4
//  - fp32 storage (either compute): same order -> 1e-4
//  - fp16 storage: 500 * 4.9e-4 = 0.25 if coherent; measured 3.3e-2 (2026-11-29) -> 5e-2
//  - bf16 storage: the leapfrog increment (c dt)^2 L p is ~1e-2 of p, below half an ulp of
//    bf16 (3.9e-3 relative) for much of the wave, so increments are swamped: measured 0.45
//    (2026-11-29) -> bound 0.6. That is the finding, not a bug: bf16 storage of the pressure
//    keeps arrival times but not amplitudes (fp16 with its 3 more bits does).
TEST(SeismicPrecision, VariantsStayWithinTheirBoundsOfFp64) {
  const auto ref = run<double, double>();
  struct Row {
    const char* name;
    double error, bound;
  };
  std::vector<Row> rows{
      {"fp64/fp32", misfit(run<double, float>(), ref), 1e-4},
      {"fp32/fp64", misfit(run<float, double>(), ref), 1e-4},
      {"fp32/fp32", misfit(run<float, float>(), ref), 1e-4},
      {"fp16/fp32", misfit(run<mantissa::fp16, float>(), ref), 5e-2},
      {"bf16/fp32", misfit(run<mantissa::bf16, float>(), ref), 6e-1},
  };
  std::ofstream out("seismic_precision_errors.txt");
  for (const auto& r : rows) {
    std::printf("[ seismic ] storage/compute %s: relative L2 trace error vs fp64 %.3e (bound %.0e)\n", r.name,
                r.error, r.bound);
    out << r.name << " " << r.error << " " << r.bound << "\n";
    EXPECT_LT(r.error, r.bound) << r.name;
    EXPECT_GT(r.error, 0.0) << r.name << ": identical to fp64 means the variant did not run in its precision";
  }
}

}  // namespace
