#include <mantissa/core/Deck.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/core/Schema.hpp>
#include <mantissa/workflow/CampaignKinds.hpp>
#include <mantissa/workflow/Registry.hpp>
#include <mantissa/workflow/Schema.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>

namespace mantissa::workflow {

namespace {
constexpr std::int64_t imax = std::numeric_limits<std::int32_t>::max();

// The roles of every registered physics' precision table, in first-seen order, and the
// precisions each role takes in any of them (the choices of campaign.variants[].<role>).
std::vector<std::pair<std::string, std::vector<std::string>>> role_choices(const Registry& registry) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& name : registry.physics_names()) {
    const auto& t = registry.physics(name).precisions;
    for (const auto& role : t.roles) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& r) { return r.first == role; });
      if (it == out.end()) {
        out.push_back({role, {}});
        it = out.end() - 1;
      }
      for (const Precision p : t.choices(role)) {
        const std::string n(to_string(p));
        if (std::find(it->second.begin(), it->second.end(), n) == it->second.end()) it->second.push_back(n);
      }
    }
  }
  // Choices in the order of Precision, whichever physics named them first.
  for (auto& r : out)
    std::sort(r.second.begin(), r.second.end(), [](const std::string& a, const std::string& b) {
      return parse_precision(a) < parse_precision(b);
    });
  return out;
}

std::string role_doc(const std::string& role) {
  if (role == role::storage) return "precision the state is stored in";
  if (role == role::compute) return "precision the physics' update computes in";
  if (role == role::solver) return "inner precision of the physics' linear solver";
  return "precision of the physics' role '" + role + "'";
}
}  // namespace

void register_schema(Schema& s, const Registry& registry) {
  s.section(
      "campaign",
      "The precision campaign: the fp64 reference, precision variants of the same physics, the surrogate "
      "rollouts and the hybrid mode, all measured against the reference (docs/user-guide.md).");
  std::vector<std::string> kinds = CampaignKinds::builtin().campaign_kinds();
  s.choice("campaign.kind",
           "which phases the campaign runs (precision: the reference, the variants, then the surrogate's "
           "training, rollouts and hybrid; timing: only the reference's and the variants' timed stretches "
           "(campaign.timing), for the speed column at production sizes: no accuracy run, no comparison with "
           "the reference, no surrogate; the report says accuracy was not measured)",
           kinds, std::string("precision"));
  s.choice("campaign.reference", "precision of the reference run (every precision role of the physics)",
           {"fp64", "fp32"}, std::string("fp64"));
  s.integer("campaign.sample_every", "steps between field comparisons against the reference (and at the end)",
            10, 1, imax);
  s.real(
      "campaign.error_threshold",
      "relative L2 error above which a variant counts as diverged; the report gives the first time it passes",
      0.1, 0.0, 1e30);
  s.integer("campaign.receiver_max_lag",
            "largest receiver cross-correlation lag searched, in steps (-1: steps/10)", -1, -1, imax);
  s.boolean("campaign.snapshots",
            "gather every variant's final primary field into report.h5 (+ snapshots.xmf)", true);
  s.integer("campaign.stop_after_step",
            "testing aid: raise SIGTERM after this many campaign steps, as Slurm would (-1: never)", -1, -1,
            imax);
  s.boolean("campaign.flush_subnormals",
            "flush subnormal numbers to zero (FTZ + DAZ) on every host thread while the physics steps; "
            "CUDA/HIP device code has the mode it was compiled with (Mantissa_DEVICE_FLUSH_DENORMALS); "
            "the report states what was in force per variant",
            true);
  s.section("campaign.timing",
            "How the speed column is measured: after each physics variant's accuracy run, repeated timed "
            "stretches of the same trajectory, nothing recorded inside them (docs/user-guide.md, \"Reading "
            "the speed column\").");
  s.integer("campaign.timing.repeats",
            "timed stretches per physics variant (median and spread); 0: none, the speed column is then "
            "the accuracy run's own step time",
            5, 0, 1000);
  s.integer("campaign.timing.warmup_steps", "untimed steps from the initial state before each stretch", 5, 0,
            imax);
  s.integer("campaign.timing.steps",
            "steps per timed stretch (-1: the rest of the run, run.steps - warmup_steps)", -1, -1, imax);
  s.record_list("campaign.variants",
                "physics variants run next to the reference, from the same initial state");
  s.string("campaign.variants[].name", "unique name of the variant in the report", std::nullopt);
  s.boolean("campaign.variants[].flush_subnormals",
            "this variant's campaign.flush_subnormals (absent: the campaign's); two variants of the same "
            "precision, one flushing and one not, show what flushing changes",
            std::nullopt, true);
  // One key per precision role of the registered physics, choices from their precision tables
  // (PrecisionTable): storage is required, compute defaults to fp32, the others are optional and
  // completed by the physics' table when absent.
  for (const auto& r : role_choices(registry)) {
    const std::string key = "campaign.variants[]." + r.first;
    if (r.first == role::storage)
      s.choice(key, role_doc(r.first), r.second, std::nullopt);
    else if (r.first == role::compute)
      s.choice(key, role_doc(r.first), r.second, std::string("fp32"));
    else
      s.choice(key,
               role_doc(r.first) + " (absent: the physics' first combination that agrees with the others)",
               r.second, std::nullopt, true);
  }

  s.section("campaign.surrogate", "The learned surrogate: training source, rollouts and the hybrid mode.");
  s.boolean("campaign.surrogate.enabled", "train (or load) the surrogate and roll it out", false);
  s.string("campaign.surrogate.model", "surrogate model (a registry key in apps/mantissa)",
           std::string("transformer"));
  s.choice("campaign.surrogate.training",
           "online: trained in process on the reference trajectory; file: weights loaded from `weights`",
           {"online", "file"}, std::string("online"));
  s.string("campaign.surrogate.weights", "path prefix of the weights to load (training: file)", std::nullopt,
           true);
  s.string("campaign.surrogate.save_weights", "path prefix to save the trained weights to", std::nullopt,
           true);
  s.integer("campaign.surrogate.train_steps",
            "reference steps whose states feed online training (-1: all); later steps test extrapolation", -1,
            -1, imax);
  s.string_list("campaign.surrogate.rollout",
                "precisions of pure surrogate rollouts (fp64, fp32, bf16, fp16, fp8 = fp8_e4m3, fp8_e5m2)",
                std::vector<std::string>{"fp32"});
  s.integer("campaign.surrogate.horizon",
            "physics steps a rollout covers from the initial state (-1: run.steps)", -1, -1, imax);
  s.integer(
      "campaign.surrogate.start",
      "step at which the surrogate takes over: rollouts and the hybrid run the physics (in the reference "
      "precision) before it, and online training uses the reference states from it on; set it after the "
      "sources have faded (a surrogate sees the state only, not a source's wavelet in time); a multiple "
      "of the surrogate's stride",
      0, 0, imax);
  s.real("campaign.surrogate.heldout_fraction",
         "fraction of the surrogate's window [start, horizon] held out from online training (split at a "
         "sample step); every rollout is then also run from the split to the horizon and scored there, on "
         "states it never trained on (report: held-out); 0: none, the rollouts are in-sample only",
         0.0, 0.0, 0.95);
  s.int_list("campaign.surrogate.train_experiments",
             "experiments whose reference trajectories train the surrogate online, in this order (seismic: "
             "the shots of seismic.sources[].shot); every physics phase runs every experiment, the "
             "reference keeps the training states of these",
             std::vector<std::int64_t>{0}, 1, 1024);
  s.int_list("campaign.surrogate.heldout_experiments",
             "experiments the surrogate never trains on (seismic: shots): every rollout precision is also "
             "run on each of them from campaign.surrogate.start to the horizon and scored against its "
             "reference (report: held-out shot N); empty: none",
             std::vector<std::int64_t>{}, 0, 1024);
  s.section("campaign.surrogate.hybrid",
            "Surrogate and physics taking turns: an error indicator hands the state back to the physics.");
  s.boolean("campaign.surrogate.hybrid.enabled", "run the hybrid mode", false);
  s.string("campaign.surrogate.hybrid.precision", "surrogate precision in the hybrid mode",
           std::string("fp32"));
  s.integer("campaign.surrogate.hybrid.k", "surrogate steps per block; the indicator runs at block ends", 4,
            1, imax);
  s.integer("campaign.surrogate.hybrid.check_every",
            "surrogate steps (at least) between two evaluations of the error indicator (M)", 4, 1, imax);
  s.real("campaign.surrogate.hybrid.energy_tol", "|energy drift| that hands the state over to the physics",
         0.05, 0.0, 1e30);
  s.real("campaign.surrogate.hybrid.residual_tol",
         "one-step relative residual (surrogate vs physics update) that hands the state over", 0.05, 0.0,
         1e30);
  s.integer("campaign.surrogate.hybrid.sample_stride", "the residual uses every n-th point per axis", 4, 1,
            1024);
  s.integer("campaign.surrogate.hybrid.physics_steps",
            "physics steps after a hand-over before the surrogate resumes", 20, 1, imax);
  s.real("campaign.surrogate.hybrid.error_limit",
         "true error (rel. L2 of the primary field against the reference) the indicator should hand over "
         "before: report.md and report.json give the true error at every indicator check and hand-over and "
         "say whether it passed this limit while the surrogate ran; it does not steer the run (the "
         "indicator cannot see the reference)",
         0.05, 0.0, 1e30);
  s.choice("campaign.surrogate.hybrid.time_level",
           "the earlier time level the physics continues from after a prediction (the indicator's physics "
           "step and every hand-over), for a surrogate whose state holds the primary field at two successive "
           "steps (seismic p, p_old): interpolated: the quadratic through the surrogate's own primary field "
           "one prediction before, at and after the step, evaluated one step back (exact for K = 1); "
           "surrogate: the surrogate's own p_old (their difference, the physics' velocity, is far less "
           "accurate than either)",
           {"interpolated", "surrogate"}, std::string("interpolated"));
}

void check_checkpoint_dir(const std::string& dir, const std::string& where) {
  const std::filesystem::path d(dir);
  bool leaves = d.empty() || d.is_absolute();
  for (const auto& part : d) leaves = leaves || part == "..";
  if (leaves)
    throw Error((where.empty() ? std::string() : where + ": ") + "checkpoint.dir: '" + dir +
                "' must be a relative path inside the run directory (e.g. 'checkpoints'), without '..'; "
                "--overwrite replaces the run directory with its checkpoints, and a moved run directory "
                "resumes");
}

CampaignConfig config_from_deck(const Deck& deck) {
  CampaignConfig c;
  c.physics = deck.get_string("physics");
  c.kind = deck.get_string("campaign.kind");
  if (deck.has("logging.progress_every")) c.progress_every = deck.get_real("logging.progress_every");
  c.steps = deck.get_int("run.steps");
  c.reference_precision = parse_precision(deck.get_string("campaign.reference"), "campaign.reference");
  c.sample_every = deck.get_int("campaign.sample_every");
  c.error_threshold = deck.get_real("campaign.error_threshold");
  c.receiver_max_lag = deck.get_int("campaign.receiver_max_lag");
  c.snapshots = deck.get_bool("campaign.snapshots");
  c.stop_after_step = deck.get_int("campaign.stop_after_step");
  c.flush_subnormals = deck.get_bool("campaign.flush_subnormals");
  c.timing.repeats = static_cast<int>(deck.get_int("campaign.timing.repeats"));
  c.timing.warmup_steps = deck.get_int("campaign.timing.warmup_steps");
  c.timing.steps = deck.get_int("campaign.timing.steps");
  // checkpoint.every (core section) counts campaign steps here: every phase's steps in turn.
  // checkpoint.enabled: false turns off every checkpoint a stop does not ask for.
  if (deck.has("checkpoint.enabled") && !deck.get_bool("checkpoint.enabled")) {
    c.checkpoint_every = 0;
    c.checkpoint_interval = 0.0;
    c.checkpoint_phase_end = false;
  } else {
    if (deck.has("checkpoint.every")) c.checkpoint_every = deck.get_int("checkpoint.every");
    if (deck.has("checkpoint.interval")) c.checkpoint_interval = deck.get_real("checkpoint.interval");
    if (deck.has("checkpoint.phase_end")) c.checkpoint_phase_end = deck.get_bool("checkpoint.phase_end");
  }
  if (deck.has("checkpoint.keep")) c.checkpoint_keep = deck.get_int("checkpoint.keep");
  if (deck.has("checkpoint.dir")) {
    c.checkpoint_dir = deck.get_string("checkpoint.dir");
    check_checkpoint_dir(c.checkpoint_dir, deck.where("checkpoint.dir"));
  }
  const std::size_t n = deck.count("campaign.variants");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string p = "campaign.variants[" + std::to_string(i) + "].";
    VariantSpec v;
    v.name = deck.get_string(p + "name");
    if (deck.has(p + "flush_subnormals")) v.flush_subnormals = deck.get_bool(p + "flush_subnormals");
    for (const char* role : {role::storage, role::compute, role::solver})
      if (deck.has(p + role)) v.precision.set(role, parse_precision(deck.get_string(p + role), p + role));
    c.variants.push_back(v);
  }
  auto& s = c.surrogate;
  // A timing campaign (CampaignKinds timing_campaign_plan) runs no surrogate.
  s.enabled = deck.get_bool("campaign.surrogate.enabled") && c.kind != "timing";
  s.model = deck.get_string("campaign.surrogate.model");
  s.training = deck.get_string("campaign.surrogate.training");
  if (deck.has("campaign.surrogate.weights")) s.weights = deck.get_string("campaign.surrogate.weights");
  if (deck.has("campaign.surrogate.save_weights"))
    s.save_weights = deck.get_string("campaign.surrogate.save_weights");
  s.train_steps = deck.get_int("campaign.surrogate.train_steps");
  for (const auto& p : deck.get_strings("campaign.surrogate.rollout"))
    s.rollout.push_back(parse_precision(p, "campaign.surrogate.rollout"));
  s.horizon = deck.get_int("campaign.surrogate.horizon");
  s.start = deck.get_int("campaign.surrogate.start");
  s.heldout_fraction = deck.get_real("campaign.surrogate.heldout_fraction");
  auto experiments = [&](const char* key) {
    std::vector<int> out;
    for (const auto e : deck.get_ints(key)) {
      if (e < 0 || e > 1000000)
        throw Error(deck.file() + ": deck key '" + std::string(key) + "': experiment " + std::to_string(e) +
                    " is not an experiment index (0, 1, ...: seismic.sources[].shot)");
      out.push_back(static_cast<int>(e));
    }
    return out;
  };
  s.train_experiments = experiments("campaign.surrogate.train_experiments");
  s.heldout_experiments = experiments("campaign.surrogate.heldout_experiments");
  auto& h = s.hybrid;
  h.enabled = deck.get_bool("campaign.surrogate.hybrid.enabled");
  h.precision = parse_precision(deck.get_string("campaign.surrogate.hybrid.precision"),
                                "campaign.surrogate.hybrid.precision");
  h.k = static_cast<int>(deck.get_int("campaign.surrogate.hybrid.k"));
  h.check_every = static_cast<int>(deck.get_int("campaign.surrogate.hybrid.check_every"));
  h.energy_tol = deck.get_real("campaign.surrogate.hybrid.energy_tol");
  h.residual_tol = deck.get_real("campaign.surrogate.hybrid.residual_tol");
  h.sample_stride = static_cast<int>(deck.get_int("campaign.surrogate.hybrid.sample_stride"));
  h.physics_steps = deck.get_int("campaign.surrogate.hybrid.physics_steps");
  h.error_limit = deck.get_real("campaign.surrogate.hybrid.error_limit");
  h.time_level = deck.get_string("campaign.surrogate.hybrid.time_level");
  c.deck_file = deck.file();
  c.deck_hash = deck.hash();
  c.deck_resolved = deck.resolved_yaml();
  return c;
}

}  // namespace mantissa::workflow
