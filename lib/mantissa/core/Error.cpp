#include <mantissa/core/Error.hpp>

namespace mantissa::detail {

void assertion_failed(const char* expr, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "mantissa internal error (a bug, please report it): " << msg << "\n  assertion `" << expr
     << "` failed at " << file << ":" << line;
  throw std::logic_error(os.str());
}

}  // namespace mantissa::detail
