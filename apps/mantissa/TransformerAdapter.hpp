#pragma once
// surrogates::Surrogate behind workflow::SurrogateModel, for physics whose state starts with
// (p^n, p^{n-1}) and whose static input is a velocity field (seismic).
#include <mantissa/mesh/Field.hpp>
#include <mantissa/workflow/SurrogateModel.hpp>

#include <memory>

namespace mantissa::surrogates {
struct SurrogateConfig;
}

namespace mantissa::app {

std::unique_ptr<workflow::SurrogateModel> make_transformer(const surrogates::SurrogateConfig& cfg,
                                                           const Decomposition& decomp,
                                                           Field<double> velocity, int train_steps);

}  // namespace mantissa::app
