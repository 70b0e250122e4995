// fp32 velocity storage and arithmetic (the pressure solve's outer iteration stays fp64).
#include <cfd/Solver_impl.hpp>

namespace mantissa::cfd {
template class FlowSolver<float, float>;
}
