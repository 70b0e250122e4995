#include <mantissa/core/Json.hpp>
#include <mantissa/core/detail/deck_text.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace mantissa::detail {

std::string deck_real(double x) {
  if (std::isnan(x)) return ".nan";
  if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
  // fmt's "{}" is the shortest representation that round-trips (Dragonbox).
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// A JSON string (RFC 8259 escapes, other control characters and DEL as \uXXXX) is a valid YAML
// double-quoted scalar: one escaping for both, core/Json.hpp's.
std::string deck_quote(const std::string& s) {
  return json::escape(s);
}

std::string deck_join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string deck_flow(const std::vector<std::string>& items) {
  return "[" + deck_join(items, ", ") + "]";
}

std::size_t deck_edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

bool deck_parse_int(const std::string& text, std::int64_t& out) {
  if (text.empty()) return false;
  std::size_t i = 0;
  if (text[0] == '+' || text[0] == '-') i = 1;
  if (i == text.size()) return false;
  for (std::size_t k = i; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  out = static_cast<std::int64_t>(v);
  return true;
}

bool deck_parse_real(const std::string& text, double& out) {
  // YAML 1.2 spellings of the special values.
  if (text == ".inf" || text == ".Inf" || text == ".INF" || text == "+.inf") {
    out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "-.inf" || text == "-.Inf" || text == "-.INF") {
    out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (text.empty()) return false;
  // Only decimal notation: strtod would also take hex floats, "inf" and "nan", which YAML
  // does not read as numbers.
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return false;
    }
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  if (errno == ERANGE && std::isinf(v)) return false;
  out = v;
  return true;
}

bool deck_parse_bool(const std::string& text, bool& out) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "true" || t == "yes" || t == "on") {
    out = true;
    return true;
  }
  if (t == "false" || t == "no" || t == "off") {
    out = false;
    return true;
  }
  return false;
}

std::string deck_fnv1a_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis
  for (const char c : text) {
    h ^= static_cast<std::uint64_t>(static_cast<unsigned char>(c));
    h *= 1099511628211ull;  // FNV-1a 64-bit prime
  }
  return fmt::format("{:016x}", h);
}

}  // namespace mantissa::detail
