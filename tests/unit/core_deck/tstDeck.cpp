// The deck API against a small test schema: good decks, defaults, overrides, records, and
// the messages of bad decks (the executable-level catalogue is tests/regression/bad_decks).
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Json.hpp>
#include <mantissa/core/Schema.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace {

using mantissa::Deck;
using mantissa::Error;
using mantissa::Schema;

Schema test_schema() {
  Schema s;
  s.integer("physics.order", "stencil order", 4, 2, 8);
  s.real("physics.cfl", "Courant number", 0.5, 0.0, 1.0);
  s.boolean("physics.free_surface", "free surface on top", false);
  s.string("run.name", "run name", std::string("test"));
  s.choice("run.precision", "storage precision", {"fp64", "fp32", "bf16"}, std::string("fp64"));
  s.int_list("mesh.n", "points per axis", std::nullopt, 2, 3);
  s.real_list("mesh.spacing", "spacing", std::vector<double>{1.0, 1.0}, 1, 3);
  s.string_list("run.tags", "labels", std::vector<std::string>{});
  s.real("run.end_time", "optional end time", std::nullopt, 0.0, 1e9, true);
  s.record_list("sources", "point sources");
  s.real("sources[].x", "x position", std::nullopt, -1e9, 1e9);
  s.real("sources[].f0", "peak frequency", 10.0, 0.0, 1e6);
  s.record_list("sources[].taps", "taps of a source");
  s.integer("sources[].taps[].k", "tap index", 0, 0, 100);
  return s;
}

// Runs f, expects a mantissa::Error, returns its message.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no mantissa::Error thrown";
  return "";
}

const char* const good = R"(
physics:
  order: 6
  cfl: 0.25
mesh:
  n: [64, 32]
run:
  tags: [a, b]
sources:
  - x: 1.5
    f0: 20
  - x: -2
    taps:
      - k: 3
      - {}
)";

TEST(Deck, GoodDeckValuesAndDefaults) {
  const Deck d = Deck::from_string(good, "good.yaml", test_schema());
  EXPECT_EQ(d.file(), "good.yaml");
  EXPECT_EQ(d.get_int("physics.order"), 6);
  EXPECT_DOUBLE_EQ(d.get_real("physics.cfl"), 0.25);
  EXPECT_FALSE(d.get_bool("physics.free_surface"));  // default
  EXPECT_EQ(d.get_string("run.name"), "test");
  EXPECT_EQ(d.get_string("run.precision"), "fp64");
  EXPECT_EQ(d.get_ints("mesh.n"), (std::vector<std::int64_t>{64, 32}));
  EXPECT_EQ(d.get_reals("mesh.spacing"), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(d.get_reals("mesh.n"), (std::vector<double>{64.0, 32.0}));  // integers convert
  EXPECT_EQ(d.get_strings("run.tags"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(d.given("physics.order"));
  EXPECT_FALSE(d.given("physics.free_surface"));
  EXPECT_TRUE(d.has("physics.free_surface"));
  EXPECT_FALSE(d.has("run.end_time"));  // optional, no default, not given
  EXPECT_NE(d.where("physics.order").find("good.yaml:3:10"), std::string::npos) << d.where("physics.order");
}

TEST(Deck, RecordLists) {
  const Deck d = Deck::from_string(good, "good.yaml", test_schema());
  ASSERT_EQ(d.count("sources"), 2u);
  EXPECT_DOUBLE_EQ(d.get_real("sources[0].x"), 1.5);
  EXPECT_DOUBLE_EQ(d.get_real("sources[0].f0"), 20.0);
  EXPECT_DOUBLE_EQ(d.get_real("sources[1].x"), -2.0);
  EXPECT_DOUBLE_EQ(d.get_real("sources[1].f0"), 10.0);  // default inside an element
  EXPECT_EQ(d.count("sources[0].taps"), 0u);
  ASSERT_EQ(d.count("sources[1].taps"), 2u);
  EXPECT_EQ(d.get_int("sources[1].taps[0].k"), 3);
  EXPECT_EQ(d.get_int("sources[1].taps[1].k"), 0);
  EXPECT_EQ(d.count("nothing"), 0u);
  EXPECT_THROW(d.get_real("sources[2].x"), Error);
}

TEST(Deck, MissingRequiredKeyInRecord) {
  const std::string msg = error_of(
      [] { Deck::from_string("mesh: {n: [4, 4]}\nsources:\n  - f0: 3\n", "rec.yaml", test_schema()); });
  EXPECT_NE(msg.find("rec.yaml:3:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing required key 'sources[0].x'"), std::string::npos) << msg;
}

TEST(Deck, Overrides) {
  const Deck d =
      Deck::from_string(good, "good.yaml", test_schema(),
                        {"physics.order=8", "mesh.n=[10, 20, 30]", "run.name=my run",
                         "sources[1].taps[0].k=7", "run.precision=bf16", "physics.free_surface=true"});
  EXPECT_EQ(d.get_int("physics.order"), 8);
  EXPECT_EQ(d.get_ints("mesh.n"), (std::vector<std::int64_t>{10, 20, 30}));
  EXPECT_EQ(d.get_string("run.name"), "my run");
  EXPECT_EQ(d.get_int("sources[1].taps[0].k"), 7);
  EXPECT_EQ(d.get_string("run.precision"), "bf16");
  EXPECT_TRUE(d.get_bool("physics.free_surface"));
  EXPECT_NE(d.where("physics.order").find("command line override"), std::string::npos);
}

TEST(Deck, OverrideSuppliesRequiredKey) {
  const Deck d = Deck::from_string("run: {name: x}\n", "o.yaml", test_schema(), {"mesh.n=[3,3]"});
  EXPECT_EQ(d.get_ints("mesh.n"), (std::vector<std::int64_t>{3, 3}));
}

TEST(Deck, BadOverrides) {
  const Schema s = test_schema();
  std::string msg = error_of([&] { Deck::from_string(good, "g.yaml", s, {"physics.ordr=3"}); });
  EXPECT_NE(msg.find("command line override 'physics.ordr=3'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'physics.order'?"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string(good, "g.yaml", s, {"physics.order=9"}); });
  EXPECT_NE(msg.find("9 is out of range; expected an integer in [2, 8]"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string(good, "g.yaml", s, {"physics.order"}); });
  EXPECT_NE(msg.find("expected key.path=value"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string(good, "g.yaml", s, {"sources[5].x=1"}); });
  EXPECT_NE(msg.find("has no element 5"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string(good, "g.yaml", s, {"physics=3"}); });
  EXPECT_NE(msg.find("is a section"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string(good, "g.yaml", s, {"mesh.n=[1,2"}); });
  EXPECT_NE(msg.find("not valid YAML"), std::string::npos) << msg;
}

TEST(Deck, ResolvedYamlRoundTripsAndHashIsStable) {
  const Schema s = test_schema();
  const Deck a = Deck::from_string(good, "good.yaml", s);
  const Deck b = Deck::from_string(a.resolved_yaml(), "resolved.yaml", s);
  EXPECT_EQ(a.resolved_yaml(), b.resolved_yaml());
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash().size(), 16u);
  // Key order in the file does not matter: the resolved text follows the schema.
  const Deck c =
      Deck::from_string("sources: []\nmesh: {n: [64, 32]}\nphysics: {cfl: 0.25, order: 6}\n", "c.yaml", s);
  const Deck e =
      Deck::from_string("physics: {order: 6, cfl: 0.25}\nmesh: {n: [64, 32]}\nsources: []\n", "e.yaml", s);
  EXPECT_EQ(c.resolved_yaml(), e.resolved_yaml());
  EXPECT_NE(a.hash(), c.hash());
  // Schema order: physics before run before mesh; defaults are filled in.
  const std::string r = a.resolved_yaml();
  EXPECT_LT(r.find("physics:"), r.find("run:"));
  EXPECT_LT(r.find("run:"), r.find("mesh:"));
  EXPECT_NE(r.find("free_surface: false"), std::string::npos) << r;
  EXPECT_NE(r.find("spacing: [1.0, 1.0]"), std::string::npos) << r;
}

// Deck strings are quoted with the JSON writer's escaping (core/Json.hpp): every control
// character, DEL, quotes, backslashes and UTF-8 read back unchanged from the resolved text.
TEST(Deck, QuotedStringsRoundTripThroughTheJsonEscaping) {
  const Schema s = test_schema();
  std::string odd = "a\"b\\c: d # e\x7f \xc3\xa9";
  for (int c = 1; c < 0x20; ++c) odd += static_cast<char>(c);
  const Deck d =
      Deck::from_string("mesh: {n: [4, 4]}\n", "q.yaml", s, {"run.name=" + mantissa::json::escape(odd)});
  ASSERT_EQ(d.get_string("run.name"), odd);
  const Deck back = Deck::from_string(d.resolved_yaml(), "q2.yaml", s);
  EXPECT_EQ(back.get_string("run.name"), odd) << d.resolved_yaml();
  EXPECT_EQ(back.hash(), d.hash());
  EXPECT_EQ(mantissa::json::escape("a\x7f\b"), "\"a\\u007f\\b\"");
}

TEST(Deck, RealsRoundTripExactly) {
  Schema s;
  s.real("a.x", "x", std::nullopt, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
  for (const double v : {0.1, 1.0 / 3.0, 1e-300, 6.02214076e23, -2.5}) {
    const Deck d = Deck::from_string("a: {x: " + fmt::format("{:.17g}", v) + "}", "r.yaml", s);
    const Deck back = Deck::from_string(d.resolved_yaml(), "r2.yaml", s);
    EXPECT_EQ(back.get_real("a.x"), v) << d.resolved_yaml();
  }
}

TEST(Deck, TypeAndRangeErrorsNamePositionAndExpectation) {
  const Schema s = test_schema();
  std::string msg =
      error_of([&] { Deck::from_string("mesh:\n  n: [4, 4]\nphysics:\n  order: six\n", "t.yaml", s); });
  EXPECT_NE(msg.find("t.yaml:4:10: physics.order: got \"six\"; expected an integer in [2, 8]"),
            std::string::npos)
      << msg;
  msg = error_of([&] { Deck::from_string("mesh:\n  n: [4, 4.5]\n", "t.yaml", s); });
  EXPECT_NE(msg.find("element 1 got 4.5 (not a whole number)"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("mesh:\n  n: [4]\n", "t.yaml", s); });
  EXPECT_NE(msg.find("got a list of 1 element; expected a list of 2 to 3 integers"), std::string::npos)
      << msg;
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nrun: {precision: fp61}\n", "t.yaml", s); });
  EXPECT_NE(msg.find("expected one of fp64, fp32, bf16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'fp64'?"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nphysics: {cfl: \"0.5\"}\n", "t.yaml", s); });
  EXPECT_NE(msg.find("remove the quotes"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nphysics: {cfl: .nan}\n", "t.yaml", s); });
  EXPECT_NE(msg.find("got NaN"), std::string::npos) << msg;
}

TEST(Deck, UnknownKeysAndSuggestions) {
  const Schema s = test_schema();
  std::string msg =
      error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nphysics:\n  odrer: 4\n", "u.yaml", s); });
  EXPECT_NE(msg.find("u.yaml:3:3: unknown key 'physics.odrer'; did you mean 'physics.order'?"),
            std::string::npos)
      << msg;
  // The right name in the wrong section.
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4], cfl: 0.3}\n", "u.yaml", s); });
  EXPECT_NE(msg.find("did you mean 'physics.cfl'?"), std::string::npos) << msg;
  // Nothing close: list the valid keys.
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nzzzzzz: 1\n", "u.yaml", s); });
  EXPECT_NE(msg.find("valid keys at the top level: physics, run, mesh, sources"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nsources:\n  - {x: 1, xx: 2}\n", "u.yaml", s); });
  EXPECT_NE(msg.find("unknown key 'sources[0].xx'"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("mesh: {n: [4, 4]}\nmesh: {n: [4, 4]}\n", "u.yaml", s); });
  EXPECT_NE(msg.find("duplicate key 'mesh'"), std::string::npos) << msg;
}

TEST(Deck, MalformedEmptyAndBinary) {
  const Schema s = test_schema();
  std::string msg = error_of([&] { Deck::from_string("mesh:\n  n: [4, 4\n", "m.yaml", s); });
  EXPECT_NE(msg.find("m.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("  # only a comment\n", "e.yaml", s); });
  EXPECT_NE(msg.find("e.yaml: the deck is empty"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string(std::string("mesh:\n\x01\x02\0\xff", 10), "b.yaml", s); });
  EXPECT_NE(msg.find("b.yaml:2:1: not a YAML text file"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_string("- a\n- b\n", "l.yaml", s); });
  EXPECT_NE(msg.find("top level of a deck must be a map"), std::string::npos) << msg;
  msg = error_of([&] { Deck::from_file("/nonexistent/deck.yaml", s); });
  EXPECT_NE(msg.find("/nonexistent/deck.yaml: no such deck file"), std::string::npos) << msg;
}

TEST(Deck, MissingRequiredKey) {
  const std::string msg =
      error_of([] { Deck::from_string("physics: {order: 4}\n", "r.yaml", test_schema()); });
  EXPECT_NE(msg.find("missing required key 'mesh.n'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a list of 2 to 3 integers"), std::string::npos) << msg;
}

TEST(Deck, GetterMisuseIsAnError) {
  const Deck d = Deck::from_string(good, "good.yaml", test_schema());
  EXPECT_THROW(d.get_int("physics.cfl"), Error);    // real is not an integer
  EXPECT_THROW(d.get_real("run.end_time"), Error);  // optional, absent
  EXPECT_THROW(d.get_string("no.such.key"), Error);
  const Deck empty;
  EXPECT_FALSE(empty.has("physics.order"));
}

}  // namespace

namespace {

TEST(Deck, RequiredRecordListNeedsOneElement) {
  mantissa::Schema s;
  s.record_list("shots", "shots", false);
  s.real("shots[].x", "x", std::nullopt, 0.0, 1.0);
  EXPECT_TRUE(s.find("shots")->required());
  std::string msg = error_of([&] { mantissa::Deck::from_string("shots:\n", "s.yaml", s); });
  EXPECT_NE(msg.find("s.yaml:1:1: shots: got an empty list"), std::string::npos) << msg;
  msg = error_of([&] { mantissa::Deck::from_string("shots: 3\n", "s.yaml", s); });
  EXPECT_NE(msg.find("shots: got \"3\"; expected a list of maps"), std::string::npos) << msg;
  msg = error_of([&] { mantissa::Deck::from_string("other: 1\n", "s.yaml", s); });
  EXPECT_NE(msg.find("unknown key 'other'"), std::string::npos) << msg;
  Schema s2 = s;
  s2.integer("other", "o", 1, 0, 2);
  msg = error_of([&] { mantissa::Deck::from_string("other: 1\n", "s.yaml", s2); });
  EXPECT_NE(msg.find("missing required key 'shots'"), std::string::npos) << msg;
  EXPECT_EQ(mantissa::Deck::from_string("shots: [{x: 0.5}]", "s.yaml", s).count("shots"), 1u);
}

}  // namespace
