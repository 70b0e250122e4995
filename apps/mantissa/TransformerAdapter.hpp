#pragma once
// surrogates::Surrogate behind workflow::SurrogateModel for any physics that offers its state as
// channels (SurrogateChannels): seismic (p^n, p^{n-1}) with the velocity as a static input, a
// flow (u, v[, w]) with none. The transformer's in_channels / out_channels must match.
#include <mantissa/mesh/Field.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>
#include <mantissa/workflow/SurrogateModel.hpp>

#include <memory>
#include <string>
#include <vector>

namespace mantissa::surrogates {
struct SurrogateConfig;
}

namespace mantissa::app {

// What a physics gives the surrogate: the names of the first fields of its state() that the
// surrogate advances (its input channels first and its output channels, the change of each over K
// steps), in that order; the static input fields that follow them as input channels; and whether
// state[0] and state[1] are one field at two time levels one solver step apart (what
// surrogate.extrapolation: linear needs). The channels are the state's fields as they are (same
// decomposition and index layout), so state -> channels -> state is the identity.
struct SurrogateChannels {
  std::string physics;
  std::vector<std::string> state;
  workflow::State statics;
  bool time_levels = false;
  std::string describe() const;  // "u, v" or "p, p_old, velocity (static)"
};

std::unique_ptr<workflow::SurrogateModel> make_transformer(const surrogates::SurrogateConfig& cfg,
                                                           const Decomposition& decomp,
                                                           SurrogateChannels channels, int train_steps);

}  // namespace mantissa::app
