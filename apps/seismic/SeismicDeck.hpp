#pragma once
// The deck's `seismic:` section: schema registration and the Config it builds.
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Schema.hpp>
#include <seismic/Config.hpp>

namespace mantissa::seismic {

// Registers every seismic.* key (types, ranges, defaults, one-line docs).
void register_schema(Schema& schema);

// Builds the solver configuration from a validated deck (seismic.* and run.steps); checks
// that span keys throw mantissa::Error naming the key. The grid comes from grid_from_deck.
Config config_from_deck(const Deck& deck);

}  // namespace mantissa::seismic
