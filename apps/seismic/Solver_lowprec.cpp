// Instantiations with 16-bit storage; they compute in fp32 (issue 3: 16-bit storage computes
// in fp32).
#include <mantissa/core/LowPrecision.hpp>
#include <seismic/Solver_impl.hpp>

namespace mantissa::seismic {
template class Solver<bf16, float>;
template class Solver<fp16, float>;
}  // namespace mantissa::seismic
