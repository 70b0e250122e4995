#include <mantissa/io/Attributes.hpp>

namespace mantissa {
namespace io {

double Attributes::get_real(const std::string& key) const {
  auto it = m_values.find(key);
  if (it != m_values.end() && std::holds_alternative<std::int64_t>(it->second))
    return double(std::get<std::int64_t>(it->second));
  return get<double>(key, "a real");
}

}  // namespace io
}  // namespace mantissa
