// The registry keyed by the deck's names (DESIGN.md: "apps/mantissa wires the concrete ones
// in"); the adapters live beside it (SeismicAdapter.cpp, TransformerAdapter.cpp). A module that
// is not built (its target absent) is simply not registered.
#include "Registry.hpp"

#if __has_include(<seismic/SeismicDeck.hpp>)
#include "SeismicAdapter.hpp"
#define MANTISSA_APP_HAVE_SEISMIC 1
#endif
#if __has_include(<cfd/CfdDeck.hpp>)
#include "CfdAdapter.hpp"
#define MANTISSA_APP_HAVE_CFD 1
#endif
#if __has_include(<surrogates/SurrogateDeck.hpp>)
#include "TransformerAdapter.hpp"

#include <mantissa/core/Deck.hpp>
#include <surrogates/SurrogateDeck.hpp>
#define MANTISSA_APP_HAVE_SURROGATES 1
#endif

namespace mantissa::app {

workflow::Registry make_registry() {
  workflow::Registry r;
#ifdef MANTISSA_APP_HAVE_SEISMIC
  r.add_physics("seismic",
                {seismic_precisions(), make_seismic_model, make_seismic_recorder, make_seismic_report});
#if defined(MANTISSA_APP_HAVE_SURROGATES)
  // The transformer learns the seismic state (p^n, p^{n-1}) with the velocity as a static input.
  r.add_surrogate("transformer", [](const workflow::ModelContext& ctx) {
    const auto cfg = surrogates::config_from_deck(*ctx.deck);
    return make_transformer(cfg, *ctx.decomp, seismic_velocity(ctx), cfg.optimizer.total_steps);
  });
#endif
#endif
#ifdef MANTISSA_APP_HAVE_CFD
  r.add_physics("cfd", {cfd_precisions(), make_cfd_model, nullptr, make_cfd_report});
#endif
  return r;
}

}  // namespace mantissa::app
