#pragma once
// The deck's `surrogate:` section: keys (register_schema, one line in apps/mantissa/Schema.cpp)
// and the SurrogateConfig they make (config_from_deck).
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Schema.hpp>
#include <surrogates/Surrogate.hpp>

namespace mantissa::surrogates {

void register_schema(Schema& schema);
// Reads surrogate.* (and mesh.dim); ranges were checked by the deck, cross-key rules here.
SurrogateConfig config_from_deck(const Deck& deck);

}  // namespace mantissa::surrogates
