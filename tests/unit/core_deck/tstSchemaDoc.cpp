// The schema itself: structure queries, the core sections, deck-doc Markdown, the helpers.
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Schema.hpp>
#include <mantissa/core/detail/deck_text.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using mantissa::Schema;

TEST(Schema, StructureQueries) {
  Schema s;
  s.integer("a.b.c", "c", 1, 0, 2).real("a.d", "d", 0.5, 0.0, 1.0).record_list("a.r", "r");
  s.string("a.r[].name", "name", std::nullopt);
  EXPECT_TRUE(s.is_section("a"));
  EXPECT_TRUE(s.is_section("a.b"));
  EXPECT_FALSE(s.is_section("a.d"));
  EXPECT_EQ(s.children(""), (std::vector<std::string>{"a"}));
  EXPECT_EQ(s.children("a"), (std::vector<std::string>{"b", "d", "r"}));
  EXPECT_EQ(s.children("a.r[]"), (std::vector<std::string>{"name"}));
  ASSERT_NE(s.find("a.r[].name"), nullptr);
  EXPECT_TRUE(s.find("a.r[].name")->required());
  EXPECT_FALSE(s.find("a.d")->required());
}

TEST(Schema, DeclarationMistakesAreInternalErrors) {
  Schema s;
  s.integer("a.b", "b", 1, 0, 2);
  EXPECT_THROW(s.integer("a.b", "again", 1, 0, 2), std::logic_error);          // twice
  EXPECT_THROW(s.integer("a.b.c", "below a key", 1, 0, 2), std::logic_error);  // key as section
  EXPECT_THROW(s.integer("a", "section as key", 1, 0, 2), std::logic_error);
  EXPECT_THROW(s.integer("x.y", "default out of range", 5, 0, 2), std::logic_error);
  EXPECT_THROW(s.choice("x.z", "bad default", {"p", "q"}, std::string("r")), std::logic_error);
  EXPECT_THROW(s.real("l[].x", "no record_list", 0.0, 0.0, 1.0), std::logic_error);
}

TEST(Schema, CoreSchemaAcceptsAMinimalDeckAndFillsDefaults) {
  Schema s;
  mantissa::register_core_schema(s);
  const auto d = mantissa::Deck::from_string("mesh:\n  n: [16, 8]\n", "min.yaml", s);
  EXPECT_EQ(d.get_int("mesh.dim"), 2);
  EXPECT_EQ(d.get_string("logging.level"), "info");
  EXPECT_EQ(d.get_bools("mesh.periodic"), (std::vector<bool>{false}));
  EXPECT_TRUE(d.get_bool("checkpoint.enabled"));
  // Every key of the core schema has a default except mesh.n and the optional end_time.
  for (const auto& k : s.keys()) {
    if (k.path != "mesh.n" && k.path != "run.end_time") {
      EXPECT_TRUE(d.has(k.path)) << k.path;
    }
  }
}

// The deck's identity (the checkpoint's deck hash) ignores what places, paces and spreads a run
// (a resumed job may have another limit or rank count) but not what it computes.
TEST(Schema, DeckHashIgnoresPacingKeysButNotTheComputation) {
  Schema s;
  mantissa::register_core_schema(s);
  const auto hash = [&](const std::string& text) {
    return mantissa::Deck::from_string(text, "h.yaml", s).hash();
  };
  const std::string base = hash("mesh:\n  n: [16, 8]\n");
  EXPECT_EQ(hash("mesh:\n  n: [16, 8]\n  process_grid: [2, 1]\nrun:\n  wall_time_limit: 60\n  name: other\n"
                 "checkpoint:\n  every: 7\n  keep: 5\nlogging:\n  progress_every: 1\n"),
            base);
  EXPECT_NE(hash("mesh:\n  n: [16, 9]\n"), base);
  EXPECT_NE(hash("mesh:\n  n: [16, 8]\nrun:\n  steps: 7\n"), base);
  EXPECT_NE(hash("mesh:\n  n: [16, 8]\ncheckpoint:\n  dir: elsewhere\n"), base);
}

// run.seed and output.* were documented and read by nothing: they are not keys any more.
TEST(Schema, KeysThatDidNothingAreGone) {
  Schema s;
  mantissa::register_core_schema(s);
  for (const auto& k : s.keys()) {
    EXPECT_NE(k.path, "run.seed");
    EXPECT_NE(k.path.rfind("output.", 0), 0u) << k.path;
  }
}

TEST(Schema, MarkdownHasASectionPerTopLevelKeyAndARowPerKey) {
  Schema s;
  mantissa::register_core_schema(s);
  const std::string md = s.to_markdown();
  for (const char* sec : {"## `physics`", "## `run`", "## `mesh`", "## `checkpoint`", "## `logging`"}) {
    EXPECT_NE(md.find(sec), std::string::npos) << sec;
  }
  for (const auto& k : s.keys()) EXPECT_NE(md.find("| `" + k.path + "` |"), std::string::npos) << k.path;
  EXPECT_NE(md.find("| `mesh.dim` | integer | `2` | [2, 3] |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `mesh.n` | list of integers | required | length 2 to 3 |"), std::string::npos) << md;
  EXPECT_NE(md.find("`error`, `warn`, `info`, `debug`"), std::string::npos);
}

TEST(DeckText, EditDistanceCountsTranspositionsAsOne) {
  using mantissa::detail::deck_edit_distance;
  EXPECT_EQ(deck_edit_distance("ghost", "ghost"), 0u);
  EXPECT_EQ(deck_edit_distance("ghots", "ghost"), 1u);  // one swap of neighbours
  EXPECT_EQ(deck_edit_distance("ordr", "order"), 1u);
  EXPECT_EQ(deck_edit_distance("", "abc"), 3u);
  EXPECT_EQ(deck_edit_distance("kitten", "sitting"), 3u);  // Levenshtein's classic example
}

TEST(DeckText, StrictNumberParsing) {
  using namespace mantissa::detail;
  std::int64_t i = 0;
  double r = 0;
  EXPECT_TRUE(deck_parse_int("-42", i));
  EXPECT_EQ(i, -42);
  EXPECT_FALSE(deck_parse_int("4.0", i));
  EXPECT_FALSE(deck_parse_int("99999999999999999999", i));  // overflows int64
  EXPECT_FALSE(deck_parse_int("0x10", i));
  EXPECT_TRUE(deck_parse_real("1e-3", r));
  EXPECT_EQ(r, 1e-3);
  EXPECT_FALSE(deck_parse_real("1e999", r));  // overflows double
  EXPECT_FALSE(deck_parse_real("nan", r));    // YAML spells it .nan
  EXPECT_FALSE(deck_parse_real("0x1p3", r));
  EXPECT_EQ(deck_real(1.0), "1.0");
  EXPECT_EQ(deck_real(0.1), "0.1");
  // FNV-1a 64 of "a" is a published test vector (Fowler/Noll/Vo reference tables).
  EXPECT_EQ(deck_fnv1a_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(deck_fnv1a_hex(""), "cbf29ce484222325");
}

}  // namespace
