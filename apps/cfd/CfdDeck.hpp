#pragma once
// The deck's `cfd:` section: schema registration and the Config it builds.
#include <cfd/Config.hpp>
#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Schema.hpp>

namespace mantissa::cfd {

// Registers every cfd.* key (types, ranges, defaults, one-line docs) and marks `cfd` as a
// physics section (required keys only in `physics: cfd` decks).
void register_schema(Schema& schema);

// Builds the solver configuration from a validated deck; cross-key checks throw
// mantissa::Error naming the keys (periodic sides against mesh.periodic, a lid on an axis
// that has one). The precisions come from the campaign's roles, not from here.
Config config_from_deck(const Deck& deck);

}  // namespace mantissa::cfd
