// The one place that assembles the deck schema. A module that adds deck keys adds its one
// register line here (and regenerates docs/deck.md: `mantissa deck-doc > docs/deck.md`).
#include "Schema.hpp"
#include "Registry.hpp"

#include <cfd/CfdDeck.hpp>
#include <mantissa/workflow/Schema.hpp>
#include <seismic/SeismicDeck.hpp>
#include <surrogates/SurrogateDeck.hpp>

namespace mantissa::app {

Schema full_schema() {
  Schema s;
  register_core_schema(s);                                  // physics, run, mesh, checkpoint, output, logging
  mantissa::seismic::register_schema(s);                    // seismic:   (apps/seismic)
  s.physics_section("seismic");                             //   required only in seismic decks
  mantissa::cfd::register_schema(s);                        // cfd:       (apps/cfd)
  mantissa::surrogates::register_schema(s);                 // surrogate: (surrogates/)
  mantissa::workflow::register_schema(s, make_registry());  // campaign: (lib/mantissa/workflow)
  return s;
}

}  // namespace mantissa::app
