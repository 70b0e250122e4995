// The surrogate's training (online, on the reference states the reference phase kept) or its
// weights loaded from a file; then the teacher-forced one-step error on the training pairs.
//
// A stop request (signal, run.wall_time_limit) is taken between optimizer steps: the surrogate
// saves its part-way state as RUN_DIR/surrogate-trained-partial* (weights, optimizer, every
// rank's generator, steps done), the campaign checkpoint takes a copy of it and the training
// states, and a resume at the same rank count continues the training to the very result of an
// uninterrupted one; at another rank count (the data-parallel split differs) it starts over.
#include <mantissa/workflow/TrainingPhase.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

namespace mantissa::workflow {

namespace {
// "trained by the campaign of deck D (hash H): N optimizer steps on S samples, loss a -> b".
std::string provenance_text(const SurrogateProvenance& p) {
  if (!p.known()) return "written without provenance (an older file): where they came from is not recorded";
  std::string s =
      "trained by the campaign of deck " + (p.deck_file.empty() ? std::string("?") : p.deck_file) +
      " (deck hash " + (p.deck_hash.empty() ? std::string("not recorded") : p.deck_hash) +
      "): " + (p.steps_trained >= 0 ? std::to_string(p.steps_trained) : std::string("?")) +
      " optimizer steps on " + (p.samples >= 0 ? std::to_string(p.samples) : std::string("?")) + " samples";
  if (std::isfinite(p.final_loss))
    s += ", loss " + (std::isfinite(p.initial_loss) ? fmt_g(p.initial_loss) + " -> " : std::string()) +
         fmt_g(p.final_loss);
  return s;
}
}  // namespace

bool TrainingPhase::done(const PhaseContext& ctx) const {
  return ctx.training().done;
}

namespace {
// The part-way training's files: RUN_DIR/surrogate-trained-partial* (the surrogate adds its
// extension), inside the prefix the campaign checkpoint copies.
std::string partial_path(const PhaseContext& ctx) {
  return ctx.trained_path() + "-partial";
}

// The cursor's record of a part-way training's fastest optimizer step (microseconds), for the
// end-work forecast of the start that continues it.
constexpr const char* k_fastest_step_us = "training_fastest_step_us";

void remove_partial(const PhaseContext& ctx) {
  if (ctx.rank() != 0) return;
  namespace fs = std::filesystem;
  const fs::path p(partial_path(ctx));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p.parent_path(), ec))
    if (e.path().filename().string().rfind(p.filename().string(), 0) == 0) fs::remove(e.path(), ec);
}
}  // namespace

bool TrainingPhase::run(PhaseContext& ctx, bool resumed) {
  SurrogateModel& sur = ctx.surrogate();
  const auto& s = ctx.config().surrogate;
  auto& t = ctx.training();
  auto& ref = ctx.reference_store();
  auto& cur = ctx.cursor();
  int ranks = 1;
  MPI_Comm_size(ctx.comm(), &ranks);
  // The speed placement's peer: the GEMM rate of this back-end, measured once, before the
  // training (its seconds are then part of this phase's set-up, which run.wall_time_limit has
  // measured once a start has seen it, not unforeseen work after the last optimizer step).
  if (!(t.gemm_peak_flops > 0.0)) {
    PhaseTimer gp("campaign::gemm_peak");
    t.gemm_peak_flops = sur.gemm_peak_flops();
    t.gemm_peak_what = sur.gemm_peak_describe();
    const double secs = gp.stop();
    if (t.gemm_peak_flops > 0.0)
      ctx.log("GEMM rate for the speed placement: " + fmt_g(t.gemm_peak_flops * 1e-9) + " GFLOP/s (" +
              t.gemm_peak_what + ", " + fmt_g(secs) + " s)");
  }
  PhaseTimer sw("campaign::train");
  t.mode = s.training;
  // The training states, kept until the one-step error below has been measured on them.
  std::vector<std::vector<HostField>> states;
  std::vector<int> state_experiment;  // the experiment of each (ReferenceStore::train_experiment)
  auto to_state = [&](const std::vector<HostField>& smp) {
    State st;
    for (std::size_t i = 0; i < smp.size(); ++i) {
      NamedField nf{ref.state_names[i], Field<double>("mantissa::workflow::TrainingPhase::state",
                                                      ctx.decomposition(), smp[i].ghost[0])};
      from_host(smp[i], nf.field);
      st.push_back(std::move(nf));
    }
    return st;
  };
  if (s.training == "online") {
    std::string of;
    if (!(s.train_experiments.size() == 1 && s.train_experiments[0] == 0)) {
      for (const int e : s.train_experiments) of += (of.empty() ? "" : ", ") + std::to_string(e);
      of = " of experiments " + of;
    }
    ctx.log("training the surrogate on " + std::to_string(ref.train_samples.size()) + " reference states" +
            of + (s.start > 0 ? " from step " + std::to_string(s.start) : std::string()) + " (" +
            sur.describe() + ")");
    // One trajectory per experiment: consecutive states of different experiments are no pair.
    MANTISSA_ASSERT(ref.train_experiment.empty() || ref.train_experiment.size() == ref.train_samples.size(),
                    "training states and their experiments disagree in number");
    for (std::size_t n = 0; n < ref.train_samples.size(); ++n) {
      if (n > 0 && !ref.train_experiment.empty() && ref.train_experiment[n] != ref.train_experiment[n - 1])
        sur.end_trajectory();
      sur.add_sample(to_state(ref.train_samples[n]));
    }
    sur.end_trajectory();
    // A part-way training of an earlier start continues (same rank count) or starts over.
    bool continued = false;
    if (resumed && cur.get("training_step") > 0) {
      if (cur.get("training_ranks") == ranks) {
        sur.load(partial_path(ctx));
        continued = true;
        ctx.log("training continues after optimizer step " + std::to_string(cur.get("training_step")) +
                " (stopped there by an earlier start)");
      } else {
        ctx.log("training starts over: it stopped part-way at " + std::to_string(cur.get("training_ranks")) +
                " ranks and continues bitwise only at the same rank count (this run has " +
                std::to_string(ranks) + ")");
      }
    }
    // Asked after every optimizer step but the last (collective); the test hold names the step.
    // The phase's end work after the last one, forecast for run.wall_time_limit: the weights'
    // save (a durable write, no larger than a checkpoint that holds them) and one surrogate
    // step per one-step-error pair, each taken as half the fastest optimizer step so far (a
    // step runs a forward and a backward pass, the backward no cheaper than the forward, over a
    // batch of at least one sample; the fastest, since a short process's steps are inflated by
    // one-time costs: its first step pays the training's set-up and counts only while there is
    // nothing else; an earlier start's fastest is kept in the cursor). In the twin at load 6 a
    // pair took 0.45 of the mean optimizer step.
    std::int64_t step = continued ? cur.get("training_step") : 0;
    auto t_last = std::chrono::steady_clock::now();
    double fastest =
        continued && cur.get(k_fastest_step_us) > 0 ? 1e-6 * double(cur.get(k_fastest_step_us)) : 0.0;
    bool first_of_process = true;
    const double pairs = double(ref.train_samples.size());
    const auto stats = sur.train([&]() {
      ++step;
      ctx.note_progress();
      const auto t_now = std::chrono::steady_clock::now();
      const double seconds = std::chrono::duration<double>(t_now - t_last).count();
      t_last = t_now;
      if (!first_of_process || fastest <= 0.0) fastest = fastest > 0.0 ? std::min(fastest, seconds) : seconds;
      first_of_process = false;
      ctx.expect_end_work(ctx.write_estimate() + pairs * 0.5 * fastest);
      ctx.test_hold("training@" + std::to_string(step));
      return ctx.stop_requested();
    });
    if (!continued) t.initial_loss = stats.initial_loss;
    t.samples = stats.samples;
    t.iterations = stats.iterations;
    t.final_loss = stats.final_loss;
    t.flops = stats.flops;
    if (stats.stopped) {
      // Everything a later start needs: the part-way state and, in the checkpoint, its copy and
      // the training states (still in the reference store).
      sur.save(partial_path(ctx));
      cur.phase_state["training_step"] = stats.iterations;
      cur.phase_state["training_ranks"] = ranks;
      cur.phase_state[k_fastest_step_us] = static_cast<std::int64_t>(1e6 * fastest);
      t.seconds += sw.stop();
      ctx.write_checkpoint(nullptr, 0.0);
      ctx.log("training stopped after optimizer step " + std::to_string(stats.iterations) + " (" +
              ctx.stop_reason() + ")");
      return false;
    }
    states.swap(ref.train_samples);
    state_experiment.swap(ref.train_experiment);
    ref.train_experiment.clear();
    remove_partial(ctx);
    cur.phase_state.erase("training_step");
    cur.phase_state.erase("training_ranks");
    cur.phase_state.erase(k_fastest_step_us);
    // Saved with the weights, so that a campaign that loads them can say where they came from.
    SurrogateProvenance pv = sur.provenance();
    pv.deck_hash = ctx.config().deck_hash;
    pv.deck_file = ctx.config().deck_file;
    if (pv.samples < 0) pv.samples = stats.samples;
    if (pv.steps_trained < 0) pv.steps_trained = stats.iterations;
    if (!std::isfinite(pv.initial_loss)) pv.initial_loss = stats.initial_loss;
    if (!std::isfinite(pv.final_loss)) pv.final_loss = stats.final_loss;
    sur.set_provenance(pv);
  } else {
    ctx.log("loading surrogate weights from '" + s.weights + "'");
    sur.load(s.weights);
    // What the weights' file says of their training, in the training record (report.md's
    // "Training (file)" line, report.json's training section).
    const SurrogateProvenance pv = sur.provenance();
    if (pv.samples >= 0) t.samples = pv.samples;
    if (pv.steps_trained >= 0) t.iterations = pv.steps_trained;
    if (std::isfinite(pv.initial_loss)) t.initial_loss = pv.initial_loss;
    if (std::isfinite(pv.final_loss)) t.final_loss = pv.final_loss;
    ctx.log("the weights were " + provenance_text(pv));
  }
  t.seconds += sw.stop();
  if (!s.save_weights.empty()) sur.save(s.save_weights);
  {
    // Every rollout phase starts from these weights (RolloutPhase).
    PhaseTimer io("campaign::save_trained");
    sur.save(ctx.trained_path());
    t.seconds += io.stop();
  }
  // One-step error (teacher forcing): every training state advanced by one surrogate step, its
  // primary field compared with the next reference state's, summed over all pairs as
  // sqrt(sum ||error||^2 / sum ||reference||^2) so that nearly empty states (before a source has
  // fired) cannot dominate. It is the error a rollout compounds once per prediction, so the report
  // can tell an inaccurate surrogate from an unstable rollout. The rollouts reload the saved
  // weights and inference state, so these predictions do not change them.
  const bool any_rollout = !s.rollout.empty() || s.hybrid.enabled;
  if (states.size() >= 2 && any_rollout) {
    PhaseTimer ev("campaign::one_step");
    const Precision p = !s.rollout.empty() ? s.rollout.front() : s.hybrid.precision;
    sur.set_precision(p);
    double err2 = 0.0, ref2 = 0.0;
    std::int64_t pairs = 0;
    for (std::size_t n = 0; n + 1 < states.size(); ++n) {
      if (!state_experiment.empty() && state_experiment[n] != state_experiment[n + 1]) continue;
      ++pairs;
      State st = to_state(states[n]);
      sur.predict(st, 1);
      const auto e = field_error(
          ctx.comm(), to_host(st[0].field, "mantissa::workflow::TrainingPhase::one_step"), states[n + 1][0]);
      // A reference of exactly zero (a state at rest) carries no weight in the relative sum;
      // the prediction's deviation from it then has no scale to be relative to.
      if (e.ref_l2 > 0.0) {
        err2 += e.rel_l2 * e.rel_l2 * e.ref_l2 * e.ref_l2;
        ref2 += e.ref_l2 * e.ref_l2;
      }
    }
    t.one_step_pairs = pairs;
    t.one_step_precision = to_string(p);
    t.one_step_rel_l2 = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::nan("");
    const double secs = ev.stop();
    ctx.log("one-step error of the trained surrogate (" + t.one_step_precision + ", " +
            std::to_string(t.one_step_pairs) + " reference pairs): rel. L2 " + fmt_g(t.one_step_rel_l2) +
            " (" + fmt_g(secs) + " s)");
  }
  states.clear();
  t.flops_per_prediction = sur.flops_per_step();
  t.done = true;
  {
    std::string d = sur.describe();
    if (s.training != "online")
      d += "\nWeights loaded from '" + s.weights + "' (campaign.surrogate.training: file); they were " +
           provenance_text(sur.provenance()) + ".";
    ctx.set_surrogate_description(d);
  }
  ctx.log("surrogate ready after " + fmt_g(t.seconds) + " s, final loss " + fmt_g(t.final_loss));
  return true;
}

}  // namespace mantissa::workflow
