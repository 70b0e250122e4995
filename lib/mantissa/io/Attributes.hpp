#pragma once
// A small typed key/value set for HDF5 attributes: integers, reals, strings and lists of
// integers or reals. Used for the attributes a caller adds to a checkpoint, dataset or time
// series, and for what a reader finds in a file.
#include <mantissa/core/Error.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace mantissa {
namespace io {

using AttributeValue =
    std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

class Attributes {
 public:
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  Attributes& set(const std::string& key, I value) {
    m_values[key] = static_cast<std::int64_t>(value);
    return *this;
  }
  Attributes& set(const std::string& key, double value) {
    m_values[key] = value;
    return *this;
  }
  Attributes& set(const std::string& key, const std::string& value) {
    m_values[key] = value;
    return *this;
  }
  Attributes& set(const std::string& key, const char* value) { return set(key, std::string(value)); }
  Attributes& set(const std::string& key, const std::vector<std::int64_t>& value) {
    m_values[key] = value;
    return *this;
  }
  Attributes& set(const std::string& key, const std::vector<double>& value) {
    m_values[key] = value;
    return *this;
  }
  Attributes& set(const std::string& key, const AttributeValue& value) {
    m_values[key] = value;
    return *this;
  }

  bool has(const std::string& key) const { return m_values.count(key) != 0; }
  bool empty() const { return m_values.empty(); }
  std::size_t size() const { return m_values.size(); }
  const std::map<std::string, AttributeValue>& all() const { return m_values; }

  // Typed access; throws mantissa::Error naming the key when it is absent or of another type.
  std::int64_t get_int(const std::string& key) const { return get<std::int64_t>(key, "an integer"); }
  // Integers are accepted where a real is asked for.
  double get_real(const std::string& key) const;
  const std::string& get_string(const std::string& key) const { return get<std::string>(key, "a string"); }
  const std::vector<std::int64_t>& get_ints(const std::string& key) const {
    return get<std::vector<std::int64_t>>(key, "a list of integers");
  }
  const std::vector<double>& get_reals(const std::string& key) const {
    return get<std::vector<double>>(key, "a list of reals");
  }
  // A context for error messages ("checkpoint 'a.h5'").
  void set_context(const std::string& context) { m_context = context; }

  friend bool operator==(const Attributes& a, const Attributes& b) { return a.m_values == b.m_values; }

 private:
  template <class V>
  const V& get(const std::string& key, const char* what) const {
    auto it = m_values.find(key);
    if (it == m_values.end())
      throw Error((m_context.empty() ? std::string() : m_context + ": ") + "attribute '" + key +
                  "' is missing");
    if (!std::holds_alternative<V>(it->second))
      throw Error((m_context.empty() ? std::string() : m_context + ": ") + "attribute '" + key + "' is not " +
                  what);
    return std::get<V>(it->second);
  }

  std::map<std::string, AttributeValue> m_values;
  std::string m_context;
};

}  // namespace io
}  // namespace mantissa
