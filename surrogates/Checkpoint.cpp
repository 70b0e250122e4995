#include <surrogates/Checkpoint.hpp>

#include <mantissa/io/Checksum.hpp>

#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <sstream>

namespace mantissa::surrogates {

namespace {

// 2: the attributes of SurrogateState::defines (steps_per_prediction, scaling) are written and
// checked; a version 1 file did not say how many steps one prediction advances.
constexpr int kFormatVersion = 2;

template <class T>
hid_t native() {
  return std::is_same<T, double>::value ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
}

// Closes HDF5 handles on scope exit so errors thrown mid-way leak nothing.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  ~Handle() {
    if (id >= 0) close(id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator hid_t() const { return id; }
};

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

// A tensor's checksum: io's element hash (index and bits) summed modulo 2^64, over the values
// in the type they are stored in. Written as the dataset's attribute `checksum`; a tensor whose
// values no longer match it (a flipped bit, a damaged block) is refused when read.
template <class T>
std::uint64_t tensor_checksum(const T* data, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &data[i], sizeof(T));
    sum += io::element_hash(i, bits);
  }
  return sum;
}

void write_attr_i64(hid_t obj, const char* name, std::int64_t v) {
  Handle s(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_INT64, s, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a, H5T_NATIVE_INT64, &v);
}
void write_attr_f64(hid_t obj, const char* name, double v) {
  Handle s(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
}
void write_attr_str(hid_t obj, const char* name, const std::string& v) {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t, std::max<std::size_t>(1, v.size()));
  Handle s(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Awrite(a, t, v.empty() ? " " : v.c_str());
}
bool has_attr(hid_t obj, const char* name) {
  return H5Aexists(obj, name) > 0;
}
std::int64_t read_attr_i64(hid_t obj, const char* name, const std::string& file) {
  if (!has_attr(obj, name))
    throw Error("surrogate checkpoint '" + file + "': attribute '" + name +
                "' is missing; the file is foreign or damaged");
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  std::int64_t v = 0;
  H5Aread(a, H5T_NATIVE_INT64, &v);
  return v;
}
double read_attr_f64(hid_t obj, const char* name, const std::string& file) {
  if (!has_attr(obj, name))
    throw Error("surrogate checkpoint '" + file + "': attribute '" + name +
                "' is missing; the file is foreign or damaged");
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  double v = 0;
  H5Aread(a, H5T_NATIVE_DOUBLE, &v);
  return v;
}
std::string read_attr_str(hid_t obj, const char* name) {
  if (!has_attr(obj, name)) return {};
  Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Handle t(H5Aget_type(a), H5Tclose);
  const std::size_t n = H5Tget_size(t);
  std::string v(n, '\0');
  H5Aread(a, t, v.data());
  return v;
}

template <class T>
void write_array(hid_t group, const std::string& name, const std::vector<std::int64_t>& shape,
                 const T* host) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle s(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle d(H5Dcreate2(group, name.c_str(), native<T>(), s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (d < 0 || H5Dwrite(d, native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, host) < 0)
    throw Error("surrogate checkpoint: cannot write tensor '" + name + "' (disk full or read-only?)");
  std::size_t n = 1;
  for (auto e : shape) n *= static_cast<std::size_t>(e);
  const std::uint64_t sum = tensor_checksum(host, n);
  std::int64_t as_signed = 0;
  std::memcpy(&as_signed, &sum, sizeof sum);
  write_attr_i64(d, "checksum", as_signed);
}

// Refuses a tensor with a non-finite value or whose values do not match the checksum written
// with it (files written before checksums have none: only the values are checked).
template <class T>
void verify_values(hid_t dataset, const std::string& where, const std::string& name, const std::vector<T>& v,
                   const std::string& file) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw Error("surrogate checkpoint '" + file + "': tensor '" + where + name + "' holds " +
                  std::to_string(double(v[i])) + " at element " + std::to_string(i) +
                  "; the weights are damaged or diverged in training; retrain or restore the file");
  if (H5Aexists(dataset, "checksum") <= 0) return;
  Handle type(H5Dget_type(dataset), H5Tclose);
  if (H5Tget_size(type) != sizeof(T)) return;  // converted while read: the checksum is of the stored values
  Handle a(H5Aopen(dataset, "checksum", H5P_DEFAULT), H5Aclose);
  std::int64_t stored = 0;
  H5Aread(a, H5T_NATIVE_INT64, &stored);
  const std::uint64_t sum = tensor_checksum(v.data(), v.size());
  std::uint64_t want = 0;
  std::memcpy(&want, &stored, sizeof want);
  if (sum != want)
    throw Error("surrogate checkpoint '" + file + "': tensor '" + where + name +
                "' does not match the checksum written with it; the file is damaged; restore it from a "
                "copy or retrain the surrogate");
}

template <class T>
void write_view(hid_t group, const std::string& name, const std::vector<std::int64_t>& shape,
                const FlatView<T>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  write_array(group, name, shape, h.data());
}

// Reads dataset `name` of `group` into host memory after checking its shape.
template <class T>
std::vector<T> read_array(hid_t group, const std::string& where, const std::string& name,
                          const std::vector<std::int64_t>& shape, const std::string& file) {
  if (H5Lexists(group, name.c_str(), H5P_DEFAULT) <= 0)
    throw Error("surrogate checkpoint '" + file + "': tensor '" + where + name +
                "' is missing (the model expects " + shape_text(shape) +
                "); the file was written for a different surrogate configuration");
  Handle d(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  Handle s(H5Dget_space(d), H5Sclose);
  const int nd = H5Sget_simple_extent_ndims(s);
  std::vector<hsize_t> dims(std::max(nd, 0));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  std::vector<std::int64_t> got(dims.begin(), dims.end());
  if (got != shape)
    throw Error("surrogate checkpoint '" + file + "': tensor '" + where + name + "' has shape " +
                shape_text(got) + " in the file but the deck's model expects " + shape_text(shape) +
                "; use a checkpoint written with the same surrogate.* sizes or change the deck");
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<T> v(n);
  if (H5Dread(d, native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw Error("surrogate checkpoint '" + file + "': cannot read tensor '" + where + name +
                "'; the file is damaged");
  verify_values(d, where, name, v, file);
  return v;
}

template <class T>
void read_view(hid_t group, const std::string& where, const std::string& name,
               const std::vector<std::int64_t>& shape, const FlatView<T>& v, const std::string& file) {
  auto data = read_array<T>(group, where, name, shape, file);
  Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(data.data(), data.size());
  Kokkos::deep_copy(v, h);
}

std::vector<std::pair<const char*, std::int64_t>> config_fields(const ModelConfig& c) {
  return {{"dim", c.dim},
          {"in_channels", c.in_channels},
          {"out_channels", c.out_channels},
          {"patch", c.patch},
          {"embed", c.embed},
          {"heads", c.heads},
          {"layers", c.layers},
          {"mlp_hidden", c.mlp_hidden},
          {"window", c.window},
          {"shifted", c.shifted ? 1 : 0},
          {"learned_positions", c.position == PositionKind::learned ? 1 : 0},
          {"no_positions", c.position == PositionKind::none ? 1 : 0},
          {"global_patches_x", c.position == PositionKind::learned ? c.global_patches[0] : 0},
          {"global_patches_y", c.position == PositionKind::learned ? c.global_patches[1] : 0},
          {"global_patches_z", c.position == PositionKind::learned ? c.global_patches[2] : 0}};
}

}  // namespace

template <class T>
void save_surrogate(const std::string& file, const SurrogateState<T>& state, bool create) {
  if (state.model == nullptr) throw Error("save_surrogate: no model given (internal)");
  hid_t fid = create ? H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                     : H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (fid < 0)
    throw Error("surrogate checkpoint: cannot " + std::string(create ? "create" : "open") + " '" + file +
                "'; check that the directory exists and is writable");
  Handle f(fid, H5Fclose);
  Handle g(H5Gcreate2(f, "surrogate", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (g < 0)
    throw Error("surrogate checkpoint '" + file + "': cannot create group /surrogate (already there?)");
  auto& model = *state.model;
  write_attr_i64(g, "format_version", kFormatVersion);
  for (const auto& [k, v] : config_fields(model.config())) write_attr_i64(g, k, v);
  if (state.defines != nullptr)
    for (const auto& [k, v] : *state.defines) write_attr_i64(g, k.c_str(), v);
  write_attr_str(g, "master_precision", std::is_same<T, double>::value ? "fp64" : "fp32");
  write_attr_str(g, "description", model.config().describe());
  {
    Handle w(H5Gcreate2(g, "weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    for (const auto& p : model.parameters()) write_view(w, p.name, p.shape, p.value);
  }
  {
    Handle s(H5Gcreate2(g, "fp8", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    for (const auto& [name, sc] : model.scalings()) {
      const auto& h = sc->history();
      write_array<float>(s, name, {std::int64_t(h.size())}, h.data());
    }
  }
  if (state.trainer != nullptr) {
    auto& opt = state.trainer->optimizer();
    write_attr_i64(g, "optimizer_step", opt.step_count());
    write_attr_f64(g, "loss_scale", state.trainer->loss_scale());
    write_attr_i64(g, "loss_scale_good_steps", state.trainer->good_steps());
    Handle m(H5Gcreate2(g, "adam_m", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    Handle v(H5Gcreate2(g, "adam_v", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    const auto& params = model.parameters();
    for (std::size_t k = 0; k < params.size(); ++k) {
      write_view(m, params[k].name, params[k].shape,
                 FlatView<T>(opt.first_moments()[k].data(), opt.first_moments()[k].size()));
      write_view(v, params[k].name, params[k].shape,
                 FlatView<T>(opt.second_moments()[k].data(), opt.second_moments()[k].size()));
    }
  }
  if (state.normalization != nullptr && !state.normalization->empty()) {
    Handle n(H5Gcreate2(g, "normalization", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    const auto& nz = *state.normalization;
    write_array<double>(n, "in_mean", {std::int64_t(nz.in_mean.size())}, nz.in_mean.data());
    write_array<double>(n, "in_std", {std::int64_t(nz.in_std.size())}, nz.in_std.data());
    write_array<double>(n, "out_mean", {std::int64_t(nz.out_mean.size())}, nz.out_mean.data());
    write_array<double>(n, "out_std", {std::int64_t(nz.out_std.size())}, nz.out_std.data());
  }
  if (state.rng_state != nullptr) write_attr_str(g, "rng_state", *state.rng_state);
  if (state.provenance != nullptr) {
    const auto& pv = *state.provenance;
    if (!pv.deck_hash.empty()) write_attr_str(g, "provenance_deck_hash", pv.deck_hash);
    if (!pv.deck_file.empty()) write_attr_str(g, "provenance_deck_file", pv.deck_file);
    if (pv.samples >= 0) write_attr_i64(g, "provenance_samples", pv.samples);
    if (std::isfinite(pv.initial_loss)) write_attr_f64(g, "provenance_initial_loss", pv.initial_loss);
    if (std::isfinite(pv.final_loss)) write_attr_f64(g, "provenance_final_loss", pv.final_loss);
  }
}

namespace {

// The checks before any tensor is read: an HDF5 file with a /surrogate group of this format,
// written for this configuration and definition. Returns the open file (the group is reopened).
hid_t open_checked(const std::string& file, const ModelConfig& config,
                   const std::vector<std::pair<std::string, std::int64_t>>* defines) {
  hid_t fid = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fid < 0)
    throw Error("surrogate checkpoint: cannot open '" + file +
                "' as HDF5; check the path (it must exist and be "
                "a weights file mantissa wrote)");
  Handle f(fid, H5Fclose);
  if (H5Lexists(f, "surrogate", H5P_DEFAULT) <= 0)
    throw Error("surrogate checkpoint '" + file + "' has no /surrogate group; it holds no surrogate weights");
  Handle g(H5Gopen2(f, "surrogate", H5P_DEFAULT), H5Gclose);
  const auto version = read_attr_i64(g, "format_version", file);
  if (version != kFormatVersion)
    throw Error("surrogate checkpoint '" + file + "': format version " + std::to_string(version) +
                ", this mantissa reads version " + std::to_string(kFormatVersion) +
                (version < kFormatVersion
                     ? " (older files do not record surrogate.steps_per_prediction); retrain the surrogate"
                     : "; use the mantissa that wrote it"));
  for (const auto& [k, v] : config_fields(config)) {
    const auto got = read_attr_i64(g, k, file);
    if (got != v)
      throw Error("surrogate checkpoint '" + file + "': surrogate." + k + " is " + std::to_string(got) +
                  " in the file but " + std::to_string(v) +
                  " in the deck; use the deck the weights were trained with");
  }
  if (defines != nullptr)
    for (const auto& [k, v] : *defines) {
      if (!has_attr(g, k.c_str()))
        throw Error("surrogate checkpoint '" + file + "': surrogate." + k +
                    " is not recorded in the file; it was written without it and cannot be checked "
                    "against the deck's value " +
                    std::to_string(v) + "; retrain the surrogate");
      const auto got = read_attr_i64(g, k.c_str(), file);
      if (got != v)
        throw Error("surrogate checkpoint '" + file + "': surrogate." + k + " is " + std::to_string(got) +
                    " in the file but " + std::to_string(v) +
                    " in the deck; use the deck the weights were trained with");
    }
  f.id = -1;  // handed to the caller
  return fid;
}

void verify_group(hid_t parent, const char* group, const std::string& file) {
  if (H5Lexists(parent, group, H5P_DEFAULT) <= 0) return;
  Handle g(H5Gopen2(parent, group, H5P_DEFAULT), H5Gclose);
  H5G_info_t info{};
  H5Gget_info(g, &info);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string name(static_cast<std::size_t>(std::max<ssize_t>(len, 0)), '\0');
    H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
    Handle d(H5Dopen2(g, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (d < 0)
      throw Error("surrogate checkpoint '" + file + "': '" + group + "/" + name + "' is not a tensor");
    Handle sp(H5Dget_space(d), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(sp);
    Handle type(H5Dget_type(d), H5Tclose);
    const bool is_double = H5Tget_size(type) == sizeof(double);
    const std::string where = std::string(group) + "/";
    if (is_double) {
      std::vector<double> v(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
      if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
        throw Error("surrogate checkpoint '" + file + "': cannot read tensor '" + where + name +
                    "'; the file is damaged");
      verify_values(d, where, name, v, file);
    } else {
      std::vector<float> v(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
      if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
        throw Error("surrogate checkpoint '" + file + "': cannot read tensor '" + where + name +
                    "'; the file is damaged");
      verify_values(d, where, name, v, file);
    }
  }
}

}  // namespace

void verify_surrogate_file(const std::string& file, const ModelConfig& config,
                           const std::vector<std::pair<std::string, std::int64_t>>& defines) {
  Handle f(open_checked(file, config, &defines), H5Fclose);
  Handle g(H5Gopen2(f, "surrogate", H5P_DEFAULT), H5Gclose);
  if (H5Lexists(g, "weights", H5P_DEFAULT) <= 0)
    throw Error("surrogate checkpoint '" + file + "' has no weights; it is damaged or foreign");
  for (const char* group : {"weights", "adam_m", "adam_v", "fp8", "normalization"})
    verify_group(g, group, file);
}

template <class T>
void load_surrogate(const std::string& file, const SurrogateState<T>& state) {
  if (state.model == nullptr) throw Error("load_surrogate: no model given (internal)");
  auto& model = *state.model;
  Handle f(open_checked(file, model.config(), state.defines), H5Fclose);
  Handle g(H5Gopen2(f, "surrogate", H5P_DEFAULT), H5Gclose);
  {
    Handle w(H5Gopen2(g, "weights", H5P_DEFAULT), H5Gclose);
    for (const auto& p : model.parameters()) read_view(w, "weights/", p.name, p.shape, p.value, file);
  }
  if (H5Lexists(g, "fp8", H5P_DEFAULT) > 0) {
    Handle s(H5Gopen2(g, "fp8", H5P_DEFAULT), H5Gclose);
    for (auto& [name, sc] : model.scalings()) {
      if (H5Lexists(s, name.c_str(), H5P_DEFAULT) <= 0) continue;
      Handle d(H5Dopen2(s, name.c_str(), H5P_DEFAULT), H5Dclose);
      Handle sp(H5Dget_space(d), H5Sclose);
      hsize_t n = 0;
      H5Sget_simple_extent_dims(sp, &n, nullptr);
      std::vector<float> h = read_array<float>(s, "fp8/", name, {std::int64_t(n)}, file);
      // Replaying the history reproduces the scale exactly (update() is deterministic).
      const float max = name.find("scale_dy") != std::string::npos ? float(precision_traits<fp8_e5m2>::max())
                                                                   : float(precision_traits<fp8_e4m3>::max());
      *sc = DelayedScaling(max, sc->config());
      for (float a : h) sc->update(a);
    }
  }
  if (state.trainer != nullptr) {
    if (H5Lexists(g, "adam_m", H5P_DEFAULT) <= 0)
      throw Error(
          "surrogate checkpoint '" + file +
          "' holds weights only (no optimizer state); it can be used for inference, not to resume training");
    auto& opt = state.trainer->optimizer();
    opt.set_step_count(read_attr_i64(g, "optimizer_step", file));
    state.trainer->set_loss_scale(read_attr_f64(g, "loss_scale", file),
                                  int(read_attr_i64(g, "loss_scale_good_steps", file)));
    Handle m(H5Gopen2(g, "adam_m", H5P_DEFAULT), H5Gclose);
    Handle v(H5Gopen2(g, "adam_v", H5P_DEFAULT), H5Gclose);
    const auto& params = model.parameters();
    for (std::size_t k = 0; k < params.size(); ++k) {
      read_view(m, "adam_m/", params[k].name, params[k].shape,
                FlatView<T>(opt.first_moments()[k].data(), opt.first_moments()[k].size()), file);
      read_view(v, "adam_v/", params[k].name, params[k].shape,
                FlatView<T>(opt.second_moments()[k].data(), opt.second_moments()[k].size()), file);
    }
  }
  if (state.normalization != nullptr && H5Lexists(g, "normalization", H5P_DEFAULT) > 0) {
    Handle n(H5Gopen2(g, "normalization", H5P_DEFAULT), H5Gclose);
    auto& nz = *state.normalization;
    const std::int64_t ci = model.config().in_channels, co = model.config().out_channels;
    nz.in_mean = read_array<double>(n, "normalization/", "in_mean", {ci}, file);
    nz.in_std = read_array<double>(n, "normalization/", "in_std", {ci}, file);
    nz.out_mean = read_array<double>(n, "normalization/", "out_mean", {co}, file);
    nz.out_std = read_array<double>(n, "normalization/", "out_std", {co}, file);
  }
  if (state.rng_state != nullptr) *state.rng_state = read_attr_str(g, "rng_state");
  if (state.provenance != nullptr) {
    auto& pv = *state.provenance;
    pv = Provenance();
    if (has_attr(g, "provenance_deck_hash")) pv.deck_hash = read_attr_str(g, "provenance_deck_hash");
    if (has_attr(g, "provenance_deck_file")) pv.deck_file = read_attr_str(g, "provenance_deck_file");
    if (has_attr(g, "provenance_samples")) pv.samples = read_attr_i64(g, "provenance_samples", file);
    if (has_attr(g, "provenance_initial_loss"))
      pv.initial_loss = read_attr_f64(g, "provenance_initial_loss", file);
    if (has_attr(g, "provenance_final_loss")) pv.final_loss = read_attr_f64(g, "provenance_final_loss", file);
    if (has_attr(g, "optimizer_step")) pv.steps_trained = read_attr_i64(g, "optimizer_step", file);
  }
}

template void save_surrogate<float>(const std::string&, const SurrogateState<float>&, bool);
template void save_surrogate<double>(const std::string&, const SurrogateState<double>&, bool);
template void load_surrogate<float>(const std::string&, const SurrogateState<float>&);
template void load_surrogate<double>(const std::string&, const SurrogateState<double>&);

}  // namespace mantissa::surrogates
