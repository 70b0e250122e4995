// Instantiations with fp64 storage (compute fp64 and fp32).
#include <seismic/Solver_impl.hpp>

namespace mantissa::seismic {
template class Solver<double, double>;
template class Solver<double, float>;
}  // namespace mantissa::seismic
