#include <surrogates/Extrapolation.hpp>
#include <surrogates/Patches.hpp>
#include <surrogates/Surrogate.hpp>
#include <surrogates/detail/Pushforward.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

namespace mantissa::surrogates {

namespace {
using Box = std::array<std::array<std::int64_t, 3>, 2>;  // [lo, hi) in cells

Box intersect(const Box& a, const Box& b) {
  Box r;
  for (int k = 0; k < 3; ++k) {
    r[0][k] = std::max(a[0][k], b[0][k]);
    r[1][k] = std::min(a[1][k], b[1][k]);
    if (r[1][k] < r[0][k]) r[1][k] = r[0][k];
  }
  return r;
}
std::int64_t volume(const Box& b) {
  return (b[1][0] - b[0][0]) * (b[1][1] - b[0][1]) * (b[1][2] - b[0][2]);
}

// Free function: nvcc rejects device lambdas in members of a private nested class.
template <class TD, class TS>
void copy_weights(Model<TD>& dst, Model<TS>& src) {
  auto& d = dst.parameters();
  auto& s = src.parameters();
  for (std::size_t k = 0; k < d.size(); ++k) {
    auto dv = d[k].value;
    auto sv = s[k].value;
    Kokkos::parallel_for(
        "mantissa::surrogates::Surrogate::copy_weights", Kokkos::RangePolicy<ExecSpace>(0, d[k].size()),
        KOKKOS_LAMBDA(const std::int64_t i) { dv(i) = TD(sv(i)); });
  }
}
}  // namespace

struct Surrogate::Impl {
  std::unique_ptr<Model<double>> model64;
  std::unique_ptr<Model<float>> model32;
  std::unique_ptr<Trainer<double>> trainer64;
  std::unique_ptr<Trainer<float>> trainer32;
  bool master64 = false;
  bool other_stale = true;  // the non-master model needs the master's weights
  // Every change of the weights passes through sync(), which counts it; predict() tells the
  // model when the weights are those of its previous prediction (16-bit weight copies reused).
  std::uint64_t weights_version = 0, predicted_version = ~std::uint64_t(0);
  // Owned tiles (for the normalisation, which must not count halo cells twice) and the same
  // samples on the training tile: the owned tile plus a halo of patches gathered from the ranks
  // that own them, so that training sees every window whole as inference does.
  Dataset dataset, extended;
  std::vector<double> amplitude;  // per sample: the state's amplitude it was divided by (1 if none)
  Normalization norm;
  Provenance provenance;
  std::mt19937_64 gen;
  int steps_done = 0;             // optimizer steps trained (train_steps' step counter)
  std::uint64_t predictions = 0;  // predict() calls so far (the window shift of the next one)

  void sync() {
    if (!other_stale) return;
    if (master64)
      copy_weights(*model32, *model64);
    else
      copy_weights(*model64, *model32);
    other_stale = false;
    ++weights_version;
  }
};

namespace {

// The window origin of training step or prediction n (SurrogateConfig::window_shift): a
// splitmix64 hash of the seed and n, the same on every rank; 0 to window-1 patches per axis.
std::array<int, 3> window_origin(std::uint64_t seed, std::uint64_t n, int window) {
  std::uint64_t z = seed ^ (0x9e3779b97f4a7c15ULL * (n + 1));
  std::array<int, 3> o{0, 0, 0};
  for (auto& v : o) {
    z += 0x9e3779b97f4a7c15ULL;
    std::uint64_t x = z;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    v = int(x % std::uint64_t(window));
  }
  return o;
}

// Boxes of every rank: what it owns and what it needs with `halo` patches around it.
struct Tiles {
  std::vector<Box> owned, ext;
};

Tiles tiles(const Decomposition& d, const ModelConfig& mc, int halo) {
  const std::array<std::int64_t, 3> ps{mc.patch, mc.patch, mc.patch_z()};
  const Grid& g = d.grid();
  Tiles t;
  t.owned.resize(d.size());
  t.ext.resize(d.size());
  for (int r = 0; r < d.size(); ++r) {
    std::array<int, 3> coords{0, 0, 0};
    MPI_Cart_coords(d.comm(), r, 3, coords.data());
    const auto off = d.offset_of(coords), e = d.extent_of(coords);
    for (int a = 0; a < 3; ++a) {
      const std::int64_t h = a < g.dim ? halo * ps[a] : 0;
      t.owned[r][0][a] = off[a];
      t.owned[r][1][a] = off[a] + e[a];
      t.ext[r][0][a] = std::max<std::int64_t>(0, off[a] - h);
      t.ext[r][1][a] = std::min<std::int64_t>(g.n[a], off[a] + e[a] + h);
    }
  }
  return t;
}

std::array<std::int64_t, 3> box_extent(const Box& b) {
  return {b[1][0] - b[0][0], b[1][1] - b[0][1], b[1][2] - b[0][2]};
}

// This rank's values of C channels on its extended box, [c][z][y][x], from every rank's owned
// values `mine` ([c][z][y][x] over its owned box); collective.
std::vector<double> gather_extended(const Decomposition& d, const Tiles& t, const std::vector<double>& mine,
                                    int C) {
  const int size = d.size(), me = d.rank();
  const Box& ob = t.owned[me];
  const auto oe = box_extent(ob);
  std::vector<int> scount(size), sdisp(size), rcount(size), rdisp(size);
  std::vector<double> sendbuf;
  for (int r = 0; r < size; ++r) {
    const Box b = intersect(t.ext[r], ob);
    sdisp[r] = int(sendbuf.size());
    for (int c = 0; c < C; ++c)
      for (std::int64_t z = b[0][2]; z < b[1][2]; ++z)
        for (std::int64_t y = b[0][1]; y < b[1][1]; ++y)
          for (std::int64_t x = b[0][0]; x < b[1][0]; ++x)
            sendbuf.push_back(
                mine[((c * oe[2] + (z - ob[0][2])) * oe[1] + (y - ob[0][1])) * oe[0] + (x - ob[0][0])]);
    scount[r] = int(sendbuf.size()) - sdisp[r];
  }
  const Box& eb = t.ext[me];
  const auto ee = box_extent(eb);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    rdisp[r] = total;
    rcount[r] = int(C * volume(intersect(eb, t.owned[r])));
    total += rcount[r];
  }
  std::vector<double> recvbuf(total);
  MPI_Alltoallv(sendbuf.data(), scount.data(), sdisp.data(), MPI_DOUBLE, recvbuf.data(), rcount.data(),
                rdisp.data(), MPI_DOUBLE, d.comm());
  std::vector<double> out(std::size_t(C) * std::size_t(volume(eb)));
  for (int r = 0; r < size; ++r) {
    const Box b = intersect(eb, t.owned[r]);
    std::int64_t k = rdisp[r];
    for (int c = 0; c < C; ++c)
      for (std::int64_t z = b[0][2]; z < b[1][2]; ++z)
        for (std::int64_t y = b[0][1]; y < b[1][1]; ++y)
          for (std::int64_t x = b[0][0]; x < b[1][0]; ++x)
            out[((c * ee[2] + (z - eb[0][2])) * ee[1] + (y - eb[0][1])) * ee[0] + (x - eb[0][0])] =
                recvbuf[k++];
  }
  return out;
}

// 1 for the tokens of an extended tile that lie in the owned box, tile after tile (tokens
// row-major (z, y, x) in patches, TokenLayout's order).
Kokkos::View<std::uint8_t*, MemSpace> owned_tokens(const ModelConfig& mc, const Box& eb, const Box& ob,
                                                   std::int64_t tiles) {
  const std::array<std::int64_t, 3> ps{mc.patch, mc.patch, mc.patch_z()};
  std::array<std::int64_t, 3> n{}, lo{}, hi{};
  for (int a = 0; a < 3; ++a) {
    n[a] = (eb[1][a] - eb[0][a]) / ps[a];
    lo[a] = (ob[0][a] - eb[0][a]) / ps[a];
    hi[a] = (ob[1][a] - eb[0][a]) / ps[a];
  }
  const std::int64_t per = n[0] * n[1] * n[2];
  Kokkos::View<std::uint8_t*, MemSpace> mask("mantissa::surrogates::Surrogate::owned_tokens", per * tiles);
  auto h = Kokkos::create_mirror_view(mask);
  for (std::int64_t t = 0; t < tiles; ++t)
    for (std::int64_t z = 0; z < n[2]; ++z)
      for (std::int64_t y = 0; y < n[1]; ++y)
        for (std::int64_t x = 0; x < n[0]; ++x)
          h(t * per + (z * n[1] + y) * n[0] + x) =
              (x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1] && z >= lo[2] && z < hi[2]) ? 1 : 0;
  Kokkos::deep_copy(mask, h);
  return mask;
}

// The state's amplitude: RMS of channel 0 over the owned cells of all ranks (identical on every
// rank, and for every rank count up to the association of one sum).
double state_amplitude(const Decomposition& d, const std::vector<double>& owned, std::int64_t cells) {
  double s[2] = {0.0, double(cells)};
  for (std::int64_t k = 0; k < cells; ++k) s[0] += owned[k] * owned[k];
  MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, d.comm());
  return s[1] > 0.0 ? std::sqrt(s[0] / s[1]) : 0.0;
}

}  // namespace

Surrogate::Surrogate(const SurrogateConfig& config, const Decomposition& decomp)
    : m_impl(std::make_unique<Impl>()), m_config(config), m_decomp(decomp) {
  auto& mc = m_config.model;
  const Grid& g = decomp.grid();
  if (g.dim != mc.dim)
    throw Error("surrogate.dim = " + std::to_string(mc.dim) + " but mesh.dim = " + std::to_string(g.dim) +
                "; the surrogate works on the mesh of the run");
  const std::array<int, 3> ps{mc.patch, mc.patch, mc.patch_z()};
  for (int a = 0; a < g.dim; ++a) {
    if (g.n[a] % ps[a] != 0)
      throw Error("surrogate.patch = " + std::to_string(mc.patch) + " does not divide mesh.n[" +
                  std::to_string(a) + "] = " + std::to_string(g.n[a]) +
                  "; choose a patch size that divides every mesh extent");
    if (decomp.extent()[a] % ps[a] != 0 || decomp.offset()[a] % ps[a] != 0)
      throw Error("surrogate: rank " + std::to_string(decomp.rank()) + " owns " +
                  std::to_string(decomp.extent()[a]) + " cells along axis " + std::to_string(a) +
                  ", not a multiple of surrogate.patch = " + std::to_string(mc.patch) +
                  "; choose mesh.n and mesh.process_grid so every subdomain is whole patches");
    mc.global_patches[a] = g.n[a] / ps[a];
  }
  if (config.batch_size < 1)
    throw Error("surrogate.train.batch_size = " + std::to_string(config.batch_size) + " must be at least 1");
  if (!(config.noise >= 0.0))
    throw Error("surrogate.train.noise = " + std::to_string(config.noise) + " must be at least 0");
  if (!(config.pushforward >= 0.0 && config.pushforward <= 1.0))
    throw Error("surrogate.train.pushforward = " + std::to_string(config.pushforward) + " must be in [0, 1]");
  if (config.pushforward_steps < 1)
    throw Error("surrogate.train.pushforward_steps = " + std::to_string(config.pushforward_steps) +
                " must be at least 1");
  if (config.extrapolation == TimeExtrapolation::linear &&
      (mc.in_channels < 2 || mc.out_channels > mc.in_channels))
    throw Error(
        "surrogate.extrapolation = linear needs the state one solver step apart in input channels 0 and 1 "
        "(in_channels >= 2) and the predicted channels among the inputs (out_channels <= in_channels)");
  if (config.scaling == InputScaling::amplitude && mc.out_channels > mc.in_channels)
    throw Error(
        "surrogate.scaling = amplitude needs the predicted channels among the inputs "
        "(out_channels <= in_channels)");
  m_impl->gen.seed(config.seed + std::uint64_t(decomp.rank()));
  m_impl->model64 = std::make_unique<Model<double>>(mc);
  m_impl->model32 = std::make_unique<Model<float>>(mc);
  m_impl->master64 = config.train_precision == Precision::fp64;
  if (m_impl->master64)
    m_impl->trainer64 = std::make_unique<Trainer<double>>(*m_impl->model64, config.optimizer, Precision::fp64,
                                                          decomp.comm(), config.loss_scale);
  else
    m_impl->trainer32 = std::make_unique<Trainer<float>>(
        *m_impl->model32, config.optimizer, config.train_precision, decomp.comm(), config.loss_scale);
  // Both models start from the same weights (the master's).
  m_impl->other_stale = true;
  m_impl->sync();
  m_impl->dataset = Dataset(mc.in_channels, mc.out_channels, decomp.extent());
  const Tiles t = tiles(decomp, mc, train_halo());
  m_impl->extended = Dataset(mc.in_channels, mc.out_channels, box_extent(t.ext[decomp.rank()]));
}

Surrogate::~Surrogate() = default;

int Surrogate::train_halo() const {
  // A pushforward step chains up to pushforward_steps + 1 predictions on the training tile: each
  // must be exact on the halo the next needs.
  return m_config.model.halo_patches() * (m_config.pushforward > 0.0 ? 1 + m_config.pushforward_steps : 1);
}

namespace {
std::vector<double> owned_values(const std::vector<const Field<double>*>& fields, int expected,
                                 const char* what) {
  if (int(fields.size()) != expected)
    throw Error(std::string("surrogate: ") + what + ": got " + std::to_string(fields.size()) +
                " fields, expected " + std::to_string(expected) + " (surrogate.in_channels / out_channels)");
  std::vector<double> out;
  for (const auto* f : fields) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f->view());
    const auto& e = f->extent();
    const auto& gh = f->ghosts();
    for (std::int64_t z = 0; z < e[2]; ++z)
      for (std::int64_t y = 0; y < e[1]; ++y)
        for (std::int64_t x = 0; x < e[0]; ++x) out.push_back(h(z + gh[2], y + gh[1], x + gh[0]));
  }
  return out;
}
}  // namespace

void Surrogate::add_sample(const std::vector<const HostField*>& inputs,
                           const std::vector<const HostField*>& targets) {
  const auto& mc = m_config.model;
  auto in = owned_values(inputs, mc.in_channels, "add_sample inputs");
  auto out = owned_values(targets, mc.out_channels, "add_sample targets");
  const std::int64_t cells = m_impl->dataset.cells();
  double a = 1.0;
  if (m_config.scaling == InputScaling::amplitude) {
    a = state_amplitude(m_decomp, in, cells);
    // A state at rest is predicted exactly (no change) and teaches nothing; every rank skips it.
    if (!(a > 0.0)) return;
    for (std::int64_t k = 0; k < mc.out_channels * cells; ++k) in[k] /= a;
    for (auto& v : out) v /= a;
  }
  const Tiles t = tiles(m_decomp, mc, train_halo());
  const Box& eb = t.ext[m_decomp.rank()];
  m_impl->extended.add(gather_extended(m_decomp, t, in, mc.in_channels),
                       gather_extended(m_decomp, t, out, mc.out_channels), eb[0]);
  m_impl->dataset.add(std::move(in), std::move(out), m_decomp.offset());
  m_impl->amplitude.push_back(a);
}

std::int64_t Surrogate::num_samples() const {
  return m_impl->dataset.size();
}

namespace {
// Adds noise to the state channels of `in` and subtracts it (in target units) from `t`.
template <class T>
void add_noise(const Matrix<T>& in, const Matrix<T>& t, double sigma, const ModelConfig& mc,
               const Normalization& nz, std::mt19937_64& gen) {
  const int pc = mc.patch_cells(), cout = mc.out_channels;
  const std::int64_t rows = in.extent(0);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in);
  auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
  std::normal_distribution<double> nd(0.0, sigma);
  for (std::int64_t row = 0; row < rows; ++row)
    for (int c = 0; c < cout; ++c)
      for (int q = 0; q < pc; ++q) {
        const double n = nd(gen);
        hi(row, c * pc + q) = T(double(hi(row, c * pc + q)) + n);
        ht(row, c * pc + q) = T(double(ht(row, c * pc + q)) - n * nz.in_std[c] / nz.out_std[c]);
      }
  Kokkos::deep_copy(in, hi);
  Kokkos::deep_copy(t, ht);
}
}  // namespace

template <class T>
void Surrogate::train_steps(int steps, TrainStats& stats, const std::function<bool()>& stop) {
  auto& ds = m_impl->extended;
  const auto& mc = m_config.model;
  const auto& nz = m_impl->norm;
  const Tiles t = tiles(m_decomp, mc, train_halo());
  const int me = m_decomp.rank();
  // The loss counts each rank's owned tokens: the halo is context. Where every rank's training
  // tile covers the whole domain (a halo as wide as the domain: pushforward chains on a small
  // grid), every token is exact and counts, so the ranks train on whole samples of their own
  // (data parallelism over samples) instead of computing a halo they would not count.
  const auto& domain = m_decomp.grid().n;
  const bool whole = std::all_of(t.ext.begin(), t.ext.end(), [&](const Box& b) {
    return b[0][0] == 0 && b[0][1] == 0 && b[0][2] == 0 && b[1][0] == domain[0] && b[1][1] == domain[1] &&
           b[1][2] == domain[2];
  });
  const auto mask =
      whole ? typename Trainer<T>::RowMask()
            : typename Trainer<T>::RowMask(owned_tokens(mc, t.ext[me], t.owned[me], m_config.batch_size));
  // Sample i+1 continues sample i when its state is sample i's state plus its change (the same
  // trajectory, one prediction later): the pairs a pushforward step can use. Every rank sees the
  // same samples in the same order, so the pairs agree; a pair counts where it holds on all ranks.
  // starts[h - 1]: the samples that begin h chained pairs (a pushforward step of horizon h).
  const int horizon = std::max(1, m_config.pushforward_steps);
  std::vector<std::vector<std::int64_t>> starts(horizon);
  if (m_config.pushforward > 0.0) {
    const auto& own = m_impl->dataset;
    const std::int64_t n = own.size(), cells = own.cells();
    std::vector<int> ok(std::max<std::int64_t>(n - 1, 0), 0);
    for (std::int64_t i = 0; i + 1 < n; ++i) {
      const double r = m_impl->amplitude[i] / m_impl->amplitude[i + 1];
      double err = 0.0, ref = 0.0;
      for (int c = 0; c < mc.out_channels; ++c)
        for (std::int64_t k = 0; k < cells; ++k) {
          const double next = own.input(i + 1)[c * cells + k];
          const double here = (own.input(i)[c * cells + k] + own.target(i)[c * cells + k]) * r;
          err = std::max(err, std::abs(next - here));
          ref = std::max(ref, std::abs(next));
        }
      ok[i] = err <= 1e-9 * std::max(ref, 1e-300) ? 1 : 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, ok.data(), int(ok.size()), MPI_INT, MPI_MIN, m_decomp.comm());
    std::vector<int> run(ok.size() + 1, 0);  // chained pairs in a row from i
    for (std::size_t i = ok.size(); i-- > 0;) run[i] = ok[i] ? 1 + run[i + 1] : 0;
    for (std::size_t i = 0; i < ok.size(); ++i)
      for (int h = 1; h <= std::min(run[i], horizon); ++h) starts[h - 1].push_back(std::int64_t(i));
  }
  Trainer<T>& trainer = [&]() -> Trainer<T>& {
    if constexpr (std::is_same<T, double>::value)
      return *m_impl->trainer64;
    else
      return *m_impl->trainer32;
  }();
  TokenLayout layout;
  Matrix<T> in, out, out1, pred;
  std::uniform_int_distribution<std::int64_t> pick(0, ds.size() - 1);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  const int pf_from = steps / 4;
  stats.first_step = m_impl->steps_done;
  for (int s = m_impl->steps_done; s < steps; ++s) {
    // The same decision on every rank (data-parallel steps are collective): one draw from a
    // generator seeded alike everywhere.
    std::mt19937_64 g(m_config.seed ^ (0x9e3779b97f4a7c15ULL * std::uint64_t(s + 1)));
    const bool pf = !starts[0].empty() && s >= pf_from && coin(g) < m_config.pushforward;
    int h = 0;  // predictions chained before the step learned
    if (pf) {
      h = std::uniform_int_distribution<int>(1, horizon)(g);
      while (starts[h - 1].empty()) --h;
    }
    std::vector<std::int64_t> idx(m_config.batch_size);
    if (pf) {
      const auto& from = starts[h - 1];
      std::uniform_int_distribution<std::size_t> pick_chain(0, from.size() - 1);
      for (auto& i : idx) i = from[pick_chain(m_impl->gen)];
    } else {
      for (auto& i : idx) i = pick(m_impl->gen);
    }
    ds.make_batch(idx, nz, mc, layout, in, out);
    if (m_config.window_shift)
      layout.set_window_origin(window_origin(m_config.seed, std::uint64_t(s), mc.window));
    for (int j = 1; j <= h; ++j) {
      // The state advances by the model's own prediction; the target becomes the rest of the
      // way to the state after sample i + j, in sample i's units.
      std::vector<std::int64_t> next(idx);
      std::vector<double> ratio;
      for (auto& i : next) {
        ratio.push_back(m_impl->amplitude[i + j] / m_impl->amplitude[i]);
        i += j;
      }
      ds.make_targets(next, nz, mc, out1);
      trainer.predict(layout, in, pred, mask);
      detail::pushforward_batch(in, out, out1, pred, ratio, layout.tokens_per_tile(), mc, nz);
    }
    if (m_config.noise > 0.0) add_noise(in, out, m_config.noise, mc, nz, m_impl->gen);
    const StepResult r = trainer.step(layout, in, out, mask);
    stats.loss.push_back(r.loss);
    stats.skipped_steps += r.skipped ? 1 : 0;
    m_impl->steps_done = s + 1;
    if (s + 1 < steps && stop && stop()) {
      stats.stopped = true;
      break;
    }
  }
  stats.steps_done = m_impl->steps_done;
}

int Surrogate::steps_done() const {
  return m_impl->steps_done;
}

TrainStats Surrogate::train(int steps, const std::function<bool()>& stop) {
  auto& ds = m_impl->dataset;
  std::int64_t local = ds.size(), fewest = 0;
  MPI_Allreduce(&local, &fewest, 1, MPI_INT64_T, MPI_MIN, m_decomp.comm());
  if (fewest < 1)
    throw Error("surrogate: train() called before every rank has a sample; call add_sample first");
  // Normalisation over the global dataset (sums all-reduced), identical on every rank.
  {
    const auto n = ds.normalization();
    const double count = double(ds.size()) * double(ds.cells());
    std::vector<double> sums;
    auto push = [&](const std::vector<double>& mean, const std::vector<double>& sd) {
      for (std::size_t c = 0; c < mean.size(); ++c) {
        sums.push_back(mean[c] * count);
        sums.push_back((sd[c] * sd[c] + mean[c] * mean[c]) * count);
      }
    };
    push(n.in_mean, n.in_std);
    push(n.out_mean, n.out_std);
    sums.push_back(count);
    MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_DOUBLE, MPI_SUM, m_decomp.comm());
    const double total = sums.back();
    auto pull = [&](std::size_t base, std::size_t channels, std::vector<double>& mean,
                    std::vector<double>& sd) {
      mean.resize(channels);
      sd.resize(channels);
      for (std::size_t c = 0; c < channels; ++c) {
        mean[c] = sums[base + 2 * c] / total;
        const double var = sums[base + 2 * c + 1] / total - mean[c] * mean[c];
        sd[c] = var > 1e-30 ? std::sqrt(var) : 1.0;
      }
    };
    if (m_impl->norm.empty()) {
      pull(0, n.in_mean.size(), m_impl->norm.in_mean, m_impl->norm.in_std);
      pull(2 * n.in_mean.size(), n.out_mean.size(), m_impl->norm.out_mean, m_impl->norm.out_std);
    }
  }
  if (m_config.extrapolation == TimeExtrapolation::linear) {
    const auto skip = linear_extrapolation(m_impl->norm, m_config.steps_per_prediction,
                                           m_config.model.out_channels, m_config.model.patch_cells());
    if (m_impl->master64)
      m_impl->trainer64->set_skip(skip);
    else
      m_impl->trainer32->set_skip(skip);
  }
  TrainStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  const bool from_start = m_impl->steps_done == 0;  // not a part-way training continued
  if (m_impl->master64)
    train_steps<double>(steps, stats, stop);
  else
    train_steps<float>(steps, stats, stop);
  m_impl->other_stale = true;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto& pv = m_impl->provenance;
  pv.samples = num_samples();
  if (!stats.loss.empty()) {
    // A continued training keeps the first part's initial loss (saved with its state).
    if (from_start || !std::isfinite(pv.initial_loss)) pv.initial_loss = stats.loss.front();
    pv.final_loss = stats.loss.back();
  }
  pv.steps_trained = (m_impl->master64 ? m_impl->trainer64->optimizer().step_count()
                                       : m_impl->trainer32->optimizer().step_count());
  return stats;
}

void Surrogate::predict(const std::vector<const HostField*>& inputs, const std::vector<HostField*>& outputs,
                        Precision p) {
  Kokkos::Profiling::pushRegion("mantissa::surrogates::Surrogate::predict");
  const auto& mc = m_config.model;
  if (m_impl->norm.empty())
    throw Error(
        "surrogate: predict() needs a trained or loaded model (no normalisation yet); train or load first");
  if (int(outputs.size()) != mc.out_channels)
    throw Error("surrogate: predict got " + std::to_string(outputs.size()) + " output fields, expected " +
                std::to_string(mc.out_channels));
  m_impl->sync();
  ++m_impl->predictions;
  const int C = mc.in_channels;
  const std::array<std::int64_t, 3> ps{mc.patch, mc.patch, mc.patch_z()};
  const Tiles t = tiles(m_decomp, mc, mc.halo_patches());
  const int me = m_decomp.rank();
  const Box& ob = t.owned[me];
  const auto oe = box_extent(ob);
  // This rank's owned input values, [c][z][y][x] over its owned box.
  auto mine = owned_values(inputs, C, "predict inputs");
  double a = 1.0;
  if (m_config.scaling == InputScaling::amplitude) {
    a = state_amplitude(m_decomp, mine, volume(ob));
    if (!(a > 0.0)) {
      // At rest (or not finite): no change, or NaN everywhere so that a NaN state is never hidden.
      const double v = a == 0.0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
      for (auto* f : outputs) {
        auto h = Kokkos::create_mirror_view(f->view());
        Kokkos::deep_copy(h, f->view());
        const auto& gh = f->ghosts();
        for (std::int64_t z = 0; z < oe[2]; ++z)
          for (std::int64_t y = 0; y < oe[1]; ++y)
            for (std::int64_t x = 0; x < oe[0]; ++x) h(z + gh[2], y + gh[1], x + gh[0]) = v;
        Kokkos::deep_copy(f->view(), h);
      }
      Kokkos::Profiling::popRegion();
      return;
    }
    for (std::int64_t k = 0; k < mc.out_channels * volume(ob); ++k) mine[k] /= a;
  }
  const auto ext = gather_extended(m_decomp, t, mine, C);
  const Box& eb = t.ext[me];
  const auto ee = box_extent(eb);
  // The extended region, normalised, as a batch of one tile.
  FieldBatch<double> fin("mantissa::surrogates::Surrogate::extended_in", 1, C, ee[2], ee[1], ee[0]);
  auto hin = Kokkos::create_mirror_view(fin);
  const auto& nz = m_impl->norm;
  for (int c = 0; c < C; ++c)
    for (std::int64_t z = 0; z < ee[2]; ++z)
      for (std::int64_t y = 0; y < ee[1]; ++y)
        for (std::int64_t x = 0; x < ee[0]; ++x)
          hin(0, c, z, y, x) =
              (ext[((c * ee[2] + z) * ee[1] + y) * ee[0] + x] - nz.in_mean[c]) / nz.in_std[c];
  Kokkos::deep_copy(fin, hin);
  TokenLayout layout(mc.dim, {ee[0] / ps[0], ee[1] / ps[1], ee[2] / ps[2]},
                     {{eb[0][0] / ps[0], eb[0][1] / ps[1], eb[0][2] / ps[2]}}, mc.window);
  if (m_config.window_shift)
    layout.set_window_origin(window_origin(~m_config.seed, m_impl->predictions - 1, mc.window));
  FieldBatch<double> fout("mantissa::surrogates::Surrogate::extended_out", 1, mc.out_channels, ee[2], ee[1],
                          ee[0]);
  const bool unchanged = m_impl->predicted_version == m_impl->weights_version;
  m_impl->predicted_version = m_impl->weights_version;
  // fp8 at inference: scales from the amax of the tensor being cast, over the owned tokens of all
  // ranks (the halo's outer tokens see cut windows), so the result depends neither on earlier
  // predictions (a warm-up on a state at rest) nor on the rank count.
  Context ctx{p, unchanged};
  ctx.fp8.comm = m_decomp.comm();
  ctx.fp8.counted_rows = owned_tokens(mc, eb, ob, 1);
  ctx.fp8.current = true;
  const LinearSkip skip =
      m_config.extrapolation == TimeExtrapolation::linear
          ? linear_extrapolation(nz, m_config.steps_per_prediction, mc.out_channels, mc.patch_cells())
          : LinearSkip();
  // One forward pass in the model's arithmetic type T (double for fp64, float otherwise).
  const auto forward = [&](auto& model, auto zero) {
    using T = decltype(zero);
    auto tokens =
        make_matrix<T>("mantissa::surrogates::Surrogate::tokens", layout.num_tokens(), mc.in_features());
    Matrix<T> out;
    patchify(fin, mc.patch, mc.patch_z(), tokens);
    model.forward(ctx, layout, tokens, out);
    add_skip(skip, tokens, out);
    unpatchify(out, mc.patch, mc.patch_z(), fout);
  };
  if (p == Precision::fp64)
    forward(*m_impl->model64, 0.0);
  else
    forward(*m_impl->model32, 0.0f);
  auto hout = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fout);
  for (int c = 0; c < mc.out_channels; ++c) {
    auto* f = outputs[c];
    auto h = Kokkos::create_mirror_view(f->view());
    Kokkos::deep_copy(h, f->view());
    const auto& gh = f->ghosts();
    for (std::int64_t z = 0; z < oe[2]; ++z)
      for (std::int64_t y = 0; y < oe[1]; ++y)
        for (std::int64_t x = 0; x < oe[0]; ++x)
          h(z + gh[2], y + gh[1], x + gh[0]) =
              (hout(0, c, z + ob[0][2] - eb[0][2], y + ob[0][1] - eb[0][1], x + ob[0][0] - eb[0][0]) *
                   nz.out_std[c] +
               nz.out_mean[c]) *
              a;
    Kokkos::deep_copy(f->view(), h);
  }
  Kokkos::Profiling::popRegion();
}

std::vector<std::pair<std::string, std::int64_t>> model_definition(const SurrogateConfig& c) {
  return {{"steps_per_prediction", c.steps_per_prediction},
          {"scaling", c.scaling == InputScaling::amplitude ? 1 : 0},
          {"extrapolation", c.extrapolation == TimeExtrapolation::linear ? 1 : 0},
          {"window_shift", c.window_shift ? 1 : 0}};
}

// The training's own state beside the weights, as the file's generator text: the steps done and
// every rank's sampling generator (each rank's stream starts at seed + rank), one per line:
//   mantissa-training 1 / steps_done N / ranks R / R lines of generator state.
// A file without the header (written before it) holds rank 0's generator alone.
namespace {
constexpr const char* k_training_header = "mantissa-training 1";

std::string gather_training_state(const std::mt19937_64& gen, int steps_done, MPI_Comm comm) {
  std::ostringstream mine;
  mine << gen;
  const std::string text = mine.str();
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int len = int(text.size());
  std::vector<int> lens(std::size_t(size), 0), offs(std::size_t(size), 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offs[std::size_t(r)] = total;
      total += lens[std::size_t(r)];
    }
    all.resize(std::size_t(total));
  }
  MPI_Gatherv(text.data(), len, MPI_CHAR, rank == 0 ? all.data() : nullptr, lens.data(), offs.data(),
              MPI_CHAR, 0, comm);
  if (rank != 0) return {};
  std::ostringstream os;
  os << k_training_header << "\nsteps_done " << steps_done << "\nranks " << size << "\n";
  for (int r = 0; r < size; ++r)
    os << all.substr(std::size_t(offs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])) << "\n";
  return os.str();
}

// Sets this rank's generator and the steps done from the text (when the file's rank count is
// this run's; otherwise the generator keeps its seed, which only a continued training reads).
void scatter_training_state(const std::string& text, std::mt19937_64& gen, int& steps_done, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::istringstream is(text);
  std::string line;
  std::getline(is, line);
  if (line != k_training_header) {
    steps_done = 0;
    if (rank == 0 && !text.empty()) {
      std::istringstream g(text);
      g >> gen;
    }
    return;
  }
  std::string key;
  int ranks = 0;
  is >> key >> steps_done >> key >> ranks;
  std::getline(is, line);
  for (int r = 0; r < ranks && std::getline(is, line); ++r)
    if (ranks == size && r == rank) {
      std::istringstream g(line);
      g >> gen;
    }
}
}  // namespace

void Surrogate::save(const std::string& file) const {
  const auto defines = model_definition(m_config);
  std::string state = gather_training_state(m_impl->gen, m_impl->steps_done, m_decomp.comm());
  // Rank 0 writes, with every rank's generator state; a failure (a full disk: io names the file
  // and the cause) is thrown on every rank, so that none waits for the others.
  std::string err;
  if (m_decomp.rank() == 0) {
    try {
      if (m_impl->master64)
        save_surrogate<double>(file, {m_impl->model64.get(), m_impl->trainer64.get(), &m_impl->norm, &state,
                                      &defines, &m_impl->provenance});
      else
        save_surrogate<float>(file, {m_impl->model32.get(), m_impl->trainer32.get(), &m_impl->norm, &state,
                                     &defines, &m_impl->provenance});
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  int n = static_cast<int>(err.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, m_decomp.comm());
  err.resize(static_cast<std::size_t>(n));
  MPI_Bcast(err.data(), n, MPI_CHAR, 0, m_decomp.comm());
  if (!err.empty()) throw Error(err);
}

void Surrogate::load(const std::string& file) {
  const auto defines = model_definition(m_config);
  std::string state;
  if (m_impl->master64)
    load_surrogate<double>(file, {m_impl->model64.get(), m_impl->trainer64.get(), &m_impl->norm, &state,
                                  &defines, &m_impl->provenance});
  else
    load_surrogate<float>(file, {m_impl->model32.get(), m_impl->trainer32.get(), &m_impl->norm, &state,
                                 &defines, &m_impl->provenance});
  scatter_training_state(state, m_impl->gen, m_impl->steps_done, m_decomp.comm());
  m_impl->other_stale = true;
}

double Surrogate::flops_per_prediction() const {
  const auto& g = m_config.model.global_patches;
  return m_impl->model32->forward_flops_per_token() * double(g[0] * g[1] * g[2]);
}

const Provenance& Surrogate::provenance() const {
  return m_impl->provenance;
}
void Surrogate::set_provenance(const Provenance& p) {
  m_impl->provenance = p;
}

const Normalization& Surrogate::normalization() const {
  return m_impl->norm;
}
void Surrogate::set_normalization(const Normalization& n) {
  const auto& mc = m_config.model;
  if (int(n.in_mean.size()) != mc.in_channels || int(n.in_std.size()) != mc.in_channels ||
      int(n.out_mean.size()) != mc.out_channels || int(n.out_std.size()) != mc.out_channels)
    throw Error("surrogate: normalisation has the wrong number of channels for surrogate.in_channels = " +
                std::to_string(mc.in_channels) + ", out_channels = " + std::to_string(mc.out_channels));
  m_impl->norm = n;
}

std::string Surrogate::describe() const {
  std::ostringstream os;
  os << m_config.model.describe() << "; " << m_impl->model32->num_parameters() << " parameters; trains in "
     << to_string(m_config.train_precision) << ", K = " << m_config.steps_per_prediction
     << " steps per prediction; halo " << m_config.model.halo_patches() << " patches; "
     << (m_config.scaling == InputScaling::amplitude ? "state scaled by its amplitude" : "dataset scaling");
  if (m_config.extrapolation == TimeExtrapolation::linear)
    os << "; predicts the change beyond linear extrapolation";
  if (m_config.window_shift) os << "; random window shift per step";
  if (m_config.noise > 0.0) os << "; training noise " << m_config.noise;
  if (m_config.pushforward > 0.0)
    os << "; pushforward " << m_config.pushforward
       << (m_config.pushforward_steps > 1 ? " over 1-" + std::to_string(m_config.pushforward_steps) + " steps"
                                          : std::string());
  os << "\n"
     << "GEMM paths: " << gemm_backends();
  return os.str();
}

}  // namespace mantissa::surrogates
