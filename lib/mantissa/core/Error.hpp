#pragma once
// Three kinds of failure, kept apart (Kokkos Kernels KokkosKernels_Error.hpp):
//  - user errors: mantissa::Error, thrown at the boundary with a message that names the file,
//    key or value and the remedy; main() prints it and exits non-zero;
//  - internal invariants: MANTISSA_ASSERT, a bug in mantissa when it fires;
//  - in-kernel checks: Kokkos::abort.
#include <sstream>
#include <stdexcept>
#include <string>

namespace mantissa {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const std::string& msg);
}  // namespace detail

}  // namespace mantissa

#define MANTISSA_ASSERT(cond, msg)                                                                \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::ostringstream mantissa_assert_os_;                                                     \
      mantissa_assert_os_ << msg; /* NOLINT(bugprone-macro-parentheses) */                        \
      ::mantissa::detail::assertion_failed(#cond, __FILE__, __LINE__, mantissa_assert_os_.str()); \
    }                                                                                             \
  } while (false)
