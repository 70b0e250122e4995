#pragma once
// What `mantissa run` would refuse, found before anything is allocated (no Kokkos, no fields):
// `mantissa check` calls it for the ranks the deck's process grid names, `run` for its own
// ranks before its first allocation, so the two refuse the same decks with the same message.
// Collective over comm: files are read on rank 0 and every rank throws the same Error.
//  - the decomposition: the process grid fits the ranks and the grid, and every rank owns at
//    least the ghost width of the physics' stencil along every axis (seismic: seismic.order / 2,
//    one more next to an image boundary);
//  - the physics' rules on the whole grid (seismic: order, PML, periodicity, and the CFL
//    condition with the velocity model's range) and its input file (seismic.velocity.file:
//    readable, the grid's dimension, a finite origin, a positive spacing, finite velocities of
//    at least the deck's bound);
//  - run.end_time: the steps it takes at the physics' time step fit the step counter;
//  - run.name: the run directory stays inside run.output_dir;
//  - the weights of `campaign.surrogate.training: file`: present, of this format, written for the
//    deck's model (configuration, steps per prediction), finite, and matching their checksums.
#include <mantissa/core/Deck.hpp>

#include <mpi.h>

namespace mantissa::app {

// The ghost width the deck's physics computes with (its stencil's half width).
int physics_ghost_width(const Deck& deck);

// ranks: the ranks the run has (check: the deck's process grid, else the ranks it runs on).
void preflight(const Deck& deck, int ranks, MPI_Comm comm);

}  // namespace mantissa::app
