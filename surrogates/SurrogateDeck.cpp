#include <surrogates/SurrogateDeck.hpp>

namespace mantissa::surrogates {

void register_schema(Schema& s) {
  s.section("surrogate",
            "The transformer surrogate: model sizes, training (AdamW, schedule, mixed precision). Which "
            "precisions it rolls out in is campaign.surrogate.rollout.");
  s.integer("surrogate.in_channels",
            "input fields (seismic: p^n, p^{n-1}, velocity; cfd: u, v in 2D, u, v, w in 3D)", 3, 1, 64);
  s.integer(
      "surrogate.out_channels",
      "predicted fields: their change over K steps (seismic: p^n, p^{n-1}; cfd: the velocity components)", 2,
      1, 64);
  s.integer("surrogate.patch",
            "patch edge in cells (a patch is patch^dim cells); must divide every subdomain", 4, 1, 64);
  s.integer("surrogate.embed",
            "embedding width D (a multiple of heads, and of 2*dim for sinusoidal positions)", 64, 1, 8192);
  s.integer("surrogate.heads", "attention heads", 4, 1, 256);
  s.integer("surrogate.layers", "transformer blocks", 2, 1, 256);
  s.integer("surrogate.mlp_hidden", "hidden width of each block's MLP", 256, 1, 65536);
  s.integer("surrogate.window", "attention window edge in patches (windows of window^dim patches)", 4, 1, 64);
  s.boolean("surrogate.shifted",
            "odd blocks use windows shifted by window/2 (Swin); widens the inference halo", false);
  s.choice("surrogate.position",
           "position encoding of the patches ('none': no encoding; the model is the same at every position, "
           "which is what lets it predict a source position it was not trained on)",
           {"sinusoidal", "learned", "none"}, std::string("sinusoidal"));
  s.integer("surrogate.steps_per_prediction",
            "K: solver steps one prediction advances (stored in the weights file; a file with another K is "
            "refused)",
            4, 1, 100000);
  s.choice(
      "surrogate.scaling",
      "how the state is scaled before the model sees it: 'dataset' (each channel by its mean and standard "
      "deviation over the training set) or 'amplitude' (the state and its change first divided by the "
      "state's RMS over the domain: predictions scale with the state, a state at rest stays at rest)",
      {"dataset", "amplitude"}, std::string("dataset"));
  s.choice(
      "surrogate.extrapolation",
      "what the model's output is added to: 'none' (the model predicts the whole change over K steps) or "
      "'linear' (linear extrapolation in time, K (u^n - u^{n-1}) from input channels 0 and 1, the state one "
      "solver step apart: the model learns only what extrapolation misses; stored in the weights file)",
      {"none", "linear"}, std::string("none"));
  s.boolean(
      "surrogate.window_shift",
      "shift the grid of attention windows by a pseudo-random 0 to window-1 patches per axis at every "
      "training step and every prediction (the same on every rank), so that window edges do not stay at "
      "one place through a rollout; the n-th prediction uses the n-th shift (stored in the weights file)",
      false);
  s.integer("surrogate.seed", "seed of the weight initialisation and of batch sampling", 20261129, 0,
            std::int64_t(1) << 62);
  s.section("surrogate.train", "Training: AdamW with warm-up and cosine decay, clipping, mixed precision.");
  s.choice("surrogate.train.precision",
           "compute precision of training (fp32 master weights except fp64); fp16 uses dynamic loss scaling, "
           "fp8 delayed per-tensor scaling (e4m3 forward, e5m2 gradients)",
           {"fp64", "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"}, std::string("fp32"));
  s.integer("surrogate.train.batch_size", "samples per rank and step (the global batch is ranks times this)",
            4, 1, 4096);
  s.real("surrogate.train.learning_rate", "peak learning rate", 1e-3, 1e-12, 10.0);
  s.real("surrogate.train.min_learning_rate", "learning rate at the end of the cosine decay", 1e-5, 0.0,
         10.0);
  s.integer("surrogate.train.warmup_steps", "linear warm-up steps", 20, 0, 100000000);
  s.integer("surrogate.train.total_steps", "steps over which the cosine decays", 1000, 1, 100000000);
  s.real("surrogate.train.weight_decay", "AdamW decoupled weight decay", 0.01, 0.0, 10.0);
  s.real("surrogate.train.clip_norm", "global gradient-norm clipping (0: off)", 1.0, 0.0, 1e30);
  s.real("surrogate.train.noise",
         "standard deviation (normalised units) of Gaussian noise added to the state inputs in training, the "
         "target corrected for it (0: off)",
         0.0, 0.0, 10.0);
  s.real("surrogate.train.pushforward",
         "fraction of the training steps after the first quarter that start from the model's own prediction "
         "one step ahead and learn the step after it (pushforward; 0: off)",
         0.0, 0.0, 1.0);
  s.integer("surrogate.train.pushforward_steps",
            "horizon of a pushforward step: it chains h of the model's own predictions (no gradient through "
            "them) before the step it learns, h drawn uniformly from 1 to this",
            1, 1, 64);
  s.real("surrogate.train.loss_scale", "initial loss scale for fp16 (halved on overflow)", 65536.0, 1.0,
         1e30);
  s.integer("surrogate.train.loss_scale_growth_interval", "good fp16 steps before the loss scale doubles",
            200, 1, 100000000);
}

SurrogateConfig config_from_deck(const Deck& deck) {
  SurrogateConfig c;
  auto& m = c.model;
  m.dim = int(deck.get_int("mesh.dim"));
  m.in_channels = int(deck.get_int("surrogate.in_channels"));
  m.out_channels = int(deck.get_int("surrogate.out_channels"));
  m.patch = int(deck.get_int("surrogate.patch"));
  m.embed = int(deck.get_int("surrogate.embed"));
  m.heads = int(deck.get_int("surrogate.heads"));
  m.layers = int(deck.get_int("surrogate.layers"));
  m.mlp_hidden = int(deck.get_int("surrogate.mlp_hidden"));
  m.window = int(deck.get_int("surrogate.window"));
  m.shifted = deck.get_bool("surrogate.shifted");
  const auto pos = deck.get_string("surrogate.position");
  m.position = pos == "learned" ? PositionKind::learned
               : pos == "none"  ? PositionKind::none
                                : PositionKind::sinusoidal;
  m.seed = std::uint64_t(deck.get_int("surrogate.seed"));
  c.seed = m.seed;
  c.steps_per_prediction = int(deck.get_int("surrogate.steps_per_prediction"));
  c.train_precision =
      parse_precision(deck.get_string("surrogate.train.precision"), "surrogate.train.precision");
  c.batch_size = int(deck.get_int("surrogate.train.batch_size"));
  c.scaling =
      deck.get_string("surrogate.scaling") == "amplitude" ? InputScaling::amplitude : InputScaling::dataset;
  c.extrapolation = deck.get_string("surrogate.extrapolation") == "linear" ? TimeExtrapolation::linear
                                                                           : TimeExtrapolation::none;
  c.window_shift = deck.get_bool("surrogate.window_shift");
  c.noise = deck.get_real("surrogate.train.noise");
  c.pushforward = deck.get_real("surrogate.train.pushforward");
  c.pushforward_steps = int(deck.get_int("surrogate.train.pushforward_steps"));
  auto& o = c.optimizer;
  o.learning_rate = deck.get_real("surrogate.train.learning_rate");
  o.min_learning_rate = deck.get_real("surrogate.train.min_learning_rate");
  o.warmup_steps = int(deck.get_int("surrogate.train.warmup_steps"));
  o.total_steps = int(deck.get_int("surrogate.train.total_steps"));
  o.weight_decay = deck.get_real("surrogate.train.weight_decay");
  o.clip_norm = deck.get_real("surrogate.train.clip_norm");
  c.loss_scale.initial = deck.get_real("surrogate.train.loss_scale");
  c.loss_scale.growth_interval = int(deck.get_int("surrogate.train.loss_scale_growth_interval"));
  // Cross-key rules, with the deck's file named.
  try {
    m.validate();
    o.validate();
  } catch (const Error& e) {
    throw Error(deck.file() + ": " + e.what());
  }
  return c;
}

}  // namespace mantissa::surrogates
