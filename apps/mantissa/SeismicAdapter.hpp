#pragma once
// seismic::Solver<Storage, Compute> behind workflow::PhysicsModel (the adapter DESIGN.md puts in
// apps/mantissa). Registered as "seismic" for the precision pairs the solver instantiates.
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/Registry.hpp>

#include <memory>

namespace mantissa::app {

// Throws mantissa::Error for a pair the solver has no instantiation for.
std::unique_ptr<workflow::PhysicsModel> make_seismic_model(const workflow::ModelContext& ctx,
                                                           Precision storage, Precision compute);
// The velocity model of the deck as an fp64 field (an input channel of the surrogate).
Field<double> seismic_velocity(const workflow::ModelContext& ctx);

}  // namespace mantissa::app
