// surrogate.* deck keys: defaults, values and cross-key errors reach SurrogateConfig.
#include <surrogates/SurrogateDeck.hpp>

#include <gtest/gtest.h>

namespace ms = mantissa::surrogates;

namespace {
mantissa::Schema schema() {
  mantissa::Schema s;
  mantissa::register_core_schema(s);
  ms::register_schema(s);
  return s;
}
const char* kBase = "physics: seismic\nmesh:\n  dim: 2\n  n: [64, 32]\n";
}  // namespace

TEST(SurrogateDeck, DefaultsAndValues) {
  const auto s = schema();
  const auto d = mantissa::Deck::from_string(
      std::string(kBase) +
          "surrogate:\n  embed: 32\n  heads: 8\n  position: learned\n  train:\n    precision: bf16\n    "
          "learning_rate: 0.002\n",
      "test.yaml", s);
  const auto c = ms::config_from_deck(d);
  EXPECT_EQ(c.model.dim, 2);
  EXPECT_EQ(c.model.embed, 32);
  EXPECT_EQ(c.model.heads, 8);
  EXPECT_EQ(c.model.patch, 4);  // default
  EXPECT_EQ(c.model.position, ms::PositionKind::learned);
  EXPECT_EQ(c.train_precision, mantissa::Precision::bf16);
  EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.002);
  EXPECT_EQ(c.steps_per_prediction, 4);
}

TEST(SurrogateDeck, CrossKeyErrorNamesKeyAndFile) {
  const auto s = schema();
  const auto d = mantissa::Deck::from_string(std::string(kBase) + "surrogate:\n  embed: 30\n  heads: 4\n",
                                             "bad.yaml", s);
  try {
    ms::config_from_deck(d);
    FAIL() << "no error";
  } catch (const mantissa::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad.yaml"), std::string::npos) << m;
    EXPECT_NE(m.find("surrogate.embed = 30"), std::string::npos) << m;
  }
}
