#pragma once
// The deck's `mesh:` section (registered by register_core_schema) turned into mesh types.
// Checks that span keys (one entry of n per dimension, ...) throw mantissa::Error naming the
// deck position of the offending key.
#include <mantissa/core/Deck.hpp>
#include <mantissa/mesh/Grid.hpp>

#include <array>

namespace mantissa {

// mesh.dim, mesh.n, mesh.spacing, mesh.origin, mesh.periodic. spacing, origin and periodic
// take one value for every axis or one per axis.
Grid grid_from_deck(const Deck& deck);
// mesh.process_grid as Decomposition's dims (0: chosen by MPI_Dims_create; z is 1 in 2D).
std::array<int, 3> process_grid_from_deck(const Deck& deck);

}  // namespace mantissa
