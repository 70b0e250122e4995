#pragma once
// The flow solver's checkpoint and restart through lib/mantissa/io (issue 14): the velocity u
// (Face<x>) and v (Face<y>) (3D: and w, Face<z>) in the storage precision, bitwise, and the two RK2 stages'
// pressure potentials phi_stage1/2 (fp64, the next solves' initial guesses), as global fields
// without ghosts; step, time, dt and viscosity as attributes. A restart from it continues the
// run bit for bit at the same rank count (the solves' initial guesses are restored too); at
// another rank count the conjugate gradient's dot products round differently (Solver.hpp), so
// the continuation agrees to rounding only. A file of another grid, storage precision, time
// step or viscosity is refused naming the file, the value stored and the deck key.
#include <cfd/Solver.hpp>

#include <mantissa/io/Checkpoint.hpp>

#include <string>

namespace mantissa::cfd {

inline constexpr const char* checkpoint_physics = "cfd";

// Collective. Writes the solver's state at its current step through `writer` (file
// <dir>/<prefix>-<step>.h5); returns the path. `attrs` are added to the file's attributes.
template <class S, class C>
std::string write_checkpoint(const io::CheckpointWriter& writer, const FlowSolver<S, C>& solver,
                             io::Attributes attrs = {});

// Collective. Reads `file` into `solver` (any rank count), checks it against the solver's
// grid and configuration, and restores step and time (FlowSolver::restore).
template <class S, class C>
void read_checkpoint(const std::string& file, FlowSolver<S, C>& solver);

}  // namespace mantissa::cfd
