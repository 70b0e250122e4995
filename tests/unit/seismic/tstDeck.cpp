// The seismic deck section and the example decks: every inputs/seismic_*.yaml validates,
// builds a solver (CFL and model checks included) and runs a few steps as is; deck errors
// name the key and the remedy.
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Schema.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <seismic/SeismicDeck.hpp>
#include <seismic/Solver.hpp>

#include <gtest/gtest.h>

namespace {

using namespace mantissa;
using namespace mantissa::seismic;

Schema schema() {
  Schema s;
  register_core_schema(s);
  register_schema(s);
  return s;
}

class SeismicInputs : public ::testing::TestWithParam<std::string> {};

TEST_P(SeismicInputs, DeckValidatesAndRuns) {
  const std::string file = std::string(MANTISSA_SOURCE_DIR) + "/inputs/" + GetParam();
  const Schema s = schema();
  const Deck deck = Deck::from_file(file, s);
  Config config = config_from_deck(deck);
  config.quiet = true;
  const Grid grid = grid_from_deck(deck);
  Decomposition decomp(MPI_COMM_SELF, grid);
  Solver<double, double> solver(decomp, config);
  EXPECT_TRUE(solver.warnings().empty()) << solver.warnings().front();
  EXPECT_GE(config.shots.size(), 1u);
  solver.initialize(0);
  solver.run(grid.dim == 3 ? 2 : 20);
  EXPECT_TRUE(solver.diagnostics().finite);
}

INSTANTIATE_TEST_SUITE_P(Seismic, SeismicInputs,
                         ::testing::Values("seismic_2d_layered.yaml", "seismic_3d_homogeneous.yaml",
                                           "seismic_2d_salt.yaml"));

TEST(SeismicDeck, CflViolationInTheDeckIsRefused) {
  const std::string file = std::string(MANTISSA_SOURCE_DIR) + "/inputs/seismic_2d_layered.yaml";
  const Deck deck = Deck::from_file(file, schema(), {"seismic.dt=2e-3"});
  Config config = config_from_deck(deck);
  config.quiet = true;
  Decomposition decomp(MPI_COMM_SELF, grid_from_deck(deck));
  try {
    Solver<double, double> solver(decomp, config);
    FAIL() << "dt = 2e-3 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("largest stable dt is 0.000924"), std::string::npos) << e.what();
  }
}

TEST(SeismicDeck, SixteenBitStorageNeedsFp32Compute) {
  const std::string yaml =
      "mesh: {dim: 2, n: [40, 40], spacing: [5.0]}\n"
      "seismic:\n"
      "  precision: {storage: bf16, compute: fp64}\n"
      "  sources: [{position: [100.0, 100.0]}]\n";
  const Deck deck = Deck::from_string(yaml, "test.yaml", schema());
  try {
    config_from_deck(deck);
    FAIL() << "bf16 storage with fp64 compute accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seismic.precision.compute: fp32"), std::string::npos) << e.what();
  }
}

TEST(SeismicDeck, ShotsAndReceiverLine) {
  const std::string yaml =
      "mesh: {dim: 2, n: [40, 40], spacing: [5.0]}\n"
      "seismic:\n"
      "  sources: [{position: [100.0, 100.0]}, {shot: 1, position: [50.0, 20.0], wavelet: "
      "gaussian_derivative}]\n"
      "  receiver_line: {start: [10.0, 5.0], end: [190.0, 5.0], count: 10}\n"
      "  velocity: {model: layered, interfaces: [100.0], velocities: [1500.0, 2000.0]}\n";
  const Config c = config_from_deck(Deck::from_string(yaml, "test.yaml", schema()));
  ASSERT_EQ(c.shots.size(), 2u);
  EXPECT_EQ(c.shots[1].sources[0].wavelet, WaveletKind::gaussian_derivative);
  ASSERT_EQ(c.receivers.size(), 10u);
  EXPECT_DOUBLE_EQ(c.receivers[9][0], 190.0);
  EXPECT_EQ(c.velocity.kind, ModelKind::layered);
}

}  // namespace
