#pragma once
// The results of a campaign (serialize() in Results.hpp) as text, exactly: doubles as C99 hex
// floats (every bit, NaN and infinities included), strings length-prefixed. The campaign
// checkpoint stores this text as one checksummed byte dataset, so that the results so far are
// restored bit for bit at any rank count. The reader walks serialize() in the same order and
// checks every key. Not included from outside lib/mantissa/workflow.
#include <mantissa/core/Error.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace mantissa::workflow::detail {

class TextWriter {
 public:
  void operator()(const std::string& k, double& v) { key(k, 'd') += hex(v) + "\n"; }
  void operator()(const std::string& k, std::int64_t& v) { key(k, 'i') += std::to_string(v) + "\n"; }
  void operator()(const std::string& k, int& v) { key(k, 'i') += std::to_string(v) + "\n"; }
  void operator()(const std::string& k, std::string& v) {
    key(k, 's') += std::to_string(v.size()) + ":" + v + "\n";
  }
  void operator()(const std::string& k, std::vector<double>& v) {
    std::string& o = key(k, 'D');
    o += std::to_string(v.size());
    for (double x : v) o += " " + hex(x);
    o += "\n";
  }
  void operator()(const std::string& k, std::vector<std::int64_t>& v) {
    std::string& o = key(k, 'I');
    o += std::to_string(v.size());
    for (auto x : v) o += " " + std::to_string(x);
    o += "\n";
  }
  template <class T>
  void list(const std::string& k, std::vector<T>& items) {
    key(k, 'L') += std::to_string(items.size()) + "\n";
    for (auto& x : items) serialize(*this, x);
  }
  const std::string& text() const { return m_out; }

 private:
  static std::string hex(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%a", v);
    return buf;
  }
  std::string& key(const std::string& k, char type) {
    m_out += k;
    m_out += ' ';
    m_out += type;
    m_out += ' ';
    return m_out;
  }
  std::string m_out;
};

class TextReader {
 public:
  // `where` names the source in error messages (the checkpoint file).
  TextReader(std::string text, std::string where) : m_in(std::move(text)), m_where(std::move(where)) {}
  void operator()(const std::string& k, double& v) {
    expect(k, 'd');
    v = real(token());
    line_end();
  }
  void operator()(const std::string& k, std::int64_t& v) {
    expect(k, 'i');
    v = integer(token());
    line_end();
  }
  void operator()(const std::string& k, int& v) {
    expect(k, 'i');
    v = static_cast<int>(integer(token()));
    line_end();
  }
  void operator()(const std::string& k, std::string& v) {
    expect(k, 's');
    const std::size_t colon = m_in.find(':', m_pos);
    if (colon == std::string::npos) bad("a string length");
    const auto n = static_cast<std::size_t>(integer(m_in.substr(m_pos, colon - m_pos)));
    if (colon + 1 + n > m_in.size()) bad("a string of " + std::to_string(n) + " characters");
    v = m_in.substr(colon + 1, n);
    m_pos = colon + 1 + n;
    line_end();
  }
  void operator()(const std::string& k, std::vector<double>& v) {
    expect(k, 'D');
    v.resize(count());
    for (auto& x : v) x = real(token());
    line_end();
  }
  void operator()(const std::string& k, std::vector<std::int64_t>& v) {
    expect(k, 'I');
    v.resize(count());
    for (auto& x : v) x = integer(token());
    line_end();
  }
  template <class T>
  void list(const std::string& k, std::vector<T>& items) {
    expect(k, 'L');
    items.resize(count());
    line_end();
    for (auto& x : items) serialize(*this, x);
  }
  bool at_end() const { return m_pos >= m_in.size(); }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    throw Error(m_where + ": the campaign results are damaged (expected " + what + " at byte " +
                std::to_string(m_pos) + ")");
  }
  std::string token() {
    while (m_pos < m_in.size() && m_in[m_pos] == ' ') ++m_pos;
    const std::size_t end = m_in.find_first_of(" \n", m_pos);
    if (end == std::string::npos || end == m_pos) bad("a value");
    std::string t = m_in.substr(m_pos, end - m_pos);
    m_pos = end;
    return t;
  }
  void expect(const std::string& k, char type) {
    const std::string want = k + " " + type + " ";
    if (m_in.compare(m_pos, want.size(), want) != 0) bad("'" + want + "'");
    m_pos += want.size();
  }
  std::size_t count() { return static_cast<std::size_t>(integer(token())); }
  void line_end() {
    if (m_pos >= m_in.size() || m_in[m_pos] != '\n') bad("the end of a line");
    ++m_pos;
  }
  double real(const std::string& t) const {
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size()) bad("a number, not '" + t + "'");
    return v;
  }
  std::int64_t integer(const std::string& t) const {
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || end != t.c_str() + t.size()) bad("an integer, not '" + t + "'");
    return static_cast<std::int64_t>(v);
  }

  std::string m_in;
  std::size_t m_pos = 0;
  std::string m_where;
};

}  // namespace mantissa::workflow::detail
