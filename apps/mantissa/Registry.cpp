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
#include <mantissa/core/Error.hpp>
#include <surrogates/SurrogateDeck.hpp>
#define MANTISSA_APP_HAVE_SURROGATES 1
#endif

namespace mantissa::app {

workflow::Registry make_registry() {
  workflow::Registry r;
#ifdef MANTISSA_APP_HAVE_SEISMIC
  r.add_physics("seismic",
                {seismic_precisions(), make_seismic_model, make_seismic_recorder, make_seismic_report});
#endif
#ifdef MANTISSA_APP_HAVE_CFD
  r.add_physics("cfd", {cfd_precisions(), make_cfd_model, nullptr, make_cfd_report});
#endif
#if defined(MANTISSA_APP_HAVE_SURROGATES)
  // The transformer on the deck's physics' channels: the seismic state (p^n, p^{n-1}) with the
  // velocity as a static input; the flow's velocity components (cfd_surrogate_channels).
  r.add_surrogate("transformer",
                  [](const workflow::ModelContext& ctx) -> std::unique_ptr<workflow::SurrogateModel> {
                    const auto cfg = surrogates::config_from_deck(*ctx.deck);
                    const std::string physics = ctx.deck->get_string("physics");
                    SurrogateChannels ch;
                    ch.physics = physics;
#ifdef MANTISSA_APP_HAVE_SEISMIC
                    if (physics == "seismic") {
                      ch.state = {"p", "p_old"};
                      ch.statics = {{"velocity", seismic_velocity(ctx)}};
                      ch.time_levels = true;
                    }
#endif
#ifdef MANTISSA_APP_HAVE_CFD
                    if (physics == "cfd") ch.state = cfd_surrogate_channels(*ctx.deck);
#endif
                    if (ch.state.empty())
                      throw Error(ctx.deck->where("campaign.surrogate.model") +
                                  ": the transformer surrogate has no channels for physics '" + physics +
                                  "' in this build (seismic and cfd have them)");
                    try {
                      return make_transformer(cfg, *ctx.decomp, std::move(ch), cfg.optimizer.total_steps);
                    } catch (const Error& e) {
                      throw Error(ctx.deck->file() + ": " + e.what());
                    }
                  });
#endif
  return r;
}

}  // namespace mantissa::app
