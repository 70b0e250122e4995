#pragma once
// A validated input deck: YAML text checked against a Schema, with command-line overrides
// applied and defaults filled in. Every user error (malformed YAML, unknown or misspelled key,
// wrong type, out of range, missing required key) throws mantissa::Error naming the file,
// line and column, the key path, what was expected and, for misspellings, the nearest valid
// key. A Deck is immutable and cheap to copy.
#include <mantissa/core/Schema.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mantissa {

namespace detail {
struct DeckData;
}

class Deck {
 public:
  // An empty deck: has() is false for every key. Real decks come from from_file/from_string.
  Deck();

  // Overrides are "key.path=value" with a YAML scalar or flow sequence as value
  // ("mesh.n=[128,128]", "seismic.sources[1].x=0.5"); they are validated like the file.
  static Deck from_file(const std::string& file, const Schema& schema,
                        const std::vector<std::string>& overrides = {});
  static Deck from_string(const std::string& yaml, const std::string& name, const Schema& schema,
                          const std::vector<std::string>& overrides = {});

  bool has(const std::string& path) const;              // given or defaulted
  std::int64_t get_int(const std::string& path) const;  // element access: "seismic.sources[2].x"
  double get_real(const std::string& path) const;       // integers convert
  bool get_bool(const std::string& path) const;
  std::string get_string(const std::string& path) const;         // also for choices
  std::vector<double> get_reals(const std::string& path) const;  // integer lists convert
  std::vector<std::int64_t> get_ints(const std::string& path) const;
  std::vector<std::string> get_strings(const std::string& path) const;
  std::vector<bool> get_bools(const std::string& path) const;  // beyond the agreed API
  std::size_t count(const std::string& path) const;            // elements of a record list (0 if absent)
  std::string resolved_yaml() const;  // whole deck with defaults filled in, in schema order
  // 64-bit FNV-1a (16 hex digits) of resolved_yaml() without run.output_dir, run.name,
  // run.wall_time_limit, mesh.process_grid, checkpoint.every/keep and logging.*: the identity
  // of what the deck computes, not of where its files go, how it is paced or over how many
  // ranks (a moved run, or one resumed with another time limit or rank count, resumes).
  std::string hash() const;
  const std::string& file() const;

  // Where a value came from, for messages of checks that span several keys:
  // "deck.yaml:12:5", "command line override 'mesh.n=[8,8]'" or "default of mesh.n".
  std::string where(const std::string& path) const;
  // Whether the value was given (in the file or on the command line), not defaulted.
  bool given(const std::string& path) const;
  const Schema& schema() const;

 private:
  explicit Deck(std::shared_ptr<const detail::DeckData> data);
  std::shared_ptr<const detail::DeckData> m_data;
};

}  // namespace mantissa
