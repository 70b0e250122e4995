#include <mantissa/io/detail/MpiIo.hpp>

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mantissa {
namespace io {
namespace detail {

namespace {
bool env_contains(const char* var, const char* text) {
  const char* v = std::getenv(var);
  return v && std::strstr(v, text);
}
}  // namespace

bool collective_writes_are_safe(std::string* why) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(version, &len);
  const char* at = std::strstr(version, "Open MPI v");
  if (!at) return true;
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(at, "Open MPI v%d.%d.%d", &major, &minor, &patch) < 2) return true;
  // Fixed upstream after the report (ompi#12718, 2024); every earlier 4.x/5.0 release carries
  // the vulcan component as default.
  const bool affected = (major == 4 && (minor < 1 || (minor == 1 && patch < 7))) ||
                        (major == 5 && minor == 0 && patch < 6) || major == 3;
  if (!affected) return true;
  const char* fcoll = std::getenv("OMPI_MCA_fcoll");
  const bool fcoll_ok = fcoll && *fcoll && !std::strstr(fcoll, "vulcan");
  const bool romio = env_contains("OMPI_MCA_io", "romio") || env_contains("OMPI_MCA_io", "^ompio");
  if (fcoll_ok || romio) return true;
  if (why)
    *why = "Open MPI " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) +
           " with its default fcoll/vulcan component can corrupt collective MPI-IO writes "
           "(open-mpi/ompi#12718); "
           "set OMPI_MCA_fcoll=dynamic_gen2 or OMPI_MCA_io=romio321 to write collectively";
  return false;
}

}  // namespace detail
}  // namespace io
}  // namespace mantissa
