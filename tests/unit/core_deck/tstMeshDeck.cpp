// grid_from_deck and friends on the core schema's mesh section.
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/MeshDeck.hpp>

#include <gtest/gtest.h>

namespace {

mantissa::Deck deck(const std::string& text) {
  mantissa::Schema s;
  mantissa::register_core_schema(s);
  return mantissa::Deck::from_string(text, "mesh.yaml", s);
}

TEST(MeshDeck, TwoDimensionalWithBroadcastValues) {
  const auto g =
      mantissa::grid_from_deck(deck("mesh: {dim: 2, n: [40, 30], spacing: [0.5], periodic: [true]}"));
  EXPECT_EQ(g.dim, 2);
  EXPECT_EQ(g.n, (std::array<std::int64_t, 3>{40, 30, 1}));
  EXPECT_EQ(g.spacing[0], 0.5);
  EXPECT_EQ(g.spacing[1], 0.5);
  EXPECT_TRUE(g.periodic[0] && g.periodic[1]);
  EXPECT_FALSE(g.periodic[2]);
  EXPECT_EQ(mantissa::process_grid_from_deck(deck("mesh: {n: [4, 4], process_grid: [2, 0]}")),
            (std::array<int, 3>{2, 0, 1}));
}

TEST(MeshDeck, ThreeDimensionalPerAxis) {
  const auto g =
      mantissa::grid_from_deck(deck("mesh: {dim: 3, n: [8, 9, 10], spacing: [1, 2, 3], origin: [-1, 0, 1], "
                                    "periodic: [false, true, false]}"));
  EXPECT_EQ(g.n, (std::array<std::int64_t, 3>{8, 9, 10}));
  EXPECT_EQ(g.spacing, (std::array<double, 3>{1.0, 2.0, 3.0}));
  EXPECT_EQ(g.origin, (std::array<double, 3>{-1.0, 0.0, 1.0}));
  EXPECT_TRUE(g.periodic[1]);
}

TEST(MeshDeck, InconsistentKeysNameThePosition) {
  auto msg = [](const std::string& text) {
    try {
      mantissa::grid_from_deck(deck(text));
    } catch (const mantissa::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(
      msg("mesh:\n  dim: 3\n  n: [4, 4]\n").find("mesh.yaml:3:6: mesh.n: got 2 entries for mesh.dim = 3"),
      std::string::npos);
  EXPECT_NE(msg("mesh: {n: [4, 4], spacing: [1, 2, 3]}").find("got 3 values for a 2D mesh"),
            std::string::npos);
  EXPECT_NE(msg("mesh: {n: [4, 4], spacing: [0]}").find("spacings must be positive"), std::string::npos);
  EXPECT_NE(msg("mesh: {n: [1, 4]}").find("at least 2 points"), std::string::npos);
  EXPECT_THROW(mantissa::process_grid_from_deck(deck("mesh: {n: [4, 4], process_grid: [1, 1, 2]}")),
               mantissa::Error);
}

}  // namespace
