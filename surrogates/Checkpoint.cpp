#include <surrogates/Checkpoint.hpp>

#include <mantissa/io/Checksum.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

namespace mantissa::surrogates {

namespace {

// 3: written through io's handle layer (io/H5File.hpp): every tensor carries io's element type
//    (mantissa_type) beside its checksum, string attributes are variable-length UTF-8, and the
//    file appears under its name only when complete (io::PendingFile: fsync, rename).
// 2: the attributes of SurrogateState::defines (steps_per_prediction, scaling) are written and
//    checked; a version 1 file did not say how many steps one prediction advances. Version 2
//    files (raw HDF5, checksums without mantissa_type) are still read.
constexpr int kFormatVersion = 3;
constexpr int kOldestReadable = 2;

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

[[noreturn]] void refuse(const std::string& file, const std::string& what) {
  throw Error("surrogate checkpoint '" + file + "': " + what);
}

// A tensor's checksum: io's element hash (index and bits) summed modulo 2^64, over the values
// in the type they are stored in -- what io writes as the dataset's attribute `checksum`.
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

std::int64_t attr_int(const io::H5Group& g, const std::string& key, const std::string& file) {
  if (!g.has_attribute(key))
    refuse(file, "attribute '" + key + "' is missing; the file is foreign or damaged");
  try {
    return g.get_int(key);
  } catch (const io::FileError& e) {
    refuse(file, "attribute '" + key + "' is unreadable (" + e.what() + "); the file is foreign or damaged");
  }
}
double attr_real(const io::H5Group& g, const std::string& key, const std::string& file) {
  if (!g.has_attribute(key))
    refuse(file, "attribute '" + key + "' is missing; the file is foreign or damaged");
  try {
    return g.get_real(key);
  } catch (const io::FileError& e) {
    refuse(file, "attribute '" + key + "' is unreadable (" + e.what() + "); the file is foreign or damaged");
  }
}
std::string attr_string(const io::H5Group& g, const std::string& key) {
  return g.has_attribute(key) ? g.get_string(key) : std::string();
}

// The values of tensor `name` in the type they are stored in (S), verified: finite first (a NaN
// says more than a failed checksum), then the checksum written with them (required from format
// version 3 on; a version 2 file may lack it), then converted to T.
template <class S, class T>
std::vector<T> verified(const io::H5Group& g, const std::string& where, const std::string& name,
                        const std::string& file, bool need_checksum) {
  const std::vector<S> v = g.read<S>(name);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      refuse(file, "tensor '" + where + name + "' holds " + std::to_string(double(v[i])) + " at element " +
                       std::to_string(i) +
                       "; the weights are damaged or diverged in training; retrain or restore the file");
  const io::Attributes a = g.dataset_attributes(name);
  const auto it = a.all().find("checksum");
  const std::int64_t* stored = it == a.all().end() ? nullptr : std::get_if<std::int64_t>(&it->second);
  if (stored == nullptr) {
    if (need_checksum)
      refuse(file, "tensor '" + where + name +
                       "' has no checksum; the file is damaged or was not written by mantissa; restore it "
                       "from a copy or retrain the surrogate");
  } else if (tensor_checksum(v.data(), v.size()) != static_cast<std::uint64_t>(*stored)) {
    refuse(file, "tensor '" + where + name +
                     "' does not match the checksum written with it; the file is damaged; restore it from a "
                     "copy or retrain the surrogate");
  }
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
  return out;
}

template <class T>
std::vector<T> read_values(const io::H5Group& g, const std::string& where, const std::string& name,
                           const std::string& file, bool need_checksum) {
  const std::string type = g.element_type(name);
  if (type == "fp64") return verified<double, T>(g, where, name, file, need_checksum);
  if (type == "fp32") return verified<float, T>(g, where, name, file, need_checksum);
  refuse(file, "'" + where + name + "' is " +
                   (type.empty() ? std::string("not a tensor") : "stored as " + type) +
                   "; a surrogate's tensors are fp32 or fp64; the file is foreign or damaged");
}

// Reads tensor `name` of `g` into host memory after checking its shape.
template <class T>
std::vector<T> read_array(const io::H5Group& g, const std::string& where, const std::string& name,
                          const std::vector<std::int64_t>& shape, const std::string& file,
                          bool need_checksum) {
  if (!g.has(name))
    refuse(file, "tensor '" + where + name + "' is missing (the model expects " + shape_text(shape) +
                     "); the file was written for a different surrogate configuration");
  const auto got = g.shape(name);
  if (got != shape)
    refuse(file, "tensor '" + where + name + "' has shape " + shape_text(got) +
                     " in the file but the deck's model expects " + shape_text(shape) +
                     "; use a checkpoint written with the same surrogate.* sizes or change the deck");
  return read_values<T>(g, where, name, file, need_checksum);
}

template <class T>
void write_view(const io::H5Group& g, const std::string& name, const std::vector<std::int64_t>& shape,
                const FlatView<T>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  g.write<T>(name, shape, h.data());
}

template <class T>
void read_view(const io::H5Group& g, const std::string& where, const std::string& name,
               const std::vector<std::int64_t>& shape, const FlatView<T>& v, const std::string& file,
               bool need_checksum) {
  auto data = read_array<T>(g, where, name, shape, file, need_checksum);
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
  // A new file is written under a temporary name and renamed durably once complete (a full
  // disk or a crash leaves the previous file); io's errors name the file and the cause.
  std::unique_ptr<io::PendingFile> out;
  io::H5File f;
  if (create) {
    out = std::make_unique<io::PendingFile>(file);
    f = io::H5File::create(*out);
  } else {
    f = io::H5File::open_rw(file, io::Verify::checksums_if_present);
  }
  if (f.has("surrogate")) refuse(file, "cannot create group /surrogate: the file has one already");
  const io::H5Group g = f.create_group("surrogate");
  auto& model = *state.model;
  g.set("format_version", kFormatVersion);
  for (const auto& [k, v] : config_fields(model.config())) g.set(k, v);
  if (state.defines != nullptr)
    for (const auto& [k, v] : *state.defines) g.set(k, v);
  g.set("master_precision", std::is_same<T, double>::value ? "fp64" : "fp32");
  g.set("description", model.config().describe());
  {
    const io::H5Group w = g.create_group("weights");
    for (const auto& p : model.parameters()) write_view(w, p.name, p.shape, p.value);
  }
  {
    const io::H5Group s = g.create_group("fp8");
    for (const auto& [name, sc] : model.scalings()) s.write<float>(name, sc->history());
  }
  if (state.trainer != nullptr) {
    auto& opt = state.trainer->optimizer();
    g.set("optimizer_step", opt.step_count());
    g.set("loss_scale", double(state.trainer->loss_scale()));
    g.set("loss_scale_good_steps", std::int64_t(state.trainer->good_steps()));
    const io::H5Group m = g.create_group("adam_m");
    const io::H5Group v = g.create_group("adam_v");
    const auto& params = model.parameters();
    for (std::size_t k = 0; k < params.size(); ++k) {
      write_view(m, params[k].name, params[k].shape,
                 FlatView<T>(opt.first_moments()[k].data(), opt.first_moments()[k].size()));
      write_view(v, params[k].name, params[k].shape,
                 FlatView<T>(opt.second_moments()[k].data(), opt.second_moments()[k].size()));
    }
  }
  if (state.normalization != nullptr && !state.normalization->empty()) {
    const io::H5Group n = g.create_group("normalization");
    const auto& nz = *state.normalization;
    n.write<double>("in_mean", nz.in_mean);
    n.write<double>("in_std", nz.in_std);
    n.write<double>("out_mean", nz.out_mean);
    n.write<double>("out_std", nz.out_std);
  }
  if (state.rng_state != nullptr) g.set("rng_state", *state.rng_state);
  if (state.provenance != nullptr) {
    const auto& pv = *state.provenance;
    if (!pv.deck_hash.empty()) g.set("provenance_deck_hash", pv.deck_hash);
    if (!pv.deck_file.empty()) g.set("provenance_deck_file", pv.deck_file);
    if (pv.samples >= 0) g.set("provenance_samples", pv.samples);
    if (std::isfinite(pv.initial_loss)) g.set("provenance_initial_loss", pv.initial_loss);
    if (std::isfinite(pv.final_loss)) g.set("provenance_final_loss", pv.final_loss);
  }
  f.close();  // throws naming the file when the data could not be written
  if (out) out->commit();
}

namespace {

// The checks before any tensor is read: an HDF5 file with a /surrogate group of a format this
// mantissa reads, written for this configuration and definition. The file is opened without
// io's verification: every tensor is verified here (finite values, then the checksum).
struct Opened {
  io::H5File file;
  io::H5Group group;
  bool need_checksum = true;  // format version 3 on: every tensor has one
};
Opened open_checked(const std::string& file, const ModelConfig& config,
                    const std::vector<std::pair<std::string, std::int64_t>>* defines) {
  Opened o;
  try {
    o.file = io::H5File::open(file, io::Verify::none);
  } catch (const io::FileError& e) {
    throw Error("surrogate checkpoint: cannot open '" + file + "': " + e.what() +
                " (it must exist and be a weights file mantissa wrote)");
  }
  if (!o.file.has("surrogate"))
    throw Error("surrogate checkpoint '" + file + "' has no /surrogate group; it holds no surrogate weights");
  o.group = o.file.group("surrogate");
  const io::H5Group& g = o.group;
  const auto version = attr_int(g, "format_version", file);
  if (version < kOldestReadable || version > kFormatVersion)
    refuse(file,
           "format version " + std::to_string(version) + ", this mantissa reads versions " +
               std::to_string(kOldestReadable) + " to " + std::to_string(kFormatVersion) +
               (version < kOldestReadable
                    ? " (older files do not record surrogate.steps_per_prediction); retrain the surrogate"
                    : "; use the mantissa that wrote it"));
  o.need_checksum = version >= 3;
  for (const auto& [k, v] : config_fields(config)) {
    const auto got = attr_int(g, k, file);
    if (got != v)
      refuse(file, std::string("surrogate.") + k + " is " + std::to_string(got) + " in the file but " +
                       std::to_string(v) + " in the deck; use the deck the weights were trained with");
  }
  if (defines != nullptr)
    for (const auto& [k, v] : *defines) {
      if (!g.has_attribute(k))
        refuse(file, "surrogate." + k +
                         " is not recorded in the file; it was written without it and cannot be checked "
                         "against the deck's value " +
                         std::to_string(v) + "; retrain the surrogate");
      const auto got = attr_int(g, k, file);
      if (got != v)
        refuse(file, "surrogate." + k + " is " + std::to_string(got) + " in the file but " +
                         std::to_string(v) + " in the deck; use the deck the weights were trained with");
    }
  return o;
}

void verify_group(const io::H5Group& parent, const char* group, const std::string& file, bool need_checksum) {
  if (!parent.has(group)) return;
  const io::H5Group g = parent.group(group);
  const std::string where = std::string(group) + "/";
  for (const auto& name : g.names()) {
    if (g.element_type(name) == "fp64")
      (void)read_values<double>(g, where, name, file, need_checksum);
    else
      (void)read_values<float>(g, where, name, file, need_checksum);
  }
}

}  // namespace

void verify_surrogate_file(const std::string& file, const ModelConfig& config,
                           const std::vector<std::pair<std::string, std::int64_t>>& defines) {
  const Opened o = open_checked(file, config, &defines);
  if (!o.group.has("weights")) refuse(file, "has no weights; it is damaged or foreign");
  for (const char* group : {"weights", "adam_m", "adam_v", "fp8", "normalization"})
    verify_group(o.group, group, file, o.need_checksum);
}

template <class T>
void load_surrogate(const std::string& file, const SurrogateState<T>& state) {
  if (state.model == nullptr) throw Error("load_surrogate: no model given (internal)");
  auto& model = *state.model;
  const Opened o = open_checked(file, model.config(), state.defines);
  const io::H5Group& g = o.group;
  const bool sum = o.need_checksum;
  {
    if (!g.has("weights")) refuse(file, "has no weights; it is damaged or foreign");
    const io::H5Group w = g.group("weights");
    for (const auto& p : model.parameters()) read_view(w, "weights/", p.name, p.shape, p.value, file, sum);
  }
  if (g.has("fp8")) {
    const io::H5Group s = g.group("fp8");
    for (auto& [name, sc] : model.scalings()) {
      if (!s.has(name)) continue;
      const auto n = s.shape(name);
      std::vector<float> h = read_array<float>(s, "fp8/", name, n, file, sum);
      // Replaying the history reproduces the scale exactly (update() is deterministic).
      const float max = name.find("scale_dy") != std::string::npos ? float(precision_traits<fp8_e5m2>::max())
                                                                   : float(precision_traits<fp8_e4m3>::max());
      *sc = DelayedScaling(max, sc->config());
      for (float a : h) sc->update(a);
    }
  }
  if (state.trainer != nullptr) {
    if (!g.has("adam_m"))
      refuse(file,
             "holds weights only (no optimizer state); it can be used for inference, not to resume training");
    auto& opt = state.trainer->optimizer();
    opt.set_step_count(attr_int(g, "optimizer_step", file));
    state.trainer->set_loss_scale(attr_real(g, "loss_scale", file),
                                  int(attr_int(g, "loss_scale_good_steps", file)));
    const io::H5Group m = g.group("adam_m");
    const io::H5Group v = g.group("adam_v");
    const auto& params = model.parameters();
    for (std::size_t k = 0; k < params.size(); ++k) {
      read_view(m, "adam_m/", params[k].name, params[k].shape,
                FlatView<T>(opt.first_moments()[k].data(), opt.first_moments()[k].size()), file, sum);
      read_view(v, "adam_v/", params[k].name, params[k].shape,
                FlatView<T>(opt.second_moments()[k].data(), opt.second_moments()[k].size()), file, sum);
    }
  }
  if (state.normalization != nullptr && g.has("normalization")) {
    const io::H5Group n = g.group("normalization");
    auto& nz = *state.normalization;
    const std::int64_t ci = model.config().in_channels, co = model.config().out_channels;
    nz.in_mean = read_array<double>(n, "normalization/", "in_mean", {ci}, file, sum);
    nz.in_std = read_array<double>(n, "normalization/", "in_std", {ci}, file, sum);
    nz.out_mean = read_array<double>(n, "normalization/", "out_mean", {co}, file, sum);
    nz.out_std = read_array<double>(n, "normalization/", "out_std", {co}, file, sum);
  }
  if (state.rng_state != nullptr) *state.rng_state = attr_string(g, "rng_state");
  if (state.provenance != nullptr) {
    auto& pv = *state.provenance;
    pv = Provenance();
    if (g.has_attribute("provenance_deck_hash")) pv.deck_hash = attr_string(g, "provenance_deck_hash");
    if (g.has_attribute("provenance_deck_file")) pv.deck_file = attr_string(g, "provenance_deck_file");
    if (g.has_attribute("provenance_samples")) pv.samples = attr_int(g, "provenance_samples", file);
    if (g.has_attribute("provenance_initial_loss"))
      pv.initial_loss = attr_real(g, "provenance_initial_loss", file);
    if (g.has_attribute("provenance_final_loss")) pv.final_loss = attr_real(g, "provenance_final_loss", file);
    if (g.has_attribute("optimizer_step")) pv.steps_trained = attr_int(g, "optimizer_step", file);
  }
}

template void save_surrogate<float>(const std::string&, const SurrogateState<float>&, bool);
template void save_surrogate<double>(const std::string&, const SurrogateState<double>&, bool);
template void load_surrogate<float>(const std::string&, const SurrogateState<float>&);
template void load_surrogate<double>(const std::string&, const SurrogateState<double>&);

}  // namespace mantissa::surrogates
