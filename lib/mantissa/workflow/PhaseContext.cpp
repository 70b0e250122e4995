#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Log.hpp>
#include <mantissa/core/Timers.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/workflow/PhaseContext.hpp>
#include <mantissa/workflow/Signals.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <thread>

namespace mantissa::workflow {

namespace {
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

double nan_max(const std::vector<double>& v, bool absolute) {
  double m = 0.0;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::fmax(m, absolute ? std::fabs(x) : x);
  }
  return m;
}

}  // namespace

std::string fmt_g(double v) {
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}

PhaseTimer::PhaseTimer(const char* name) : m_name(name) {
  Timers::global().start(m_name);
  m_t0 = std::chrono::steady_clock::now();
}

PhaseTimer::~PhaseTimer() {
  if (m_open) Timers::global().stop(m_name);
}

double PhaseTimer::stop() {
  if (!m_open) return m_seconds;
  fence(m_name);
  m_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_t0).count();
  m_open = false;
  Timers::global().stop(m_name);
  return m_seconds;
}

PhaseContext::PhaseContext(const CampaignConfig& config, const Registry& registry, ModelContext models,
                           std::string run_dir)
    : m_cfg(config),
      m_registry(registry),
      m_models(models),
      m_dir(std::move(run_dir)),
      m_t0(std::chrono::steady_clock::now()),
      m_last_checkpoint(m_t0) {
  MANTISSA_ASSERT(m_models.decomp != nullptr,
                  "a campaign needs the shared decomposition in its ModelContext");
  MPI_Comm_rank(comm(), &m_rank);
  m_reference = precisions().uniform(m_cfg.reference_precision, "deck key 'campaign.reference'");
  m_recorder = m_registry.create_recorder(m_cfg.physics, m_models);
  m_energy = std::make_unique<EnergyMeter>(comm());
}

PhaseContext::~PhaseContext() = default;

MPI_Comm PhaseContext::comm() const {
  return m_models.decomp->comm();
}

const PrecisionTable& PhaseContext::precisions() const {
  return m_registry.physics(m_cfg.physics).precisions;
}

std::unique_ptr<PhysicsModel> PhaseContext::make_physics(const PrecisionSet& precision) const {
  return m_registry.create_physics(m_cfg.physics, m_models, precision);
}

SurrogateModel& PhaseContext::surrogate() {
  MANTISSA_ASSERT(m_cfg.surrogate.enabled, "surrogate used in a campaign without one");
  if (m_surrogate) return *m_surrogate;
  m_surrogate = m_registry.create_surrogate(m_cfg.surrogate.model, m_models);
  m_surrogate_description = m_surrogate->describe();
  const int stride = m_surrogate->stride();
  const auto& s = m_cfg.surrogate;
  const std::int64_t horizon = s.horizon < 0 ? m_cfg.steps : s.horizon;
  auto need_multiple = [stride](const std::string& key, std::int64_t v) {
    if (v % stride != 0)
      throw Error("deck key '" + key + "' = " + std::to_string(v) +
                  " must be a multiple of the surrogate's stride " + std::to_string(stride) +
                  " (physics steps per surrogate step)");
  };
  need_multiple("campaign.sample_every", m_cfg.sample_every);
  need_multiple("campaign.surrogate.horizon", horizon);
  need_multiple("campaign.surrogate.start", s.start);
  if (s.hybrid.enabled) need_multiple("campaign.surrogate.hybrid.physics_steps", s.hybrid.physics_steps);
  return *m_surrogate;
}

TimeSplit PhaseContext::surrogate_split() const {
  const auto& s = m_cfg.surrogate;
  const std::int64_t horizon = s.horizon < 0 ? m_cfg.steps : s.horizon;
  return campaign_time_split(s.start, horizon, m_cfg.sample_every, s.heldout_fraction,
                             "deck key 'campaign.surrogate.heldout_fraction'");
}

std::string PhaseContext::trained_path() const {
  return m_dir + "/surrogate-trained";
}

void PhaseContext::note_model(const PhysicsModel& model) {
  m_probes = model.probes();
  m_probes.stride = std::max(1, m_probes.stride);
  m_dt = model.dt();
  m_num_experiments = std::max(1, model.num_experiments());
}

VariantResult& PhaseContext::result(const std::string& name) {
  for (auto& r : m_results)
    if (r.name == name) return r;
  MANTISSA_ASSERT(false, "no result named '" << name << "'");
  return m_results.front();
}

const std::string PhaseContext::k_end_phase_name = "(after the last phase)";

const std::string& PhaseContext::phase_name() const {
  if (m_cur.phase == m_phase_names.size()) return k_end_phase_name;
  return m_phase_names.at(m_cur.phase);
}

void PhaseContext::write_checkpoint(const State* state, double time) {
  MANTISSA_ASSERT(m_ckpt != nullptr, "no checkpointer");
  const double bytes = checkpoint_bytes(state != nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  m_ckpt->write(*this, state, time);
  m_last_checkpoint = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(m_last_checkpoint - t0).count();
  m_written_since_poll += seconds;
  if (seconds > m_longest_checkpoint) {
    m_longest_checkpoint = seconds;
    m_longest_checkpoint_bytes = bytes;
  }
  m_ckpt->record_cost(*this, seconds, bytes);
  m_interval_due = false;
  m_between_written = state == nullptr && m_cur.phase_state.empty();
  m_between_phase = m_cur.phase;
  m_between_steps = m_cur.global_steps;
}

bool PhaseContext::phase_end_checkpoint_due() const {
  if (!m_cfg.checkpoint_phase_end) return false;
  const double since =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_last_checkpoint).count();
  // Any rank's view decides for all (each rank's clock and write times differ a little).
  int local = since >= m_cfg.checkpoint_cost_ratio * m_longest_checkpoint ? 1 : 0, any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm());
  return any != 0;
}

double PhaseContext::load_checkpoint_state(State& state) {
  MANTISSA_ASSERT(m_ckpt != nullptr, "no checkpointer");
  return m_ckpt->load_state(*this, state);
}

void PhaseContext::test_hold(const std::string& point) const {
  const char* env = std::getenv("MANTISSA_TEST_HOLD");
  if (env == nullptr) return;
  std::stringstream list(env);
  bool named = false;
  for (std::string item; std::getline(list, item, ',');) named = named || item == point;
  if (!named || stop_requested()) return;
  log("test hold at '" + point + "': waiting for a stop signal (MANTISSA_TEST_HOLD)");
  const auto t0 = std::chrono::steady_clock::now();
  while (!stop_requested() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(600))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void PhaseContext::mark_phase_boundary() {
  m_boundary_since_poll = true;
  m_end_forecast = 0.0;
}

double PhaseContext::checkpoint_bytes(bool with_state) const {
  const auto& n = m_models.decomp->grid().n;
  const double field = double(n[0]) * double(n[1]) * double(n[2]) * double(sizeof(double));
  const double states = double(m_ref.state_names.size());
  double held = 0.0;
  for (const auto& kv : m_ref.experiment_snapshots) held += double(kv.second.size());
  return field * ((with_state ? states : 0.0) + double(m_ref.snapshots.size()) + held +
                  double(m_ref.train_samples.size()) * states + double(m_snapshots.size()));
}

double PhaseContext::projected_checkpoint_bytes() const {
  const auto& n = m_models.decomp->grid().n;
  const double field = double(n[0]) * double(n[1]) * double(n[2]) * double(sizeof(double));
  const double states = std::max(1.0, double(m_ref.state_names.size()));
  // The running phase's end adds its gathered snapshot; a stop inside it writes its state.
  const double now = checkpoint_bytes(false) + field * states;
  const std::string& ref_status = m_results.empty() ? std::string() : m_results.front().status;
  if (ref_status == "ok" || ref_status == "failed") return now;
  // The reference is running (or has not started): its snapshots at every sample step and,
  // training online, its training states (PhaseContext::record's rule).
  const std::int64_t steps = m_cfg.steps, every = m_cfg.sample_every;
  const std::int64_t ref_count = steps / every + 1 + (steps % every != 0 ? 1 : 0);
  const double ref_final = double(ref_count);
  const auto& s = m_cfg.surrogate;
  if (m_train_final < 0) {
    m_train_final = 0;
    if (s.enabled && s.training == "online") {
      const std::int64_t stride = m_surrogate ? std::max(1, m_surrogate->stride()) : 1;
      const std::int64_t end = surrogate_split().train_end;
      for (std::int64_t k = 0; k <= steps; ++k)
        if (k % stride == 0 && k >= s.start && (s.train_steps < 0 || k <= s.train_steps) && k <= end)
          ++m_train_final;
    }
  }
  // Every training experiment adds its states, every held-out one its snapshots.
  const double train_experiments = double(std::max<std::size_t>(1, s.train_experiments.size()));
  const double heldout = s.enabled ? double(s.heldout_experiments.size()) : 0.0;
  const double end =
      field * (states + ref_final * (1.0 + heldout) + double(m_train_final) * train_experiments * states +
               double(m_snapshots.size()) + 1.0);
  return std::max(now, end);
}

double PhaseContext::write_estimate() const {
  return write_estimate(projected_checkpoint_bytes());
}

double PhaseContext::write_estimate(double bytes) const {
  // A fixed part, the two durable commits of a checkpoint (its file and `latest`), each at
  // least the probe's; the rest of the longest write so far grows with the bytes written
  // (every field is converted, checksummed and written collectively).
  const double fixed = 2.0 * m_probe_seconds;
  double rest = std::max(0.0, m_longest_checkpoint - fixed);
  if (m_longest_checkpoint_bytes > 0.0) rest *= bytes / m_longest_checkpoint_bytes;
  return k_write_safety * (fixed + rest);
}

void PhaseContext::probe_write_cost() {
  double seconds = 0.0;
  if (m_rank == 0) {
    const std::string probe = m_dir + "/.write-cost-probe";
    const auto t0 = std::chrono::steady_clock::now();
    try {
      io::write_file_durably(probe, std::string(65536, 'p'));
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const std::exception& e) {
      // The checkpoints will say what is wrong with the directory, naming the file; here only
      // the forecast is lost.
      log::warn("[campaign] cannot time a durable write into '{}' for run.wall_time_limit: {}", m_dir,
                e.what());
    }
    std::error_code ec;
    std::filesystem::remove(probe, ec);
  }
  MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, comm());
  m_probe_seconds = seconds;
}

bool PhaseContext::stop_requested() const {
  const auto now = std::chrono::steady_clock::now();
  const bool first = !m_polled;
  if (!first) {
    const double stretch =
        std::max(0.0, std::chrono::duration<double>(now - m_last_poll).count() - m_written_since_poll);
    double& longest = m_boundary_since_poll ? m_longest_boundary : m_longest_step;
    longest = std::max(longest, stretch);
  }
  m_polled = true;
  m_last_poll = now;
  m_written_since_poll = 0.0;
  m_boundary_since_poll = false;
  const double limit = m_cfg.wall_time_limit;
  const double elapsed = std::chrono::duration<double>(now - m_t0).count();
  double margin = 0.0, end_work = 0.0, write = 0.0;
  if (first) m_first_poll_elapsed = elapsed;
  if (limit > 0.0) {
    end_work = std::max(m_longest_boundary, m_end_forecast);
    write = write_estimate();
    margin = 2.0 * m_longest_step + end_work + write;
    // A phase's end that does not fit into what a start has (the limit less this start's time
    // to its first poll) cannot be avoided by stopping: every later start would stop before it
    // again and the chain of starts would never end. The limit then keeps room for a stop's
    // checkpoint only, and says so once a phase (rank 0's numbers).
    if (margin >= limit - m_first_poll_elapsed) {
      if (m_unfittable_warned != m_cur.phase && m_rank == 0)
        log::warn(
            "[campaign] run.wall_time_limit: phase '{}' forecasts {:.3g} s of end work and {:.3g} s for a "
            "checkpoint, more than a start has ({:.3g} s of the limit after its start-up): its end may "
            "pass the limit; a longer run.wall_time_limit avoids that",
            phase_name(), end_work, write, limit - m_first_poll_elapsed);
      m_unfittable_warned = m_cur.phase;
      // Room for a stop's checkpoint as it would be written here, not for the phase end's
      // (which grows by the phase's snapshots and may alone exceed a start: then every start
      // would stop after one unit of work and the chain would outlast its starts).
      end_work = 0.0;
      write = write_estimate(checkpoint_bytes(true));
      margin = 2.0 * m_longest_step + write;
    }
  }
  const bool wall_due = limit > 0.0 && m_progressed && !m_wall_paused && elapsed + margin >= limit;
  // checkpoint.interval, in the same reduction: the flag holds until the next checkpoint.
  const double since = std::chrono::duration<double>(now - m_last_checkpoint).count();
  const bool interval_due =
      m_cfg.checkpoint_interval > 0.0 &&
      since >= std::max(m_cfg.checkpoint_interval, m_cfg.checkpoint_cost_ratio * m_longest_checkpoint);
  bool wall = false, interval = false;
  const bool signal = StopSignals::received(comm(), wall_due, &wall, interval_due, &interval);
  if (interval) m_interval_due = true;
  if (signal && m_stop_reason.empty()) m_stop_reason = StopSignals::name(StopSignals::last_signal());
  if (wall && !signal && m_stop_reason.empty()) {
    // The numbers of the rank that decided would differ between ranks; rank 0's are the log's.
    std::ostringstream os;
    os.precision(3);
    os << "run.wall_time_limit: " << elapsed << " s of the campaign's " << limit
       << " s spent; going on may take " << margin << " s: the next steps " << 2.0 * m_longest_step
       << " s, a phase's end work " << end_work << " s and a checkpoint " << write << " s";
    m_stop_reason = os.str();
  }
  return signal || wall;
}

bool PhaseContext::after_step() {
  ++m_cur.global_steps;
  m_progressed = true;
  // Test hook: every rank raises the signal itself at the same campaign step, exercising the
  // same path as a SIGTERM from Slurm.
  if (m_cfg.stop_after_step > 0 && m_cur.global_steps == m_cfg.stop_after_step) std::raise(SIGTERM);
  // run.wall_time_limit without a measured write (a fresh run): a checkpoint after the first
  // step measures one (the probe times only a small file; a first checkpoint also builds the
  // writer, its file and datasets: 14 times the probe in tstCampaign's wall-time test).
  if (m_cfg.wall_time_limit > 0.0 && !(m_longest_checkpoint > 0.0)) return true;
  return (m_cfg.checkpoint_every > 0 && m_cur.global_steps % m_cfg.checkpoint_every == 0) || m_interval_due;
}

Progress PhaseContext::progress(const std::string& label, std::int64_t total, double work_per_step) const {
  return Progress("[campaign] " + label, total, m_cfg.progress_every, work_per_step > 0 ? "Mcell" : "",
                  work_per_step * 1e-6);
}

void PhaseContext::log(const std::string& line) const {
  log::info("[campaign] {}", line);
}

bool PhaseContext::is_sample_step(std::int64_t s, std::int64_t last) const {
  return s % m_cfg.sample_every == 0 || s == last;
}

void PhaseContext::fail(VariantResult& r, std::int64_t step, double time, const std::string& what) {
  r.status = "failed";
  r.failure_step = step;
  r.failure = what + " at step " + std::to_string(step) + " (time " + fmt_g(time) + ")";
  log(r.name + ": FAILED: " + r.failure + "; the campaign goes on with the other variants");
}

std::string PhaseContext::locate_nonfinite(PhysicsModel& model) const {
  // The first non-finite point of the primary field in global (z, y, x) order, the same answer
  // at any rank count.
  const auto st = model.state();
  const HostField h = to_host(st[0].field, "mantissa::workflow::PhaseContext::locate");
  const auto& n = m_models.decomp->grid().n;
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t k = 0; k < h.extent[2] && first == std::numeric_limits<std::int64_t>::max(); ++k)
    for (std::int64_t j = 0; j < h.extent[1]; ++j)
      for (std::int64_t i = 0; i < h.extent[0]; ++i)
        if (!std::isfinite(h.view(k + h.ghost[2], j + h.ghost[1], i + h.ghost[0]))) {
          const std::int64_t g = ((h.offset[2] + k) * n[1] + (h.offset[1] + j)) * n[0] + (h.offset[0] + i);
          first = std::min(first, g);
        }
  std::int64_t global = first;
  MPI_Allreduce(&first, &global, 1, MPI_INT64_T, MPI_MIN, comm());
  if (global == std::numeric_limits<std::int64_t>::max()) return "";
  const std::int64_t x = global % n[0], y = (global / n[0]) % n[1], z = global / (n[0] * n[1]);
  return "; first non-finite '" + st[0].name + "' at grid point (x, y, z) = (" + std::to_string(x) + ", " +
         std::to_string(y) + ", " + std::to_string(z) + ")";
}

double PhaseContext::energy_error(int experiment, std::int64_t step, double energy, bool is_ref) const {
  // Energy against the reference's (of the same experiment) at the same step, relative to the
  // reference's largest energy: sources inject energy and absorbing layers remove it, so a
  // variant is judged by how far its energy history departs from the reference's, not from E(0)
  // (which is 0 for a run that starts at rest).
  if (is_ref) return 0.0;
  const auto& r0 = m_results.front();
  const auto& steps = experiment == 0 ? r0.steps : r0.extra_experiments.at(std::size_t(experiment - 1)).steps;
  const auto& energies =
      experiment == 0 ? r0.energy : r0.extra_experiments.at(std::size_t(experiment - 1)).energy;
  double emax = 0.0;
  for (double e : energies) emax = std::fmax(emax, std::fabs(e));
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i] == step) return (energy - energies[i]) / (emax > 0.0 ? emax : 1.0);
  return nan_v;
}

void PhaseContext::record(VariantResult& r, PhysicsModel& model, int experiment, std::int64_t step,
                          int trace_stride, std::int64_t last, bool is_ref) {
  PhaseTimer sw("campaign::record");
  r.trace_stride = trace_stride;
  const std::string where = experiment > 0 ? " (experiment " + std::to_string(experiment) + ")" : "";
  // Probes are recorded for the experiments a phase runs: a rollout on a held-out experiment
  // records its probes as its own (r.traces), to be met by the reference's of that experiment.
  if (step % trace_stride == 0) {
    const std::string bad = m_recorder->record(r, experiment, step, model);
    if (!bad.empty()) {
      fail(r, step, model.time(), bad + where);
      r.time.analysis += sw.stop();
      return;
    }
  }
  if (is_sample_step(step, last)) {
    const auto d = model.diagnostics();
    if (!d.finite) {
      fail(r, step, model.time(), "non-finite value in " + d.where + locate_nonfinite(model) + where);
    } else if (experiment != r.experiment) {
      ExperimentRecord& rec = r.extra_experiments.at(static_cast<std::size_t>(experiment - 1));
      rec.steps.push_back(step);
      rec.times.push_back(model.time());
      rec.energy.push_back(d.energy());
      // A held-out experiment's reference keeps its primary field, for the rollouts on it.
      if (is_ref && is_heldout_experiment(experiment))
        m_ref.experiment_snapshots[experiment][step] =
            to_host(model.state()[0].field, "mantissa::workflow::PhaseContext::sample");
    } else {
      const auto st = model.state();
      HostField h = to_host(st[0].field, "mantissa::workflow::PhaseContext::sample");
      FieldError e;
      if (is_ref) {
        e = field_error(comm(), h, h);
        m_ref.snapshots[step] = h;
      } else {
        e = field_error(comm(), h, reference_snapshot(experiment, step));
      }
      r.steps.push_back(step);
      r.times.push_back(model.time());
      r.rel_l2.push_back(e.rel_l2);
      r.max_error.push_back(e.max_abs);
      r.energy.push_back(d.energy());
      r.energy_drift.push_back(energy_error(experiment, step, d.energy(), is_ref));
      for (const auto& v : d.values) {
        auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(),
                               [&](const DiagnosticSeries& s) { return s.name == v.name; });
        if (it == r.diagnostics.end()) {
          r.diagnostics.push_back({v.name, {}});
          it = r.diagnostics.end() - 1;
        }
        it->values.push_back(v.value);
      }
    }
  }
  const auto& s = m_cfg.surrogate;
  if (is_ref && s.enabled && s.training == "online" &&
      std::count(s.train_experiments.begin(), s.train_experiments.end(), experiment) > 0 &&
      step % surrogate().stride() == 0 && step >= s.start && (s.train_steps < 0 || step <= s.train_steps) &&
      step <= surrogate_split().train_end) {
    std::vector<HostField> sample;
    for (const auto& f : model.state())
      sample.push_back(to_host(f.field, "mantissa::workflow::PhaseContext::train_sample"));
    m_ref.train_samples.push_back(std::move(sample));
    m_ref.train_experiment.push_back(experiment);
  }
  r.time.analysis += sw.stop();
}

bool PhaseContext::is_heldout_experiment(int experiment) const {
  const auto& s = m_cfg.surrogate;
  return s.enabled && std::count(s.heldout_experiments.begin(), s.heldout_experiments.end(), experiment) > 0;
}

const HostField& PhaseContext::reference_snapshot(int experiment, std::int64_t step) const {
  const std::map<std::int64_t, HostField>* m = &m_ref.snapshots;
  if (experiment != 0) {
    auto e = m_ref.experiment_snapshots.find(experiment);
    MANTISSA_ASSERT(e != m_ref.experiment_snapshots.end(),
                    "no reference snapshots of experiment " << experiment);
    m = &e->second;
  }
  auto it = m->find(step);
  MANTISSA_ASSERT(it != m->end(),
                  "no reference snapshot of experiment " << experiment << " at step " << step);
  return it->second;
}

void PhaseContext::finish(VariantResult& r, PhysicsModel& model) {
  PhaseTimer sw("campaign::finish");
  if (r.status != "failed") r.status = "ok";
  const bool failed = r.status == "failed";
  r.final_rel_l2 = failed || r.rel_l2.empty() ? nan_v : r.rel_l2.back();
  r.final_max_error = failed || r.max_error.empty() ? nan_v : r.max_error.back();
  r.max_rel_l2 = failed ? nan_v : nan_max(r.rel_l2, false);
  r.final_energy_drift = failed || r.energy_drift.empty() ? nan_v : r.energy_drift.back();
  r.max_abs_energy_drift = failed ? nan_v : nan_max(r.energy_drift, true);
  const auto cross = threshold_crossing(r.times, r.rel_l2, m_cfg.error_threshold);
  r.threshold_time = cross ? *cross : -1.0;
  if (failed && !cross) r.threshold_time = model.time();  // it blew up: the error passed every threshold
  m_recorder->finish(r, m_results.front(), m_cfg);
  r.memory_hwm_mib = memory_hwm_mib(comm());
  if (m_cfg.snapshots) gather_snapshot(r.name, model);
  r.time.analysis += sw.stop();
  std::ostringstream os;
  os << r.name << ": " << r.status << ", final rel L2 " << fmt_g(r.final_rel_l2) << ", energy drift "
     << fmt_g(r.final_energy_drift) << ", " << fmt_g(r.time.steps + r.time.inference) << " s stepping";
  log(os.str());
}

void PhaseContext::gather_snapshot(const std::string& name, PhysicsModel& model) {
  const auto st = model.state();
  const HostField h = to_host(st[0].field, "mantissa::workflow::PhaseContext::snapshot");
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(h.extent[0] * h.extent[1] * h.extent[2]));
  for (std::int64_t k = 0; k < h.extent[2]; ++k)
    for (std::int64_t j = 0; j < h.extent[1]; ++j)
      for (std::int64_t i = 0; i < h.extent[0]; ++i)
        mine.push_back(h.view(k + h.ghost[2], j + h.ghost[1], i + h.ghost[0]));
  int size = 1;
  MPI_Comm_size(comm(), &size);
  std::int64_t box[6] = {h.offset[0], h.offset[1], h.offset[2], h.extent[0], h.extent[1], h.extent[2]};
  std::vector<std::int64_t> boxes(static_cast<std::size_t>(6 * size));
  MPI_Gather(box, 6, MPI_INT64_T, boxes.data(), 6, MPI_INT64_T, 0, comm());
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm());
  std::vector<double> all;
  if (m_rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<std::size_t>(r)] = total;
      total += counts[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, comm());
  if (m_rank != 0) {
    m_snapshots[name].clear();  // every rank knows which snapshots exist (checkpoints); rank 0 holds them
    return;
  }
  const auto& gn = m_models.decomp->grid().n;
  const std::array<std::int64_t, 3> shape{gn[2], gn[1], gn[0]};
  std::vector<double> global(static_cast<std::size_t>(shape[0] * shape[1] * shape[2]), 0.0);
  for (int r = 0; r < size; ++r) {
    const std::int64_t* b = &boxes[static_cast<std::size_t>(6 * r)];
    std::size_t p = static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]);
    for (std::int64_t k = 0; k < b[5]; ++k)
      for (std::int64_t j = 0; j < b[4]; ++j)
        for (std::int64_t i = 0; i < b[3]; ++i)
          global[static_cast<std::size_t>(((b[2] + k) * shape[1] + (b[1] + j)) * shape[2] + (b[0] + i))] =
              all[p++];
  }
  m_snapshots[name] = std::move(global);
}

}  // namespace mantissa::workflow
