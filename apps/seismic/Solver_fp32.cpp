// Instantiations with fp32 storage (compute fp64 and fp32).
#include <seismic/Solver_impl.hpp>

namespace mantissa::seismic {
template class Solver<float, double>;
template class Solver<float, float>;
}  // namespace mantissa::seismic
