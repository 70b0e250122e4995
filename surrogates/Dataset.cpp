#include <surrogates/Dataset.hpp>
#include <surrogates/Patches.hpp>

#include <hdf5.h>

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

template <class T>
void Dataset::make_batch(const std::vector<std::int64_t>& indices, const Normalization& norm,
                         const ModelConfig& config, TokenLayout& layout, Matrix<T>& inputs,
                         Matrix<T>& targets) const {
  const int p = config.patch, pz = config.patch_z();
  if (config.in_channels != m_cin || config.out_channels != m_cout)
    throw Error("surrogate dataset: samples have " + std::to_string(m_cin) + " -> " + std::to_string(m_cout) +
                " channels, surrogate.in_channels/out_channels say " + std::to_string(config.in_channels) +
                " -> " + std::to_string(config.out_channels));
  const std::array<int, 3> ps{p, p, pz};
  std::array<std::int64_t, 3> patches{};
  for (int a = 0; a < 3; ++a) {
    if (m_extent[a] % ps[a] != 0)
      throw Error("surrogate dataset: tiles of " + std::to_string(m_extent[a]) + " cells along axis " +
                  std::to_string(a) + " are not a multiple of surrogate.patch = " + std::to_string(ps[a]));
    patches[a] = m_extent[a] / ps[a];
  }
  std::vector<std::array<std::int64_t, 3>> offs;
  const std::int64_t B = indices.size(), nc = cells();
  FieldBatch<double> fin("mantissa::surrogates::Dataset::batch_in", B, m_cin, m_extent[2], m_extent[1],
                         m_extent[0]);
  FieldBatch<double> fout("mantissa::surrogates::Dataset::batch_out", B, m_cout, m_extent[2], m_extent[1],
                          m_extent[0]);
  auto hin = Kokkos::create_mirror_view(fin);
  auto hout = Kokkos::create_mirror_view(fout);
  for (std::int64_t b = 0; b < B; ++b) {
    const auto i = indices[b];
    const auto& o = m_offsets.at(i);
    offs.push_back({o[0] / ps[0], o[1] / ps[1], o[2] / ps[2]});
    for (int c = 0; c < m_cin; ++c)
      for (std::int64_t k = 0; k < nc; ++k)
        hin.data()[(b * m_cin + c) * nc + k] = (m_inputs[i][c * nc + k] - norm.in_mean[c]) / norm.in_std[c];
    for (int c = 0; c < m_cout; ++c)
      for (std::int64_t k = 0; k < nc; ++k)
        hout.data()[(b * m_cout + c) * nc + k] =
            (m_targets[i][c * nc + k] - norm.out_mean[c]) / norm.out_std[c];
  }
  Kokkos::deep_copy(fin, hin);
  Kokkos::deep_copy(fout, hout);
  layout = TokenLayout(config.dim, patches, offs, config.window);
  ensure_shape(inputs, "mantissa::surrogates::Dataset::tokens_in", layout.num_tokens(), config.in_features());
  ensure_shape(targets, "mantissa::surrogates::Dataset::tokens_out", layout.num_tokens(),
               config.out_features());
  patchify(fin, p, pz, inputs);
  patchify(fout, p, pz, targets);
}

template void Dataset::make_batch<float>(const std::vector<std::int64_t>&, const Normalization&,
                                         const ModelConfig&, TokenLayout&, Matrix<float>&,
                                         Matrix<float>&) const;
template void Dataset::make_batch<double>(const std::vector<std::int64_t>&, const Normalization&,
                                          const ModelConfig&, TokenLayout&, Matrix<double>&,
                                          Matrix<double>&) const;

namespace {
void h5check(herr_t rc, const std::string& what) {
  if (rc < 0) throw Error("surrogate dataset: HDF5 failed to " + what);
}

// Closes an HDF5 handle on every path out, including a throw.
struct H5Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~H5Handle() {
    if (id >= 0) close(id);
  }
};

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}
}  // namespace

void Dataset::write_hdf5(const std::string& file) const {
  hid_t fid = -1;
  H5E_BEGIN_TRY {
    fid = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  }
  H5E_END_TRY;
  if (fid < 0)
    throw Error("surrogate dataset: cannot create '" + file +
                "'; check the directory exists and is writable");
  H5Handle f{fid, H5Fclose};
  auto write = [&](const char* name, hid_t file_type, hid_t mem_type, const std::vector<hsize_t>& dims,
                   const void* data) {
    H5Handle s{H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose};
    H5Handle d{H5Dcreate2(f.id, name, file_type, s.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
    if (d.id < 0)
      throw Error("surrogate dataset: cannot create dataset '" + std::string(name) + "' in '" + file + "'");
    h5check(H5Dwrite(d.id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
            std::string("write '") + name + "' to '" + file + "'");
  };
  auto samples = [&](const char* name, const std::vector<std::vector<double>>& data, int channels) {
    std::vector<double> flat;
    for (const auto& d : data) flat.insert(flat.end(), d.begin(), d.end());
    write(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
          {hsize_t(data.size()), hsize_t(channels), hsize_t(m_extent[2]), hsize_t(m_extent[1]),
           hsize_t(m_extent[0])},
          flat.data());
  };
  samples("inputs", m_inputs, m_cin);
  samples("targets", m_targets, m_cout);
  // Global cell offset (x, y, z) of every sample's tile: position encodings and window
  // boundaries follow global coordinates, so a dataset read back must keep them.
  std::vector<std::int64_t> offs;
  for (const auto& o : m_offsets) offs.insert(offs.end(), o.begin(), o.end());
  write("offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, {hsize_t(m_offsets.size()), 3}, offs.data());
}

Dataset Dataset::read_hdf5(const std::string& file) {
  hid_t fid = -1;
  // Silence HDF5's own error stack: the exception below says what is wrong.
  H5E_BEGIN_TRY {
    if (H5Fis_hdf5(file.c_str()) > 0) fid = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  }
  H5E_END_TRY;
  if (fid < 0)
    throw Error("surrogate dataset: cannot open '" + file +
                "' as an HDF5 file (missing, unreadable or not HDF5); check the path (surrogate.dataset)");
  H5Handle f{fid, H5Fclose};
  auto read = [&](const char* name, int rank, hid_t mem_type, std::vector<hsize_t>& dims, void* out,
                  std::size_t capacity, const char* layout) {
    if (H5Lexists(f.id, name, H5P_DEFAULT) <= 0)
      throw Error("surrogate dataset: '" + file + "' has no dataset '" + name + "' " + layout +
                  "; write it with Dataset::write_hdf5");
    H5Handle d{H5Dopen2(f.id, name, H5P_DEFAULT), H5Dclose};
    H5Handle s{H5Dget_space(d.id), H5Sclose};
    const int nd = H5Sget_simple_extent_ndims(s.id);
    dims.assign(std::max(nd, 0), 0);
    H5Sget_simple_extent_dims(s.id, dims.data(), nullptr);
    if (nd != rank)
      throw Error("surrogate dataset: '" + file + "' dataset '" + name + "' has shape " + shape_text(dims) +
                  ", expected rank " + std::to_string(rank) + " " + layout);
    if (out == nullptr) return;
    std::size_t n = 1;
    for (auto v : dims) n *= v;
    if (n > capacity)
      throw Error("surrogate dataset: internal: buffer too small for '" + std::string(name) + "'");
    h5check(H5Dread(d.id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out),
            std::string("read '") + name + "' from '" + file + "'");
  };
  const char* sample_layout = "[samples, channels, nz, ny, nx]";
  std::vector<hsize_t> di, dt;
  read("inputs", 5, H5T_NATIVE_DOUBLE, di, nullptr, 0, sample_layout);
  read("targets", 5, H5T_NATIVE_DOUBLE, dt, nullptr, 0, sample_layout);
  if (di[0] != dt[0] || di[2] != dt[2] || di[3] != dt[3] || di[4] != dt[4])
    throw Error("surrogate dataset: '" + file + "' datasets 'inputs' " + shape_text(di) + " and 'targets' " +
                shape_text(dt) + " differ in samples or extent (all but the channel axis must agree)");
  for (int a = 1; a < 5; ++a)
    if (di[a] == 0 || dt[a] == 0)
      throw Error("surrogate dataset: '" + file + "' datasets 'inputs' " + shape_text(di) +
                  " and 'targets' " + shape_text(dt) +
                  " need at least one channel and one cell along every axis");
  std::vector<double> vin(di[0] * di[1] * di[2] * di[3] * di[4]), vout(dt[0] * dt[1] * dt[2] * dt[3] * dt[4]);
  read("inputs", 5, H5T_NATIVE_DOUBLE, di, vin.data(), vin.size(), sample_layout);
  read("targets", 5, H5T_NATIVE_DOUBLE, dt, vout.data(), vout.size(), sample_layout);
  // Offsets: absent in files written before they were stored; those tiles start at the origin.
  std::vector<std::int64_t> offs(di[0] * 3, 0);
  if (H5Lexists(f.id, "offsets", H5P_DEFAULT) > 0) {
    std::vector<hsize_t> dof;
    read("offsets", 2, H5T_NATIVE_INT64, dof, nullptr, 0, "[samples, 3] (x, y, z cells)");
    if (dof[0] != di[0] || dof[1] != 3)
      throw Error("surrogate dataset: '" + file + "' dataset 'offsets' has shape " + shape_text(dof) +
                  ", expected [" + std::to_string(di[0]) + ", 3] (x, y, z cells of each sample's tile)");
    read("offsets", 2, H5T_NATIVE_INT64, dof, offs.data(), offs.size(), "[samples, 3] (x, y, z cells)");
  }
  Dataset ds(int(di[1]), int(dt[1]), {std::int64_t(di[4]), std::int64_t(di[3]), std::int64_t(di[2])});
  const std::size_t ni = di[1] * di[2] * di[3] * di[4], no = dt[1] * dt[2] * dt[3] * dt[4];
  for (hsize_t s = 0; s < di[0]; ++s)
    ds.add(std::vector<double>(vin.begin() + s * ni, vin.begin() + (s + 1) * ni),
           std::vector<double>(vout.begin() + s * no, vout.begin() + (s + 1) * no),
           {offs[3 * s], offs[3 * s + 1], offs[3 * s + 2]});
  return ds;
}

}  // namespace mantissa::surrogates
