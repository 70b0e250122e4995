// gathers.h5: the receivers of every shot of every variant as shot gathers, the layout a
// seismic processing script expects (one 2D array per shot, receivers x time, the geometry
// and the sampling with it). docs/report-schema.md "gathers.h5" is the reference.
#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/Report.hpp>
#include <mantissa/workflow/detail/H5.hpp>

#include <cstdio>
#include <filesystem>

namespace mantissa::workflow {

namespace {
using namespace detail;

constexpr std::int64_t k_gathers_version = 1;

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

void write_shot(hid_t gathers, hid_t energy, const Campaign& c, const VariantResult& r, std::size_t shot,
                const std::vector<double>& traces, const std::vector<std::int64_t>& steps,
                const std::vector<double>& times, const std::vector<double>& e) {
  const auto& rec = c.recording();
  const int dim = c.dim();
  const std::uint64_t nrec = rec.positions.size();
  const std::uint64_t ns = traces.size() / nrec;
  // report.h5 holds rows of receivers per sample; a gather is a row per receiver (a trace).
  std::vector<double> g(nrec * ns);
  for (std::uint64_t s = 0; s < ns; ++s)
    for (std::uint64_t j = 0; j < nrec; ++j) g[j * ns + s] = traces[s * nrec + j];
  const std::string name = shot_name(shot);
  h5_write(gathers, name, {nrec, ns}, g.data());
  H5Handle ds(H5Dopen2(gathers, name.c_str(), H5P_DEFAULT), H5Dclose);
  const hid_t d = ds.id();
  h5_attr(d, "axes", std::string("receiver,time"));
  h5_attr(d, "shot", std::int64_t(shot));
  h5_attr(d, "num_receivers", std::int64_t(nrec));
  h5_attr(d, "num_samples", std::int64_t(ns));
  h5_attr(d, "sample_interval", c.physics_dt() * double(r.trace_stride));
  h5_attr(d, "t0", 0.0);
  h5_attr(d, "record_every", r.trace_stride);
  h5_attr(d, "dt", c.physics_dt());
  h5_attr(d, "quantity", rec.quantity);
  h5_attr(d, "unit", rec.unit);
  h5_attr(d, "time_unit", rec.time_unit);
  h5_attr(d, "length_unit", rec.length_unit);
  h5_attr(d, "receiver_coordinates", {nrec, std::uint64_t(dim)}, coordinates(rec.positions, dim));
  std::vector<std::array<double, 3>> pos;
  std::vector<double> freq, delay, amp;
  std::string wavelets;
  if (shot < c.shot_sources().size())
    for (const auto& s : c.shot_sources()[shot]) {
      pos.push_back(s.position);
      freq.push_back(s.frequency);
      delay.push_back(s.delay);
      amp.push_back(s.amplitude);
      wavelets += (wavelets.empty() ? "" : "\n") + s.wavelet;
    }
  const std::uint64_t nsrc = pos.size();
  h5_attr(d, "num_sources", std::int64_t(nsrc));
  h5_attr(d, "source_positions", {nsrc, std::uint64_t(dim)}, coordinates(pos, dim));
  h5_attr(d, "source_wavelet", wavelets);
  h5_attr(d, "source_frequency", {nsrc}, freq);
  h5_attr(d, "source_delay", {nsrc}, delay);
  h5_attr(d, "source_amplitude", {nsrc}, amp);

  // Energy at the sample steps: columns step, time, energy.
  const std::uint64_t ne = steps.size();
  std::vector<double> en(ne * 3);
  for (std::uint64_t i = 0; i < ne; ++i) {
    en[3 * i] = double(steps[i]);
    en[3 * i + 1] = times[i];
    en[3 * i + 2] = e[i];
  }
  h5_write(energy, name, {ne, 3}, en.data());
  H5Handle es(H5Dopen2(energy, name.c_str(), H5P_DEFAULT), H5Dclose);
  h5_attr(es.id(), "columns", std::string("step,time,energy"));
  h5_attr(es.id(), "shot", std::int64_t(shot));
  h5_attr(es.id(), "time_unit", rec.time_unit);
}
}  // namespace

void write_gathers(const Campaign& c, const std::string& path) {
  const auto& rec = c.recording();
  const auto nrec = static_cast<std::int64_t>(rec.positions.size());
  if (nrec == 0) return;
  const int dim = c.dim();
  const std::string tmp = path + ".tmp";
  {
    auto f = h5_create(tmp);
    h5_attr(f.id(), "schema", std::string("mantissa-gathers"));
    h5_attr(f.id(), "schema_version", k_gathers_version);
    h5_attr(f.id(), "physics", c.config().physics);
    h5_attr(f.id(), "deck_hash", c.config().deck_hash);
    h5_attr(f.id(), "dim", std::int64_t(dim));
    h5_attr(f.id(), "num_shots", std::int64_t(c.shot_sources().empty() ? 1 : c.shot_sources().size()));
    h5_attr(f.id(), "num_receivers", nrec);
    h5_attr(f.id(), "quantity", rec.quantity);
    h5_attr(f.id(), "unit", rec.unit);
    h5_attr(f.id(), "time_unit", rec.time_unit);
    h5_attr(f.id(), "length_unit", rec.length_unit);
    h5_attr(f.id(), "dt", c.physics_dt());
    std::string names;
    for (const auto& n : c.receiver_names()) names += (names.empty() ? "" : "\n") + n;
    h5_attr(f.id(), "receiver_names", names);
    h5_attr(f.id(), "receiver_coordinates", {std::uint64_t(nrec), std::uint64_t(dim)},
            coordinates(rec.positions, dim));
    auto gv = h5_group(f.id(), "variants");
    for (const auto& r : c.results()) {
      if (r.num_receivers != nrec || r.traces.empty()) continue;  // nothing recorded (failed at once)
      auto g = h5_group(gv.id(), r.name);
      h5_attr(g.id(), "kind", r.kind);
      h5_attr(g.id(), "storage", r.storage);
      h5_attr(g.id(), "compute", r.compute);
      h5_attr(g.id(), "status", r.status);
      h5_attr(g.id(), "failure", r.failure);
      h5_attr(g.id(), "record_every", r.trace_stride);
      h5_attr(g.id(), "sample_interval", c.physics_dt() * double(r.trace_stride));
      auto gg = h5_group(g.id(), "gathers");
      auto ge = h5_group(g.id(), "energy");
      write_shot(gg.id(), ge.id(), c, r, 0, r.traces, r.steps, r.times, r.energy);
      std::int64_t shots = 1;
      for (std::size_t s = 0; s < r.extra_shots.size(); ++s) {
        const auto& x = r.extra_shots[s];
        if (x.traces.empty()) break;  // not reached: the variant failed in an earlier shot
        write_shot(gg.id(), ge.id(), c, r, s + 1, x.traces, x.steps, x.times, x.energy);
        ++shots;
      }
      h5_attr(g.id(), "num_shots", shots);  // shots written (all of them unless it failed)
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace mantissa::workflow
