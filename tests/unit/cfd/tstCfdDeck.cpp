// The cfd deck's solver keys do what docs/deck.md says: cfd.solver.sweeps sets the smoothing
// sweeps before and after each coarse-grid correction (V(2,2) takes fewer cycles than V(1,1)
// on the cavity's first step), and an out-of-range value is refused naming the key.
#include <cfd/CfdDeck.hpp>
#include <cfd/Solver.hpp>
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Schema.hpp>
#include <mantissa/mesh/MeshDeck.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {
// A named namespace holds the using-directives: at file scope (or in the unnamed namespace)
// they would make mantissa::log visible to global lookup, where the stub code nvcc appends
// calls ::log unqualified ("reference to 'log' is ambiguous").
namespace cfd_deck {

using namespace mantissa;
using namespace mantissa::cfd;

Schema schema() {
  Schema s;
  register_core_schema(s);
  register_schema(s);
  return s;
}

// inputs/cfd_cavity.yaml's physics (no campaign section, one rank)
const char* const k_cavity = R"(physics: cfd
run: {name: deck_test, steps: 1}
mesh: {dim: 2, n: [32, 32], spacing: [0.03125]}
cfd:
  viscosity: 0.01
  cfl: 0.9
  boundaries: {x_low: wall, x_high: wall, y_low: wall, y_high: lid}
  lid_velocity: 1.0
  solver: {tolerance: 1.0e-10, cycle: v, smoother: rbgs}
)";

Deck cavity(const std::vector<std::string>& overrides = {}) {
  return Deck::from_string(k_cavity, "cavity.yaml", schema(), overrides);
}

// Multigrid cycles of the cavity deck's first step with the given overrides.
int first_step_cycles(const std::vector<std::string>& overrides, Config* out = nullptr) {
  const Deck deck = cavity(overrides);
  const Config c = config_from_deck(deck);
  if (out) *out = c;
  Decomposition decomp(MPI_COMM_SELF, grid_from_deck(deck));
  FlowSolver<double> s(decomp, c);
  s.initialize();
  s.step();
  EXPECT_EQ(s.last_solves().unconverged, 0);
  return s.last_solves().iterations;
}

TEST(CfdDeck, SweepsSetTheCycle) {
  Config v11, v22;
  const int c1 = first_step_cycles({}, &v11);
  const int c2 = first_step_cycles({"cfd.solver.sweeps=2"}, &v22);
  EXPECT_EQ(v11.solve.multigrid.pre_sweeps, 1);
  EXPECT_EQ(v11.solve.multigrid.post_sweeps, 1);
  EXPECT_EQ(v22.solve.multigrid.pre_sweeps, 2);
  EXPECT_EQ(v22.solve.multigrid.post_sweeps, 2);
  std::printf("cavity, first step: %d cycles with V(1,1), %d with V(2,2)\n", c1, c2);
  EXPECT_GT(c1, 0);
  EXPECT_LT(c2, c1);
}

TEST(CfdDeck, SweepsOutOfRangeAreRefused) {
  try {
    (void)cavity({"cfd.solver.sweeps=0"});
    FAIL() << "cfd.solver.sweeps = 0 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cfd.solver.sweeps"), std::string::npos) << e.what();
  }
}

}  // namespace cfd_deck
}  // namespace
