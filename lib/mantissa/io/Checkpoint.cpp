#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Version.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <mantissa/io/Checksum.hpp>
#include <mantissa/io/detail/Files.hpp>
#include <mantissa/io/detail/Hdf5.hpp>
#include <mantissa/io/detail/MpiIo.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

namespace mantissa {
namespace io {

namespace fs = std::filesystem;
using detail::check;
using detail::collective_check;
using detail::Hid;

namespace {

const std::set<std::string>& reserved_root_attributes() {
  static const std::set<std::string> r{"format",         "format_version", "code_version", "git_hash",
                                       "kokkos_version", "backend",        "deck",         "step",
                                       "time",           "ranks",          "process_grid", "grid_dim",
                                       "grid_n",         "grid_spacing",   "grid_origin",  "grid_periodic"};
  return r;
}

std::string dims_text(const std::vector<std::int64_t>& xyz) {
  std::string s;
  for (auto v : xyz) {
    if (!s.empty()) s += 'x';
    s += std::to_string(v);  // appended separately: GCC 12 -Wrestrict false positive on "x" + string
  }
  return s;
}

}  // namespace

bool use_collective_transfer(IoTransfer t) {
  if (t != IoTransfer::automatic) return t == IoTransfer::collective;
  static const bool safe = [] {
    std::string why;
    const bool ok = detail::collective_writes_are_safe(&why);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!ok && rank == 0)
      std::fprintf(stderr, "mantissa::io: %s; using independent transfers\n", why.c_str());
    return ok;
  }();
  return safe;
}

// ---------------------------------------------------------------- writer

CheckpointWriter::CheckpointWriter(const Decomposition& decomp, std::string dir, int keep_last_n,
                                   CheckpointOptions options)
    : m_decomp(decomp), m_dir(std::move(dir)), m_keep(keep_last_n), m_opt(std::move(options)) {
  if (m_keep < 1)
    throw Error("checkpoint: keep_last_n is " + std::to_string(m_keep) +
                "; at least the newest checkpoint must be kept, set checkpoint.keep >= 1");
  if (m_dir.empty()) throw Error("checkpoint: the output directory is empty; set checkpoint.dir");
  if (m_opt.prefix.empty() || m_opt.prefix.find('/') != std::string::npos)
    throw Error("checkpoint: prefix '" + m_opt.prefix + "' must be a non-empty file name without '/'");
}

std::string CheckpointWriter::path_for(std::int64_t step) const {
  return detail::step_path(m_dir, m_opt.prefix, step);
}

std::string CheckpointWriter::write(std::int64_t step, double time, const Attributes& attrs,
                                    const std::vector<FieldRef>& fields,
                                    const std::vector<Dataset>& extra) const {
  Kokkos::Profiling::pushRegion("mantissa::io::CheckpointWriter::write");
  MPI_Comm comm = m_decomp.comm();
  const int rank = m_decomp.rank();
  const Grid& grid = m_decomp.grid();

  // Check everything that can be checked before a file exists.
  std::string err;
  std::set<std::string> names;
  for (const auto& f : fields) {
    if (f.name.empty() || f.name.find('/') != std::string::npos)
      err = "checkpoint: field name '" + f.name + "' must be non-empty and without '/'";
    else if (!names.insert(f.name).second)
      err = "checkpoint: field '" + f.name + "' is given twice";
    else if (f.offset != m_decomp.offset() || f.extent != m_decomp.extent())
      err = "checkpoint: field '" + f.name + "' does not match the writer's decomposition on rank " +
            std::to_string(rank) + " (owned " + dims_text({f.extent[0], f.extent[1], f.extent[2]}) + " vs " +
            dims_text({m_decomp.extent()[0], m_decomp.extent()[1], m_decomp.extent()[2]}) +
            "); build the writer on the decomposition of the fields";
    else if (!f.to_host)
      err = "checkpoint: field '" + f.name + "' has no host copy function";
  }
  for (const auto& [k, v] : attrs.all()) {
    (void)v;
    if (reserved_root_attributes().count(k) || k.rfind("precision.", 0) == 0)
      err = "checkpoint: attribute '" + k + "' is reserved by mantissa; choose another name";
  }
  collective_check(comm, err);

  const bool collective = use_collective_transfer(m_opt.transfer);
  const std::string tmp = detail::make_temp_file(comm, m_dir, ".tmp-" + m_opt.prefix + "-");
  std::string final_path = path_for(step);
  try {
    detail::QuietHdf5 quiet;
    detail::AccessTuning tuning;
    tuning.alignment = m_opt.alignment;
    Hid fapl = detail::file_access(comm, tuning);
    Hid file(check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
                   "checkpoint: cannot create '" + tmp + "'"));
    Attributes root;
    root.set("format", checkpoint_format_name)
        .set("format_version", checkpoint_format_version)
        .set("code_version", MANTISSA_VERSION_STRING)
        .set("git_hash", MANTISSA_GIT_HASH)
        .set("kokkos_version", kokkos_version_string())
        .set("backend", std::string(Kokkos::DefaultExecutionSpace::name()))
        .set("deck", m_opt.deck_text)
        .set("step", step)
        .set("time", time)
        .set("ranks", m_decomp.size())
        .set("process_grid",
             std::vector<std::int64_t>{m_decomp.dims()[0], m_decomp.dims()[1], m_decomp.dims()[2]})
        .set("grid_dim", grid.dim)
        .set("grid_n", std::vector<std::int64_t>{grid.n[0], grid.n[1], grid.n[2]})
        .set("grid_spacing", std::vector<double>{grid.spacing[0], grid.spacing[1], grid.spacing[2]})
        .set("grid_origin", std::vector<double>{grid.origin[0], grid.origin[1], grid.origin[2]})
        .set("grid_periodic",
             std::vector<std::int64_t>{grid.periodic[0], grid.periodic[1], grid.periodic[2]});
    for (const auto& [k, v] : m_opt.precision.all()) root.set("precision." + k, v);
    for (const auto& [k, v] : attrs.all()) root.set(k, v);
    detail::write_attributes(file, root);

    int written = 0;
    auto maybe_fail = [&]() {
      if (m_opt.fail_after_datasets >= 0 && ++written > m_opt.fail_after_datasets)
        throw Error("checkpoint: simulated failure after " + std::to_string(m_opt.fail_after_datasets) +
                    " datasets (CheckpointOptions::fail_after_datasets)");
    };
    for (const auto& f : fields) {
      maybe_fail();
      detail::write_field(file, comm, "/fields/" + f.name, f, grid.n, grid.dim, collective);
    }
    for (const auto& d : extra) {
      maybe_fail();
      detail::write_dataset(file, comm, rank, d, collective);
    }
    if (file.reset() < 0)
      throw Error("checkpoint: closing '" + tmp + "' failed (HDF5: " + detail::last_hdf5_error() + ")");
  } catch (...) {
    // Only the temporary goes; earlier checkpoints are untouched.
    if (rank == 0) {
      std::error_code ec;
      fs::remove(tmp, ec);
    }
    Kokkos::Profiling::popRegion();
    throw;
  }
  MPI_Barrier(comm);  // every rank has closed the file
  err.clear();
  if (rank == 0) {
    err = detail::commit_file(tmp, final_path, m_opt.durable);
    if (err.empty()) {
      const auto steps = list_checkpoint_steps(m_dir, m_opt.prefix);
      // steps is ascending and holds `step` itself: delete all but the newest m_keep.
      for (std::size_t i = 0; i + std::size_t(m_keep) < steps.size(); ++i) {
        std::error_code ec;
        fs::remove(path_for(steps[i]), ec);
      }
    }
  }
  collective_check(comm, err);
  Kokkos::Profiling::popRegion();
  return final_path;
}

std::vector<std::int64_t> list_checkpoint_steps(const std::string& dir, const std::string& prefix) {
  return detail::list_steps(dir, prefix);
}

std::optional<std::string> latest_checkpoint(const std::string& dir, const std::string& prefix) {
  const auto steps = list_checkpoint_steps(dir, prefix);
  if (steps.empty()) return std::nullopt;
  return detail::step_path(dir, prefix, steps.back());
}

// ---------------------------------------------------------------- reader

struct CheckpointReader::Impl {
  Hid file;
};

CheckpointReader::CheckpointReader(const std::string& file, MPI_Comm comm)
    : m_impl(std::make_unique<Impl>()),
      m_file(file),
      m_comm(comm),
      m_collective(use_collective_transfer(IoTransfer::automatic)) {
  const std::string what = "checkpoint '" + file + "'";
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw Error(what + " does not exist; check the restart path (checkpoints are named <prefix>-<step>.h5)");
  if (fs::is_directory(file, ec))
    throw Error(what + " is a directory; give a checkpoint file, e.g. the newest one in it");
  detail::QuietHdf5 quiet;
  if (H5Fis_hdf5(file.c_str()) <= 0)
    throw Error(what + " is not an HDF5 file (no HDF5 signature); give the path of a mantissa checkpoint");
  Hid fapl = detail::file_access(comm);
  m_impl->file = Hid(H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl));
  if (!m_impl->file.valid()) {
    const std::string reason = detail::last_hdf5_error();
    if (reason.find("truncated") != std::string::npos)
      throw Error(what + " is truncated (HDF5: " + reason +
                  "); it was not completely written or copied; restart from an earlier checkpoint");
    throw Error(what + " cannot be opened (HDF5: " + reason + "); the file is damaged");
  }
  m_attrs = detail::read_attributes(m_impl->file);
  m_attrs.set_context(what);
  if (!m_attrs.has("format"))
    throw Error(what + " is an HDF5 file but not a mantissa checkpoint (it has no 'format' attribute)");
  const auto* format = std::get_if<std::string>(&m_attrs.all().at("format"));
  if (!format || *format != checkpoint_format_name)
    throw Error(what + " is not a mantissa checkpoint: its format is '" +
                (format ? *format : std::string("?")) + "', expected '" + checkpoint_format_name + "'");
  const std::int64_t version = m_attrs.has("format_version") ? m_attrs.get_int("format_version") : -1;
  if (version > checkpoint_format_version)
    throw Error(what + " has format version " + std::to_string(version) + ", newer than this build reads (" +
                std::to_string(checkpoint_format_version) + "); use a newer mantissa than " +
                MANTISSA_VERSION_STRING);
  if (version < 1) throw Error(what + " has an invalid format version " + std::to_string(version));
}

CheckpointReader::~CheckpointReader() = default;

Grid CheckpointReader::grid() const {
  Grid g;
  g.dim = int(m_attrs.get_int("grid_dim"));
  const auto& n = m_attrs.get_ints("grid_n");
  const auto& s = m_attrs.get_reals("grid_spacing");
  const auto& o = m_attrs.get_reals("grid_origin");
  const auto& p = m_attrs.get_ints("grid_periodic");
  if (n.size() != 3 || s.size() != 3 || o.size() != 3 || p.size() != 3)
    throw Error("checkpoint '" + m_file +
                "': the grid attributes do not have 3 entries each; the file is damaged");
  for (int a = 0; a < 3; ++a) {
    g.n[a] = n[a];
    g.spacing[a] = s[a];
    g.origin[a] = o[a];
    g.periodic[a] = p[a] != 0;
  }
  return g;
}

std::vector<std::string> CheckpointReader::field_names() const {
  std::vector<std::string> names;
  if (!detail::link_exists(m_impl->file, "/fields")) return names;
  Hid group(check(H5Gopen2(m_impl->file, "/fields", H5P_DEFAULT),
                  "checkpoint '" + m_file + "': cannot open /fields"));
  H5Literate(
      group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

bool CheckpointReader::has_dataset(const std::string& path) const {
  detail::QuietHdf5 quiet;
  return detail::link_exists(m_impl->file, path);
}

void CheckpointReader::validate_against(const Grid& want, const CheckpointExpectations& expect) const {
  const Grid have = grid();
  const std::string what = "checkpoint '" + m_file + "'";
  if (have.dim != want.dim)
    throw Error(what + " holds a " + std::to_string(have.dim) + "D grid but the deck asks for " +
                std::to_string(want.dim) + "D (mesh.dim)");
  const int d = want.dim;
  auto axes = [d](const auto& v) {
    std::vector<std::int64_t> r(static_cast<std::size_t>(d));
    for (int a = 0; a < d; ++a) r[static_cast<std::size_t>(a)] = std::int64_t(v[a]);
    return dims_text(r);
  };
  if (have.n != want.n)
    throw Error(what + " has grid " + axes(have.n) + " but the deck asks for " + axes(want.n) +
                " (mesh.n); restart from a checkpoint of this grid or change mesh.n");
  for (int a = 0; a < d; ++a) {
    // Spacing and origin come from the same deck numbers and are stored bitwise; the relative
    // 1e-12 only forgives a last-bit difference when a deck derives them arithmetically.
    auto differs = [](double x, double y) {
      return std::abs(x - y) > 1e-12 * std::max(std::abs(x), std::abs(y));
    };
    if (differs(have.spacing[a], want.spacing[a]))
      throw Error(what + " has spacing " + std::to_string(have.spacing[a]) + " along axis " +
                  std::to_string(a) + " but the deck asks for " + std::to_string(want.spacing[a]) +
                  " (mesh.spacing)");
    if (differs(have.origin[a], want.origin[a]))
      throw Error(what + " has origin " + std::to_string(have.origin[a]) + " along axis " +
                  std::to_string(a) + " but the deck asks for " + std::to_string(want.origin[a]) +
                  " (mesh.origin)");
  }
  if (!expect.physics.empty() && m_attrs.has("physics") && m_attrs.get_string("physics") != expect.physics)
    throw Error(what + " was written by physics '" + m_attrs.get_string("physics") + "' but the deck runs '" +
                expect.physics + "'");
  const auto names = field_names();
  for (const auto& f : expect.fields) {
    if (std::find(names.begin(), names.end(), f) == names.end()) {
      std::string have_list;
      for (const auto& n : names) have_list += (have_list.empty() ? "" : ", ") + n;
      throw Error(what + " has no field '" + f + "' (it has: " + (have_list.empty() ? "none" : have_list) +
                  ")");
    }
  }
}

namespace {
std::vector<std::int64_t> dataset_dims(hid_t dset) {
  Hid space(H5Dget_space(dset));
  const int nd = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> d(std::size_t(std::max(nd, 0)));
  if (nd > 0) H5Sget_simple_extent_dims(space, d.data(), nullptr);
  return std::vector<std::int64_t>(d.begin(), d.end());
}

void check_type(const Attributes& a, const std::string& what, const std::string& path,
                const std::string& want) {
  const std::string have = a.has("mantissa_type") ? a.get_string("mantissa_type") : std::string("?");
  if (have != want)
    throw Error(what + ": dataset '" + path + "' is stored as " + have + " but is read as " + want +
                "; read it with the type it was written in (the same storage precision)");
}

void verify(const Attributes& a, std::uint64_t computed, const std::string& what, const std::string& path) {
  if (!a.has("checksum"))
    throw Error(what + ": dataset '" + path + "' has no checksum attribute; the file is damaged");
  const auto stored = static_cast<std::uint64_t>(a.get_int("checksum"));
  if (stored != computed) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "stored %016llx, computed %016llx",
                  static_cast<unsigned long long>(stored), static_cast<unsigned long long>(computed));
    throw Error(what + ": dataset '" + path + "' fails its checksum (" + buf +
                "); the file is damaged, restart from an earlier checkpoint");
  }
}
}  // namespace

void CheckpointReader::read_field(const FieldRef& f) const {
  Kokkos::Profiling::pushRegion("mantissa::io::CheckpointReader::read_field");
  const std::string what = "checkpoint '" + m_file + "'";
  const std::string path = "fields/" + f.name;
  detail::QuietHdf5 quiet;
  if (!detail::link_exists(m_impl->file, "/" + path)) {
    std::string have_list;
    for (const auto& n : field_names()) have_list += (have_list.empty() ? "" : ", ") + n;
    throw Error(what + " has no field '" + f.name + "' (it has: " + (have_list.empty() ? "none" : have_list) +
                "); it was written by another physics or configuration");
  }
  if (!f.from_host)
    throw Error("checkpoint: field '" + f.name + "' cannot be read into (a snapshot reference)");
  Hid dset(check(H5Dopen2(m_impl->file, path.c_str(), H5P_DEFAULT), what + ": cannot open '" + path + "'"));
  const Attributes a = detail::read_attributes(dset);
  check_type(a, what, path, f.type_name);
  const auto dims = dataset_dims(dset);  // (z, y, x) or (y, x)
  // The run's global grid, from the fields' blocks.
  std::array<std::int64_t, 3> hi{f.offset[0] + f.extent[0], f.offset[1] + f.extent[1],
                                 f.offset[2] + f.extent[2]};
  std::array<std::int64_t, 3> n{};
  MPI_Allreduce(hi.data(), n.data(), 3, MPI_INT64_T, MPI_MAX, m_comm);
  std::vector<std::int64_t> stored_xyz(dims.rbegin(), dims.rend());
  while (stored_xyz.size() < 3) stored_xyz.push_back(1);
  if (dims.size() < 2 || dims.size() > 3 || stored_xyz[0] != n[0] || stored_xyz[1] != n[1] ||
      stored_xyz[2] != n[2])
    throw Error(what + ": field '" + f.name + "' is " + dims_text(stored_xyz) +
                " (x, y, z) but the run's grid is " + dims_text({n[0], n[1], n[2]}) +
                "; restart on the grid the checkpoint was written on");
  const int nd = int(dims.size());
  std::vector<hsize_t> start, count;
  for (int a3 = nd - 1; a3 >= 0; --a3) {
    start.push_back(hsize_t(f.offset[a3]));
    count.push_back(hsize_t(f.extent[a3]));
  }
  Hid filespace(check(H5Dget_space(dset), what));
  check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), what);
  Hid memspace(check(H5Screate_simple(nd, count.data(), nullptr), what));
  std::vector<unsigned char> buf(std::size_t(f.num_owned()) * f.elem_size);
  Hid dxpl = detail::transfer(m_collective);
  check(H5Dread(dset, detail::memory_type(f.kind), memspace, filespace, dxpl, buf.data()),
        what + ": cannot read '" + path + "'");
  std::uint64_t local = partial_checksum(buf.data(), f.elem_size, {f.extent[2], f.extent[1], f.extent[0]},
                                         {f.offset[2], f.offset[1], f.offset[0]}, {n[2], n[1], n[0]});
  std::uint64_t sum = 0;
  MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, m_comm);
  verify(a, sum, what, path);
  f.from_host(buf.data());  // only after the checksum passed: a failed read leaves the field as it was
  Kokkos::Profiling::popRegion();
}

void CheckpointReader::read_dataset_impl(const std::string& path, StorageKind kind,
                                         const std::string& type_name, std::size_t size,
                                         std::vector<std::int64_t>& dims,
                                         const std::function<void*(std::size_t)>& alloc) const {
  const std::string what = "checkpoint '" + m_file + "'";
  detail::QuietHdf5 quiet;
  if (!detail::link_exists(m_impl->file, path)) throw Error(what + " has no dataset '" + path + "'");
  Hid dset(check(H5Dopen2(m_impl->file, path.c_str(), H5P_DEFAULT), what + ": cannot open '" + path + "'"));
  const Attributes a = detail::read_attributes(dset);
  check_type(a, what, path, type_name);
  dims = dataset_dims(dset);
  if (dims.empty() || dims.size() > 2)
    throw Error(what + ": dataset '" + path + "' has " + std::to_string(dims.size()) +
                " dimensions, not 1 or 2");
  std::int64_t total = 1;
  for (auto v : dims) total *= v;
  void* out = alloc(std::size_t(total));
  if (total > 0) {
    Hid dxpl = detail::transfer(false);
    check(H5Dread(dset, detail::memory_type(kind), H5S_ALL, H5S_ALL, dxpl, out),
          what + ": cannot read '" + path + "'");
  }
  const std::int64_t rows = dims[0], cols = dims.size() == 2 ? dims[1] : 1;
  const std::uint64_t sum = dims.size() == 2
                                ? partial_checksum(out, size, {1, rows, cols}, {0, 0, 0}, {1, rows, cols})
                                : partial_checksum(out, size, {1, 1, rows}, {0, 0, 0}, {1, 1, rows});
  verify(a, sum, what, path);
}

Attributes CheckpointReader::dataset_attributes(const std::string& path) const {
  const std::string what = "checkpoint '" + m_file + "'";
  detail::QuietHdf5 quiet;
  if (!detail::link_exists(m_impl->file, path)) throw Error(what + " has no dataset '" + path + "'");
  Hid dset(check(H5Oopen(m_impl->file, path.c_str(), H5P_DEFAULT), what + ": cannot open '" + path + "'"));
  return detail::read_attributes(dset);
}

}  // namespace io
}  // namespace mantissa
