#include <mantissa/core/Error.hpp>
#include <mantissa/io/Checksum.hpp>
#include <mantissa/io/detail/Hdf5.hpp>

#include <sys/statvfs.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace mantissa {
namespace io {

std::size_t storage_size(StorageKind k) {
  switch (k) {
    case StorageKind::f64:
      return 8;
    case StorageKind::f32:
      return 4;
    case StorageKind::u8:
      return 1;
    case StorageKind::u16:
      return 2;
    case StorageKind::i32:
      return 4;
    case StorageKind::i64:
    case StorageKind::u64:
      return 8;
  }
  return 0;
}

std::string to_string(StorageKind k) {
  switch (k) {
    case StorageKind::f64:
      return "float64";
    case StorageKind::f32:
      return "float32";
    case StorageKind::u8:
      return "uint8";
    case StorageKind::u16:
      return "uint16";
    case StorageKind::i32:
      return "int32";
    case StorageKind::i64:
      return "int64";
    case StorageKind::u64:
      return "uint64";
  }
  return "unknown";
}

namespace detail {

herr_t Hid::reset() {
  herr_t status = 0;
  if (m_id >= 0) {
    switch (H5Iget_type(m_id)) {
      case H5I_FILE:
        status = H5Fclose(m_id);
        break;
      case H5I_GROUP:
        status = H5Gclose(m_id);
        break;
      case H5I_DATASET:
        status = H5Dclose(m_id);
        break;
      case H5I_DATASPACE:
        status = H5Sclose(m_id);
        break;
      case H5I_DATATYPE:
        status = H5Tclose(m_id);
        break;
      case H5I_ATTR:
        status = H5Aclose(m_id);
        break;
      case H5I_GENPROP_LST:
        status = H5Pclose(m_id);
        break;
      default:
        break;
    }
  }
  m_id = H5I_INVALID_HID;
  return status;
}

QuietHdf5::QuietHdf5() {
  silence_hdf5();
  H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
QuietHdf5::~QuietHdf5() {
  H5Eset_auto2(H5E_DEFAULT, m_func, m_data);
}

namespace {
herr_t collect_error(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (err->desc && *err->desc) out->emplace_back(err->desc);
  return 0;
}
}  // namespace

void silence_hdf5() {
  static const bool once = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)once;
}

std::string last_hdf5_error() {
  std::vector<std::string> lines;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &lines);
  H5Eclear2(H5E_DEFAULT);
  std::string out;
  for (const auto& l : lines) {
    if (out.find(l) != std::string::npos) continue;
    if (!out.empty()) out += "; ";
    out += l;
  }
  return out.empty() ? "no HDF5 error recorded" : out;
}

namespace {
bool contains_nocase(const std::string& hay, const char* needle) {
  std::string h = hay, n = needle;
  for (auto& c : h) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
  return h.find(n) != std::string::npos;
}
}  // namespace

Hdf5Failure take_hdf5_failure(bool reading) {
  Hdf5Failure f;
  f.text = last_hdf5_error();
  const std::string& t = f.text;
  // The sec2 driver reports "errno = 28, error message = 'No space left on device'".
  const auto at = t.find("errno = ");
  if (at != std::string::npos) f.err = std::atoi(t.c_str() + at + 8);
  struct Known {
    const char* text;
    int err;
  };
  // Open MPI/ROMIO report MPI error classes by name or strerror text.
  static const Known known[] = {{"MPI_ERR_NO_SPACE", ENOSPC},     {"No space left", ENOSPC},
#ifdef EDQUOT
                                {"MPI_ERR_QUOTA", EDQUOT},        {"quota", EDQUOT},
#endif
                                {"MPI_ERR_READ_ONLY", EROFS},     {"Read-only file system", EROFS},
                                {"MPI_ERR_ACCESS", EACCES},       {"Permission denied", EACCES},
                                {"MPI_ERR_NO_SUCH_FILE", ENOENT}, {"No such file", ENOENT}};
  if (f.err == 0)
    for (const auto& k : known)
      if (contains_nocase(t, k.text)) {
        f.err = k.err;
        break;
      }
  if (f.err != 0) f.problem = problem_from_errno(f.err);
  if (f.problem == FileProblem::other) {
    if (contains_nocase(t, "signature not found"))
      f.problem = FileProblem::not_hdf5;
    else if (contains_nocase(t, "truncated file"))
      f.problem = FileProblem::truncated;
    else if (reading)
      // Reading a file that opened: what fails is its metadata (bad checksums, signatures,
      // versions or addresses of object headers, B-trees, heaps).
      f.problem = FileProblem::damaged;
  }
  return f;
}

void throw_hdf5(const std::string& what, const std::string& path, bool reading) {
  const int sys_err = errno;  // what the failed system call left, before anything else runs
  Hdf5Failure f = take_hdf5_failure(reading);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (f.problem == FileProblem::other && !reading) {
    // MPI-IO drivers do not always pass the system's error through HDF5's stack: ask the
    // system (errno of the failed write, then the file system's state).
    if (problem_from_errno(sys_err) != FileProblem::other &&
        problem_from_errno(sys_err) != FileProblem::missing) {
      f.err = sys_err;
      f.problem = problem_from_errno(sys_err);
    } else {
      struct statvfs st {};
      if (::statvfs(dir.empty() ? "." : dir.c_str(), &st) == 0) {
        if (st.f_flag & ST_RDONLY) {
          f.err = EROFS;
          f.problem = FileProblem::read_only;
        } else if (std::uint64_t(st.f_bavail) * std::uint64_t(st.f_frsize) < (std::uint64_t(1) << 20)) {
          f.err = ENOSPC;
          f.problem = FileProblem::disk_full;
        }
      }
    }
  }
  std::string msg = what + ": " + cause_text(f.problem, f.err) + "; " + remedy_text(f.problem, dir);
  // HDF5's own words help where the cause is not one of the named ones.
  if (f.problem == FileProblem::other || f.problem == FileProblem::damaged) msg += " (HDF5: " + f.text + ")";
  throw FileError(f.problem, path, msg);
}

hid_t check(hid_t id, const std::string& what) {
  if (id < 0) throw_hdf5(what, {}, false);
  return id;
}

hid_t check(hid_t id, const std::string& what, const std::string& path, bool reading) {
  if (id < 0) throw_hdf5(what, path, reading);
  return id;
}

void collective_check(MPI_Comm comm, const std::string& local_error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = local_error.empty() ? size : rank, lowest = size;
  MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest == size) return;
  int len = static_cast<int>(local_error.size());
  MPI_Bcast(&len, 1, MPI_INT, lowest, comm);
  std::string msg = rank == lowest ? local_error : std::string(std::size_t(len), ' ');
  MPI_Bcast(msg.data(), len, MPI_CHAR, lowest, comm);
  throw Error(msg);
}

hid_t memory_type(StorageKind k) {
  switch (k) {
    case StorageKind::f64:
      return H5T_NATIVE_DOUBLE;
    case StorageKind::f32:
      return H5T_NATIVE_FLOAT;
    case StorageKind::u8:
      return H5T_NATIVE_UINT8;
    case StorageKind::u16:
      return H5T_NATIVE_UINT16;
    case StorageKind::i32:
      return H5T_NATIVE_INT32;
    case StorageKind::i64:
      return H5T_NATIVE_INT64;
    case StorageKind::u64:
      return H5T_NATIVE_UINT64;
  }
  return H5I_INVALID_HID;
}

Hid file_access(MPI_Comm comm, const AccessTuning& tuning) {
  Hid fapl(check(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file access property list"));
  check(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "cannot select the MPI-IO driver");
  if (tuning.alignment > 1) {
    // Aligning large datasets to file-system block boundaries keeps one rank's hyperslab from
    // sharing blocks with another's (HDF5 "Parallel HDF5 performance tuning" guide).
    check(H5Pset_alignment(fapl, 64 * 1024, hsize_t(tuning.alignment)), "cannot set the alignment");
  }
  if (tuning.collective_metadata) {
    check(H5Pset_all_coll_metadata_ops(fapl, 1), "cannot enable collective metadata reads");
    check(H5Pset_coll_metadata_write(fapl, 1), "cannot enable collective metadata writes");
  }
  return fapl;
}

Hid transfer(bool collective) {
  Hid dxpl(check(H5Pcreate(H5P_DATASET_XFER), "cannot create a transfer property list"));
  check(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
        "cannot set the MPI-IO transfer mode");
  return dxpl;
}

bool link_exists(hid_t loc, const std::string& path) {
  // H5Lexists fails (rather than saying no) when an intermediate group is missing: walk it.
  std::string partial;
  std::size_t start = path.front() == '/' ? 1 : 0;
  if (start == 1) partial = "/";
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) {
      if (!partial.empty() && partial.back() != '/') partial += '/';
      partial += path.substr(start, end - start);
      if (H5Lexists(loc, partial.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    start = end + 1;
  }
  return true;
}

Hid create_dataset(hid_t file, const std::string& path, StorageKind kind, const std::vector<hsize_t>& dims) {
  Hid lcpl(check(H5Pcreate(H5P_LINK_CREATE), "cannot create a link property list"));
  H5Pset_create_intermediate_group(lcpl, 1);
  Hid dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "cannot create a dataset property list"));
  // Every element is written right after creation: skip HDF5's fill pass (it would write the
  // whole dataset twice).
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  Hid space(check(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "cannot create a dataspace"));
  return Hid(check(H5Dcreate2(file, path.c_str(), memory_type(kind), space, lcpl, dcpl, H5P_DEFAULT),
                   "cannot create dataset '" + path + "'"));
}

void write_attribute(hid_t obj, const std::string& key, const AttributeValue& v) {
  if (H5Aexists(obj, key.c_str()) > 0) H5Adelete(obj, key.c_str());
  const std::string what = "cannot write attribute '" + key + "'";
  if (std::holds_alternative<std::string>(v)) {
    const std::string& s = std::get<std::string>(v);
    Hid type(check(H5Tcopy(H5T_C_S1), what));
    // Variable-length UTF-8: h5py reads it as str, and no length limit for the deck text.
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    Hid space(check(H5Screate(H5S_SCALAR), what));
    Hid attr(check(H5Acreate2(obj, key.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), what));
    const char* p = s.c_str();
    check(H5Awrite(attr, type, &p), what);
    return;
  }
  hid_t type = H5T_NATIVE_INT64;
  const void* data = nullptr;
  hsize_t n = 1;
  bool scalar = true;
  if (auto* i = std::get_if<std::int64_t>(&v)) {
    data = i;
  } else if (auto* d = std::get_if<double>(&v)) {
    type = H5T_NATIVE_DOUBLE;
    data = d;
  } else if (auto* iv = std::get_if<std::vector<std::int64_t>>(&v)) {
    data = iv->data();
    n = iv->size();
    scalar = false;
  } else if (auto* dv = std::get_if<std::vector<double>>(&v)) {
    type = H5T_NATIVE_DOUBLE;
    data = dv->data();
    n = dv->size();
    scalar = false;
  }
  Hid space(check(scalar   ? H5Screate(H5S_SCALAR)
                  : n == 0 ? H5Screate(H5S_NULL)
                           : H5Screate_simple(1, &n, nullptr),
                  what));
  Hid attr(check(H5Acreate2(obj, key.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), what));
  if (n > 0) check(H5Awrite(attr, type, data), what);
}

void write_attributes(hid_t obj, const Attributes& attrs) {
  for (const auto& [k, v] : attrs.all()) write_attribute(obj, k, v);
}

void write_checksum(hid_t obj, std::uint64_t sum) {
  if (H5Aexists(obj, "checksum") > 0) H5Adelete(obj, "checksum");
  Hid space(check(H5Screate(H5S_SCALAR), "cannot write the checksum"));
  Hid attr(check(H5Acreate2(obj, "checksum", H5T_STD_U64LE, space, H5P_DEFAULT, H5P_DEFAULT),
                 "cannot write the checksum"));
  check(H5Awrite(attr, H5T_NATIVE_UINT64, &sum), "cannot write the checksum");
}

namespace {
herr_t read_one_attribute(hid_t loc, const char* name, const H5A_info_t* /*info*/, void* data) {
  auto* out = static_cast<Attributes*>(data);
  Hid attr(H5Aopen(loc, name, H5P_DEFAULT));
  if (!attr.valid()) return -1;
  Hid type(H5Aget_type(attr));
  Hid space(H5Aget_space(attr));
  const H5S_class_t sclass = H5Sget_simple_extent_type(space);
  const hssize_t n = sclass == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(space);
  const bool scalar = sclass == H5S_SCALAR;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: {
      // uint64 values (checksums) keep their bits in the int64.
      const bool u64 = H5Tget_sign(type) == H5T_SGN_NONE && H5Tget_size(type) == 8;
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      if (n > 0 && H5Aread(attr, u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, v.data()) < 0) return -1;
      if (scalar)
        out->set(name, v.empty() ? std::int64_t(0) : v[0]);
      else
        out->set(name, v);
      break;
    }
    case H5T_FLOAT: {
      std::vector<double> v(static_cast<std::size_t>(n));
      if (n > 0 && H5Aread(attr, H5T_NATIVE_DOUBLE, v.data()) < 0) return -1;
      if (scalar)
        out->set(name, v.empty() ? 0.0 : v[0]);
      else
        out->set(name, v);
      break;
    }
    case H5T_STRING: {
      if (!scalar) break;  // string arrays: not written by mantissa, skipped
      if (H5Tis_variable_str(type) > 0) {
        char* p = nullptr;
        Hid mtype(H5Tcopy(H5T_C_S1));
        H5Tset_size(mtype, H5T_VARIABLE);
        H5Tset_cset(mtype, H5Tget_cset(type));
        if (H5Aread(attr, mtype, &p) < 0) return -1;
        out->set(name, std::string(p ? p : ""));
        H5free_memory(p);
      } else {
        std::string s(H5Tget_size(type), '\0');
        if (H5Aread(attr, type, s.data()) < 0) return -1;
        s.resize(std::strlen(s.c_str()));
        out->set(name, s);
      }
      break;
    }
    default:
      break;  // other classes are not mantissa's
  }
  return 0;
}
}  // namespace

Attributes read_attributes(hid_t obj) {
  Attributes attrs;
  check(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, read_one_attribute, &attrs),
        "cannot read attributes");
  return attrs;
}

std::uint64_t write_field(hid_t file, MPI_Comm comm, const std::string& path, const FieldRef& f,
                          const std::array<std::int64_t, 3>& global_n, int dim, bool collective) {
  // HDF5 order is slowest first: (z, y, x), or (y, x) in 2D.
  std::vector<hsize_t> dims, start, count;
  for (int a = dim - 1; a >= 0; --a) {
    dims.push_back(hsize_t(global_n[a]));
    start.push_back(hsize_t(f.offset[a]));
    count.push_back(hsize_t(f.extent[a]));
  }
  Hid dset = create_dataset(file, path, f.kind, dims);
  Hid filespace(check(H5Dget_space(dset), "cannot get the dataspace of '" + path + "'"));
  check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "cannot select this rank's block of '" + path + "'");
  Hid memspace(
      check(H5Screate_simple(int(count.size()), count.data(), nullptr), "cannot create a dataspace"));
  std::vector<unsigned char> buf(std::size_t(f.num_owned()) * f.elem_size);
  f.to_host(buf.data());
  Hid dxpl = transfer(collective);
  check(H5Dwrite(dset, memory_type(f.kind), memspace, filespace, dxpl, buf.data()),
        "cannot write dataset '" + path + "'");
  std::uint64_t local =
      partial_checksum(buf.data(), f.elem_size, {f.extent[2], f.extent[1], f.extent[0]},
                       {f.offset[2], f.offset[1], f.offset[0]}, {global_n[2], global_n[1], global_n[0]});
  std::uint64_t sum = 0;
  MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
  write_attribute(dset, "mantissa_type", f.type_name);
  write_attribute(dset, "axes", std::string(dim == 3 ? "z,y,x" : "y,x"));
  write_checksum(dset, sum);
  return sum;
}

std::uint64_t write_dataset(hid_t file, MPI_Comm comm, int rank, const Dataset& d, bool collective) {
  const std::int64_t row_len = d.dims.size() == 2 ? d.dims[1] : 1;
  std::string err;
  for (const auto& [k, v] : d.attrs.all())
    if (k == "checksum" || k == "mantissa_type")
      err = "dataset '" + d.name + "': attribute name '" + k + "' is reserved by mantissa; rename it";
  std::int64_t rows = 0, first = 0;
  if (d.distributed) {
    rows = d.local_rows;
    first = d.row_offset;
    if (first < 0 || first + rows > d.dims[0])
      err = "dataset '" + d.name + "': rank " + std::to_string(rank) + " holds rows " +
            std::to_string(first) + ".." + std::to_string(first + rows) + " outside the " +
            std::to_string(d.dims[0]) + " rows";
  } else if (rank == 0) {
    rows = d.dims[0];
    if (std::int64_t(d.bytes.size()) != d.num_elements() * std::int64_t(d.elem_size))
      err = "dataset '" + d.name +
            "': " + std::to_string(d.bytes.size() / std::max<std::size_t>(d.elem_size, 1)) +
            " values given for dimensions of " + std::to_string(d.num_elements()) + " values";
  }
  collective_check(comm, err);
  if (d.distributed) {
    std::int64_t total = 0;
    MPI_Allreduce(&rows, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    if (total != d.dims[0])
      throw Error("dataset '" + d.name + "': the ranks hold " + std::to_string(total) +
                  " rows in all, not the " + std::to_string(d.dims[0]) + " of its dimensions");
  }
  std::vector<hsize_t> dims(d.dims.begin(), d.dims.end());
  Hid dset = create_dataset(file, d.name, d.kind, dims);
  Hid filespace(check(H5Dget_space(dset), "cannot get the dataspace of '" + d.name + "'"));
  std::vector<hsize_t> start(dims.size(), 0), count = dims;
  start[0] = hsize_t(first);
  count[0] = hsize_t(rows);
  const bool none = rows * row_len == 0;
  Hid memspace;
  if (none) {
    H5Sselect_none(filespace);
    const hsize_t one = 1;
    memspace = Hid(check(H5Screate_simple(1, &one, nullptr), "cannot create a dataspace"));
    H5Sselect_none(memspace);
  } else {
    check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
          "cannot select rows of '" + d.name + "'");
    memspace =
        Hid(check(H5Screate_simple(int(count.size()), count.data(), nullptr), "cannot create a dataspace"));
  }
  unsigned char dummy = 0;
  const void* buf = none ? &dummy : d.bytes.data();
  Hid dxpl = transfer(collective);
  check(H5Dwrite(dset, memory_type(d.kind), memspace, filespace, dxpl, buf),
        "cannot write dataset '" + d.name + "'");
  std::uint64_t local = 0;
  if (!none) {
    if (d.dims.size() == 2)
      local = partial_checksum(buf, d.elem_size, {1, rows, row_len}, {0, first, 0}, {1, d.dims[0], row_len});
    else
      local = partial_checksum(buf, d.elem_size, {1, 1, rows}, {0, 0, first}, {1, 1, d.dims[0]});
  }
  std::uint64_t sum = 0;
  MPI_Allreduce(&local, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
  write_attributes(dset, d.attrs);
  write_attribute(dset, "mantissa_type", d.type_name);
  write_checksum(dset, sum);
  return sum;
}

}  // namespace detail
}  // namespace io
}  // namespace mantissa
