#pragma once
// The physics and surrogates this executable knows, keyed by the deck's `physics:` value and
// `campaign.surrogate.model` (Registry.cpp holds the adapters). Adding a physics: its adapter
// and one add_physics() line in make_registry().
#include <mantissa/workflow/Registry.hpp>

namespace mantissa::app {

workflow::Registry make_registry();

}  // namespace mantissa::app
