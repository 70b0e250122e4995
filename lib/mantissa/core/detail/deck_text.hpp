#pragma once
// Text helpers shared by the schema, the deck validator and deck-doc. Internal to core.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::detail {

// Shortest text that reads back to the same double, always recognisable as a real in YAML
// ("1.0", "0.1", "1e+20", ".inf", ".nan").
std::string deck_real(double x);
// A double-quoted YAML/JSON string with escapes, so any text round-trips.
std::string deck_quote(const std::string& s);
// "[a, b, c]" (flow sequence) of already formatted items.
std::string deck_flow(const std::vector<std::string>& items);
std::string deck_join(const std::vector<std::string>& items, const std::string& sep);

// Optimal string alignment distance (Damerau-Levenshtein with adjacent transpositions;
// Damerau 1964, Levenshtein 1966): the number of single-character insertions, deletions,
// substitutions and swaps of neighbours that turn a into b. Used for "did you mean".
std::size_t deck_edit_distance(const std::string& a, const std::string& b);

// Strict scalar parsers: the whole text must be the number. Return false otherwise.
bool deck_parse_int(const std::string& text, std::int64_t& out);
bool deck_parse_real(const std::string& text, double& out);
bool deck_parse_bool(const std::string& text, bool& out);

// 64-bit FNV-1a (Fowler, Noll, Vo) as 16 lower-case hex digits: stable across platforms,
// runs and compilers, unlike std::hash.
std::string deck_fnv1a_hex(const std::string& text);

}  // namespace mantissa::detail
