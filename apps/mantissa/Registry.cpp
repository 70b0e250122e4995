// Adapters of the concrete physics and surrogates to the workflow's interfaces, and the
// registry keyed by the deck's names (DESIGN.md: "apps/mantissa wires the concrete ones in").
// A module that is not built (its target absent) is simply not registered.
#include "Registry.hpp"

namespace mantissa::app {

workflow::Registry make_registry() {
  workflow::Registry r;
  return r;
}

}  // namespace mantissa::app
