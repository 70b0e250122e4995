#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/detail/deck_text.hpp>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace mantissa {

namespace detail {

struct DeckValue {
  KeyType type = KeyType::string;
  std::int64_t i = 0;
  double r = 0.0;
  bool b = false;
  std::string s;
  std::vector<double> reals;
  std::vector<std::int64_t> ints;
  std::vector<std::string> strings;
  std::vector<bool> bools;
  std::string origin;  // "file:line:col", "command line override '...'" or "default of ..."
  bool given = false;
};

struct DeckData {
  std::string file;
  Schema schema;
  std::map<std::string, DeckValue> values;     // concrete path -> value
  std::map<std::string, std::size_t> counts;   // concrete path of a record list -> elements
  std::map<std::string, std::string> origins;  // concrete path of a map/list -> location
  std::string resolved;
  std::string hash;
};

}  // namespace detail

namespace {

using detail::DeckData;
using detail::DeckValue;

std::string join_path(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "." + b;
}

// "seismic.sources[2].x" -> "seismic.sources[].x"; an index that is not a number is an error
// reported by the caller (returns false).
// Counts the YAML documents of a text (at most k_max_documents) without building nodes.
constexpr std::size_t k_max_documents = 64;
struct DocumentCounter : YAML::EventHandler {
  std::size_t docs = 0;
  void OnDocumentStart(const YAML::Mark&) override { ++docs; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
  }
  void OnMapEnd() override {}
};
std::size_t count_documents(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  std::size_t calls = 0;
  while (calls < k_max_documents && parser.HandleNextDocument(counter)) ++calls;
  return calls;
}

bool schema_path_of(const std::string& concrete, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < concrete.size(); ++i) {
    if (concrete[i] != '[') {
      out += concrete[i];
      continue;
    }
    const std::size_t close = concrete.find(']', i);
    if (close == std::string::npos || close == i + 1) return false;
    for (std::size_t k = i + 1; k < close; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(concrete[k]))) return false;
    }
    out += "[]";
    i = close;
  }
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string leaf_of(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
  if (leaf.size() > 2 && leaf.compare(leaf.size() - 2, 2, "[]") == 0) leaf.resize(leaf.size() - 2);
  return leaf;
}

// A string that YAML reads back as the same string without quotes.
bool plain_safe(const std::string& s) {
  if (s.empty()) return false;
  const unsigned char c0 = static_cast<unsigned char>(s[0]);
  if (!(std::isalpha(c0) || s[0] == '_' || s[0] == '/')) return false;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!(std::isalnum(c) || ch == '_' || ch == '.' || ch == '-' || ch == '/')) return false;
  }
  static const std::set<std::string> special{"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  return special.count(lower(s)) == 0;
}

std::string scalar_text(const std::string& s) {
  return plain_safe(s) ? s : detail::deck_quote(s);
}

std::string value_text(const DeckValue& v) {
  std::vector<std::string> items;
  switch (v.type) {
    case KeyType::integer:
      return std::to_string(v.i);
    case KeyType::real:
      return detail::deck_real(v.r);
    case KeyType::boolean:
      return v.b ? "true" : "false";
    case KeyType::string:
    case KeyType::choice:
      return scalar_text(v.s);
    case KeyType::real_list:
      for (const double x : v.reals) items.push_back(detail::deck_real(x));
      return detail::deck_flow(items);
    case KeyType::int_list:
      for (const std::int64_t x : v.ints) items.push_back(std::to_string(x));
      return detail::deck_flow(items);
    case KeyType::string_list:
      for (const std::string& x : v.strings) items.push_back(scalar_text(x));
      return detail::deck_flow(items);
    case KeyType::bool_list:
      for (const bool x : v.bools) items.push_back(x ? "true" : "false");
      return detail::deck_flow(items);
    case KeyType::record_list:
      break;
  }
  return "";
}

DeckValue default_value(const KeyDef& k) {
  DeckValue v;
  v.type = k.type;
  v.i = k.int_default;
  v.r = k.real_default;
  v.b = k.bool_default;
  v.s = k.string_default;
  v.reals = k.reals_default;
  v.ints = k.ints_default;
  v.strings = k.strings_default;
  v.bools = k.bools_default;
  v.origin = "default of " + k.path;
  v.given = false;
  return v;
}

// Builds a DeckData from YAML text and overrides; every failure throws mantissa::Error.
class Builder {
 public:
  Builder(DeckData& data) : m_d(data), m_s(data.schema) {}

  void load(const std::string& text) {
    check_text(text);
    std::vector<YAML::Node> docs;
    try {
      // yaml-cpp 0.7's LoadAll never ends on a stray ',' at the top level (each call yields
      // another empty document until memory runs out: found by tests/fuzz), so the documents
      // are counted first, with a bound.
      const std::size_t n = count_documents(text);
      if (n >= k_max_documents)
        throw Error(
            fmt::format("{}: malformed YAML: the parser does not get past the start of the file "
                        "(a stray ',' at the top level?); a deck is one YAML map of sections "
                        "such as 'mesh:' and 'run:'",
                        m_d.file));
      if (n > 1)
        docs = YAML::LoadAll(text);
      else
        docs.push_back(YAML::Load(text));
    } catch (const YAML::Exception& e) {
      throw Error(
          fmt::format("{}: malformed YAML: {}; fix the syntax at that position (indentation, "
                      "a missing ':' or an unclosed bracket or quote)",
                      loc(e.mark), e.msg));
    }
    std::size_t non_empty = 0;
    for (const auto& d : docs) non_empty += d.IsNull() ? 0 : 1;
    if (non_empty == 0) {
      throw Error(
          fmt::format("{}: the deck is empty; expected a YAML map of sections such as 'mesh:' and "
                      "'run:' (see docs/deck.md or inputs/ for examples)",
                      m_d.file));
    }
    if (docs.size() > 1) {
      throw Error(
          fmt::format("{}: the file holds {} YAML documents (separated by '---'); a deck is one "
                      "document: remove the extra ones",
                      m_d.file, docs.size()));
    }
    const YAML::Node& root = docs.front();
    if (!root.IsMap()) {
      throw Error(
          fmt::format("{}: the top level of a deck must be a map of sections such as 'mesh:', got "
                      "{}",
                      loc(root.Mark()), describe(root)));
    }
    m_d.origins[""] = m_d.file;
    walk_map(root, "", "");
  }

  void apply_override(const std::string& text) {
    const std::string where = "command line override '" + text + "'";
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error(where + ": expected key.path=value, e.g. mesh.n=[64,64] or run.name=test");
    }
    std::string cpath = text.substr(0, eq);
    while (!cpath.empty() && std::isspace(static_cast<unsigned char>(cpath.back()))) cpath.pop_back();
    const std::string value = text.substr(eq + 1);
    std::string spath;
    if (!schema_path_of(cpath, spath)) {
      throw Error(fmt::format("{}: '{}' has a malformed element index; write list[0].key", where, cpath));
    }
    const KeyDef* def = m_s.find(spath);
    if (def == nullptr) {
      if (m_s.is_section(spath)) {
        throw Error(fmt::format("{}: '{}' is a section, not a key; override one of its keys: {}", where,
                                cpath, key_list(spath, cpath)));
      }
      if (const std::string* instead = m_s.removed_instead(spath))
        throw Error(fmt::format("{}: key '{}' was removed: {}", where, cpath, *instead));
      const std::size_t dot = spath.rfind('.');
      const std::string parent_s = dot == std::string::npos ? "" : spath.substr(0, dot);
      const std::size_t cdot = cpath.rfind('.');
      const std::string parent_c = cdot == std::string::npos ? "" : cpath.substr(0, cdot);
      throw Error(fmt::format("{}: unknown key '{}'{}", where, cpath,
                              suggestion(parent_s, parent_c, leaf_of(spath))));
    }
    if (def->type == KeyType::record_list) {
      throw Error(
          fmt::format("{}: '{}' is a list of records and cannot be replaced on the command line; "
                      "override a key of one element instead, e.g. {}[0].<key>=value",
                      where, cpath, cpath));
    }
    // Every element index must exist: overrides change values, they do not add elements.
    for (std::size_t open = cpath.find('['); open != std::string::npos; open = cpath.find('[', open + 1)) {
      const std::string list = cpath.substr(0, open);
      const std::size_t close = cpath.find(']', open);
      // Digits only (schema_path_of checked them); an index beyond any list is "no element"
      // (std::stoul would throw out_of_range for one that does not fit: found by tests/fuzz).
      const std::string digits = cpath.substr(open + 1, close - open - 1);
      std::size_t index = 0;
      for (const char c : digits) {
        index = index > (std::numeric_limits<std::size_t>::max() - 9) / 10
                    ? std::numeric_limits<std::size_t>::max()
                    : index * 10 + static_cast<std::size_t>(c - '0');
      }
      const auto it = m_d.counts.find(list);
      const std::size_t n = it == m_d.counts.end() ? 0 : it->second;
      if (index >= n) {
        throw Error(
            fmt::format("{}: '{}' has no element {} (the deck gives {} element{}); add the element "
                        "in the deck file",
                        where, list, index, n, n == 1 ? "" : "s"));
      }
    }
    YAML::Node node;
    try {
      node = YAML::Load(value);
    } catch (const YAML::Exception& e) {
      throw Error(fmt::format("{}: {}: the value '{}' is not valid YAML ({}); expected {}", where, cpath,
                              value, e.msg, Schema::expected(*def)));
    }
    DeckValue v = convert(*def, node, where, cpath);
    m_d.values[cpath] = std::move(v);
  }

  void finish() {
    std::vector<std::string> missing;
    // Another physics' section (Schema::physics_section) is neither required of this deck nor
    // filled with defaults: a cfd deck carries no seismic keys.
    std::string physics;
    if (const auto it = m_d.values.find("physics");
        it != m_d.values.end() && it->second.type == KeyType::string)
      physics = it->second.s;
    else if (const KeyDef* pk = m_s.find("physics"); pk && pk->has_default)
      physics = pk->string_default;
    for (const KeyDef& k : m_s.keys()) {
      const std::string top = k.path.substr(0, k.path.find_first_of(".["));
      if (top != physics && m_s.is_physics_section(top)) continue;
      std::vector<std::string> concrete;
      expand("", k.path, concrete);
      for (const std::string& cp : concrete) {
        if (k.type == KeyType::record_list) {
          if (m_d.counts.count(cp) == 0 && !k.optional) missing.push_back(cp);
          continue;
        }
        if (m_d.values.count(cp)) continue;
        if (k.has_default) {
          m_d.values[cp] = default_value(k);
        } else if (!k.optional) {
          missing.push_back(cp);
        }
      }
    }
    if (!missing.empty()) {
      std::vector<std::string> lines;
      for (const std::string& cp : missing) {
        std::string sp;
        schema_path_of(cp, sp);
        const KeyDef* k = m_s.find(sp);
        const std::size_t dot = cp.rfind('.');
        std::string parent = dot == std::string::npos ? "" : cp.substr(0, dot);
        auto it = m_d.origins.find(parent);
        while (it == m_d.origins.end() && !parent.empty()) {
          const std::size_t d2 = parent.rfind('.');
          parent = d2 == std::string::npos ? "" : parent.substr(0, d2);
          it = m_d.origins.find(parent);
        }
        const std::string where = it == m_d.origins.end() ? m_d.file : it->second;
        lines.push_back(fmt::format("{}: missing required key '{}'; expected {} ({})", where, cp,
                                    Schema::expected(*k), k->doc));
      }
      throw Error(detail::deck_join(lines, "\n"));
    }
    m_d.resolved = detail::deck_join(emit_map("", ""), "\n") + "\n";
    // The identity of what is computed: where the files go (run.output_dir, run.name) is not
    // part of it, so that a moved or renamed run directory still resumes; nor are the keys
    // that change how a run is watched, paced and spread over ranks but not what it computes
    // (the wall-time limit, the checkpoint cadence, logging, the process grid: checkpoints are
    // read at any rank count), so that a resumed job may have another time limit or size.
    std::map<std::string, DeckValue> placement;
    for (const char* k :
         {"run.output_dir", "run.name", "run.wall_time_limit", "mesh.process_grid", "checkpoint.every",
          "checkpoint.interval", "checkpoint.phase_end", "checkpoint.keep", "logging.level",
          "logging.per_rank", "logging.progress_every", "logging.timer_fence"}) {
      const auto it = m_d.values.find(k);
      if (it == m_d.values.end()) continue;
      placement.emplace(k, it->second);
      m_d.values.erase(it);
    }
    m_d.hash = detail::deck_fnv1a_hex(detail::deck_join(emit_map("", ""), "\n") + "\n");
    for (auto& kv : placement) m_d.values.emplace(kv.first, std::move(kv.second));
  }

 private:
  std::string loc(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return m_d.file;
    return fmt::format("{}:{}:{}", m_d.file, m.line + 1, m.column + 1);
  }

  static std::string describe(const YAML::Node& n) {
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a map";
    if (n.IsNull()) return "nothing";
    std::string s = n.Scalar();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return (n.Tag() == "!" ? "the quoted string " : "") + detail::deck_quote(s);
  }

  // A string value that is not UTF-8 although the file is: a YAML escape ("\\xff") made a single
  // byte. The resolved deck could not be read back, so such a value is refused.
  static constexpr const char* not_utf8 =
      "got a string that is not valid UTF-8 (a YAML escape such as \\xff made a single byte); write "
      "the character itself";
  static bool valid_utf8(const std::string& t) {
    for (std::size_t i = 0; i < t.size();) {
      const auto c = static_cast<unsigned char>(t[i]);
      if (c < 0x80) {
        ++i;
        continue;
      }
      const std::size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
      if (len < 2 || i + len > t.size() || c == 0xC0 || c == 0xC1 || c > 0xF4) return false;
      for (std::size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(t[i + k]) & 0xC0) != 0x80) return false;
      i += len;
    }
    return true;
  }

  // Binary garbage and non-UTF-8 text are refused before the YAML parser sees them, with the
  // position of the first offending byte.
  void check_text(const std::string& text) const {
    int line = 1, col = 1;
    for (std::size_t i = 0; i < text.size();) {
      const auto c = static_cast<unsigned char>(text[i]);
      std::size_t len = 1;
      const char* problem = nullptr;
      if (c == 0) {
        problem = "a NUL byte";
      } else if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f) {
        problem = "a control character";
      } else if (c >= 0x80) {
        len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        bool ok = len >= 2 && i + len <= text.size() && !(c == 0xC0 || c == 0xC1) && c <= 0xF4;
        for (std::size_t k = 1; ok && k < len; ++k) {
          ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
        }
        if (!ok) problem = "not valid UTF-8";
      }
      if (problem) {
        throw Error(
            fmt::format("{}:{}:{}: not a YAML text file: byte {} (0x{:02x}) is {}; a deck must be UTF-8 "
                        "YAML text (is this the right file?)",
                        m_d.file, line, col, i, c, problem));
      }
      if (c == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
      i += len;
    }
  }

  std::string key_list(const std::string& section, const std::string& concrete) const {
    std::vector<std::string> names;
    for (const std::string& c : m_s.children(section)) names.push_back(join_path(concrete, c));
    return detail::deck_join(names, ", ");
  }

  // "; did you mean 'mesh.spacing'?" for a misspelling among the siblings, else for the same
  // name in another section, else the list of valid keys of the section.
  std::string suggestion(const std::string& section, const std::string& concrete,
                         const std::string& name) const {
    const std::size_t limit = name.size() <= 3 ? 1 : name.size() <= 7 ? 2 : 3;
    std::size_t best = limit + 1;
    std::string best_name;
    for (const std::string& c : m_s.children(section)) {
      const std::size_t d = detail::deck_edit_distance(lower(name), lower(c));
      if (d < best) {
        best = d;
        best_name = join_path(concrete, c);
      }
    }
    if (!best_name.empty()) return fmt::format("; did you mean '{}'?", best_name);
    for (const KeyDef& k : m_s.keys()) {
      if (detail::deck_edit_distance(lower(name), lower(leaf_of(k.path))) <= (name.size() <= 3 ? 0u : 1u)) {
        return fmt::format("; did you mean '{}'? (that key belongs in another section)", k.path);
      }
    }
    const std::string where = concrete.empty() ? "at the top level" : "in '" + concrete + "'";
    return fmt::format("; valid keys {}: {}", where, key_list(section, concrete));
  }

  DeckValue convert(const KeyDef& k, const YAML::Node& n, const std::string& where,
                    const std::string& cpath) const {
    DeckValue v;
    v.type = k.type;
    v.origin = where;
    v.given = true;
    const std::string expected = Schema::expected(k);
    auto fail = [&](const std::string& what) -> Error {
      return Error(fmt::format("{}: {}: {}; expected {}", where, cpath, what, expected));
    };
    if (n.IsNull()) throw fail("no value given");
    const bool quoted = n.IsScalar() && n.Tag() == "!";
    auto scalar_int = [&](const YAML::Node& e, const std::string& p, std::int64_t& out) {
      double r = 0.0;
      if (!e.IsScalar()) throw fail(fmt::format("{}got {}", p, describe(e)));
      if (e.Tag() == "!") throw fail(fmt::format("{}got {} (remove the quotes)", p, describe(e)));
      if (detail::deck_parse_int(e.Scalar(), out)) return;
      if (detail::deck_parse_real(e.Scalar(), r))
        throw fail(fmt::format("{}got {} (not a whole number)", p, e.Scalar()));
      throw fail(fmt::format("{}got {}", p, describe(e)));
    };
    auto scalar_real = [&](const YAML::Node& e, const std::string& p, double& out) {
      if (!e.IsScalar()) throw fail(fmt::format("{}got {}", p, describe(e)));
      if (e.Tag() == "!") throw fail(fmt::format("{}got {} (remove the quotes)", p, describe(e)));
      if (!detail::deck_parse_real(e.Scalar(), out)) throw fail(fmt::format("{}got {}", p, describe(e)));
      if (std::isnan(out)) throw fail(fmt::format("{}got NaN", p));
    };
    auto sequence = [&]() {
      if (!n.IsSequence()) throw fail("got " + describe(n));
      if (n.size() < k.min_len || n.size() > k.max_len) {
        throw fail(fmt::format("got a list of {} element{}", n.size(), n.size() == 1 ? "" : "s"));
      }
    };
    switch (k.type) {
      case KeyType::integer:
        scalar_int(n, "", v.i);
        if (v.i < k.int_min || v.i > k.int_max) throw fail(fmt::format("{} is out of range", v.i));
        break;
      case KeyType::real:
        scalar_real(n, "", v.r);
        if (!(v.r >= k.real_min && v.r <= k.real_max))
          throw fail(fmt::format("{} is out of range", n.Scalar()));
        break;
      case KeyType::boolean:
        if (!n.IsScalar() || quoted || !detail::deck_parse_bool(n.Scalar(), v.b))
          throw fail("got " + describe(n));
        break;
      case KeyType::string:
        if (!n.IsScalar()) throw fail("got " + describe(n));
        v.s = n.Scalar();
        if (!valid_utf8(v.s)) throw fail(not_utf8);
        break;
      case KeyType::choice:
        if (!n.IsScalar()) throw fail("got " + describe(n));
        v.s = n.Scalar();
        if (std::find(k.choices.begin(), k.choices.end(), v.s) == k.choices.end()) {
          std::string hint;
          std::size_t best = 3;
          for (const auto& c : k.choices) {
            const std::size_t d = detail::deck_edit_distance(lower(v.s), lower(c));
            if (d < best) {
              best = d;
              hint = fmt::format(" (did you mean '{}'?)", c);
            }
          }
          throw fail(fmt::format("got {}{}", describe(n), hint));
        }
        break;
      case KeyType::real_list:
        sequence();
        for (std::size_t i = 0; i < n.size(); ++i) {
          double x = 0.0;
          scalar_real(n[i], fmt::format("element {} ", i), x);
          v.reals.push_back(x);
        }
        break;
      case KeyType::int_list:
        sequence();
        for (std::size_t i = 0; i < n.size(); ++i) {
          std::int64_t x = 0;
          scalar_int(n[i], fmt::format("element {} ", i), x);
          v.ints.push_back(x);
        }
        break;
      case KeyType::string_list:
        sequence();
        for (std::size_t i = 0; i < n.size(); ++i) {
          if (!n[i].IsScalar()) throw fail(fmt::format("element {} is {}", i, describe(n[i])));
          if (!valid_utf8(n[i].Scalar())) throw fail(fmt::format("element {}: {}", i, not_utf8));
          v.strings.push_back(n[i].Scalar());
        }
        break;
      case KeyType::bool_list:
        sequence();
        for (std::size_t i = 0; i < n.size(); ++i) {
          bool x = false;
          if (!n[i].IsScalar() || n[i].Tag() == "!" || !detail::deck_parse_bool(n[i].Scalar(), x)) {
            throw fail(fmt::format("element {} got {}", i, describe(n[i])));
          }
          v.bools.push_back(x);
        }
        break;
      case KeyType::record_list:
        break;
    }
    return v;
  }

  void walk_map(const YAML::Node& map, const std::string& section, const std::string& concrete) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      const std::string here = concrete.empty() ? "the top level" : "'" + concrete + "'";
      if (!key.IsScalar()) {
        throw Error(fmt::format("{}: a key in {} is {}; keys must be plain names", loc(key.Mark()), here,
                                describe(key)));
      }
      const std::string name = key.Scalar();
      const std::string spath = join_path(section, name);
      const std::string cpath = join_path(concrete, name);
      if (!seen.insert(name).second) {
        throw Error(fmt::format("{}: duplicate key '{}'; each key may appear once, remove one of them",
                                loc(key.Mark()), cpath));
      }
      const YAML::Mark vmark = value.IsNull() || value.Mark().is_null() ? key.Mark() : value.Mark();
      const KeyDef* def = m_s.find(spath);
      if (def && def->type == KeyType::record_list) {
        std::size_t n = 0;
        if (!value.IsNull() && !value.IsSequence()) {
          throw Error(fmt::format("{}: {}: got {}; expected {}", loc(vmark), cpath, describe(value),
                                  Schema::expected(*def)));
        }
        if (value.size() < def->min_len) {
          throw Error(fmt::format("{}: {}: got an empty list; give at least one element ({})", loc(vmark),
                                  cpath, def->doc));
        }
        if (!value.IsNull()) {
          n = value.size();
          for (std::size_t i = 0; i < n; ++i) {
            const YAML::Node elem = value[i];
            const std::string ep = fmt::format("{}[{}]", cpath, i);
            if (!elem.IsMap()) {
              throw Error(fmt::format("{}: {}: got {}; expected a map of keys: {}", loc(elem.Mark()), ep,
                                      describe(elem), key_list(spath + "[]", ep)));
            }
            m_d.origins[ep] = loc(elem.Mark());
            walk_map(elem, spath + "[]", ep);
          }
        }
        m_d.counts[cpath] = n;
        m_d.origins[cpath] = loc(key.Mark());
      } else if (def) {
        m_d.values[cpath] = convert(*def, value, loc(vmark), cpath);
      } else if (m_s.is_section(spath) && !spath.empty()) {
        m_d.origins[cpath] = loc(key.Mark());
        if (value.IsNull()) continue;  // an empty section: all defaults
        if (!value.IsMap()) {
          throw Error(fmt::format("{}: {}: got {}; expected a section (a map of keys: {})", loc(vmark), cpath,
                                  describe(value), key_list(spath, cpath)));
        }
        walk_map(value, spath, cpath);
      } else if (const std::string* instead = m_s.removed_instead(spath)) {
        throw Error(fmt::format("{}: key '{}' was removed: {}", loc(key.Mark()), cpath, *instead));
      } else {
        throw Error(fmt::format("{}: unknown key '{}'{}", loc(key.Mark()), cpath,
                                suggestion(section, concrete, name)));
      }
    }
  }

  void expand(const std::string& done, const std::string& rest, std::vector<std::string>& out) const {
    const std::size_t pos = rest.find("[]");
    if (pos == std::string::npos) {
      out.push_back(done + rest);
      return;
    }
    const std::string list = done + rest.substr(0, pos);
    const auto it = m_d.counts.find(list);
    const std::size_t n = it == m_d.counts.end() ? 0 : it->second;
    for (std::size_t i = 0; i < n; ++i) expand(fmt::format("{}[{}]", list, i), rest.substr(pos + 2), out);
  }

  std::vector<std::string> emit_map(const std::string& section, const std::string& concrete) const {
    std::vector<std::string> lines;
    for (const std::string& child : m_s.children(section)) {
      const std::string sp = join_path(section, child);
      const std::string cp = join_path(concrete, child);
      const KeyDef* def = m_s.find(sp);
      if (def && def->type == KeyType::record_list) {
        const auto it = m_d.counts.find(cp);
        if (it == m_d.counts.end()) continue;
        if (it->second == 0) {
          lines.push_back(child + ": []");
          continue;
        }
        lines.push_back(child + ":");
        for (std::size_t i = 0; i < it->second; ++i) {
          const auto sub = emit_map(sp + "[]", fmt::format("{}[{}]", cp, i));
          if (sub.empty()) {
            lines.push_back("  - {}");
            continue;
          }
          lines.push_back("  - " + sub[0]);
          for (std::size_t j = 1; j < sub.size(); ++j) lines.push_back("    " + sub[j]);
        }
      } else if (def) {
        const auto it = m_d.values.find(cp);
        if (it != m_d.values.end()) lines.push_back(child + ": " + value_text(it->second));
      } else {
        const auto sub = emit_map(sp, cp);
        if (sub.empty()) continue;
        lines.push_back(child + ":");
        for (const auto& l : sub) lines.push_back("  " + l);
      }
    }
    return lines;
  }

  DeckData& m_d;
  const Schema& m_s;
};

}  // namespace

Deck::Deck() : m_data(std::make_shared<DeckData>()) {}

Deck::Deck(std::shared_ptr<const detail::DeckData> data) : m_data(std::move(data)) {}

Deck Deck::from_string(const std::string& yaml, const std::string& name, const Schema& schema,
                       const std::vector<std::string>& overrides) {
  auto data = std::make_shared<DeckData>();
  data->file = name;
  data->schema = schema;
  Builder b(*data);
  b.load(yaml);
  for (const std::string& o : overrides) b.apply_override(o);
  b.finish();
  return Deck(std::move(data));
}

Deck Deck::from_file(const std::string& file, const Schema& schema,
                     const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    throw Error(fmt::format("{}: no such deck file; check the path (decks to copy are in inputs/)", file));
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw Error(fmt::format("{}: not a regular file; give the path of a YAML deck", file));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the deck file for reading; check its permissions", file));
  std::ostringstream ss;
  ss << in.rdbuf();
  return from_string(ss.str(), file, schema, overrides);
}

namespace {

const DeckValue& lookup(const DeckData& d, const std::string& path, const char* wanted,
                        std::initializer_list<KeyType> types) {
  const auto it = d.values.find(path);
  if (it == d.values.end()) {
    std::string sp;
    const KeyDef* k = schema_path_of(path, sp) ? d.schema.find(sp) : nullptr;
    if (k && k->type != KeyType::record_list) {
      throw Error(fmt::format("{}: '{}' was not given and has no default (it is optional); check has() first",
                              d.file, path));
    }
    throw Error(
        fmt::format("{}: no key '{}' in this deck (a bug in the caller: the schema declares no such "
                    "key or the element does not exist)",
                    d.file, path));
  }
  if (std::find(types.begin(), types.end(), it->second.type) == types.end()) {
    throw Error(fmt::format("{}: '{}' is not {} (a bug in the caller: use the getter of its type)", d.file,
                            path, wanted));
  }
  return it->second;
}

}  // namespace

bool Deck::has(const std::string& path) const {
  return m_data->values.count(path) != 0 || m_data->counts.count(path) != 0;
}

std::int64_t Deck::get_int(const std::string& path) const {
  return lookup(*m_data, path, "an integer", {KeyType::integer}).i;
}

double Deck::get_real(const std::string& path) const {
  const DeckValue& v = lookup(*m_data, path, "a real", {KeyType::real, KeyType::integer});
  return v.type == KeyType::integer ? static_cast<double>(v.i) : v.r;
}

bool Deck::get_bool(const std::string& path) const {
  return lookup(*m_data, path, "a boolean", {KeyType::boolean}).b;
}

std::string Deck::get_string(const std::string& path) const {
  return lookup(*m_data, path, "a string or choice", {KeyType::string, KeyType::choice}).s;
}

std::vector<double> Deck::get_reals(const std::string& path) const {
  const DeckValue& v = lookup(*m_data, path, "a list of reals", {KeyType::real_list, KeyType::int_list});
  if (v.type == KeyType::real_list) return v.reals;
  return std::vector<double>(v.ints.begin(), v.ints.end());
}

std::vector<std::int64_t> Deck::get_ints(const std::string& path) const {
  return lookup(*m_data, path, "a list of integers", {KeyType::int_list}).ints;
}

std::vector<std::string> Deck::get_strings(const std::string& path) const {
  return lookup(*m_data, path, "a list of strings", {KeyType::string_list}).strings;
}

std::vector<bool> Deck::get_bools(const std::string& path) const {
  return lookup(*m_data, path, "a list of booleans", {KeyType::bool_list}).bools;
}

std::size_t Deck::count(const std::string& path) const {
  const auto it = m_data->counts.find(path);
  return it == m_data->counts.end() ? 0 : it->second;
}

std::string Deck::resolved_yaml() const {
  return m_data->resolved;
}
std::string Deck::hash() const {
  return m_data->hash;
}
const std::string& Deck::file() const {
  return m_data->file;
}
const Schema& Deck::schema() const {
  return m_data->schema;
}

std::string Deck::where(const std::string& path) const {
  const auto it = m_data->values.find(path);
  if (it != m_data->values.end()) return it->second.origin;
  const auto o = m_data->origins.find(path);
  return o != m_data->origins.end() ? o->second : m_data->file;
}

bool Deck::given(const std::string& path) const {
  const auto it = m_data->values.find(path);
  if (it != m_data->values.end()) return it->second.given;
  return m_data->counts.count(path) != 0;
}

}  // namespace mantissa
