#include <mantissa/core/Error.hpp>
#include <mantissa/core/Schema.hpp>
#include <mantissa/core/detail/deck_text.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mantissa {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string int_text(std::int64_t v) {
  return std::to_string(v);
}

// "[2, 3]", ">= 1", "<= 5" or "any": open ends are the extreme values of the type.
std::string int_range(std::int64_t lo, std::int64_t hi) {
  const bool open_lo = lo == std::numeric_limits<std::int64_t>::min();
  const bool open_hi = hi == std::numeric_limits<std::int64_t>::max();
  if (open_lo && open_hi) return "";
  if (open_hi) return ">= " + int_text(lo);
  if (open_lo) return "<= " + int_text(hi);
  return "[" + int_text(lo) + ", " + int_text(hi) + "]";
}

std::string real_range(double lo, double hi) {
  const bool open_lo = std::isinf(lo) || lo == std::numeric_limits<double>::lowest();
  const bool open_hi = std::isinf(hi) || hi == std::numeric_limits<double>::max();
  if (open_lo && open_hi) return "";
  if (open_hi) return ">= " + fmt::format("{}", lo);
  if (open_lo) return "<= " + fmt::format("{}", hi);
  return "[" + fmt::format("{}", lo) + ", " + fmt::format("{}", hi) + "]";
}

std::string length_text(std::size_t lo, std::size_t hi) {
  if (lo == hi) return std::to_string(lo);
  if (hi == std::numeric_limits<std::size_t>::max()) return std::to_string(lo) + " or more";
  return std::to_string(lo) + " to " + std::to_string(hi);
}

std::string type_name(KeyType t) {
  switch (t) {
    case KeyType::integer:
      return "integer";
    case KeyType::real:
      return "real";
    case KeyType::boolean:
      return "boolean";
    case KeyType::string:
      return "string";
    case KeyType::choice:
      return "choice";
    case KeyType::real_list:
      return "list of reals";
    case KeyType::int_list:
      return "list of integers";
    case KeyType::string_list:
      return "list of strings";
    case KeyType::record_list:
      return "list of records";
    case KeyType::bool_list:
      return "list of booleans";
  }
  return "?";
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

}  // namespace

KeyDef& Schema::add(const std::string& path, const std::string& doc, KeyType type, bool optional) {
  MANTISSA_ASSERT(
      !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos,
      "schema path '" << path << "' is malformed");
  MANTISSA_ASSERT(find(path) == nullptr, "schema key '" << path << "' is declared twice");
  MANTISSA_ASSERT(!is_section(path), "schema key '" << path << "' is already a section");
  // No declared key may be a prefix (a section) of this one, and every "[]" must follow a
  // declared record list.
  for (std::size_t pos = path.find('.'); pos != std::string::npos; pos = path.find('.', pos + 1)) {
    std::string parent = path.substr(0, pos);
    if (parent.size() > 2 && parent.compare(parent.size() - 2, 2, "[]") == 0) {
      const KeyDef* list = find(parent.substr(0, parent.size() - 2));
      MANTISSA_ASSERT(list && list->type == KeyType::record_list,
                      "schema key '" << path << "': declare '" << parent.substr(0, parent.size() - 2)
                                     << "' with record_list() first");
    } else {
      MANTISSA_ASSERT(find(parent) == nullptr,
                      "schema key '" << path << "' lies below the key '" << parent << "'");
    }
  }
  KeyDef k;
  k.path = path;
  k.doc = doc;
  k.type = type;
  k.optional = optional;
  m_keys.push_back(std::move(k));
  return m_keys.back();
}

Schema& Schema::integer(const std::string& path, const std::string& doc, std::optional<std::int64_t> def,
                        std::int64_t min, std::int64_t max, bool optional) {
  MANTISSA_ASSERT(min <= max, "schema key '" << path << "': min > max");
  MANTISSA_ASSERT(!def || (*def >= min && *def <= max), "schema key '" << path << "': default out of range");
  KeyDef& k = add(path, doc, KeyType::integer, optional);
  k.int_min = min;
  k.int_max = max;
  if (def) {
    k.has_default = true;
    k.int_default = *def;
  }
  return *this;
}

Schema& Schema::real(const std::string& path, const std::string& doc, std::optional<double> def, double min,
                     double max, bool optional) {
  MANTISSA_ASSERT(min <= max, "schema key '" << path << "': min > max");
  MANTISSA_ASSERT(!def || (*def >= min && *def <= max), "schema key '" << path << "': default out of range");
  KeyDef& k = add(path, doc, KeyType::real, optional);
  k.real_min = min;
  k.real_max = max;
  if (def) {
    k.has_default = true;
    k.real_default = *def;
  }
  return *this;
}

Schema& Schema::boolean(const std::string& path, const std::string& doc, std::optional<bool> def,
                        bool optional) {
  KeyDef& k = add(path, doc, KeyType::boolean, optional);
  if (def) {
    k.has_default = true;
    k.bool_default = *def;
  }
  return *this;
}

Schema& Schema::string(const std::string& path, const std::string& doc, std::optional<std::string> def,
                       bool optional) {
  KeyDef& k = add(path, doc, KeyType::string, optional);
  if (def) {
    k.has_default = true;
    k.string_default = *def;
  }
  return *this;
}

Schema& Schema::choice(const std::string& path, const std::string& doc, std::vector<std::string> choices,
                       std::optional<std::string> def, bool optional) {
  MANTISSA_ASSERT(!choices.empty(), "schema key '" << path << "' has no choices");
  MANTISSA_ASSERT(!def || std::find(choices.begin(), choices.end(), *def) != choices.end(),
                  "schema key '" << path << "': default '" << *def << "' is not one of the choices");
  KeyDef& k = add(path, doc, KeyType::choice, optional);
  k.choices = std::move(choices);
  if (def) {
    k.has_default = true;
    k.string_default = *def;
  }
  return *this;
}

Schema& Schema::real_list(const std::string& path, const std::string& doc,
                          std::optional<std::vector<double>> def, std::size_t min_len, std::size_t max_len,
                          bool optional) {
  MANTISSA_ASSERT(min_len <= max_len, "schema key '" << path << "': min_len > max_len");
  MANTISSA_ASSERT(!def || (def->size() >= min_len && def->size() <= max_len),
                  "schema key '" << path << "': default has the wrong length");
  KeyDef& k = add(path, doc, KeyType::real_list, optional);
  k.min_len = min_len;
  k.max_len = max_len;
  if (def) {
    k.has_default = true;
    k.reals_default = *def;
  }
  return *this;
}

Schema& Schema::int_list(const std::string& path, const std::string& doc,
                         std::optional<std::vector<std::int64_t>> def, std::size_t min_len,
                         std::size_t max_len, bool optional) {
  MANTISSA_ASSERT(min_len <= max_len, "schema key '" << path << "': min_len > max_len");
  MANTISSA_ASSERT(!def || (def->size() >= min_len && def->size() <= max_len),
                  "schema key '" << path << "': default has the wrong length");
  KeyDef& k = add(path, doc, KeyType::int_list, optional);
  k.min_len = min_len;
  k.max_len = max_len;
  if (def) {
    k.has_default = true;
    k.ints_default = *def;
  }
  return *this;
}

Schema& Schema::string_list(const std::string& path, const std::string& doc,
                            std::optional<std::vector<std::string>> def, bool optional) {
  KeyDef& k = add(path, doc, KeyType::string_list, optional);
  k.min_len = 0;
  k.max_len = std::numeric_limits<std::size_t>::max();
  if (def) {
    k.has_default = true;
    k.strings_default = *def;
  }
  return *this;
}

Schema& Schema::bool_list(const std::string& path, const std::string& doc,
                          std::optional<std::vector<bool>> def, std::size_t min_len, std::size_t max_len,
                          bool optional) {
  MANTISSA_ASSERT(min_len <= max_len, "schema key '" << path << "': min_len > max_len");
  MANTISSA_ASSERT(!def || (def->size() >= min_len && def->size() <= max_len),
                  "schema key '" << path << "': default has the wrong length");
  KeyDef& k = add(path, doc, KeyType::bool_list, optional);
  k.min_len = min_len;
  k.max_len = max_len;
  if (def) {
    k.has_default = true;
    k.bools_default = *def;
  }
  return *this;
}

Schema& Schema::record_list(const std::string& path, const std::string& doc, bool optional) {
  KeyDef& k = add(path, doc, KeyType::record_list, optional);
  k.min_len = optional ? 0 : 1;
  k.max_len = std::numeric_limits<std::size_t>::max();
  return *this;
}

Schema& Schema::section(const std::string& path, const std::string& doc) {
  MANTISSA_ASSERT(find(path) == nullptr, "'" << path << "' is a key, not a section");
  for (auto& [p, d] : m_section_docs) {
    if (p == path) {
      d = doc;
      return *this;
    }
  }
  m_section_docs.emplace_back(path, doc);
  return *this;
}

const KeyDef* Schema::find(const std::string& path) const {
  for (const KeyDef& k : m_keys) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

Schema& Schema::physics_section(const std::string& name) {
  MANTISSA_ASSERT(name.find('.') == std::string::npos, "physics section '" << name << "' is not top-level");
  if (!is_physics_section(name)) m_physics_sections.push_back(name);
  return *this;
}

Schema& Schema::removed(const std::string& path, const std::string& instead) {
  if (find(path) != nullptr) throw Error("schema: key '" + path + "' is declared and removed (internal)");
  m_removed.emplace_back(path, instead);
  return *this;
}

const std::string* Schema::removed_instead(const std::string& path) const {
  for (const auto& [p, instead] : m_removed)
    if (p == path) return &instead;
  return nullptr;
}

bool Schema::is_physics_section(const std::string& name) const {
  return std::find(m_physics_sections.begin(), m_physics_sections.end(), name) != m_physics_sections.end();
}

bool Schema::is_section(const std::string& path) const {
  if (path.empty()) return true;
  const std::string prefix = path + ".";
  return std::any_of(m_keys.begin(), m_keys.end(),
                     [&](const KeyDef& k) { return starts_with(k.path, prefix); });
}

std::vector<std::string> Schema::children(const std::string& section_path) const {
  std::vector<std::string> out;
  const std::string prefix = section_path.empty() ? "" : section_path + ".";
  for (const KeyDef& k : m_keys) {
    if (!starts_with(k.path, prefix)) continue;
    std::string rest = k.path.substr(prefix.size());
    std::string seg = rest.substr(0, rest.find('.'));
    if (seg.size() > 2 && seg.compare(seg.size() - 2, 2, "[]") == 0) seg.resize(seg.size() - 2);
    if (std::find(out.begin(), out.end(), seg) == out.end()) out.push_back(seg);
  }
  return out;
}

std::string Schema::section_doc(const std::string& path) const {
  for (const auto& [p, d] : m_section_docs) {
    if (p == path) return d;
  }
  return "";
}

std::string Schema::expected(const KeyDef& k) {
  switch (k.type) {
    case KeyType::integer: {
      const std::string r = int_range(k.int_min, k.int_max);
      return r.empty() ? "an integer" : "an integer " + std::string(r[0] == '[' ? "in " : "") + r;
    }
    case KeyType::real: {
      const std::string r = real_range(k.real_min, k.real_max);
      return r.empty() ? "a real number" : "a real number " + std::string(r[0] == '[' ? "in " : "") + r;
    }
    case KeyType::boolean:
      return "true or false";
    case KeyType::string:
      return "a string";
    case KeyType::choice:
      return "one of " + detail::deck_join(k.choices, ", ");
    case KeyType::real_list:
      return "a list of " + length_text(k.min_len, k.max_len) + " real numbers, e.g. [1.0, 2.0]";
    case KeyType::int_list:
      return "a list of " + length_text(k.min_len, k.max_len) + " integers, e.g. [64, 64]";
    case KeyType::string_list:
      return "a list of strings, e.g. [a, b]";
    case KeyType::record_list:
      return "a list of maps (records), e.g. '- {key: value}' items";
    case KeyType::bool_list:
      return "a list of " + length_text(k.min_len, k.max_len) + " booleans, e.g. [true, false]";
  }
  return "";
}

std::string Schema::default_text(const KeyDef& k) {
  if (!k.has_default) return "";
  std::vector<std::string> items;
  switch (k.type) {
    case KeyType::integer:
      return int_text(k.int_default);
    case KeyType::real:
      return detail::deck_real(k.real_default);
    case KeyType::boolean:
      return k.bool_default ? "true" : "false";
    case KeyType::string:
      return detail::deck_quote(k.string_default);
    case KeyType::choice:
      return k.string_default;
    case KeyType::real_list:
      for (const double v : k.reals_default) items.push_back(detail::deck_real(v));
      return detail::deck_flow(items);
    case KeyType::int_list:
      for (const std::int64_t v : k.ints_default) items.push_back(int_text(v));
      return detail::deck_flow(items);
    case KeyType::string_list:
      for (const std::string& v : k.strings_default) items.push_back(detail::deck_quote(v));
      return detail::deck_flow(items);
    case KeyType::record_list:
      return "[]";
    case KeyType::bool_list:
      for (const bool v : k.bools_default) items.push_back(v ? "true" : "false");
      return detail::deck_flow(items);
  }
  return "";
}

std::string Schema::to_markdown() const {
  std::string out =
      "# Deck reference\n\n"
      "Generated by `mantissa deck-doc` from the schema in the code; do not edit by hand. A key\n"
      "without a default is required unless it says optional. Keys of the elements of a list of\n"
      "records are written `list[].key`. Any key can be overridden on the command line:\n"
      "`mantissa run deck.yaml mesh.n=[128,128] run.name=test`.\n";
  std::vector<std::string> top;
  for (const KeyDef& k : m_keys) {
    const std::string first = k.path.substr(0, k.path.find_first_of(".["));
    if (std::find(top.begin(), top.end(), first) == top.end()) top.push_back(first);
  }
  for (const std::string& t : top) {
    out += "\n## `" + t + "`\n\n";
    const std::string sdoc = section_doc(t);
    if (!sdoc.empty()) out += sdoc + "\n\n";
    out += "| key | type | default | range / choices | doc |\n| --- | --- | --- | --- | --- |\n";
    for (const KeyDef& k : m_keys) {
      if (k.path != t && !starts_with(k.path, t + ".")) continue;
      std::string def =
          k.has_default ? "`" + default_text(k) + "`" : (k.required() ? "required" : "optional");
      std::string range;
      switch (k.type) {
        case KeyType::integer:
          range = int_range(k.int_min, k.int_max);
          break;
        case KeyType::real:
          range = real_range(k.real_min, k.real_max);
          break;
        case KeyType::choice: {
          std::vector<std::string> c;
          for (const auto& s : k.choices) c.push_back("`" + s + "`");
          range = detail::deck_join(c, ", ");
          break;
        }
        case KeyType::real_list:
        case KeyType::bool_list:
        case KeyType::int_list:
          range = "length " + length_text(k.min_len, k.max_len);
          break;
        default:
          break;
      }
      out += "| `" + k.path + "` | " + type_name(k.type) + " | " + md_escape(def) + " | " + md_escape(range) +
             " | " + md_escape(k.doc) + " |\n";
    }
  }
  if (!m_removed.empty()) {
    out +=
        "\n## Removed keys\n\nA deck that still gives one of these is refused, saying what to do "
        "instead.\n\n";
    out += "| key | instead |\n| --- | --- |\n";
    for (const auto& [p, instead] : m_removed) out += "| `" + p + "` | " + md_escape(instead) + " |\n";
  }
  return out;
}

}  // namespace mantissa
