#include <mantissa/core/Version.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <mantissa/io/Checksum.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/io/detail/Collective.hpp>
#include <mantissa/io/detail/Hdf5.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <type_traits>

namespace mantissa {
namespace io {

static_assert(std::is_same_v<hid_t, std::int64_t>, "mantissa::io stores hid_t as int64_t (HDF5 >= 1.10)");

namespace detail {

struct H5Context {
  std::string path;  // as the user knows it (the final name of a PendingFile)
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  bool collective = false;
  bool transfer_collective = false;  // MPI-IO transfer mode of data (collective files)
  bool writable = false;
  Verify verify = Verify::checksums;
  std::string open_path;        // the name HDF5 opened (a PendingFile's temporary)
  bool temporary = false;       // open_path is a temporary that is discarded unless committed
  mutable bool failed = false;  // an operation on the file failed: its contents are discarded
};

}  // namespace detail

namespace {

using detail::check;
using detail::H5Context;
using detail::Hid;

constexpr const char* k_string_type = "string";

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) t += ", ";
    t += std::to_string(s[i]);
  }
  return t + "]";
}

std::int64_t count_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto v : shape) n *= v;
  return n;
}

std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// FNV-1a of a string: its "bits" in the dataset checksum.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : s) {
    h ^= std::uint64_t(static_cast<unsigned char>(c));
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t whole_checksum(const void* data, std::size_t elem_size, std::int64_t n) {
  return partial_checksum(data, elem_size, {1, 1, n}, {0, 0, 0}, {1, 1, n});
}

[[noreturn]] void fail(const H5Context& c, FileProblem p, const std::string& msg) {
  throw FileError(p, c.path, msg);
}

std::string join(const std::string& group, const std::string& name) {
  if (name.empty()) return group;
  if (!name.empty() && name.front() == '/') return name;
  return group == "/" ? "/" + name : group + "/" + name;
}

std::vector<std::int64_t> dims_of(hid_t dset) {
  Hid space(H5Dget_space(dset));
  const int nd = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  std::vector<hsize_t> d(std::size_t(std::max(nd, 0)));
  if (nd > 0) H5Sget_simple_extent_dims(space, d.data(), nullptr);
  return std::vector<std::int64_t>(d.begin(), d.end());
}

// Collective files: every rank throws the lowest failing rank's error.
template <class F>
void in_step(const H5Context& c, F&& fn) {
  if (!c.collective) {
    try {
      fn();
    } catch (...) {
      c.failed = true;
      throw;
    }
    return;
  }
  detail::CollectiveError err;
  try {
    fn();
  } catch (const FileError& e) {
    err.set(e);
  } catch (const Error& e) {
    err.set(std::string(e.what()));
  }
  try {
    err.raise(c.comm);
  } catch (...) {
    c.failed = true;
    throw;
  }
}

Hid access_list(const H5Context& c) {
  Hid fapl;
  if (c.collective) {
    fapl = detail::file_access(c.comm);
  } else {
    fapl = Hid(check(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file access property list"));
  }
  // A close closes every object of the file, so that nothing stays open after a failure (an
  // HDF5 file left open is flushed again by HDF5's atexit handler, after MPI_Finalize).
  check(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), "cannot set the file close degree");
  return fapl;
}

}  // namespace

// ============================================================================ H5Group

H5Group::H5Group(std::shared_ptr<const detail::H5Context> ctx, std::int64_t id, std::string name)
    : m_ctx(std::move(ctx)), m_id(id), m_name(std::move(name)) {}

H5Group::~H5Group() {
  close_handle();
}

H5Group::H5Group(H5Group&& o) noexcept
    : m_ctx(std::move(o.m_ctx)), m_id(o.m_id), m_name(std::move(o.m_name)) {
  o.m_id = -1;
}

H5Group& H5Group::operator=(H5Group&& o) noexcept {
  if (this != &o) {
    close_handle();
    m_ctx = std::move(o.m_ctx);
    m_id = o.m_id;
    m_name = std::move(o.m_name);
    o.m_id = -1;
  }
  return *this;
}

void H5Group::close_handle() noexcept {
  // The file's strong close degree may have closed the group already.
  if (m_id >= 0 && H5Iis_valid(m_id) > 0) H5Gclose(m_id);
  m_id = -1;
}

const std::string& H5Group::file_path() const {
  static const std::string none;
  return m_ctx ? m_ctx->path : none;
}

bool H5Group::collective() const {
  return m_ctx && m_ctx->collective;
}

std::string H5Group::where(const std::string& object) const {
  const std::string obj = join(m_name, object);
  return (obj == "/" ? std::string() : "'" + obj + "' in ") + "'" + file_path() + "'";
}

H5Group H5Group::create_group(const std::string& name) const {
  MANTISSA_ASSERT(valid(), "H5Group::create_group on a closed group");
  Hid lcpl(check(H5Pcreate(H5P_LINK_CREATE), "cannot create a link property list"));
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t id = H5Gcreate2(m_id, name.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) {
    detail::QuietHdf5 quiet;
    if (detail::link_exists(m_id, name)) {
      H5Eclear2(H5E_DEFAULT);
      throw FileError(FileProblem::other, file_path(),
                      "cannot create group " + where(name) + ": it exists already (internal: written twice)");
    }
    detail::throw_hdf5("cannot create group " + where(name), file_path(), false);
  }
  return H5Group(m_ctx, id, join(m_name, name));
}

H5Group H5Group::group(const std::string& name) const {
  MANTISSA_ASSERT(valid(), "H5Group::group on a closed group");
  if (!has(name))
    fail(*m_ctx, FileProblem::missing_object,
         where() + " has no group '" + name + "'; " +
             (m_ctx->verify == Verify::checksums
                  ? "the file was written by another version or for another purpose, or is damaged"
                  : "check the file's layout (h5ls -r)"));
  const hid_t id = H5Gopen2(m_id, name.c_str(), H5P_DEFAULT);
  if (id < 0) detail::throw_hdf5("cannot open group " + where(name), file_path(), true);
  return H5Group(m_ctx, id, join(m_name, name));
}

bool H5Group::has(const std::string& name) const {
  if (!valid() || name.empty()) return false;
  const bool yes = detail::link_exists(m_id, name);
  H5Eclear2(H5E_DEFAULT);
  return yes;
}

std::vector<std::string> H5Group::names() const {
  std::vector<std::string> out;
  const herr_t rc = H5Literate(
      m_id, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* n, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(n);
        return 0;
      },
      &out);
  if (rc < 0) detail::throw_hdf5("cannot list the group " + where(), file_path(), true);
  return out;
}

// ------------------------------------------------------------------ attributes

void H5Group::set_value(const std::string& key, const AttributeValue& v) const {
  MANTISSA_ASSERT(valid(), "H5Group::set on a closed group");
  try {
    detail::write_attribute(m_id, key, v);
  } catch (const FileError& e) {
    throw FileError(e.problem(), file_path(),
                    "cannot write attribute '" + key + "' of " + where() + ": " +
                        std::string(e.what()).substr(std::string(e.what()).find(':') + 2));
  }
}

void H5Group::set(const Attributes& attrs) const {
  for (const auto& [k, v] : attrs.all()) set_value(k, v);
}

namespace {
// The object an attribute goes on: this group itself ("") or one below it, opened for the call.
Hid open_object(const H5Group& g, hid_t loc, const std::string& object, const std::string& key,
                const std::string& where) {
  if (key == "checksum" || key == "mantissa_type")
    throw FileError(FileProblem::other, g.file_path(),
                    where + ": attribute name '" + key + "' is reserved by mantissa; rename it");
  if (object.empty()) return Hid(H5Oopen(loc, ".", H5P_DEFAULT));
  if (!g.has(object))
    throw FileError(FileProblem::missing_object, g.file_path(), where + " does not exist (write it first)");
  const hid_t id = H5Oopen(loc, object.c_str(), H5P_DEFAULT);
  if (id < 0) detail::throw_hdf5("cannot open " + where, g.file_path(), false);
  return Hid(id);
}
}  // namespace

void H5Group::set_on(const std::string& object, const std::string& key, const AttributeValue& v) const {
  MANTISSA_ASSERT(valid(), "H5Group::set_on on a closed group");
  const std::string w = where(object);
  Hid obj = open_object(*this, m_id, object, key, w);
  try {
    detail::write_attribute(obj, key, v);
  } catch (const FileError& e) {
    throw FileError(e.problem(), file_path(),
                    "cannot write attribute '" + key + "' of " + w + ": " + e.what());
  }
}

void H5Group::set_array_on(const std::string& object, const std::string& key,
                           const std::vector<std::int64_t>& shape, const std::vector<double>& v) const {
  MANTISSA_ASSERT(valid(), "H5Group::set_array_on on a closed group");
  const std::string w = where(object);
  if (shape.empty() || count_of(shape) != std::int64_t(v.size()))
    throw FileError(FileProblem::other, file_path(),
                    "attribute '" + key + "' of " + w + ": shape " + shape_text(shape) + " does not hold " +
                        std::to_string(v.size()) + " values (internal)");
  Hid obj = open_object(*this, m_id, object, key, w);
  const std::string what = "cannot write attribute '" + key + "' of " + w;
  if (H5Aexists(obj, key.c_str()) > 0) H5Adelete(obj, key.c_str());
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Hid space(check(v.empty() ? H5Screate(H5S_NULL) : H5Screate_simple(int(dims.size()), dims.data(), nullptr),
                  what));
  const hid_t id = H5Acreate2(obj, key.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) detail::throw_hdf5(what, file_path(), false);
  Hid attr(id);
  if (!v.empty() && H5Awrite(attr, H5T_NATIVE_DOUBLE, v.data()) < 0)
    detail::throw_hdf5(what, file_path(), false);
}

bool H5Group::has_attribute(const std::string& key) const {
  const htri_t r = H5Aexists(m_id, key.c_str());
  H5Eclear2(H5E_DEFAULT);
  return r > 0;
}

Attributes H5Group::attributes() const {
  try {
    return detail::read_attributes(m_id);
  } catch (const Error&) {
    detail::throw_hdf5("cannot read the attributes of " + where(), file_path(), true);
  }
}

namespace {
template <class V>
V get_attr(const H5Group& g, const Attributes& a, const std::string& key, const char* what,
           const std::string& where) {
  if (!a.has(key))
    throw FileError(FileProblem::missing_object, g.file_path(),
                    where + " has no attribute '" + key +
                        "'; the file was written by another version or for another purpose, or is damaged");
  const auto& v = a.all().at(key);
  if constexpr (std::is_same_v<V, double>) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return double(*i);
  }
  if (!std::holds_alternative<V>(v))
    throw FileError(FileProblem::invalid_content, g.file_path(),
                    "attribute '" + key + "' of " + where + " is not " + what);
  return std::get<V>(v);
}
}  // namespace

double H5Group::get_real(const std::string& key) const {
  return get_attr<double>(*this, attributes(), key, "a real number", where());
}
std::int64_t H5Group::get_int(const std::string& key) const {
  return get_attr<std::int64_t>(*this, attributes(), key, "an integer", where());
}
std::string H5Group::get_string(const std::string& key) const {
  return get_attr<std::string>(*this, attributes(), key, "a string", where());
}
std::vector<double> H5Group::get_reals(const std::string& key) const {
  const Attributes a = attributes();
  if (a.has(key)) {
    const auto& v = a.all().at(key);
    if (const auto* d = std::get_if<double>(&v)) return {*d};
    if (const auto* iv = std::get_if<std::vector<std::int64_t>>(&v)) return {iv->begin(), iv->end()};
  }
  return get_attr<std::vector<double>>(*this, a, key, "a list of real numbers", where());
}
std::vector<std::int64_t> H5Group::get_ints(const std::string& key) const {
  const Attributes a = attributes();
  if (a.has(key))
    if (const auto* i = std::get_if<std::int64_t>(&a.all().at(key))) return {*i};
  return get_attr<std::vector<std::int64_t>>(*this, a, key, "a list of integers", where());
}

void H5Group::require_format(const std::string& format, std::int64_t version, const std::string& format_key,
                             const std::string& version_key) const {
  const Attributes a = attributes();
  const auto* have = a.has(format_key) ? std::get_if<std::string>(&a.all().at(format_key)) : nullptr;
  if (!have)
    fail(*m_ctx, FileProblem::wrong_format,
         "'" + file_path() + "' is an HDF5 file but not a " + format + " file (it has no attribute '" +
             format_key + "'); give a file that mantissa wrote as " + format);
  if (*have != format)
    fail(*m_ctx, FileProblem::wrong_format,
         "'" + file_path() + "' is a '" + *have + "' file, not a '" + format + "' one; give a " + format +
             " file");
  const auto* v = a.has(version_key) ? std::get_if<std::int64_t>(&a.all().at(version_key)) : nullptr;
  if (!v)
    fail(*m_ctx, FileProblem::damaged,
         "'" + file_path() + "' (" + format + ") has no integer attribute '" + version_key +
             "'; the file is damaged or was not written by mantissa");
  if (*v != version)
    fail(*m_ctx, FileProblem::wrong_format,
         "'" + file_path() + "' is " + format + " version " + std::to_string(*v) + " but this mantissa (" +
             MANTISSA_VERSION_STRING + ") reads version " + std::to_string(version) + "; " +
             (*v > version ? "use the newer mantissa that wrote it"
                           : "re-create the file with this mantissa"));
}

// ------------------------------------------------------------------ whole datasets

namespace {

// Checks the shape and creates the dataset; refuses reserved attribute names.
Hid create(const H5Group& g, hid_t loc, const std::string& name, const std::vector<std::int64_t>& shape,
           hid_t file_type, const Attributes& attrs, const std::string& where, bool fill = false) {
  if (name.empty()) throw FileError(FileProblem::other, g.file_path(), "a dataset name is empty (internal)");
  for (auto v : shape)
    if (v < 0)
      throw FileError(FileProblem::other, g.file_path(),
                      "dataset " + where + ": negative extent in shape " + shape_text(shape) + " (internal)");
  for (const auto& [k, v] : attrs.all()) {
    (void)v;
    if (k == "checksum" || k == "mantissa_type")
      throw FileError(FileProblem::other, g.file_path(),
                      "dataset " + where + ": attribute name '" + k + "' is reserved by mantissa; rename it");
  }
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Hid lcpl(check(H5Pcreate(H5P_LINK_CREATE), "cannot create a link property list"));
  H5Pset_create_intermediate_group(lcpl, 1);
  Hid dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "cannot create a dataset property list"));
  // Every element is written right after creation: no fill pass (variable-length strings
  // need HDF5's fill value, though).
  if (!fill) H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  Hid space(
      check(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr),
            "cannot create a dataspace"));
  const hid_t id = H5Dcreate2(loc, name.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT);
  if (id < 0) detail::throw_hdf5("cannot create dataset " + where, g.file_path(), false);
  return Hid(id);
}

void finish(const H5Group& g, hid_t dset, const Attributes& attrs, const std::string& type_name,
            std::uint64_t sum, const std::string& where) {
  try {
    detail::write_attributes(dset, attrs);
    detail::write_attribute(dset, "mantissa_type", type_name);
    detail::write_checksum(dset, sum);
  } catch (const FileError& e) {
    throw FileError(e.problem(), g.file_path(), "dataset " + where + ": " + e.what());
  }
}

}  // namespace

void H5Group::write_raw(const std::string& name, const std::vector<std::int64_t>& shape, StorageKind kind,
                        const std::string& type_name, std::size_t elem_size, const void* data,
                        const Attributes& attrs) const {
  MANTISSA_ASSERT(valid(), "H5Group::write on a closed group");
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  const std::int64_t n = count_of(shape);
  Hid dset = create(*this, m_id, name, shape, detail::memory_type(kind), attrs, w);
  const bool writer = c.rank == 0;
  std::uint64_t sum = 0;
  in_step(c, [&] {
    if (n == 0) return;  // nothing to write (and no storage allocated to write to)
    if (c.collective) {
      Hid filespace(check(H5Dget_space(dset), "cannot get a dataspace"));
      Hid memspace;
      if (!writer) {
        H5Sselect_none(filespace);
        const hsize_t one = 1;
        memspace = Hid(check(H5Screate_simple(1, &one, nullptr), "cannot create a dataspace"));
        H5Sselect_none(memspace);
      } else {
        memspace = Hid(check(H5Dget_space(dset), "cannot get a dataspace"));
      }
      static const unsigned char dummy = 0;
      Hid dxpl = detail::transfer(c.transfer_collective);
      if (H5Dwrite(dset, detail::memory_type(kind), memspace, filespace, dxpl,
                   writer && n > 0 ? data : &dummy) < 0)
        detail::throw_hdf5("cannot write dataset " + w, c.path, false);
    } else if (n > 0 && H5Dwrite(dset, detail::memory_type(kind), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
      detail::throw_hdf5("cannot write dataset " + w, c.path, false);
    }
    if (writer && n > 0) sum = whole_checksum(data, elem_size, n);
  });
  if (c.collective) MPI_Bcast(&sum, 1, MPI_UINT64_T, 0, c.comm);  // attributes must agree on all ranks
  finish(*this, dset, attrs, type_name, sum, w);
}

void H5Group::write_strings(const std::string& name, const std::vector<std::string>& v,
                            const Attributes& attrs) const {
  MANTISSA_ASSERT(valid(), "H5Group::write_strings on a closed group");
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  // Fixed-length UTF-8, NUL padded: parallel HDF5 cannot write variable-length data.
  std::int64_t n = std::int64_t(v.size()), width = 1;
  for (const auto& x : v) width = std::max<std::int64_t>(width, std::int64_t(x.size()));
  if (c.collective) {
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, c.comm);
    MPI_Bcast(&width, 1, MPI_INT64_T, 0, c.comm);
  }
  Hid type(check(H5Tcopy(H5T_C_S1), "cannot create a string type"));
  H5Tset_size(type, std::size_t(width));
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  H5Tset_cset(type, H5T_CSET_UTF8);
  Hid dset = create(*this, m_id, name, {n}, type, attrs, w, true);
  std::vector<char> buf(std::size_t(c.rank == 0 ? n * width : 0), '\0');
  std::uint64_t sum = 0;
  if (c.rank == 0)
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::memcpy(buf.data() + std::int64_t(i) * width, v[i].data(), v[i].size());
      sum += element_hash(std::uint64_t(i), fnv1a(v[i]));
    }
  in_step(c, [&] {
    if (n == 0) return;
    Hid filespace(check(H5Dget_space(dset), "cannot get a dataspace"));
    Hid memspace(check(H5Dget_space(dset), "cannot get a dataspace"));
    if (c.rank != 0) {
      H5Sselect_none(filespace);
      H5Sselect_none(memspace);
    }
    char dummy = 0;
    Hid dxpl = c.collective ? detail::transfer(c.transfer_collective) : Hid(H5Pcreate(H5P_DATASET_XFER));
    if (H5Dwrite(dset, type, memspace, filespace, dxpl, c.rank == 0 ? buf.data() : &dummy) < 0)
      detail::throw_hdf5("cannot write dataset " + w, c.path, false);
  });
  if (c.collective) MPI_Bcast(&sum, 1, MPI_UINT64_T, 0, c.comm);
  finish(*this, dset, attrs, k_string_type, sum, w);
}

namespace {

struct Opened {
  Hid dset;
  Attributes attrs;
  std::vector<std::int64_t> dims;
};

Opened open_dataset(const H5Group& g, hid_t loc, const std::string& name, const std::string& type_name,
                    Verify verify, const std::string& where) {
  if (!g.has(name))
    throw FileError(FileProblem::missing_object, g.file_path(),
                    "there is no dataset " + where +
                        "; the file was written by another version or for another purpose, or is damaged");
  Opened o;
  const hid_t id = H5Dopen2(loc, name.c_str(), H5P_DEFAULT);
  if (id < 0) detail::throw_hdf5("cannot open dataset " + where, g.file_path(), true);
  o.dset = Hid(id);
  try {
    o.attrs = detail::read_attributes(o.dset);
  } catch (const Error&) {
    detail::throw_hdf5("cannot read the attributes of dataset " + where, g.file_path(), true);
  }
  o.dims = dims_of(o.dset);
  const bool typed = o.attrs.has("mantissa_type");
  if (typed && verify != Verify::none) {
    const auto* t = std::get_if<std::string>(&o.attrs.all().at("mantissa_type"));
    const std::string have = t ? *t : std::string("?");
    if (have != type_name)
      throw FileError(FileProblem::invalid_content, g.file_path(),
                      "dataset " + where + " is stored as " + have + " but is read as " + type_name +
                          "; read it with the type it was written in");
  }
  if (verify == Verify::checksums && (!typed || !o.attrs.has("checksum")))
    throw FileError(FileProblem::damaged, g.file_path(),
                    "dataset " + where + " has no " + (typed ? "checksum" : "mantissa_type") +
                        " attribute: the file was not written by mantissa's I/O layer or is damaged; "
                        "use an intact file written by this mantissa");
  return o;
}

void verify_sum(const H5Group& g, const Attributes& a, std::uint64_t computed, const std::string& where) {
  if (!a.has("checksum")) return;
  const auto* s = std::get_if<std::int64_t>(&a.all().at("checksum"));
  const std::uint64_t stored = s ? std::uint64_t(*s) : ~computed;
  if (stored != computed)
    throw FileError(
        FileProblem::damaged, g.file_path(),
        "dataset " + where + " fails its checksum (stored " + hex64(stored) + ", computed " +
            hex64(computed) + "): the file is damaged; " +
            remedy_text(FileProblem::damaged, std::filesystem::path(g.file_path()).parent_path()));
}

}  // namespace

void H5Group::read_raw(const std::string& name, StorageKind kind, const std::string& type_name,
                       std::size_t elem_size, std::vector<std::int64_t>& dims, std::int64_t row_offset,
                       std::int64_t rows, const std::function<void*(std::size_t)>& alloc) const {
  MANTISSA_ASSERT(valid(), "H5Group::read on a closed group");
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  Opened o = open_dataset(*this, m_id, name, type_name, c.verify, w);
  dims = o.dims;
  const bool whole = rows < 0;
  if (whole) {
    const std::int64_t n = count_of(dims);
    void* out = alloc(std::size_t(n));
    if (n > 0 && H5Dread(o.dset, detail::memory_type(kind), H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      detail::throw_hdf5("cannot read dataset " + w, c.path, true);
    if (c.verify != Verify::none)
      verify_sum(*this, o.attrs, n > 0 ? whole_checksum(out, elem_size, n) : 0, w);
    return;
  }
  // Rows [row_offset, row_offset + rows) of dimension 0, collectively.
  std::uint64_t local = 0;
  std::int64_t got = 0;
  in_step(c, [&] {
    if (dims.empty() || row_offset < 0 || rows < 0 || row_offset + rows > dims[0])
      throw FileError(FileProblem::invalid_content, c.path,
                      "dataset " + w + " has shape " + shape_text(dims) + "; rows " +
                          std::to_string(row_offset) + ".." + std::to_string(row_offset + rows) +
                          " were asked for (rank " + std::to_string(c.rank) + ")");
    const std::int64_t row_len = count_of(std::vector<std::int64_t>(dims.begin() + 1, dims.end()));
    void* out = alloc(std::size_t(rows * row_len));
    Hid filespace(check(H5Dget_space(o.dset), "cannot get a dataspace"));
    Hid memspace;
    if (rows * row_len == 0) {
      H5Sselect_none(filespace);
      const hsize_t one = 1;
      memspace = Hid(check(H5Screate_simple(1, &one, nullptr), "cannot create a dataspace"));
      H5Sselect_none(memspace);
    } else {
      std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
      start[0] = hsize_t(row_offset);
      count[0] = hsize_t(rows);
      H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
      memspace =
          Hid(check(H5Screate_simple(int(count.size()), count.data(), nullptr), "cannot create a dataspace"));
    }
    unsigned char dummy[8];
    Hid dxpl = c.collective ? detail::transfer(c.transfer_collective) : Hid(H5Pcreate(H5P_DATASET_XFER));
    if (H5Dread(o.dset, detail::memory_type(kind), memspace, filespace, dxpl,
                rows * row_len != 0 ? out : static_cast<void*>(dummy)) < 0)
      detail::throw_hdf5("cannot read dataset " + w, c.path, true);
    if (rows * row_len > 0)
      local = partial_checksum(out, elem_size, {1, rows, row_len}, {0, row_offset, 0}, {1, dims[0], row_len});
    got = rows;
  });
  std::uint64_t sum = local;
  std::int64_t total = got;
  if (c.collective) {
    MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, c.comm);
    MPI_Allreduce(&got, &total, 1, MPI_INT64_T, MPI_SUM, c.comm);
  }
  if (total == dims[0] && c.verify != Verify::none) verify_sum(*this, o.attrs, sum, w);
}

std::vector<std::string> H5Group::read_strings(const std::string& name) const {
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  Opened o = open_dataset(*this, m_id, name, k_string_type, c.verify, w);
  if (o.dims.size() != 1)
    throw FileError(FileProblem::invalid_content, c.path,
                    "dataset " + w + " has shape " + shape_text(o.dims) + ", not a list of strings");
  Hid ftype(H5Dget_type(o.dset));
  if (!ftype.valid() || H5Tget_class(ftype) != H5T_STRING)
    throw FileError(FileProblem::invalid_content, c.path, "dataset " + w + " does not hold strings");
  const std::size_t n = std::size_t(o.dims[0]);
  std::vector<std::string> out;
  std::uint64_t sum = 0;
  if (H5Tis_variable_str(ftype) > 0) {  // written by other tools (h5py's default)
    Hid type(check(H5Tcopy(H5T_C_S1), "cannot create a string type"));
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5Tget_cset(ftype));
    std::vector<char*> ptrs(n, nullptr);
    if (n > 0 && H5Dread(o.dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
      detail::throw_hdf5("cannot read dataset " + w, c.path, true);
    for (auto* p : ptrs) {
      out.emplace_back(p ? p : "");
      H5free_memory(p);
    }
  } else {
    const std::size_t width = H5Tget_size(ftype);
    std::vector<char> buf(n * width + 1, '\0');
    if (n > 0 && H5Dread(o.dset, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
      detail::throw_hdf5("cannot read dataset " + w, c.path, true);
    for (std::size_t i = 0; i < n; ++i) {
      const char* p = buf.data() + i * width;
      out.emplace_back(p, std::find(p, p + width, '\0') - p);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) sum += element_hash(std::uint64_t(i), fnv1a(out[i]));
  if (c.verify != Verify::none) verify_sum(*this, o.attrs, sum, w);
  return out;
}

std::vector<std::int64_t> H5Group::shape(const std::string& name) const {
  const std::string w = where(name);
  if (!has(name)) throw FileError(FileProblem::missing_object, file_path(), "there is no dataset " + w);
  Hid d(H5Dopen2(m_id, name.c_str(), H5P_DEFAULT));
  if (!d.valid()) detail::throw_hdf5("cannot open dataset " + w, file_path(), true);
  return dims_of(d);
}

std::string H5Group::element_type(const std::string& name) const {
  const std::string w = where(name);
  if (!has(name)) throw FileError(FileProblem::missing_object, file_path(), "there is no dataset " + w);
  const Attributes a = dataset_attributes(name);
  if (a.has("mantissa_type"))
    if (const auto* t = std::get_if<std::string>(&a.all().at("mantissa_type"))) return *t;
  Hid d(H5Dopen2(m_id, name.c_str(), H5P_DEFAULT));
  if (!d.valid()) detail::throw_hdf5("cannot open dataset " + w, file_path(), true);
  Hid t(H5Dget_type(d));
  if (!t.valid()) detail::throw_hdf5("cannot read the type of dataset " + w, file_path(), true);
  const std::size_t size = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_FLOAT:
      return size == 8 ? "fp64" : size == 4 ? "fp32" : "";
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(t) == H5T_SGN_2;
      if (is_signed) return size == 8 ? "int64" : size == 4 ? "int32" : "";
      return size == 8 ? "uint64" : size == 2 ? "uint16" : size == 1 ? "uint8" : "";
    }
    case H5T_STRING:
      return "string";
    default:
      return "";
  }
}

Attributes H5Group::dataset_attributes(const std::string& name) const {
  const std::string w = where(name);
  if (!has(name)) throw FileError(FileProblem::missing_object, file_path(), "there is no dataset " + w);
  Hid d(H5Oopen(m_id, name.c_str(), H5P_DEFAULT));
  if (!d.valid()) detail::throw_hdf5("cannot open " + w, file_path(), true);
  try {
    return detail::read_attributes(d);
  } catch (const Error&) {
    detail::throw_hdf5("cannot read the attributes of " + w, file_path(), true);
  }
}

// ------------------------------------------------------------------ distributed datasets

void H5Group::write_rows_raw(const std::string& name, const std::vector<std::int64_t>& shape,
                             std::int64_t row_offset, std::int64_t local_values, StorageKind kind,
                             const std::string& type_name, std::size_t elem_size, const void* data,
                             const Attributes& attrs) const {
  MANTISSA_ASSERT(valid(), "H5Group::write_rows on a closed group");
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  std::int64_t rows = 0, row_len = 1;
  in_step(c, [&] {
    if (shape.empty())
      throw FileError(FileProblem::other, c.path, "dataset " + w + ": rows of a scalar (internal)");
    row_len = count_of(std::vector<std::int64_t>(shape.begin() + 1, shape.end()));
    if (row_len == 0 ? local_values != 0 : local_values % row_len != 0)
      throw FileError(FileProblem::other, c.path,
                      "dataset " + w + ": rank " + std::to_string(c.rank) + " holds " +
                          std::to_string(local_values) + " values, not a whole number of rows of " +
                          std::to_string(row_len));
    rows = row_len == 0 ? 0 : local_values / row_len;
    if (row_offset < 0 || row_offset + rows > shape[0])
      throw FileError(FileProblem::other, c.path,
                      "dataset " + w + ": rank " + std::to_string(c.rank) + " holds rows " +
                          std::to_string(row_offset) + ".." + std::to_string(row_offset + rows) +
                          " outside the " + std::to_string(shape[0]) + " rows of " + shape_text(shape));
  });
  std::int64_t total = rows;
  if (c.collective) MPI_Allreduce(&rows, &total, 1, MPI_INT64_T, MPI_SUM, c.comm);
  if (total != shape[0])
    throw FileError(FileProblem::other, c.path,
                    "dataset " + w + ": the ranks hold " + std::to_string(total) + " rows in all, not the " +
                        std::to_string(shape[0]) + " of " + shape_text(shape));
  Hid dset = create(*this, m_id, name, shape, detail::memory_type(kind), attrs, w);
  std::uint64_t local = 0;
  in_step(c, [&] {
    if (count_of(shape) == 0) return;  // nothing to write (and no storage allocated to write to)
    Hid filespace(check(H5Dget_space(dset), "cannot get a dataspace"));
    Hid memspace;
    const bool none = rows * row_len == 0;
    if (none) {
      H5Sselect_none(filespace);
      const hsize_t one = 1;
      memspace = Hid(check(H5Screate_simple(1, &one, nullptr), "cannot create a dataspace"));
      H5Sselect_none(memspace);
    } else {
      std::vector<hsize_t> start(shape.size(), 0), count(shape.begin(), shape.end());
      start[0] = hsize_t(row_offset);
      count[0] = hsize_t(rows);
      H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
      memspace =
          Hid(check(H5Screate_simple(int(count.size()), count.data(), nullptr), "cannot create a dataspace"));
    }
    static const unsigned char dummy = 0;
    Hid dxpl = c.collective ? detail::transfer(c.transfer_collective) : Hid(H5Pcreate(H5P_DATASET_XFER));
    if (H5Dwrite(dset, detail::memory_type(kind), memspace, filespace, dxpl, none ? &dummy : data) < 0)
      detail::throw_hdf5("cannot write dataset " + w, c.path, false);
    if (!none)
      local =
          partial_checksum(data, elem_size, {1, rows, row_len}, {0, row_offset, 0}, {1, shape[0], row_len});
  });
  std::uint64_t sum = local;
  if (c.collective) MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, c.comm);
  finish(*this, dset, attrs, type_name, sum, w);
}

void H5Group::write_field(const std::string& name, const FieldRef& f, const Grid& grid) const {
  MANTISSA_ASSERT(valid(), "H5Group::write_field on a closed group");
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  in_step(c, [&] {
    if (!f.to_host)
      throw FileError(FileProblem::other, c.path, "field " + w + " has no host copy (internal)");
    for (int a = 0; a < 3; ++a)
      if (f.offset[a] < 0 || f.offset[a] + f.extent[a] > grid.n[a])
        throw FileError(
            FileProblem::other, c.path,
            "field " + w + ": rank " + std::to_string(c.rank) + "'s block lies outside the grid (internal)");
  });
  in_step(c, [&] {
    try {
      detail::write_field(m_id, c.collective ? c.comm : MPI_COMM_SELF, name, f, grid.n, grid.dim,
                          c.collective && c.transfer_collective);
    } catch (const FileError& e) {
      throw FileError(e.problem(), c.path, "field " + w + ": " + e.what());
    }
  });
}

void H5Group::read_field(const std::string& name, const FieldRef& f) const {
  MANTISSA_ASSERT(valid(), "H5Group::read_field on a closed group");
  const H5Context& c = *m_ctx;
  const std::string w = where(name);
  MPI_Comm comm = c.collective ? c.comm : MPI_COMM_SELF;
  if (!f.from_host)
    throw FileError(FileProblem::other, c.path, "field " + w + " cannot be read into (internal)");
  Opened o = open_dataset(*this, m_id, name, f.type_name, c.verify, w);
  // The run's global grid, from the ranks' blocks.
  std::array<std::int64_t, 3> hi{f.offset[0] + f.extent[0], f.offset[1] + f.extent[1],
                                 f.offset[2] + f.extent[2]};
  std::array<std::int64_t, 3> n{};
  MPI_Allreduce(hi.data(), n.data(), 3, MPI_INT64_T, MPI_MAX, comm);
  std::vector<std::int64_t> xyz(o.dims.rbegin(), o.dims.rend());
  while (xyz.size() < 3) xyz.push_back(1);
  if (o.dims.size() < 2 || o.dims.size() > 3 || xyz[0] != n[0] || xyz[1] != n[1] || xyz[2] != n[2])
    throw FileError(FileProblem::invalid_content, c.path,
                    "field " + w + " is " + shape_text({xyz[0], xyz[1], xyz[2]}) +
                        " (x, y, z) but the run's grid is " + shape_text({n[0], n[1], n[2]}) +
                        "; use a file written on this grid");
  const int nd = int(o.dims.size());
  std::vector<hsize_t> start, count;
  for (int a = nd - 1; a >= 0; --a) {
    start.push_back(hsize_t(f.offset[a]));
    count.push_back(hsize_t(f.extent[a]));
  }
  std::vector<unsigned char> buf(std::size_t(f.num_owned()) * f.elem_size);
  std::uint64_t local = 0;
  in_step(c, [&] {
    Hid filespace(check(H5Dget_space(o.dset), "cannot get a dataspace"));
    H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    Hid memspace(check(H5Screate_simple(nd, count.data(), nullptr), "cannot create a dataspace"));
    Hid dxpl = c.collective ? detail::transfer(c.transfer_collective) : Hid(H5Pcreate(H5P_DATASET_XFER));
    if (H5Dread(o.dset, detail::memory_type(f.kind), memspace, filespace, dxpl, buf.data()) < 0)
      detail::throw_hdf5("cannot read field " + w, c.path, true);
    local = partial_checksum(buf.data(), f.elem_size, {f.extent[2], f.extent[1], f.extent[0]},
                             {f.offset[2], f.offset[1], f.offset[0]}, {n[2], n[1], n[0]});
  });
  std::uint64_t sum = 0;
  MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (c.verify != Verify::none) verify_sum(*this, o.attrs, sum, w);
  f.from_host(buf.data());  // only after the checksum passed
}

// ============================================================================ H5File

namespace {

void require_readable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw_errno("cannot open", path, errno);
  if (S_ISDIR(st.st_mode))
    throw FileError(FileProblem::wrong_format, path,
                    "cannot open '" + path + "': it is a directory; give a file");
}

std::shared_ptr<H5Context> make_context(const std::string& path, MPI_Comm comm, bool writable,
                                        Verify verify) {
  detail::silence_hdf5();
  auto c = std::make_shared<H5Context>();
  c->path = path;
  c->writable = writable;
  c->verify = verify;
  if (comm != MPI_COMM_NULL) {
    c->comm = comm;
    c->collective = true;
    MPI_Comm_rank(comm, &c->rank);
    c->transfer_collective = use_collective_transfer(IoTransfer::automatic);
  }
  return c;
}

}  // namespace

namespace {
// HDF5 (1.10) leaves a file whose final flush fails half-destroyed in its ID table, and its
// MPI_Finalize hook then crashes on it (H5F__close_cb). A temporary whose contents are
// discarded anyway is emptied first, so that the flush finds room even on a full disk.
void discard_before_close(const H5Context& c) {
  if (!c.temporary || !c.writable) return;
  if (c.rank == 0) ::truncate(c.open_path.c_str(), 0);
  if (c.collective) MPI_Barrier(c.comm);
}
}  // namespace

H5File::~H5File() {
  close_handle();
  if (m_file >= 0 && H5Iis_valid(m_file) > 0) {
    if (m_ctx && (m_ctx->failed || std::uncaught_exceptions() > 0)) discard_before_close(*m_ctx);
    H5Fclose(m_file);
  }
  m_file = -1;
  H5Eclear2(H5E_DEFAULT);
}

// The base's move touches only the H5Group part of `o`; m_file is still o's to hand over.
// NOLINTBEGIN(bugprone-use-after-move)
H5File::H5File(H5File&& o) noexcept : H5Group(std::move(o)), m_file(o.m_file) {
  o.m_file = -1;
}
// NOLINTEND(bugprone-use-after-move)

H5File& H5File::operator=(H5File&& o) noexcept {
  if (this != &o) {
    close_handle();
    if (m_file >= 0 && H5Iis_valid(m_file) > 0) H5Fclose(m_file);
    H5Group::operator=(std::move(o));
    m_file = o.m_file;  // NOLINT(bugprone-use-after-move): the base moved only its own part
    o.m_file = -1;
  }
  return *this;
}

void H5File::close() {
  if (m_file < 0) return;
  close_handle();
  const std::shared_ptr<const H5Context> c = m_ctx;
  const hid_t id = m_file;
  m_file = -1;
  const std::string what =
      std::string(c->writable ? "cannot finish writing" : "cannot close") + " '" + c->path + "'";
  if (c->writable && !c->failed) {
    // Flush first: when that fails the close below still succeeds (see discard_before_close).
    try {
      in_step(*c, [&] {
        if (H5Fflush(id, H5F_SCOPE_LOCAL) < 0) detail::throw_hdf5(what, c->path, false);
      });
    } catch (...) {
      discard_before_close(*c);
      H5Fclose(id);
      H5Eclear2(H5E_DEFAULT);
      throw;
    }
  }
  if (c->failed) discard_before_close(*c);
  in_step(*c, [&] {
    if (H5Fclose(id) < 0) detail::throw_hdf5(what, c->path, !c->writable);
  });
}

H5File::H5File(std::shared_ptr<const detail::H5Context> ctx, std::int64_t file, std::int64_t root)
    : H5Group(std::move(ctx), root, "/"), m_file(file) {}

H5File H5File::create(const std::string& path) {
  return open_impl(path, path, MPI_COMM_NULL, true, true, Verify::checksums);
}
H5File H5File::create(const PendingFile& out) {
  return open_impl(out.temp_path(), out.path(), MPI_COMM_NULL, true, true, Verify::checksums);
}
H5File H5File::open(const std::string& path, Verify verify) {
  return open_impl(path, path, MPI_COMM_NULL, false, false, verify);
}
H5File H5File::open_rw(const std::string& path, Verify verify) {
  return open_impl(path, path, MPI_COMM_NULL, false, true, verify);
}
H5File H5File::create(const std::string& path, MPI_Comm comm) {
  return open_impl(path, path, comm, true, true, Verify::checksums);
}
H5File H5File::create(const PendingFile& out, MPI_Comm comm) {
  return open_impl(out.temp_path(), out.path(), comm, true, true, Verify::checksums);
}
H5File H5File::open(const std::string& path, MPI_Comm comm, Verify verify) {
  return open_impl(path, path, comm, false, false, verify);
}

H5File H5File::open_impl(const std::string& open_path, const std::string& shown, MPI_Comm comm, bool create,
                         bool rw, Verify verify) {
  auto ctx = make_context(shown, comm, rw, verify);
  ctx->open_path = open_path;
  ctx->temporary = create && open_path != shown;
  hid_t file = -1, root = -1;
  try {
    in_step(*ctx, [&] {
      if (!create) require_readable(open_path);
      Hid fapl = access_list(*ctx);
      if (create) {
        file = H5Fcreate(open_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        if (file < 0) detail::throw_hdf5("cannot create '" + shown + "'", shown, false);
      } else {
        file = H5Fopen(open_path.c_str(), rw ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
        if (file < 0) detail::throw_hdf5("cannot open '" + shown + "'", shown, true);
      }
      root = H5Gopen2(file, "/", H5P_DEFAULT);
      if (root < 0) {
        H5Fclose(file);
        file = -1;
        detail::throw_hdf5("cannot open the root group of '" + shown + "'", shown, true);
      }
    });
  } catch (...) {
    // A rank that succeeded while another failed has the file open: close it before throwing.
    if (root >= 0) H5Gclose(root);
    if (file >= 0) H5Fclose(file);
    H5Eclear2(H5E_DEFAULT);
    throw;
  }
  return H5File(ctx, file, root);
}

}  // namespace io
}  // namespace mantissa
