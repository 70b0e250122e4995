#include <surrogates/Patches.hpp>
#include <surrogates/Surrogate.hpp>

#include <chrono>
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
  Dataset dataset;
  Normalization norm;
  std::mt19937_64 gen;

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
}

Surrogate::~Surrogate() = default;

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
  m_impl->dataset.add(owned_values(inputs, m_config.model.in_channels, "add_sample inputs"),
                      owned_values(targets, m_config.model.out_channels, "add_sample targets"),
                      m_decomp.offset());
}

std::int64_t Surrogate::num_samples() const {
  return m_impl->dataset.size();
}

TrainStats Surrogate::train(int steps) {
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
  TrainStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  TokenLayout layout;
  Matrix<double> in64, out64;
  Matrix<float> in32, out32;
  std::uniform_int_distribution<std::int64_t> pick(0, ds.size() - 1);
  for (int s = 0; s < steps; ++s) {
    std::vector<std::int64_t> idx(m_config.batch_size);
    for (auto& i : idx) i = pick(m_impl->gen);
    StepResult r;
    if (m_impl->master64) {
      ds.make_batch(idx, m_impl->norm, m_config.model, layout, in64, out64);
      r = m_impl->trainer64->step(layout, in64, out64);
    } else {
      ds.make_batch(idx, m_impl->norm, m_config.model, layout, in32, out32);
      r = m_impl->trainer32->step(layout, in32, out32);
    }
    stats.loss.push_back(r.loss);
    stats.skipped_steps += r.skipped ? 1 : 0;
  }
  m_impl->other_stale = true;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  const int C = mc.in_channels;
  const std::array<std::int64_t, 3> ps{mc.patch, mc.patch, mc.patch_z()};
  const int halo = mc.halo_patches();
  const Grid& g = m_decomp.grid();
  auto extended = [&](const std::array<std::int64_t, 3>& off, const std::array<std::int64_t, 3>& ext) {
    Box b;
    for (int a = 0; a < 3; ++a) {
      const std::int64_t h = a < g.dim ? halo * ps[a] : 0;
      b[0][a] = std::max<std::int64_t>(0, off[a] - h);
      b[1][a] = std::min<std::int64_t>(g.n[a], off[a] + ext[a] + h);
    }
    return b;
  };
  auto owned_box = [&](const std::array<std::int64_t, 3>& off, const std::array<std::int64_t, 3>& ext) {
    return Box{off, {off[0] + ext[0], off[1] + ext[1], off[2] + ext[2]}};
  };
  const int size = m_decomp.size();
  std::vector<Box> owned(size), ext(size);
  for (int r = 0; r < size; ++r) {
    std::array<int, 3> coords{0, 0, 0};
    MPI_Cart_coords(m_decomp.comm(), r, 3, coords.data());
    const auto off = m_decomp.offset_of(coords), e = m_decomp.extent_of(coords);
    owned[r] = owned_box(off, e);
    ext[r] = extended(off, e);
  }
  const int me = m_decomp.rank();
  // This rank's owned input values, [c][z][y][x] over its owned box.
  const auto mine = owned_values(inputs, C, "predict inputs");
  const Box& ob = owned[me];
  const std::array<std::int64_t, 3> oe{ob[1][0] - ob[0][0], ob[1][1] - ob[0][1], ob[1][2] - ob[0][2]};
  // Pack, for every rank r, the part of my owned box inside r's extended box.
  std::vector<int> scount(size), sdisp(size), rcount(size), rdisp(size);
  std::vector<double> sendbuf;
  for (int r = 0; r < size; ++r) {
    const Box b = intersect(ext[r], ob);
    sdisp[r] = int(sendbuf.size());
    for (int c = 0; c < C; ++c)
      for (std::int64_t z = b[0][2]; z < b[1][2]; ++z)
        for (std::int64_t y = b[0][1]; y < b[1][1]; ++y)
          for (std::int64_t x = b[0][0]; x < b[1][0]; ++x)
            sendbuf.push_back(
                mine[((c * oe[2] + (z - ob[0][2])) * oe[1] + (y - ob[0][1])) * oe[0] + (x - ob[0][0])]);
    scount[r] = int(sendbuf.size()) - sdisp[r];
  }
  const Box& eb = ext[me];
  const std::array<std::int64_t, 3> ee{eb[1][0] - eb[0][0], eb[1][1] - eb[0][1], eb[1][2] - eb[0][2]};
  int total = 0;
  for (int r = 0; r < size; ++r) {
    rdisp[r] = total;
    rcount[r] = int(C * volume(intersect(eb, owned[r])));
    total += rcount[r];
  }
  std::vector<double> recvbuf(total);
  MPI_Alltoallv(sendbuf.data(), scount.data(), sdisp.data(), MPI_DOUBLE, recvbuf.data(), rcount.data(),
                rdisp.data(), MPI_DOUBLE, m_decomp.comm());
  // Assemble the extended region, normalised, as a batch of one tile.
  FieldBatch<double> fin("mantissa::surrogates::Surrogate::extended_in", 1, C, ee[2], ee[1], ee[0]);
  auto hin = Kokkos::create_mirror_view(fin);
  const auto& nz = m_impl->norm;
  for (int r = 0; r < size; ++r) {
    const Box b = intersect(eb, owned[r]);
    std::int64_t k = rdisp[r];
    for (int c = 0; c < C; ++c)
      for (std::int64_t z = b[0][2]; z < b[1][2]; ++z)
        for (std::int64_t y = b[0][1]; y < b[1][1]; ++y)
          for (std::int64_t x = b[0][0]; x < b[1][0]; ++x)
            hin(0, c, z - eb[0][2], y - eb[0][1], x - eb[0][0]) =
                (recvbuf[k++] - nz.in_mean[c]) / nz.in_std[c];
  }
  Kokkos::deep_copy(fin, hin);
  const TokenLayout layout(mc.dim, {ee[0] / ps[0], ee[1] / ps[1], ee[2] / ps[2]},
                           {{eb[0][0] / ps[0], eb[0][1] / ps[1], eb[0][2] / ps[2]}}, mc.window);
  FieldBatch<double> fout("mantissa::surrogates::Surrogate::extended_out", 1, mc.out_channels, ee[2], ee[1],
                          ee[0]);
  const bool unchanged = m_impl->predicted_version == m_impl->weights_version;
  m_impl->predicted_version = m_impl->weights_version;
  if (p == Precision::fp64) {
    auto tokens =
        make_matrix<double>("mantissa::surrogates::Surrogate::tokens", layout.num_tokens(), mc.in_features());
    Matrix<double> out;
    patchify(fin, mc.patch, mc.patch_z(), tokens);
    m_impl->model64->forward(Context{p, unchanged}, layout, tokens, out);
    unpatchify(out, mc.patch, mc.patch_z(), fout);
  } else {
    auto tokens =
        make_matrix<float>("mantissa::surrogates::Surrogate::tokens", layout.num_tokens(), mc.in_features());
    Matrix<float> out;
    patchify(fin, mc.patch, mc.patch_z(), tokens);
    m_impl->model32->forward(Context{p, unchanged}, layout, tokens, out);
    unpatchify(out, mc.patch, mc.patch_z(), fout);
  }
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
              hout(0, c, z + ob[0][2] - eb[0][2], y + ob[0][1] - eb[0][1], x + ob[0][0] - eb[0][0]) *
                  nz.out_std[c] +
              nz.out_mean[c];
    Kokkos::deep_copy(f->view(), h);
  }
  Kokkos::Profiling::popRegion();
}

void Surrogate::save(const std::string& file) const {
  std::ostringstream rng;
  rng << m_impl->gen;
  std::string state = rng.str();
  // Rank 0 writes; the generator state saved is rank 0's (each rank's stream is seed + rank).
  if (m_decomp.rank() == 0) {
    if (m_impl->master64)
      save_surrogate<double>(file, {m_impl->model64.get(), m_impl->trainer64.get(), &m_impl->norm, &state});
    else
      save_surrogate<float>(file, {m_impl->model32.get(), m_impl->trainer32.get(), &m_impl->norm, &state});
  }
  int ok = 1;
  MPI_Bcast(&ok, 1, MPI_INT, 0, m_decomp.comm());
}

void Surrogate::load(const std::string& file) {
  std::string state;
  if (m_impl->master64)
    load_surrogate<double>(file, {m_impl->model64.get(), m_impl->trainer64.get(), &m_impl->norm, &state});
  else
    load_surrogate<float>(file, {m_impl->model32.get(), m_impl->trainer32.get(), &m_impl->norm, &state});
  if (!state.empty() && m_decomp.rank() == 0) {
    std::istringstream is(state);
    is >> m_impl->gen;
  }
  m_impl->other_stale = true;
}

double Surrogate::flops_per_prediction() const {
  const auto& g = m_config.model.global_patches;
  return m_impl->model32->forward_flops_per_token() * double(g[0] * g[1] * g[2]);
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
     << " steps per prediction; halo " << m_config.model.halo_patches() << " patches\n"
     << "GEMM paths: " << gemm_backends();
  return os.str();
}

}  // namespace mantissa::surrogates
