#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/Signals.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

namespace mantissa::workflow {

namespace {
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

// Wall-clock seconds of a region; fences first so that asynchronous kernels are counted.
class Stopwatch {
 public:
  Stopwatch() : m_t0(std::chrono::steady_clock::now()) {}
  double seconds(const char* label) const {
    fence(label);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_t0).count();
  }

 private:
  std::chrono::steady_clock::time_point m_t0;
};

double nan_max(const std::vector<double>& v, bool absolute) {
  double m = 0.0;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::fmax(m, absolute ? std::fabs(x) : x);
  }
  return m;
}

std::string fmt_g(double v) {
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}
}  // namespace

Campaign::Campaign(CampaignConfig config, const Registry& registry, ModelContext context, std::string run_dir,
                   bool resume, std::ostream* log)
    : m_cfg(std::move(config)),
      m_registry(registry),
      m_ctx(context),
      m_dir(std::move(run_dir)),
      m_log(log),
      m_resume_requested(resume) {
  MANTISSA_ASSERT(m_ctx.decomp != nullptr, "Campaign needs the shared decomposition in its ModelContext");
  MPI_Comm_rank(comm(), &m_rank);
  validate();
  build_phases();
  m_energy = std::make_unique<EnergyMeter>(comm());
  m_energy_source = m_energy->source();
}

Campaign::~Campaign() = default;

MPI_Comm Campaign::comm() const {
  return m_ctx.decomp->comm();
}

void Campaign::log(const std::string& line) const {
  if (m_log && m_rank == 0) (*m_log) << "[campaign] " << line << std::endl;
}

void Campaign::validate() const {
  auto bad = [](const std::string& key, const std::string& what) {
    throw Error("deck key '" + key + "': " + what);
  };
  if (!m_registry.has_physics(m_cfg.physics))
    m_registry.create_physics(m_cfg.physics, m_ctx, Precision::fp64,
                              Precision::fp64);  // throws, naming choices
  if (m_cfg.steps < 1) bad("campaign.steps", "must be at least 1");
  if (m_cfg.sample_every < 1) bad("campaign.sample_every", "must be at least 1");
  if (!(m_cfg.error_threshold > 0.0)) bad("campaign.error_threshold", "must be positive");
  std::set<std::string> names{"reference"};
  for (const auto& v : m_cfg.variants) {
    if (v.name.empty()) bad("campaign.variants[].name", "a variant has no name");
    if (!names.insert(v.name).second)
      bad("campaign.variants[].name", "'" + v.name + "' is used twice (or is the reserved name 'reference')");
  }
  const auto& s = m_cfg.surrogate;
  if (!s.enabled) return;
  if (s.training != "online" && s.training != "file")
    bad("campaign.surrogate.training", "'" + s.training + "' is neither 'online' nor 'file'");
  if (s.training == "file" && s.weights.empty())
    bad("campaign.surrogate.weights", "training is 'file' but no weights path is given");
  if (s.horizon > m_cfg.steps)
    bad("campaign.surrogate.horizon", std::to_string(s.horizon) + " exceeds campaign.steps = " +
                                          std::to_string(m_cfg.steps) + " (the reference ends there)");
  if (s.train_steps > m_cfg.steps) bad("campaign.surrogate.train_steps", "exceeds campaign.steps");
  const std::int64_t horizon = s.horizon < 0 ? m_cfg.steps : s.horizon;
  if (s.start >= horizon)
    bad("campaign.surrogate.start",
        std::to_string(s.start) + " leaves no surrogate step before the horizon " + std::to_string(horizon) +
            " (campaign.surrogate.horizon or run.steps)");
  if (s.training == "online" && s.train_steps >= 0 && s.train_steps <= s.start)
    bad("campaign.surrogate.train_steps",
        std::to_string(s.train_steps) + " ends training before campaign.surrogate.start = " +
            std::to_string(s.start) + "; online training uses the reference states from start on");
  if (horizon % m_cfg.sample_every != 0 && horizon != m_cfg.steps)
    bad("campaign.surrogate.horizon",
        "must be a multiple of campaign.sample_every or equal campaign.steps, so that "
        "the reference has a snapshot there");
  if (s.hybrid.enabled) {
    if (s.hybrid.k < 1) bad("campaign.surrogate.hybrid.k", "must be at least 1");
    if (s.hybrid.check_every < 1) bad("campaign.surrogate.hybrid.check_every", "must be at least 1");
    if (s.hybrid.sample_stride < 1) bad("campaign.surrogate.hybrid.sample_stride", "must be at least 1");
    if (s.hybrid.physics_steps < 1) bad("campaign.surrogate.hybrid.physics_steps", "must be at least 1");
  }
}

void Campaign::build_phases() {
  auto add_result = [this](const std::string& name, const std::string& kind, Precision st, Precision co) {
    VariantResult r;
    r.name = name;
    r.kind = kind;
    r.storage = std::string(to_string(st));
    r.compute = std::string(to_string(co));
    m_results.push_back(r);
    return static_cast<int>(m_results.size()) - 1;
  };
  const auto ref = m_cfg.reference_precision;
  m_phases.push_back({"reference", "reference", ref, ref, add_result("reference", "reference", ref, ref)});
  for (const auto& v : m_cfg.variants)
    m_phases.push_back(
        {"physics", v.name, v.storage, v.compute, add_result(v.name, "physics", v.storage, v.compute)});
  const auto& s = m_cfg.surrogate;
  if (!s.enabled) return;
  m_phases.push_back({"training", "training", Precision::fp32, Precision::fp32, -1});
  for (auto p : s.rollout) {
    const std::string name = "surrogate-" + std::string(to_string(p));
    m_phases.push_back({"surrogate", name, p, p, add_result(name, "surrogate", p, p)});
  }
  if (s.hybrid.enabled) {
    const auto p = s.hybrid.precision;
    const std::string name = "hybrid-" + std::string(to_string(p));
    m_phases.push_back({"hybrid", name, p, p, add_result(name, "hybrid", p, p)});
  }
}

std::unique_ptr<PhysicsModel> Campaign::make_physics(Precision storage, Precision compute) const {
  return m_registry.create_physics(m_cfg.physics, m_ctx, storage, compute);
}

void Campaign::ensure_surrogate() {
  if (m_surrogate || !m_cfg.surrogate.enabled) return;
  m_surrogate = m_registry.create_surrogate(m_cfg.surrogate.model, m_ctx);
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
}

bool Campaign::is_sample_step(std::int64_t s, std::int64_t last) const {
  return s % m_cfg.sample_every == 0 || s == last;
}

bool Campaign::periodic_checkpoint_due() const {
  return m_cfg.checkpoint_every > 0 && m_cur.global_steps % m_cfg.checkpoint_every == 0;
}

bool Campaign::stop_requested() {
  return StopSignals::received(comm());
}

void Campaign::after_step() {
  ++m_cur.global_steps;
  // Test hook: every rank raises the signal itself at the same campaign step, exercising the
  // same path as a SIGTERM from Slurm.
  if (m_cfg.stop_after_step > 0 && m_cur.global_steps == m_cfg.stop_after_step) std::raise(SIGTERM);
}

void Campaign::fail(VariantResult& r, std::int64_t step, double time, const std::string& what) {
  r.status = "failed";
  r.failure_step = step;
  r.failure = what + " at step " + std::to_string(step) + " (time " + fmt_g(time) + ")";
  log(r.name + ": FAILED: " + r.failure + "; the campaign goes on with the other variants");
}

std::string Campaign::locate_nonfinite(PhysicsModel& model) const {
  // The first non-finite point of the primary field in global (z, y, x) order, the same answer
  // at any rank count.
  const auto st = model.state();
  const HostField h = to_host(st[0].field, "mantissa::workflow::Campaign::locate");
  const auto& n = m_ctx.decomp->grid().n;
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

double Campaign::energy_error(std::int64_t step, double energy, bool is_ref) const {
  // Energy against the reference at the same step, relative to the reference's largest
  // energy: sources inject energy and absorbing layers remove it, so a variant is judged by
  // how far its energy history departs from the reference's, not from E(0) (which is 0 for
  // a run that starts at rest).
  if (is_ref) return 0.0;
  const auto& ref = m_results.front();
  double emax = 0.0;
  for (double e : ref.energy) emax = std::fmax(emax, std::fabs(e));
  for (std::size_t i = 0; i < ref.steps.size(); ++i)
    if (ref.steps[i] == step) return (energy - ref.energy[i]) / (emax > 0.0 ? emax : 1.0);
  return nan_v;
}

void Campaign::record(VariantResult& r, PhysicsModel& model, std::int64_t step, int trace_stride) {
  Stopwatch sw;
  const bool is_ref = r.kind == "reference";
  const std::int64_t last = (r.kind == "surrogate" || r.kind == "hybrid")
                                ? (m_cfg.surrogate.horizon < 0 ? m_cfg.steps : m_cfg.surrogate.horizon)
                                : m_cfg.steps;
  r.trace_stride = trace_stride;
  if (step % trace_stride == 0) {
    const auto rec = model.sample_receivers();
    r.num_receivers = static_cast<std::int64_t>(rec.size());
    r.traces.insert(r.traces.end(), rec.begin(), rec.end());
    for (std::size_t i = 0; i < rec.size(); ++i)
      if (!std::isfinite(rec[i])) {
        const auto names = model.receiver_names();
        fail(r, step, model.time(),
             "non-finite value at receiver '" + (i < names.size() ? names[i] : std::to_string(i)) + "'");
        r.time.analysis += sw.seconds("mantissa::workflow::Campaign::record");
        return;
      }
  }
  if (is_sample_step(step, last)) {
    const auto d = model.diagnostics();
    if (!d.finite) {
      fail(r, step, model.time(), "non-finite value in " + d.where + locate_nonfinite(model));
    } else {
      const auto st = model.state();
      HostField h = to_host(st[0].field, "mantissa::workflow::Campaign::sample");
      FieldError e;
      if (is_ref) {
        e = field_error(comm(), h, h);
        m_ref_snapshots[step] = h;
      } else {
        auto it = m_ref_snapshots.find(step);
        MANTISSA_ASSERT(it != m_ref_snapshots.end(), "no reference snapshot at step " << step);
        e = field_error(comm(), h, it->second);
      }
      r.steps.push_back(step);
      r.times.push_back(model.time());
      r.rel_l2.push_back(e.rel_l2);
      r.max_error.push_back(e.max_abs);
      r.energy.push_back(d.energy);
      r.energy_drift.push_back(energy_error(step, d.energy, is_ref));
    }
  }
  if (is_ref && m_cfg.surrogate.enabled && m_cfg.surrogate.training == "online" && m_surrogate &&
      step % m_surrogate->stride() == 0 && step >= m_cfg.surrogate.start &&
      (m_cfg.surrogate.train_steps < 0 || step <= m_cfg.surrogate.train_steps)) {
    std::vector<HostField> sample;
    for (const auto& f : model.state())
      sample.push_back(to_host(f.field, "mantissa::workflow::Campaign::train_sample"));
    m_train_samples.push_back(std::move(sample));
  }
  r.time.analysis += sw.seconds("mantissa::workflow::Campaign::record");
}

void Campaign::record_extra_shot(VariantResult& r, PhysicsModel& model, int shot, std::int64_t step) {
  Stopwatch sw;
  MANTISSA_ASSERT(shot >= 1 && std::size_t(shot) <= r.extra_shots.size(), "no record for shot " << shot);
  ShotRecord& rec = r.extra_shots[static_cast<std::size_t>(shot - 1)];
  const std::string where = " (shot " + std::to_string(shot) + ")";
  if (step % r.trace_stride == 0) {
    const auto v = model.sample_receivers();
    rec.traces.insert(rec.traces.end(), v.begin(), v.end());
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i])) {
        const auto names = model.receiver_names();
        fail(r, step, model.time(),
             "non-finite value at receiver '" + (i < names.size() ? names[i] : std::to_string(i)) + "'" +
                 where);
        r.time.analysis += sw.seconds("mantissa::workflow::Campaign::record_extra_shot");
        return;
      }
  }
  if (is_sample_step(step, m_cfg.steps)) {
    const auto d = model.diagnostics();
    if (!d.finite) {
      fail(r, step, model.time(), "non-finite value in " + d.where + locate_nonfinite(model) + where);
    } else {
      rec.steps.push_back(step);
      rec.times.push_back(model.time());
      rec.energy.push_back(d.energy);
    }
  }
  r.time.analysis += sw.seconds("mantissa::workflow::Campaign::record_extra_shot");
}

void Campaign::note_recording(const PhysicsModel& model) {
  m_receiver_names = model.receiver_names();
  m_recording = model.recording();
  m_recording.stride = std::max(1, m_recording.stride);
  m_dt = model.dt();
  m_shot_sources.clear();
  for (int s = 0; s < model.num_shots(); ++s) m_shot_sources.push_back(model.shot_sources(s));
}

void Campaign::finish(VariantResult& r, PhysicsModel& model) {
  Stopwatch sw;
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

  // Receivers: misfit over all receivers together, worst correlation of any receiver.
  const auto& ref = m_results.front();
  const std::int64_t nrec = r.num_receivers;
  if (nrec > 0 && ref.num_receivers == nrec && !failed) {
    const std::int64_t rows = static_cast<std::int64_t>(r.traces.size()) / nrec;
    const std::int64_t k = r.trace_stride;
    // Row i of this variant is step i k, row i k / k_ref of the reference (k is a multiple of
    // the reference's stride: the physics' recording stride, times the surrogate's stride).
    const std::int64_t kr = ref.trace_stride;
    MANTISSA_ASSERT(kr > 0 && k % kr == 0,
                    "trace stride " << k << " is not a multiple of the reference's " << kr);
    std::vector<double> a, b;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < nrec; ++j) {
        a.push_back(r.traces[static_cast<std::size_t>(i * nrec + j)]);
        b.push_back(ref.traces[static_cast<std::size_t>(i * k / kr * nrec + j)]);
      }
    r.receiver_rel_l2 = relative_l2(a, b);
    const std::int64_t max_lag_steps = m_cfg.receiver_max_lag < 0 ? m_cfg.steps / 10 : m_cfg.receiver_max_lag;
    // The worst correlation among the receivers the wave reaches (Metrics.hpp says why).
    std::vector<std::vector<double>> tr(static_cast<std::size_t>(nrec)), rr(static_cast<std::size_t>(nrec));
    for (std::int64_t j = 0; j < nrec; ++j)
      for (std::int64_t i = 0; i < rows; ++i) {
        tr[static_cast<std::size_t>(j)].push_back(r.traces[static_cast<std::size_t>(i * nrec + j)]);
        rr[static_cast<std::size_t>(j)].push_back(
            ref.traces[static_cast<std::size_t>(i * k / kr * nrec + j)]);
      }
    const auto cc = worst_receiver_correlation(tr, rr, max_lag_steps / k);
    r.xcorr_peak = cc.peak;
    r.xcorr_lag = cc.lag * k;
  } else {
    r.receiver_rel_l2 = nan_v;
    r.xcorr_peak = nan_v;
  }
  r.memory_hwm_mib = memory_hwm_mib(comm());
  if (m_cfg.snapshots) gather_snapshot(r.name, model);
  r.time.analysis += sw.seconds("mantissa::workflow::Campaign::finish");
  std::ostringstream os;
  os << r.name << ": " << r.status << ", final rel L2 " << fmt_g(r.final_rel_l2) << ", energy drift "
     << fmt_g(r.final_energy_drift) << ", " << fmt_g(r.time.steps + r.time.inference) << " s stepping";
  log(os.str());
}

void Campaign::gather_snapshot(const std::string& name, PhysicsModel& model) {
  const auto st = model.state();
  const HostField h = to_host(st[0].field, "mantissa::workflow::Campaign::snapshot");
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
  if (m_rank != 0) return;
  const auto shape = global_shape();  // (nz, ny, nx)
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

std::array<std::int64_t, 3> Campaign::global_shape() const {
  const auto& n = m_ctx.decomp->grid().n;
  return {n[2], n[1], n[0]};
}

int Campaign::dim() const {
  return m_ctx.decomp->grid().dim;
}

std::string Campaign::trained_path() const {
  return m_dir + "/surrogate-trained";
}

std::string Campaign::memory_note() const {
  std::ostringstream os;
  os.precision(3);
  os << "one model on the device at a time; the reference is kept as host snapshots of its primary field at "
     << m_ref_snapshots.size() << " sample steps (" << m_reference_mib << " MiB on the largest rank)";
  if (m_cfg.surrogate.enabled && m_cfg.surrogate.training == "online")
    os << "; the online training states (" << m_train_mib
       << " MiB on the largest rank) are held on the host only until training ends";
  return os.str();
}

bool Campaign::run_physics_phase(const Phase& ph, bool resumed) {
  VariantResult& r = m_results[static_cast<std::size_t>(ph.result)];
  Stopwatch setup;
  auto model = make_physics(ph.storage, ph.compute);
  // One untimed step first (first-touch pages, thread start-up, lazy allocations), so that
  // the timed steps measure the steady state; initialize() then starts over.
  model->initialize();
  model->step(1);
  r.description = model->describe();
  r.precision_support = model->precision_support();
  note_recording(*model);
  const int shots = std::max(1, model->num_shots());
  const int trace_stride = m_recording.stride;
  r.trace_stride = trace_stride;
  r.extra_shots.resize(static_cast<std::size_t>(shots - 1));
  int shot = resumed ? static_cast<int>(m_cur.shot) : 0;
  MANTISSA_ASSERT(shot >= 0 && shot < shots, "checkpointed shot " << shot << " of " << shots);
  m_cur.shot = shot;
  model->select_shot(shot);
  if (resumed) {
    State st = model->state();
    const double t = load_checkpoint_state(st);
    model->set_state(st, m_cur.step, t);
  } else {
    model->initialize();
  }
  if (m_state_names.empty())
    for (const auto& f : model->state()) m_state_names.push_back(f.name);
  r.time.setup += setup.seconds("mantissa::workflow::Campaign::setup");
  log(std::string(resumed ? "resuming " : "running ") + r.name + " (" + r.description + ")" +
      (shots > 1 ? ", shot " + std::to_string(shot) + " of " + std::to_string(shots) : std::string()));
  r.status = r.status == "failed" ? r.status : "running";
  auto record_any = [&](std::int64_t step) {
    if (shot == 0)
      record(r, *model, step, trace_stride);
    else
      record_extra_shot(r, *model, shot, step);
  };
  if (!resumed) record_any(0);
  m_energy->start();
  const auto cost = model->cost_per_step();
  std::int64_t s = model->step_index();
  bool stopped = false;
  // Shot 0 is compared with the reference (record, finish); later shots only record their
  // receivers and energy for the gathers. A stop inside any shot checkpoints (shot, step).
  while (true) {
    while (r.status != "failed" && s < m_cfg.steps) {
      if (stop_requested()) {
        m_cur.step = s;
        const State st = model->state();
        write_checkpoint(&st, model->time());
        stopped = true;
        break;
      }
      Stopwatch sw;
      model->step(1);
      r.time.steps += sw.seconds("mantissa::workflow::Campaign::step");
      ++s;
      ++r.steps_done;
      record_any(s);
      after_step();
      if (periodic_checkpoint_due() && r.status != "failed") {
        Stopwatch io;
        m_cur.step = s;
        const State st = model->state();
        write_checkpoint(&st, model->time());
        r.time.io += io.seconds("mantissa::workflow::Campaign::checkpoint");
      }
    }
    if (stopped) break;
    if (shot == 0) {
      if (ph.kind == "reference") {
        double bytes = 0.0;
        for (const auto& kv : m_ref_snapshots) bytes += double(kv.second.view.span()) * sizeof(double);
        for (const auto& smp : m_train_samples)
          for (const auto& f : smp) m_train_mib += double(f.view.span()) * sizeof(double) / 1048576.0;
        double mib = bytes / 1048576.0, gmib = 0.0, gtrain = 0.0;
        MPI_Allreduce(&mib, &gmib, 1, MPI_DOUBLE, MPI_MAX, comm());
        MPI_Allreduce(&m_train_mib, &gtrain, 1, MPI_DOUBLE, MPI_MAX, comm());
        m_reference_mib = gmib;
        m_train_mib = gtrain;
      }
      finish(r, *model);  // the accuracy numbers and the snapshot are shot 0's
    }
    if (++shot >= shots || r.status == "failed") break;
    Stopwatch sw;
    m_cur.shot = shot;
    model->select_shot(shot);
    model->initialize();
    s = model->step_index();
    r.time.setup += sw.seconds("mantissa::workflow::Campaign::setup");
    log("running " + r.name + ", shot " + std::to_string(shot) + " of " + std::to_string(shots));
    record_any(0);
  }
  const double joules = m_energy->joules();
  if (joules >= 0.0) r.energy_joules = std::fmax(r.energy_joules, 0.0) + joules;
  r.cell_updates = cost.cell_updates * double(r.steps_done);
  r.bytes = cost.bytes * double(r.steps_done);
  r.flops = cost.flops * double(r.steps_done);
  if (stopped) return false;
  if (r.status != "failed") r.status = "ok";  // a resume inside a later shot does not repeat finish()
  m_cur.shot = 0;
  return true;
}

bool Campaign::run_training_phase() {
  ensure_surrogate();
  Stopwatch sw;
  const auto& s = m_cfg.surrogate;
  m_training.mode = s.training;
  // The training states, kept until the one-step error below has been measured on them.
  std::vector<std::vector<HostField>> states;
  auto to_state = [this](const std::vector<HostField>& smp) {
    State st;
    for (std::size_t i = 0; i < smp.size(); ++i) {
      NamedField nf{m_state_names[i], Field<double>("mantissa::workflow::Campaign::train_state",
                                                    *m_ctx.decomp, smp[i].ghost[0])};
      from_host(smp[i], nf.field);
      st.push_back(std::move(nf));
    }
    return st;
  };
  if (s.training == "online") {
    log("training the surrogate on " + std::to_string(m_train_samples.size()) + " reference states" +
        (s.start > 0 ? " from step " + std::to_string(s.start) : std::string()) + " (" +
        m_surrogate->describe() + ")");
    for (const auto& smp : m_train_samples) m_surrogate->add_sample(to_state(smp));
    states.swap(m_train_samples);
    const auto stats = m_surrogate->train();
    m_training.samples = stats.samples;
    m_training.iterations = stats.iterations;
    m_training.initial_loss = stats.initial_loss;
    m_training.final_loss = stats.final_loss;
    m_training.flops = stats.flops;
  } else {
    log("loading surrogate weights from '" + s.weights + "'");
    m_surrogate->load(s.weights);
  }
  m_training.seconds = sw.seconds("mantissa::workflow::Campaign::train");
  if (!s.save_weights.empty()) m_surrogate->save(s.save_weights);
  // Every rollout phase starts from these weights (see run_rollout_phase).
  Stopwatch io;
  m_surrogate->save(trained_path());
  m_training.seconds += io.seconds("mantissa::workflow::Campaign::save_trained");
  // One-step error (teacher forcing): every training state advanced by one surrogate step, its
  // primary field compared with the next reference state's, summed over all pairs as
  // sqrt(sum ||error||^2 / sum ||reference||^2) so that nearly empty states (before a source has
  // fired) cannot dominate. It is the error a rollout compounds once per prediction, so the report
  // can tell an inaccurate surrogate from an unstable rollout. The rollouts reload the saved
  // weights and inference state, so these predictions do not change them.
  const bool any_rollout = !s.rollout.empty() || s.hybrid.enabled;
  if (states.size() >= 2 && any_rollout) {
    Stopwatch ev;
    const Precision p = !s.rollout.empty() ? s.rollout.front() : s.hybrid.precision;
    m_surrogate->set_precision(p);
    double err2 = 0.0, ref2 = 0.0;
    for (std::size_t n = 0; n + 1 < states.size(); ++n) {
      State st = to_state(states[n]);
      m_surrogate->predict(st, 1);
      const auto e = field_error(comm(), to_host(st[0].field, "mantissa::workflow::Campaign::one_step"),
                                 states[n + 1][0]);
      // A reference of exactly zero (a state at rest) carries no weight in the relative sum;
      // the prediction's deviation from it then has no scale to be relative to.
      if (e.ref_l2 > 0.0) {
        err2 += e.rel_l2 * e.rel_l2 * e.ref_l2 * e.ref_l2;
        ref2 += e.ref_l2 * e.ref_l2;
      }
    }
    m_training.one_step_pairs = static_cast<std::int64_t>(states.size()) - 1;
    m_training.one_step_precision = to_string(p);
    m_training.one_step_rel_l2 = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::nan("");
    log("one-step error of the trained surrogate (" + m_training.one_step_precision + ", " +
        std::to_string(m_training.one_step_pairs) + " reference pairs): rel. L2 " +
        fmt_g(m_training.one_step_rel_l2) + " (" +
        fmt_g(ev.seconds("mantissa::workflow::Campaign::one_step")) + " s)");
  }
  states.clear();
  m_training.done = true;
  m_surrogate_description = m_surrogate->describe();
  log("surrogate ready after " + fmt_g(m_training.seconds) + " s, final loss " +
      fmt_g(m_training.final_loss));
  return true;
}

bool Campaign::run_rollout_phase(const Phase& ph, bool resumed) {
  VariantResult& r = m_results[static_cast<std::size_t>(ph.result)];
  const bool hybrid = ph.kind == "hybrid";
  const auto& hs = m_cfg.surrogate.hybrid;
  Stopwatch setup;
  ensure_surrogate();
  auto physics = make_physics(m_cfg.reference_precision, m_cfg.reference_precision);
  note_recording(*physics);
  // Each rollout starts from the trained weights and inference state, so that its numbers do
  // not depend on the phases before it, and a resume inside a rollout can repeat the phase
  // from its start (a surrogate's inference state, e.g. fp8 delayed-scaling histories, is
  // not checkpointed mid-phase).
  m_surrogate->load(trained_path());
  m_surrogate->set_precision(ph.storage);
  const int stride = m_surrogate->stride();
  // Receivers are sampled where both the surrogate (every stride steps) and the physics'
  // recording stride have a sample. Rollouts run shot 0 only (the surrogate learned it).
  const int trace_stride = std::lcm(stride, m_recording.stride);
  const std::int64_t horizon = m_cfg.surrogate.horizon < 0 ? m_cfg.steps : m_cfg.surrogate.horizon;
  r.precision_support = m_surrogate->precision_support(ph.storage);
  r.description = m_surrogate->describe();
  const std::int64_t start = m_cfg.surrogate.start;
  if (start > 0)
    r.description += "; the physics (" + std::string(to_string(m_cfg.reference_precision)) +
                     ") runs steps 0 to " + std::to_string(start) + ", the surrogate from there";
  if (hybrid) {
    std::ostringstream os;
    os << "; hybrid: K=" << hs.k << ", check every " << hs.check_every << " surrogate steps, energy tol "
       << hs.energy_tol << ", residual tol " << hs.residual_tol << ", " << hs.physics_steps
       << " physics steps per hand-over";
    r.description += os.str();
  }
  {
    // Untimed warm-up of the physics and the surrogate in this precision (see the physics
    // phase); the state is set below.
    // Not when resuming: a prediction may update inference state the checkpoint already
    // holds (fp8 delayed-scaling amax histories), and resume must repeat the run bit for bit.
    physics->initialize();
    if (!resumed) {
      State w = physics->state();
      m_surrogate->predict(w, 1);
    }
  }
  State s;
  if (resumed) {
    s = physics->state();
    const double t = load_checkpoint_state(s);
    physics->set_state(s, m_cur.step, t);
  } else {
    physics->initialize();
    s = physics->state();
  }
  r.time.setup += setup.seconds("mantissa::workflow::Campaign::setup");
  log(std::string(resumed ? "resuming " : "running ") + r.name);
  r.status = r.status == "failed" ? r.status : "running";
  if (!resumed) {
    record(r, *physics, 0, trace_stride);
    // The physics leads in to `start` through the hand-back branch below (as after a hybrid
    // hand-over), so every sample, receiver row and checkpoint is taken as in the rest.
    m_cur.physics_left = start;
  }
  m_energy->start();
  const double dt = physics->dt();
  std::int64_t step = m_cur.step;
  bool stopped = false;
  while (r.status != "failed" && step < horizon) {
    if (stop_requested()) {
      if (m_cur.physics_left > 0) s = physics->state();
      m_cur.step = step;
      write_checkpoint(&s, double(step) * dt);
      stopped = true;
      break;
    }
    if (m_cur.physics_left > 0) {
      Stopwatch sw;
      physics->step(stride);
      r.time.steps += sw.seconds("mantissa::workflow::Campaign::hybrid_physics");
      r.physics_steps += stride;
      m_cur.physics_left -= stride;
      step += stride;
      if (m_cur.physics_left == 0) {
        Stopwatch sw2;
        s = physics->state();  // hand the state back to the surrogate
        r.time.steps += sw2.seconds("mantissa::workflow::Campaign::hand_back");
      }
    } else {
      // One surrogate step per call so that every sample and receiver step is seen (an
      // autoregressive block of K steps gives the same state). The hybrid's indicator runs at
      // the end of a block of K once at least M surrogate steps have passed since the last
      // check or hand-back.
      Stopwatch sw;
      m_surrogate->predict(s, 1);
      r.time.inference += sw.seconds("mantissa::workflow::Campaign::predict");
      ++r.surrogate_steps;
      step += stride;
      Stopwatch sa;
      physics->set_state(s, step, double(step) * dt);
      r.time.analysis += sa.seconds("mantissa::workflow::Campaign::set_state");
      ++m_cur.since_check;
      if (hybrid && m_cur.since_check >= hs.check_every && m_cur.since_check % hs.k == 0) {
        m_cur.since_check = 0;
        // The indicator (its cost is part of the hybrid's time), from the current state s:
        // one surrogate step and one physics step; the energy drift is the relative energy
        // difference of the two results (energy the surrogate creates or loses in one step)
        // and the residual the relative L2 difference of their primary fields on a sample
        // of the domain (the physics' discrete equation applied to the surrogate's update).
        Stopwatch si;
        State probe = physics->state();
        m_surrogate->predict(probe, 1);
        physics->step(stride);
        const auto d_phys = physics->diagnostics();
        const auto p_phys = to_host(physics->state()[0].field, "mantissa::workflow::Campaign::probe");
        physics->set_state(probe, step + stride, double(step + stride) * dt);
        const auto d = physics->diagnostics();
        const auto p_sur = to_host(probe[0].field, "mantissa::workflow::Campaign::probe");
        const double drift = energy_drift(d_phys.energy, d.energy);
        const double residual = field_error(comm(), p_sur, p_phys, hs.sample_stride).rel_l2;
        physics->set_state(s, step, double(step) * dt);
        r.time.inference += si.seconds("mantissa::workflow::Campaign::indicator");
        std::string reason;
        if (!d.finite)
          reason = "non-finite";
        else if (!(std::fabs(drift) <= hs.energy_tol))
          reason = "energy";
        else if (!(residual <= hs.residual_tol))
          reason = "residual";
        if (!reason.empty()) {
          r.handovers.push_back({step, double(step) * dt, reason, drift, residual});
          m_cur.physics_left = hs.physics_steps;
          log(r.name + ": hand-over to the physics at step " + std::to_string(step) + " (" + reason +
              ": energy drift " + fmt_g(drift) + ", residual " + fmt_g(residual) + ")");
        }
      }
    }
    r.steps_done += stride;
    record(r, *physics, step, trace_stride);
    bool due = false;
    for (int i = 0; i < stride; ++i) {
      after_step();
      due = due || periodic_checkpoint_due();
    }
    if (due && r.status != "failed") {
      Stopwatch io;
      m_cur.step = step;
      const State cur = m_cur.physics_left > 0 ? physics->state() : s;
      write_checkpoint(&cur, double(step) * dt);
      r.time.io += io.seconds("mantissa::workflow::Campaign::checkpoint");
    }
  }
  const double joules = m_energy->joules();
  if (joules >= 0.0) r.energy_joules = std::fmax(r.energy_joules, 0.0) + joules;
  const auto cost = physics->cost_per_step();
  r.cell_updates = cost.cell_updates * double(r.steps_done);
  r.bytes = cost.bytes * double(r.physics_steps);
  const double sflops = m_surrogate->flops_per_step();
  r.flops = (sflops > 0.0 ? sflops * double(r.surrogate_steps) : 0.0) + cost.flops * double(r.physics_steps);
  if (stopped) return false;
  finish(r, *physics);
  return true;
}

Campaign::Outcome Campaign::run() {
  if (m_resume_requested) {
    read_checkpoint();
    m_resumed = true;
    m_resumed_global_step = m_cur.global_steps;
    log("resuming from " + m_checkpoint_dir + " in phase '" + m_phases[m_cur.phase].name + "' at step " +
        std::to_string(m_cur.step));
  }
  // The surrogate exists from the start: the reference phase needs its stride to collect
  // training states.
  ensure_surrogate();
  if (m_resumed && m_training.done) m_surrogate->load(trained_path());
  StopSignals signals;
  const std::size_t first = m_cur.phase;
  for (std::size_t p = first; p < m_phases.size(); ++p) {
    bool resumed_here = m_resumed && p == first;
    m_cur.phase = p;
    if (resumed_here && (m_phases[p].kind == "surrogate" || m_phases[p].kind == "hybrid")) {
      // Repeat the rollout from its start (see run_rollout_phase). The campaign step counter
      // keeps counting (it only paces periodic checkpoints and the stop_after_step hook,
      // which must not fire twice).
      auto& r = m_results[static_cast<std::size_t>(m_phases[p].result)];
      VariantResult fresh;
      fresh.name = r.name;
      fresh.kind = r.kind;
      fresh.storage = r.storage;
      fresh.compute = r.compute;
      r = fresh;
      resumed_here = false;
      log("the rollout '" + m_phases[p].name + "' repeats from its start");
    }
    if (!resumed_here) {
      m_cur.step = 0;
      m_cur.shot = 0;
      m_cur.physics_left = 0;
      m_cur.since_check = 0;
    }
    const auto& ph = m_phases[p];
    bool done = true;
    if (ph.kind == "reference" || ph.kind == "physics")
      done = run_physics_phase(ph, resumed_here);
    else if (ph.kind == "training")
      done = m_training.done ? true : run_training_phase();
    else
      done = run_rollout_phase(ph, resumed_here);
    if (!done) {
      log("stopped by signal " + std::to_string(StopSignals::last_signal()) +
          "; checkpoint written; continue with "
          "`mantissa run DECK --resume`");
      return Outcome::stopped;
    }
    if (ph.kind == "reference" && !m_cfg.surrogate.enabled) m_train_samples.clear();
  }
  return Outcome::finished;
}

}  // namespace mantissa::workflow
