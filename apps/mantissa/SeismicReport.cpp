// What the seismic physics adds to the campaign (its Recorder and ReportSection, registered with
// it in Registry.cpp): the receivers are its probes and the shots its experiments; it derives
// the receiver misfit and the worst receiver cross-correlation of every variant, adds their
// report columns, the shots and receivers to report.json, and writes gathers.h5: the receivers
// of every shot of every variant as shot gathers, the layout a seismic processing script expects
// (one 2D array per shot, receivers x time, the geometry and the sampling with it).
// docs/report-schema.md "gathers.h5" is the reference.
#include "SeismicAdapter.hpp"

#if __has_include(<seismic/SeismicDeck.hpp>)  // only when the seismic module is built

#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Campaign.hpp>
#include <mantissa/workflow/Metrics.hpp>
#include <mantissa/workflow/ReportH5.hpp>
#include <seismic/SeismicDeck.hpp>
#include <seismic/Wavelet.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace mantissa::app {

namespace {

using workflow::Campaign;
using workflow::ReportH5;
using workflow::VariantResult;

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t k_gathers_version = 1;
// Below this share of the largest reference trace's norm, the worst-correlated receiver is named.
constexpr double k_weak_receiver = 1e-3;

std::string num(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

class SeismicRecorder final : public workflow::Recorder {
 public:
  std::string record(VariantResult& r, int experiment, std::int64_t step,
                     const workflow::PhysicsModel& model) override {
    std::string bad = Recorder::record(r, experiment, step, model);
    const std::string probe = "at probe '";
    if (const auto at = bad.find(probe); at != std::string::npos)
      bad.replace(at, probe.size(), "at receiver '");
    return bad;
  }

  // Receivers: misfit over all receivers together, worst correlation of any receiver.
  void finish(VariantResult& r, const VariantResult& ref,
              const workflow::CampaignConfig& cfg) const override {
    const std::int64_t nrec = r.num_probes;
    double misfit = nan_v, peak = nan_v;
    std::int64_t lag = 0, receiver = -1;
    double signal = std::numeric_limits<double>::quiet_NaN();
    // The reference's traces of r's own shot: shot 0, or the held-out shot a rollout ran.
    const std::vector<double>* ref_traces = ref.traces_of(r.experiment);
    if (nrec > 0 && ref.num_probes == nrec && r.status != "failed" && ref_traces && !ref_traces->empty()) {
      const std::vector<double>& rt = *ref_traces;
      const std::int64_t rows = static_cast<std::int64_t>(r.traces.size()) / nrec;
      const std::int64_t k = r.trace_stride;
      // Row i of this variant is step i k, row i k / k_ref of the reference (k is a multiple of
      // the reference's stride: the recording stride, times the surrogate's stride).
      const std::int64_t kr = ref.trace_stride;
      MANTISSA_ASSERT(kr > 0 && k % kr == 0,
                      "trace stride " << k << " is not a multiple of the reference's " << kr);
      std::vector<double> a, b;
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < nrec; ++j) {
          a.push_back(r.traces[static_cast<std::size_t>(i * nrec + j)]);
          b.push_back(rt[static_cast<std::size_t>(i * k / kr * nrec + j)]);
        }
      misfit = workflow::relative_l2(a, b);
      const std::int64_t max_lag_steps = cfg.receiver_max_lag < 0 ? cfg.steps / 10 : cfg.receiver_max_lag;
      // The worst correlation among the receivers the wave reaches (Metrics.hpp says why).
      std::vector<std::vector<double>> tr(static_cast<std::size_t>(nrec)), rr(static_cast<std::size_t>(nrec));
      for (std::int64_t j = 0; j < nrec; ++j)
        for (std::int64_t i = 0; i < rows; ++i) {
          tr[static_cast<std::size_t>(j)].push_back(r.traces[static_cast<std::size_t>(i * nrec + j)]);
          rr[static_cast<std::size_t>(j)].push_back(rt[static_cast<std::size_t>(i * k / kr * nrec + j)]);
        }
      const auto cc = workflow::worst_receiver_correlation(tr, rr, max_lag_steps / k);
      peak = cc.peak;
      lag = cc.lag * k;
      receiver = cc.receiver;
      signal = cc.signal;
    }
    r.set_metric("receiver_rel_l2", misfit);
    r.set_metric("xcorr_peak", peak);
    r.set_metric("xcorr_lag_steps", double(lag), true);
    r.set_metric("xcorr_receiver", double(receiver), true);
    r.set_metric("xcorr_receiver_signal", signal);
  }
};

std::string shot_name(std::size_t shot) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "shot_%04zu", shot);
  return buf;
}

// The first `dim` coordinates of each point, row major (n x dim).
std::vector<double> coordinates(const std::vector<std::array<double, 3>>& points, int dim) {
  std::vector<double> out;
  for (const auto& p : points)
    for (int a = 0; a < dim; ++a) out.push_back(p[static_cast<std::size_t>(a)]);
  return out;
}

class SeismicReport final : public workflow::ReportSection {
 public:
  explicit SeismicReport(const workflow::ModelContext& ctx) {
    if (!ctx.deck) throw Error("seismic: the report needs the deck's seismic: section");
    m_config = seismic::config_from_deck(*ctx.deck);
  }

  std::size_t num_shots() const { return m_config.shots.empty() ? 1 : m_config.shots.size(); }

  void campaign_json(json::Writer& j, const Campaign& c) const override {
    j.field("shots", std::int64_t(num_shots()));
    j.field("record_every", std::int64_t(c.probes().stride));
    j.key("receivers").value(c.probes().names);
  }
  void outputs_json(json::Writer& j, const Campaign& c) const override {
    j.key("gathers");
    if (c.probes().positions.empty())
      j.null();
    else
      j.value("gathers.h5");
  }
  std::vector<std::string> table_columns() const override { return {"receiver misfit", "x-corr (lag)"}; }
  std::vector<std::string> table_cells(const VariantResult& r) const override {
    std::string lag = std::to_string(static_cast<std::int64_t>(
        std::isfinite(r.metric("xcorr_lag_steps")) ? r.metric("xcorr_lag_steps") : 0.0));
    // a weak worst receiver is named, with its share of the largest trace (md_legend)
    const double signal = r.metric("xcorr_receiver_signal"), receiver = r.metric("xcorr_receiver");
    if (std::isfinite(signal) && signal < k_weak_receiver && std::isfinite(receiver) && receiver >= 0)
      lag += "; receiver " + std::to_string(static_cast<std::int64_t>(receiver)) + " at " + num(signal);
    return {num(r.metric("receiver_rel_l2")), num(r.metric("xcorr_peak")) + " (" + lag + ")"};
  }
  std::string md_intro(const Campaign& /*c*/) const override {
    if (num_shots() <= 1) return "";
    return "The deck has " + std::to_string(num_shots()) +
           " shots: the reference and every physics variant run each of them (the surrogate trains on the "
           "shots of "
           "campaign.surrogate.train_experiments and its held-out rollouts run those of "
           "heldout_experiments); the "
           "accuracy numbers below are shot 0's (a held-out rollout's: its own shot's), every shot's "
           "gathers and energy series are in gathers.h5.\n\n";
  }
  std::string md_legend() const override {
    return "receiver misfit: relative L2 over all receiver traces; x-corr: the smallest peak normalized "
           "cross-correlation among the receivers the wave reaches (reference trace norm >= 1e-6 of the "
           "largest) and the largest |lag| of any of them, in steps; where the smallest peak is a receiver "
           "whose reference trace holds under 1e-3 of the largest trace's norm, that receiver and its share "
           "are named: its trace may hold only the wave's first onset, weaker than a surrogate's noise; ";
  }

  std::vector<std::string> write_files(const Campaign& c, const std::string& dir) const override {
    const auto& rec = c.probes();
    const auto nrec = static_cast<std::int64_t>(rec.positions.size());
    if (nrec == 0) return {};
    const int dim = c.dim();
    auto f = ReportH5::create(dir + "/gathers.h5");
    f.attr("schema", std::string("mantissa-gathers"));
    f.attr("schema_version", k_gathers_version);
    f.attr("physics", c.config().physics);
    f.attr("deck_hash", c.config().deck_hash);
    f.attr("dim", std::int64_t(dim));
    f.attr("num_shots", std::int64_t(num_shots()));
    f.attr("num_receivers", nrec);
    f.attr("quantity", rec.quantity);
    f.attr("unit", rec.unit);
    f.attr("time_unit", rec.time_unit);
    f.attr("length_unit", rec.length_unit);
    f.attr("dt", c.physics_dt());
    std::string names;
    for (const auto& n : rec.names) names += (names.empty() ? "" : "\n") + n;
    f.attr("receiver_names", names);
    f.attr("receiver_coordinates", {std::uint64_t(nrec), std::uint64_t(dim)},
           coordinates(rec.positions, dim));
    {
      auto gv = f.group("variants");
      for (const auto& r : c.results()) {
        if (r.num_probes != nrec || r.traces.empty()) continue;  // nothing recorded (failed at once)
        auto g = gv.group(r.name);
        g.attr("kind", r.kind);
        g.attr("storage", r.storage);
        g.attr("compute", r.compute);
        g.attr("status", r.status);
        g.attr("failure", r.failure);
        g.attr("record_every", r.trace_stride);
        g.attr("sample_interval", c.physics_dt() * double(r.trace_stride));
        auto gg = g.group("gathers");
        auto ge = g.group("energy");
        // Its own shot: shot 0, or the held-out shot a rollout ran (then its only one).
        write_shot(gg, ge, c, r, std::size_t(r.experiment), r.traces, r.steps, r.times, r.energy);
        std::int64_t shots = 1;
        for (std::size_t s = 0; s < r.extra_experiments.size(); ++s) {
          const auto& x = r.extra_experiments[s];
          if (x.traces.empty()) break;  // not reached: the variant failed in an earlier shot
          write_shot(gg, ge, c, r, s + 1, x.traces, x.steps, x.times, x.energy);
          ++shots;
        }
        g.attr("num_shots", shots);  // shots written (all of them unless it failed)
      }
    }
    f.commit();
    return {"gathers.h5"};
  }

 private:
  void write_shot(const ReportH5& gathers, const ReportH5& energy, const Campaign& c, const VariantResult& r,
                  std::size_t shot, const std::vector<double>& traces, const std::vector<std::int64_t>& steps,
                  const std::vector<double>& times, const std::vector<double>& e) const {
    const auto& rec = c.probes();
    const int dim = c.dim();
    const std::uint64_t nrec = rec.positions.size();
    const std::uint64_t ns = traces.size() / nrec;
    // report.h5 holds rows of receivers per sample; a gather is a row per receiver (a trace).
    std::vector<double> g(nrec * ns);
    for (std::uint64_t s = 0; s < ns; ++s)
      for (std::uint64_t j = 0; j < nrec; ++j) g[j * ns + s] = traces[s * nrec + j];
    const std::string name = shot_name(shot);
    const auto d = gathers.dataset(name, {nrec, ns}, g);
    d.attr("axes", std::string("receiver,time"));
    d.attr("shot", std::int64_t(shot));
    d.attr("num_receivers", std::int64_t(nrec));
    d.attr("num_samples", std::int64_t(ns));
    d.attr("sample_interval", c.physics_dt() * double(r.trace_stride));
    d.attr("t0", 0.0);
    d.attr("record_every", r.trace_stride);
    d.attr("dt", c.physics_dt());
    d.attr("quantity", rec.quantity);
    d.attr("unit", rec.unit);
    d.attr("time_unit", rec.time_unit);
    d.attr("length_unit", rec.length_unit);
    d.attr("receiver_coordinates", {nrec, std::uint64_t(dim)}, coordinates(rec.positions, dim));
    std::vector<std::array<double, 3>> pos;
    std::vector<double> freq, delay, amp;
    std::string wavelets;
    if (shot < m_config.shots.size())
      for (const auto& src : m_config.shots[shot].sources) {
        pos.push_back(src.position);
        freq.push_back(src.frequency);
        delay.push_back(seismic::Wavelet(src).delay());  // the effective delay (a default when not given)
        amp.push_back(src.amplitude);
        wavelets +=
            (wavelets.empty() ? "" : "\n") +
            (src.wavelet == seismic::WaveletKind::ricker                ? std::string("ricker")
             : src.wavelet == seismic::WaveletKind::gaussian_derivative ? std::string("gaussian_derivative")
                                                                        : "file:" + src.file);
      }
    const std::uint64_t nsrc = pos.size();
    d.attr("num_sources", std::int64_t(nsrc));
    d.attr("source_positions", {nsrc, std::uint64_t(dim)}, coordinates(pos, dim));
    d.attr("source_wavelet", wavelets);
    d.attr("source_frequency", {nsrc}, freq);
    d.attr("source_delay", {nsrc}, delay);
    d.attr("source_amplitude", {nsrc}, amp);

    // Energy at the sample steps: columns step, time, energy.
    const std::uint64_t ne = steps.size();
    std::vector<double> en(ne * 3);
    for (std::uint64_t i = 0; i < ne; ++i) {
      en[3 * i] = double(steps[i]);
      en[3 * i + 1] = times[i];
      en[3 * i + 2] = e[i];
    }
    const auto es = energy.dataset(name, {ne, 3}, en);
    es.attr("columns", std::string("step,time,energy"));
    es.attr("shot", std::int64_t(shot));
    es.attr("time_unit", rec.time_unit);
  }

  seismic::Config m_config;
};

}  // namespace

std::unique_ptr<workflow::Recorder> make_seismic_recorder(const workflow::ModelContext& /*ctx*/) {
  return std::make_unique<SeismicRecorder>();
}

std::unique_ptr<workflow::ReportSection> make_seismic_report(const workflow::ModelContext& ctx) {
  return std::make_unique<SeismicReport>(ctx);
}

}  // namespace mantissa::app

#endif
