// fp64 velocity storage and arithmetic (the reference).
#include <cfd/Solver_impl.hpp>

namespace mantissa::cfd {
template class FlowSolver<double, double>;
}
