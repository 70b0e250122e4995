#pragma once
// seismic::Solver<Storage, Compute> behind workflow::PhysicsModel (the adapter DESIGN.md puts in
// apps/mantissa), registered as "seismic" (Registry.cpp) with its precision table, its recorder
// (receiver misfit and cross-correlation) and its report section (shots, receivers, gathers.h5;
// SeismicReport.cpp). The receivers are the model's probes and the shots its experiments.
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/Recorder.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/ReportSection.hpp>

#include <memory>

namespace mantissa::app {

// The storage/compute pairs the solver instantiates: the one statement of them.
workflow::PrecisionTable seismic_precisions();
// Throws mantissa::Error for a pair the solver has no instantiation for.
std::unique_ptr<workflow::PhysicsModel> make_seismic_model(const workflow::ModelContext& ctx,
                                                           const workflow::PrecisionSet& precision);
std::unique_ptr<workflow::Recorder> make_seismic_recorder(const workflow::ModelContext& ctx);
std::unique_ptr<workflow::ReportSection> make_seismic_report(const workflow::ModelContext& ctx);
// The velocity model of the deck as an fp64 field (an input channel of the surrogate).
Field<double> seismic_velocity(const workflow::ModelContext& ctx);

}  // namespace mantissa::app
