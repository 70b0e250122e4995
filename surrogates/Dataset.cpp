#include <surrogates/Dataset.hpp>
#include <surrogates/Patches.hpp>

#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace mantissa::surrogates {

Dataset::Dataset(int in_channels, int out_channels, std::array<std::int64_t, 3> extent)
    : m_cin(in_channels), m_cout(out_channels), m_extent(extent) {}

void Dataset::add(std::vector<double> input, std::vector<double> target, std::array<std::int64_t, 3> offset) {
  if (std::int64_t(input.size()) != m_cin * cells() || std::int64_t(target.size()) != m_cout * cells())
    throw Error("surrogate dataset: a sample has " + std::to_string(input.size()) + " input and " +
                std::to_string(target.size()) + " target values; the dataset expects " +
                std::to_string(m_cin * cells()) + " and " + std::to_string(m_cout * cells()) +
                " (channels x " + std::to_string(m_extent[0]) + "x" + std::to_string(m_extent[1]) + "x" +
                std::to_string(m_extent[2]) + " cells)");
  m_inputs.push_back(std::move(input));
  m_targets.push_back(std::move(target));
  m_offsets.push_back(offset);
}

Normalization Dataset::normalization() const {
  if (m_inputs.empty()) throw Error("surrogate dataset: no samples; add samples before training");
  Normalization n;
  auto stats = [&](const std::vector<std::vector<double>>& data, int channels, std::vector<double>& mean,
                   std::vector<double>& stdev) {
    mean.assign(channels, 0.0);
    stdev.assign(channels, 0.0);
    const double count = double(data.size()) * double(cells());
    for (int c = 0; c < channels; ++c) {
      double s = 0.0, s2 = 0.0;
      for (const auto& d : data)
        for (std::int64_t k = 0; k < cells(); ++k) s += d[c * cells() + k];
      const double mu = s / count;
      for (const auto& d : data)
        for (std::int64_t k = 0; k < cells(); ++k)
          s2 += (d[c * cells() + k] - mu) * (d[c * cells() + k] - mu);
      mean[c] = mu;
      // A constant channel (e.g. a uniform velocity model) keeps scale 1 instead of dividing by 0.
      const double sd = std::sqrt(s2 / count);
      stdev[c] = sd > 1e-30 ? sd : 1.0;
    }
  };
  stats(m_inputs, m_cin, n.in_mean, n.in_std);
  stats(m_targets, m_cout, n.out_mean, n.out_std);
  return n;
}

namespace {
// The tile's extent in patches; throws when a tile is not a whole number of patches.
std::array<std::int64_t, 3> patch_extent(const std::array<std::int64_t, 3>& extent,
                                         const ModelConfig& config) {
  const std::array<int, 3> ps{config.patch, config.patch, config.patch_z()};
  std::array<std::int64_t, 3> patches{};
  for (int a = 0; a < 3; ++a) {
    if (extent[a] % ps[a] != 0)
      throw Error("surrogate dataset: tiles of " + std::to_string(extent[a]) + " cells along axis " +
                  std::to_string(a) + " are not a multiple of surrogate.patch = " + std::to_string(ps[a]));
    patches[a] = extent[a] / ps[a];
  }
  return patches;
}

// Samples `indices` of `data` (channels x cells each), normalised by channel, as tokens.
template <class T>
void normalised_tokens(const std::vector<std::vector<double>>& data, int channels,
                       const std::array<std::int64_t, 3>& extent, const std::vector<std::int64_t>& indices,
                       const std::vector<double>& mean, const std::vector<double>& stdev,
                       const ModelConfig& config, std::int64_t tokens, int features, const char* label,
                       Matrix<T>& out) {
  const std::int64_t B = indices.size(), nc = extent[0] * extent[1] * extent[2];
  // Every value is written below: no zero fill.
  FieldBatch<double> f(Kokkos::view_alloc(std::string("mantissa::surrogates::Dataset::batch_") + label,
                                          Kokkos::WithoutInitializing),
                       B, channels, extent[2], extent[1], extent[0]);
  auto h = Kokkos::create_mirror_view(f);
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& d = data[indices[b]];
    for (int c = 0; c < channels; ++c)
      for (std::int64_t k = 0; k < nc; ++k)
        h.data()[(b * channels + c) * nc + k] = (d[c * nc + k] - mean[c]) / stdev[c];
  }
  Kokkos::deep_copy(f, h);
  ensure_shape(out, std::string("mantissa::surrogates::Dataset::tokens_") + label, tokens, features);
  patchify(f, config.patch, config.patch_z(), out);
}
}  // namespace

template <class T>
void Dataset::make_batch(const std::vector<std::int64_t>& indices, const Normalization& norm,
                         const ModelConfig& config, TokenLayout& layout, Matrix<T>& inputs,
                         Matrix<T>& targets) const {
  check_channels(config);
  const auto patches = patch_extent(m_extent, config);
  std::vector<std::array<std::int64_t, 3>> offs;
  for (const auto i : indices) {
    const auto& o = m_offsets.at(i);
    offs.push_back({o[0] / config.patch, o[1] / config.patch, o[2] / config.patch_z()});
  }
  layout = TokenLayout(config.dim, patches, offs, config.window);
  normalised_tokens(m_inputs, m_cin, m_extent, indices, norm.in_mean, norm.in_std, config,
                    layout.num_tokens(), config.in_features(), "in", inputs);
  normalised_tokens(m_targets, m_cout, m_extent, indices, norm.out_mean, norm.out_std, config,
                    layout.num_tokens(), config.out_features(), "out", targets);
}

template <class T>
void Dataset::make_targets(const std::vector<std::int64_t>& indices, const Normalization& norm,
                           const ModelConfig& config, Matrix<T>& targets) const {
  check_channels(config);
  const auto patches = patch_extent(m_extent, config);
  for (const auto i : indices) (void)m_offsets.at(i);  // an index out of range throws, as in make_batch
  const std::int64_t tokens = std::int64_t(indices.size()) * patches[0] * patches[1] * patches[2];
  normalised_tokens(m_targets, m_cout, m_extent, indices, norm.out_mean, norm.out_std, config, tokens,
                    config.out_features(), "out", targets);
}

void Dataset::check_channels(const ModelConfig& config) const {
  if (config.in_channels != m_cin || config.out_channels != m_cout)
    throw Error("surrogate dataset: samples have " + std::to_string(m_cin) + " -> " + std::to_string(m_cout) +
                " channels, surrogate.in_channels/out_channels say " + std::to_string(config.in_channels) +
                " -> " + std::to_string(config.out_channels));
}

template void Dataset::make_batch<float>(const std::vector<std::int64_t>&, const Normalization&,
                                         const ModelConfig&, TokenLayout&, Matrix<float>&,
                                         Matrix<float>&) const;
template void Dataset::make_batch<double>(const std::vector<std::int64_t>&, const Normalization&,
                                          const ModelConfig&, TokenLayout&, Matrix<double>&,
                                          Matrix<double>&) const;
template void Dataset::make_targets<float>(const std::vector<std::int64_t>&, const Normalization&,
                                           const ModelConfig&, Matrix<float>&) const;
template void Dataset::make_targets<double>(const std::vector<std::int64_t>&, const Normalization&,
                                            const ModelConfig&, Matrix<double>&) const;

namespace {
std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}
constexpr const char* k_format = "mantissa-surrogate-dataset";
constexpr std::int64_t k_format_version = 1;
}  // namespace

void Dataset::write_hdf5(const std::string& file) const {
  // Durable and checksummed (mantissa::io): a failure leaves an earlier file as it was.
  io::PendingFile out(file);
  io::H5File f = io::H5File::create(out);
  f.set("format", k_format);
  f.set("format_version", k_format_version);
  auto samples = [&](const char* name, const std::vector<std::vector<double>>& data, int channels) {
    std::vector<double> flat;
    for (const auto& d : data) flat.insert(flat.end(), d.begin(), d.end());
    f.write(name, {std::int64_t(data.size()), std::int64_t(channels), m_extent[2], m_extent[1], m_extent[0]},
            flat.data());
  };
  samples("inputs", m_inputs, m_cin);
  samples("targets", m_targets, m_cout);
  // Global cell offset (x, y, z) of every sample's tile: position encodings and window
  // boundaries follow global coordinates, so a dataset read back must keep them.
  std::vector<std::int64_t> offs;
  for (const auto& o : m_offsets) offs.insert(offs.end(), o.begin(), o.end());
  f.write("offsets", {std::int64_t(m_offsets.size()), 3}, offs.data());
  f.close();
  out.commit();
}

Dataset Dataset::read_hdf5(const std::string& file) {
  const std::string where = "surrogate dataset '" + file + "'";
  auto refuse = [&](const std::string& what) {
    throw io::FileError(io::FileProblem::invalid_content, file, where + ": " + what);
  };
  // Files written by write_hdf5 carry a format and checksums (verified); offline data written
  // by other tools (h5py) may not, and is read as it is.
  io::H5File f = [&] {
    try {
      return io::H5File::open(file, io::Verify::checksums_if_present);
    } catch (const io::FileError& e) {
      throw io::FileError(e.problem(), file,
                          "surrogate dataset (surrogate.dataset): " + std::string(e.what()));
    }
  }();
  if (f.has_attribute("format")) f.require_format(k_format, k_format_version);
  const char* sample_layout = "[samples, channels, nz, ny, nx]";
  for (const char* name : {"inputs", "targets"})
    if (!f.has(name))
      throw io::FileError(
          io::FileProblem::missing_object, file,
          where + " has no dataset '" + name + "' " + sample_layout + "; write it with Dataset::write_hdf5");
  const auto di = f.shape("inputs"), dt = f.shape("targets");
  if (di.size() != 5 || dt.size() != 5)
    refuse("datasets 'inputs' " + shape_text(di) + " and 'targets' " + shape_text(dt) +
           " must both have rank 5 " + sample_layout);
  if (di[0] != dt[0] || di[2] != dt[2] || di[3] != dt[3] || di[4] != dt[4])
    refuse("datasets 'inputs' " + shape_text(di) + " and 'targets' " + shape_text(dt) +
           " differ in samples or extent (all but the channel axis must agree)");
  for (int a = 1; a < 5; ++a)
    if (di[a] == 0 || dt[a] == 0)
      refuse("datasets 'inputs' " + shape_text(di) + " and 'targets' " + shape_text(dt) +
             " need at least one channel and one cell along every axis");
  const std::vector<double> vin = f.read<double>("inputs"), vout = f.read<double>("targets");
  for (const auto* v : {&vin, &vout})
    for (std::size_t k = 0; k < v->size(); ++k)
      if (!std::isfinite((*v)[k]))
        refuse("dataset '" + std::string(v == &vin ? "inputs" : "targets") + "' holds " +
               std::to_string((*v)[k]) + " at flat index " + std::to_string(k) +
               "; training data must be finite: fix or regenerate the file");
  // Offsets: absent in files written before they were stored; those tiles start at the origin.
  std::vector<std::int64_t> offs(std::size_t(di[0] * 3), 0);
  if (f.has("offsets")) {
    std::vector<std::int64_t> dof;
    offs = f.read<std::int64_t>("offsets", &dof);
    if (dof.size() != 2 || dof[0] != di[0] || dof[1] != 3)
      refuse("dataset 'offsets' has shape " + shape_text(dof) + ", expected [" + std::to_string(di[0]) +
             ", 3] (x, y, z cells of each sample's tile)");
  }
  Dataset ds(int(di[1]), int(dt[1]), {di[4], di[3], di[2]});
  const std::size_t ni = std::size_t(di[1] * di[2] * di[3] * di[4]),
                    no = std::size_t(dt[1] * dt[2] * dt[3] * dt[4]);
  for (std::size_t s = 0; s < std::size_t(di[0]); ++s)
    ds.add(
        std::vector<double>(vin.begin() + std::ptrdiff_t(s * ni), vin.begin() + std::ptrdiff_t((s + 1) * ni)),
        std::vector<double>(vout.begin() + std::ptrdiff_t(s * no),
                            vout.begin() + std::ptrdiff_t((s + 1) * no)),
        {offs[3 * s], offs[3 * s + 1], offs[3 * s + 2]});
  return ds;
}

}  // namespace mantissa::surrogates
