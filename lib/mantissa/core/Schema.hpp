#pragma once
// The deck schema: every key a deck may contain, declared once in code with its type, range or
// choices, default and a one-line doc. Decks are validated against it (Deck.hpp), the deck
// reference docs/deck.md is generated from it (to_markdown), so the three cannot drift apart.
//
// Paths are dotted ("seismic.order"); the keys of the elements of a list of records use "[]"
// ("seismic.sources[].x"), and the list itself is declared first with record_list().
// A key without a default is required unless optional=true. Every adder returns *this.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mantissa {

enum class KeyType {
  integer,
  real,
  boolean,
  string,
  choice,
  real_list,
  int_list,
  string_list,
  record_list,
  bool_list
};

// One declared key. Public so that tools (deck-doc, the validator) can walk the schema.
struct KeyDef {
  std::string path;  // schema path, "[]" marks the elements of a record list
  std::string doc;
  KeyType type = KeyType::string;
  bool optional = false;  // may be absent even without a default
  bool has_default = false;
  // The default, in the member that matches `type`.
  std::int64_t int_default = 0;
  double real_default = 0.0;
  bool bool_default = false;
  std::string string_default;
  std::vector<double> reals_default;
  std::vector<std::int64_t> ints_default;
  std::vector<std::string> strings_default;
  std::vector<bool> bools_default;
  // Ranges: numbers (integer, real) and list lengths (real_list, int_list).
  std::int64_t int_min = 0, int_max = 0;
  double real_min = 0.0, real_max = 0.0;
  std::size_t min_len = 0, max_len = 0;
  std::vector<std::string> choices;

  // A record list that is not optional needs at least one element.
  bool required() const { return !has_default && !optional; }
};

class Schema {
 public:
  Schema& integer(const std::string& path, const std::string& doc, std::optional<std::int64_t> def,
                  std::int64_t min, std::int64_t max, bool optional = false);
  Schema& real(const std::string& path, const std::string& doc, std::optional<double> def, double min,
               double max, bool optional = false);
  Schema& boolean(const std::string& path, const std::string& doc, std::optional<bool> def,
                  bool optional = false);
  Schema& string(const std::string& path, const std::string& doc, std::optional<std::string> def,
                 bool optional = false);
  Schema& choice(const std::string& path, const std::string& doc, std::vector<std::string> choices,
                 std::optional<std::string> def, bool optional = false);
  Schema& real_list(const std::string& path, const std::string& doc, std::optional<std::vector<double>> def,
                    std::size_t min_len, std::size_t max_len, bool optional = false);
  Schema& int_list(const std::string& path, const std::string& doc,
                   std::optional<std::vector<std::int64_t>> def, std::size_t min_len, std::size_t max_len,
                   bool optional = false);
  Schema& string_list(const std::string& path, const std::string& doc,
                      std::optional<std::vector<std::string>> def, bool optional = false);
  Schema& record_list(const std::string& path, const std::string& doc, bool optional = true);
  // Beyond the agreed API: a list of booleans (mesh.periodic).
  Schema& bool_list(const std::string& path, const std::string& doc, std::optional<std::vector<bool>> def,
                    std::size_t min_len, std::size_t max_len, bool optional = false);

  // A one-line description of a section (a map such as "mesh" or "seismic.pml"), used by
  // deck-doc. Optional: sections exist implicitly through their keys.
  Schema& section(const std::string& path, const std::string& doc);

  // Marks a top-level section as a physics' own (its name is the deck's `physics:` value, e.g.
  // "seismic"): its required keys are required only in decks whose physics it is, so a deck of
  // one physics need not carry another's section.
  Schema& physics_section(const std::string& name);
  bool is_physics_section(const std::string& name) const;

  // A key that no longer exists: a deck that still gives it is refused with "key 'path' was
  // removed: <what to do instead>" (not a did-you-mean), and deck-doc lists it.
  Schema& removed(const std::string& path, const std::string& instead);
  // What to do instead of a removed key, or nullptr when `path` was never removed.
  const std::string* removed_instead(const std::string& path) const;

  // Declared keys in declaration order (the order resolved_yaml() and deck-doc use).
  const std::vector<KeyDef>& keys() const { return m_keys; }
  // The key with this schema path, or nullptr.
  const KeyDef* find(const std::string& path) const;
  // Whether `path` is a map that holds declared keys (a section such as "mesh").
  bool is_section(const std::string& path) const;
  // Names of the direct children of a section ("" is the top level; "a.b[]" an element of a
  // record list), in declaration order.
  std::vector<std::string> children(const std::string& section_path) const;
  // The doc given with section(), or "".
  std::string section_doc(const std::string& path) const;

  // What a value of this key must be, in words: "an integer in [2, 3]".
  static std::string expected(const KeyDef& key);
  // The default in deck syntax ("[1.0, 1.0]", "\"out\""), or "" when there is none.
  static std::string default_text(const KeyDef& key);
  // Markdown reference: one section per top-level key with a table of key, type, default,
  // range/choices and doc.
  std::string to_markdown() const;

 private:
  KeyDef& add(const std::string& path, const std::string& doc, KeyType type, bool optional);

  std::vector<KeyDef> m_keys;
  std::vector<std::pair<std::string, std::string>> m_section_docs;
  std::vector<std::string> m_physics_sections;
  std::vector<std::pair<std::string, std::string>> m_removed;
};

// The core sections: physics, run, mesh, checkpoint, output, logging.
void register_core_schema(Schema& schema);

}  // namespace mantissa
