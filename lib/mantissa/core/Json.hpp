#pragma once
// mantissa's one JSON writer (report.json, timer summaries, metrics; core/detail/deck_text.cpp
// quotes deck strings with its escape(), a JSON string being a valid YAML double-quoted
// scalar): objects, arrays, strings with escaping (RFC 8259), numbers with full precision
// (shortest text that reads back to the same double), NaN and infinities as null (JSON has no
// spelling for them). Not a parser.
//
// Why not nlohmann-json (Debian nlohmann-json3-dev): a new dependency for every build (Debian,
// Spack, the install's package config) to replace ~200 lines that already do what reports
// need; it builds a DOM where reports stream, and fmt (already a dependency) gives the same
// round-trip number formatting. Revisit if mantissa has to parse JSON.
//
//   json::Writer w;
//   w.begin_object().field("name", "run").key("values").begin_array().value(1.5).end_array().end_object();
//   std::string text = w.str();
#include <mantissa/core/Error.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace mantissa::json {

inline std::string escape(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        // DEL too: then the text is also a YAML double-quoted scalar that reads back unchanged.
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += ch;  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

// Shortest round-trip text (fmt's Dragonbox); null for NaN and infinities.
inline std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  return fmt::format("{}", x);
}

class Writer {
 public:
  // indent: spaces per level; 0 writes everything on one line.
  explicit Writer(int indent = 2) : m_indent(indent) {}

  Writer& begin_object() { return open('{'); }
  Writer& end_object() { return close('}'); }
  Writer& begin_array() { return open('['); }
  Writer& end_array() { return close(']'); }

  Writer& key(std::string_view k) {
    MANTISSA_ASSERT(!m_stack.empty() && m_stack.back().object && !m_key_pending,
                    "json::Writer: key() outside an object or twice");
    separator();
    m_out += escape(k);
    m_out += m_indent > 0 ? ": " : ":";
    m_key_pending = true;
    return *this;
  }

  Writer& value(double x) { return raw(number(x)); }
  Writer& value(float x) { return raw(number(static_cast<double>(x))); }
  Writer& value(bool b) { return raw(b ? "true" : "false"); }
  Writer& value(std::string_view s) { return raw(escape(s)); }
  Writer& value(const char* s) { return raw(escape(s)); }
  Writer& value(const std::string& s) { return raw(escape(s)); }
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Writer& value(I i) {
    return raw(std::to_string(i));
  }
  template <class T>
  Writer& value(const std::vector<T>& v) {
    begin_array();
    for (const auto& x : v) value(x);
    return end_array();
  }
  Writer& null() { return raw("null"); }
  // Inserts already valid JSON text (e.g. another Writer's str()).
  Writer& raw_json(const std::string& text) { return raw(text); }

  template <class T>
  Writer& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  // The document; complete once every object and array is closed.
  std::string str() const {
    MANTISSA_ASSERT(m_stack.empty(), "json::Writer: " << m_stack.size() << " object(s)/array(s) still open");
    return m_out;
  }

 private:
  struct Level {
    bool object;
    int count;
  };

  void newline() {
    if (m_indent <= 0) return;
    m_out += '\n';
    m_out.append(m_stack.size() * static_cast<std::size_t>(m_indent), ' ');
  }
  // Comma and line break before a new element of an array or a new key of an object.
  void separator() {
    if (m_stack.empty()) return;
    if (m_stack.back().count++ > 0) m_out += ',';
    newline();
  }
  void before_value() {
    if (m_key_pending) {
      m_key_pending = false;
      return;
    }
    MANTISSA_ASSERT(m_stack.empty() ? m_out.empty() : !m_stack.back().object,
                    "json::Writer: a value inside an object needs key() first");
    separator();
  }
  Writer& raw(const std::string& text) {
    before_value();
    m_out += text;
    return *this;
  }
  Writer& open(char c) {
    before_value();
    m_out += c;
    m_stack.push_back({c == '{', 0});
    return *this;
  }
  Writer& close(char c) {
    MANTISSA_ASSERT(!m_stack.empty() && m_stack.back().object == (c == '}') && !m_key_pending,
                    "json::Writer: unbalanced " << c);
    const bool had = m_stack.back().count > 0;
    m_stack.pop_back();
    if (had) newline();
    m_out += c;
    return *this;
  }

  int m_indent;
  std::string m_out;
  std::vector<Level> m_stack;
  bool m_key_pending = false;
};

}  // namespace mantissa::json
