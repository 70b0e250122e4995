#pragma once
// Known defects of MPI-IO libraries that mantissa works around (internal).
#include <string>

namespace mantissa {
namespace io {
namespace detail {

// False when collective MPI-IO writes are known to corrupt data with the MPI library in use and
// its environment: Open MPI's OMPIO with the fcoll/vulcan component (the default) writes wrong
// bytes in collective parallel HDF5 writes (open-mpi/ompi issue 12718; reproduced here with
// Open MPI 4.1.4 at 4 ranks). The workarounds OMPI_MCA_fcoll=dynamic_gen2 (or any component
// but vulcan) or OMPI_MCA_io=romio321 make it safe again. `why` gets a one-line explanation.
bool collective_writes_are_safe(std::string* why = nullptr);

}  // namespace detail
}  // namespace io
}  // namespace mantissa
