#pragma once
// A minimal streaming JSON writer for report.json (no JSON library is a dependency). Non-finite
// numbers become null: JSON has no NaN or Infinity, and the schema documents null as
// "undefined or not measured".
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

namespace mantissa::workflow::detail {

class JsonWriter {
 public:
  JsonWriter& begin_object(const std::string& key = {}) { return open(key, '{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(const std::string& key = {}) { return open(key, '['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& value(const std::string& key, const std::string& v) {
    prefix(key);
    m_os << quote(v);
    return *this;
  }
  JsonWriter& value(const std::string& key, const char* v) { return value(key, std::string(v)); }
  JsonWriter& value(const std::string& key, double v) {
    prefix(key);
    if (std::isfinite(v)) {
      std::ostringstream os;
      os << std::setprecision(17) << v;
      m_os << os.str();
    } else {
      m_os << "null";
    }
    return *this;
  }
  JsonWriter& value(const std::string& key, std::int64_t v) {
    prefix(key);
    m_os << v;
    return *this;
  }
  JsonWriter& value(const std::string& key, int v) { return value(key, std::int64_t(v)); }
  JsonWriter& value(const std::string& key, bool v) {
    prefix(key);
    m_os << (v ? "true" : "false");
    return *this;
  }
  JsonWriter& null(const std::string& key) {
    prefix(key);
    m_os << "null";
    return *this;
  }
  std::string str() const { return m_os.str() + "\n"; }

  static std::string quote(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
      switch (c) {
        case '"':
          o += "\\\"";
          break;
        case '\\':
          o += "\\\\";
          break;
        case '\n':
          o += "\\n";
          break;
        case '\t':
          o += "\\t";
          break;
        case '\r':
          o += "\\r";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            o += buf;
          } else {
            o += c;
          }
      }
    }
    return o + "\"";
  }

 private:
  JsonWriter& open(const std::string& key, char c) {
    prefix(key);
    m_os << c;
    m_first.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    m_first.pop_back();
    m_os << "\n" << std::string(2 * m_first.size(), ' ') << c;
    return *this;
  }
  void prefix(const std::string& key) {
    if (!m_first.empty()) {
      if (!m_first.back()) m_os << ",";
      m_first.back() = false;
      m_os << "\n" << std::string(2 * m_first.size(), ' ');
    }
    if (!key.empty()) m_os << quote(key) << ": ";
  }
  std::ostringstream m_os;
  std::vector<bool> m_first;
};

}  // namespace mantissa::workflow::detail
