#pragma once
// One fuzz input for the deck parser (Deck::from_string with overrides), shared by the
// libFuzzer target (fuzz_deck.cpp, clang) and the property test that runs the same kind of
// mutations in every build (tstDeckFuzz.cpp). The properties:
//  - a deck is either accepted or refused with mantissa::Error; any other exception, a crash,
//    a hang or a sanitizer report is a bug;
//  - an accepted deck's resolved_yaml() is itself a deck that is accepted with the same
//    resolved text and hash (the text a checkpoint stores reads back as the same deck).
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Schema.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

namespace mantissa::fuzz {

// The core sections plus a section with every kind of key the parser knows (records nested
// in records, lists of each type, choices, optional keys), as the modules' schemas use them.
inline Schema fuzz_schema() {
  Schema s;
  register_core_schema(s);
  s.section("model", "test section");
  s.integer("model.order", "order", 4, 2, 8);
  s.real("model.cfl", "Courant number", 0.5, 0.0, 1.0);
  s.boolean("model.free_surface", "flag", false);
  s.choice("model.precision", "precision", {"fp64", "fp32", "bf16"}, std::string("fp64"));
  s.string_list("model.tags", "labels", std::vector<std::string>{});
  s.real("model.end", "optional", std::nullopt, 0.0, 1e9, true);
  s.record_list("model.sources", "records");
  s.real_list("model.sources[].position", "position", std::nullopt, 2, 3);
  s.real("model.sources[].f0", "frequency", 10.0, 0.0, 1e6);
  s.integer("model.sources[].shot", "shot", 0, 0, 1000);
  s.record_list("model.sources[].taps", "nested records");
  s.integer("model.sources[].taps[].k", "tap", 0, 0, 100);
  s.bool_list("model.mask", "booleans", std::vector<bool>{false}, 1, 3);
  return s;
}

[[noreturn]] inline void bug(const std::string& what, const std::string& text,
                             const std::vector<std::string>& overrides = {}) {
  std::string o;
  for (const auto& x : overrides) o += " '" + x + "'";
  // The exact bytes (they may hold NULs) for a reproduction: deck-fuzz-failure.yaml.
  if (std::FILE* f = std::fopen("deck-fuzz-failure.yaml", "wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  std::fprintf(stderr, "deck parser bug: %s\n--- overrides:%s\n--- input (%zu bytes) ---\n%s\n---\n",
               what.c_str(), o.c_str(), text.size(), text.c_str());
  std::abort();
}

// Returns whether the deck was accepted; aborts on a property violation.
inline bool fuzz_one(const Schema& schema, const std::string& text,
                     const std::vector<std::string>& overrides) {
  std::string resolved, hash;
  try {
    const Deck d = Deck::from_string(text, "fuzz.yaml", schema, overrides);
    resolved = d.resolved_yaml();
    hash = d.hash();
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    bug(std::string("a ") + typeid(e).name() + " escaped instead of mantissa::Error: " + e.what(), text,
        overrides);
  } catch (...) {
    bug("a non-standard exception escaped", text, overrides);
  }
  try {
    const Deck again = Deck::from_string(resolved, "resolved.yaml", schema);
    if (again.resolved_yaml() != resolved) bug("resolved_yaml() does not read back as itself", text);
    if (again.hash() != hash) bug("the hash of the resolved deck differs", text);
  } catch (const Error& e) {
    bug(std::string("the resolved deck is refused: ") + e.what() + "\n--- resolved ---\n" + resolved, text);
  }
  return true;
}

}  // namespace mantissa::fuzz
