#include <mantissa/core/Error.hpp>
#include <seismic/SeismicDeck.hpp>

#include <limits>
#include <string>

namespace mantissa::seismic {

namespace {
constexpr double rmax = std::numeric_limits<double>::max();
const char* side_keys[3][2] = {{"x_low", "x_high"}, {"y_low", "y_high"}, {"z_low", "z_high"}};
}  // namespace

void register_schema(Schema& s) {
  s.section("seismic", "Acoustic wave physics (constant density, variable velocity), leapfrog in time.");
  s.integer("seismic.order", "spatial order of the Laplacian stencil: 2, 4, 6 or 8", 8, 2, 8);
  s.real("seismic.dt", "time step in seconds; 0 chooses courant x the largest stable dt", 0.0, 0.0, rmax);
  s.real("seismic.courant", "fraction of the largest stable dt used when dt is 0", 0.5, 1e-6, 1.0);
  s.integer("seismic.record_every", "receivers sample every k steps", 1, 1, 1000000);
  s.choice("seismic.precision.storage", "precision the wavefields are stored in",
           {"fp64", "fp32", "bf16", "fp16"}, std::string("fp64"));
  s.choice("seismic.precision.compute", "precision the stencil computes in (16-bit storage needs fp32)",
           {"fp64", "fp32"}, std::string("fp64"));
  s.section("seismic.boundaries",
            "Per side: pml (absorbing), free_surface (p = 0) or rigid (zero normal derivative). The vertical "
            "axis is the last one (y in 2D, z in 3D) and grows downwards: the top is its low side.");
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side)
      s.choice(std::string("seismic.boundaries.") + side_keys[a][side], "boundary condition of this side",
               {"pml", "free_surface", "rigid"}, std::string("pml"));
  s.section("seismic.pml", "Convolutional PML (Komatitsch and Martin 2007).");
  s.integer("seismic.pml.cells", "thickness of the layer in grid cells", 20, 1, 1000);
  s.real("seismic.pml.reflection", "target reflection coefficient of the layer", 1e-3, 1e-12, 0.5);
  s.real("seismic.pml.frequency",
         "frequency of the CFS alpha term in Hz (0: the highest source peak frequency)", 0.0, 0.0, rmax);
  s.record_list("seismic.sources", "point sources; several shots run one after the other", false);
  s.integer("seismic.sources[].shot", "shot this source fires in (shots run in order 0, 1, ...)", 0, 0,
            100000);
  s.real_list("seismic.sources[].position", "position (x, y[, z]) in metres; need not be a grid point",
              std::nullopt, 2, 3);
  s.choice("seismic.sources[].wavelet", "source time function", {"ricker", "gaussian_derivative", "file"},
           std::string("ricker"));
  s.real("seismic.sources[].frequency",
         "peak frequency in Hz (highest resolved frequency for a file wavelet)", 10.0, 1e-9, rmax);
  s.real("seismic.sources[].delay", "time of the wavelet's centre in s (negative: 1.5 / frequency)", -1.0,
         -rmax, rmax);
  s.real("seismic.sources[].amplitude", "scale of the wavelet", 1.0, -rmax, rmax);
  s.string("seismic.sources[].file", "wavelet file: two columns 'time value' per line", std::nullopt, true);
  s.record_list("seismic.receivers", "receivers at arbitrary positions (interpolated)");
  s.real_list("seismic.receivers[].position", "position (x, y[, z]) in metres", std::nullopt, 2, 3);
  s.section("seismic.receiver_line",
            "Optional line of equally spaced receivers, added after seismic.receivers.");
  s.real_list("seismic.receiver_line.start", "first receiver (x, y[, z])", std::nullopt, 2, 3, true);
  s.real_list("seismic.receiver_line.end", "last receiver (x, y[, z])", std::nullopt, 2, 3, true);
  s.integer("seismic.receiver_line.count", "number of receivers on the line", 0, 0, 1000000);
  s.section("seismic.velocity", "Velocity model in m/s.");
  s.choice("seismic.velocity.model", "kind of model", {"constant", "layered", "gradient", "file"},
           std::string("constant"));
  s.real("seismic.velocity.velocity", "constant: the velocity", 1500.0, 1e-9, rmax);
  s.real_list("seismic.velocity.interfaces", "layered: depths of the interfaces, increasing", std::nullopt, 0,
              100000, true);
  s.real_list("seismic.velocity.velocities", "layered: velocities from the top, one more than interfaces",
              std::nullopt, 1, 100000, true);
  s.real("seismic.velocity.top_velocity", "gradient: velocity at depth 0", 1500.0, 1e-9, rmax);
  s.real("seismic.velocity.gradient", "gradient: increase per metre of depth (1/s)", 0.0, -rmax, rmax);
  s.string("seismic.velocity.file",
           "file: HDF5 file with a (z, y, x) or (y, x) dataset, resampled if its grid "
           "(attributes origin, spacing) differs",
           std::nullopt, true);
  s.string("seismic.velocity.dataset", "file: name of the dataset", std::string("velocity"));
  s.record_list("seismic.velocity.bodies", "ellipsoidal bodies of constant velocity over the model (salt)");
  s.real_list("seismic.velocity.bodies[].center", "centre (x, y[, z]) in metres", std::nullopt, 2, 3);
  s.real_list("seismic.velocity.bodies[].radii", "semi-axes (x, y[, z]) in metres", std::nullopt, 2, 3);
  s.real("seismic.velocity.bodies[].velocity", "velocity inside the body", 4500.0, 1e-9, rmax);
}

Config config_from_deck(const Deck& d) {
  Config c;
  c.order = static_cast<int>(d.get_int("seismic.order"));
  if (c.order % 2 != 0)
    throw Error("seismic.order = " + std::to_string(c.order) + " in '" + d.file() + "': use 2, 4, 6 or 8");
  c.dt = d.get_real("seismic.dt");
  c.courant = d.get_real("seismic.courant");
  c.steps = static_cast<int>(d.get_int("run.steps"));
  c.record_every = static_cast<int>(d.get_int("seismic.record_every"));
  c.storage = parse_precision(d.get_string("seismic.precision.storage"), "seismic.precision.storage");
  c.compute = parse_precision(d.get_string("seismic.precision.compute"), "seismic.precision.compute");
  if ((c.storage == Precision::bf16 || c.storage == Precision::fp16) && c.compute != Precision::fp32)
    throw Error("seismic.precision: 16-bit storage (" + d.get_string("seismic.precision.storage") +
                ") computes in fp32; set seismic.precision.compute: fp32");
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const std::string key = std::string("seismic.boundaries.") + side_keys[a][side];
      c.boundary[a][side] = parse_boundary(d.get_string(key), key);
    }
  c.pml_cells = static_cast<int>(d.get_int("seismic.pml.cells"));
  c.pml_reflection = d.get_real("seismic.pml.reflection");
  c.pml_frequency = d.get_real("seismic.pml.frequency");
  auto position = [&](const std::string& key) {
    const auto v = d.get_reals(key);
    return std::array<double, 3>{v[0], v[1], v.size() > 2 ? v[2] : 0.0};
  };
  for (std::size_t i = 0; i < d.count("seismic.sources"); ++i) {
    const std::string p = "seismic.sources[" + std::to_string(i) + "].";
    Source s;
    s.position = position(p + "position");
    s.wavelet = parse_wavelet(d.get_string(p + "wavelet"), p + "wavelet");
    s.frequency = d.get_real(p + "frequency");
    s.delay = d.get_real(p + "delay");
    s.amplitude = d.get_real(p + "amplitude");
    if (d.has(p + "file")) s.file = d.get_string(p + "file");
    if (s.wavelet == WaveletKind::file && s.file.empty())
      throw Error(p + "file is required when " + p + "wavelet is file");
    const auto shot = static_cast<std::size_t>(d.get_int(p + "shot"));
    if (shot >= c.shots.size()) c.shots.resize(shot + 1);
    c.shots[shot].sources.push_back(s);
  }
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    if (c.shots[s].sources.empty())
      throw Error("seismic.sources: shot " + std::to_string(s) +
                  " has no source; number shots 0, 1, ... without gaps");
  for (std::size_t i = 0; i < d.count("seismic.receivers"); ++i)
    c.receivers.push_back(position("seismic.receivers[" + std::to_string(i) + "].position"));
  const auto line = d.get_int("seismic.receiver_line.count");
  if (line > 0) {
    if (!d.has("seismic.receiver_line.start") || !d.has("seismic.receiver_line.end"))
      throw Error("seismic.receiver_line.count > 0 needs seismic.receiver_line.start and .end");
    const auto a = position("seismic.receiver_line.start"), b = position("seismic.receiver_line.end");
    for (std::int64_t r = 0; r < line; ++r) {
      const double t = line == 1 ? 0.0 : double(r) / double(line - 1);
      c.receivers.push_back({a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])});
    }
  }
  const std::string model = d.get_string("seismic.velocity.model");
  c.velocity.kind = parse_model(model, "seismic.velocity.model");
  c.velocity.velocity = d.get_real("seismic.velocity.velocity");
  if (d.has("seismic.velocity.interfaces"))
    c.velocity.interfaces = d.get_reals("seismic.velocity.interfaces");
  if (d.has("seismic.velocity.velocities"))
    c.velocity.velocities = d.get_reals("seismic.velocity.velocities");
  c.velocity.top_velocity = d.get_real("seismic.velocity.top_velocity");
  c.velocity.gradient = d.get_real("seismic.velocity.gradient");
  if (d.has("seismic.velocity.file")) c.velocity.file = d.get_string("seismic.velocity.file");
  c.velocity.dataset = d.get_string("seismic.velocity.dataset");
  for (std::size_t i = 0; i < d.count("seismic.velocity.bodies"); ++i) {
    const std::string p = "seismic.velocity.bodies[" + std::to_string(i) + "].";
    VelocityBody b;
    b.center = position(p + "center");
    const auto r = d.get_reals(p + "radii");
    b.radii = {r[0], r[1], r.size() > 2 ? r[2] : 1.0};
    for (int a = 0; a < 3; ++a)
      if (!(b.radii[a] > 0.0)) throw Error(p + "radii must be positive");
    b.velocity = d.get_real(p + "velocity");
    c.velocity.bodies.push_back(b);
  }
  if (c.velocity.kind == ModelKind::layered && !d.has("seismic.velocity.velocities"))
    throw Error("seismic.velocity.model is layered: give seismic.velocity.velocities (and interfaces)");
  if (c.velocity.kind == ModelKind::file && c.velocity.file.empty())
    throw Error("seismic.velocity.model is file: give seismic.velocity.file");
  return c;
}

}  // namespace mantissa::seismic
