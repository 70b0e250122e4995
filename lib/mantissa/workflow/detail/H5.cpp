#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/detail/H5.hpp>

namespace mantissa::workflow::detail {

H5Handle& H5Handle::operator=(H5Handle&& o) noexcept {
  if (this != &o) {
    if (m_id >= 0 && m_close) m_close(m_id);
    m_id = o.m_id;
    m_close = o.m_close;
    o.m_id = -1;
  }
  return *this;
}

H5Handle::~H5Handle() {
  if (m_id >= 0 && m_close) m_close(m_id);
}

namespace {
void check(bool ok, const std::string& what) {
  if (!ok) throw Error("HDF5: " + what);
}
H5Handle scalar_space() {
  return H5Handle(H5Screate(H5S_SCALAR), H5Sclose);
}
H5Handle open_attr(hid_t obj, const std::string& name) {
  check(H5Aexists(obj, name.c_str()) > 0,
        "attribute '" + name + "' is missing (file from another mantissa version?)");
  return H5Handle(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
}
H5Handle simple_space(const std::vector<std::uint64_t>& shape) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return H5Handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
}
template <class T>
void write_dataset(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& shape,
                   const T* data, hid_t type) {
  auto space = simple_space(shape);
  H5Handle ds(H5Dcreate2(parent, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
  check(ds.valid(), "cannot create dataset '" + name + "'");
  std::uint64_t n = 1;
  for (auto s : shape) n *= s;
  if (n > 0)
    check(H5Dwrite(ds.id(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "cannot write '" + name + "'");
}
template <class T>
std::vector<T> read_dataset(hid_t parent, const std::string& name, hid_t type,
                            std::vector<std::uint64_t>* shape) {
  check(h5_exists(parent, name), "dataset '" + name + "' is missing");
  H5Handle ds(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Handle space(H5Dget_space(ds.id()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.id());
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank > 0 ? rank : 0));
  if (rank > 0) H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  std::uint64_t n = 1;
  for (auto d : dims) n *= d;
  if (shape) shape->assign(dims.begin(), dims.end());
  std::vector<T> v(static_cast<std::size_t>(n));
  if (n > 0)
    check(H5Dread(ds.id(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, "cannot read '" + name + "'");
  return v;
}
}  // namespace

H5Handle h5_create(const std::string& path) {
  H5Handle f(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  check(f.valid(), "cannot create '" + path + "'; check that its directory exists and is writable");
  return f;
}

H5Handle h5_open(const std::string& path) {
  H5Handle f;
  H5E_BEGIN_TRY {
    f = H5Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  }
  H5E_END_TRY;
  check(f.valid(), "cannot open '" + path + "' (missing or not an HDF5 file)");
  return f;
}

H5Handle h5_group(hid_t parent, const std::string& name) {
  H5Handle g(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  check(g.valid(), "cannot create group '" + name + "'");
  return g;
}

H5Handle h5_open_group(hid_t parent, const std::string& name) {
  check(h5_exists(parent, name), "group '" + name + "' is missing");
  return H5Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose);
}

bool h5_exists(hid_t parent, const std::string& name) {
  return H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0;
}

void h5_attr(hid_t obj, const std::string& name, double v) {
  auto s = scalar_space();
  H5Handle a(H5Acreate2(obj, name.c_str(), H5T_NATIVE_DOUBLE, s.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(a.valid() && H5Awrite(a.id(), H5T_NATIVE_DOUBLE, &v) >= 0, "cannot write attribute '" + name + "'");
}

void h5_attr(hid_t obj, const std::string& name, std::int64_t v) {
  auto s = scalar_space();
  H5Handle a(H5Acreate2(obj, name.c_str(), H5T_NATIVE_INT64, s.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(a.valid() && H5Awrite(a.id(), H5T_NATIVE_INT64, &v) >= 0, "cannot write attribute '" + name + "'");
}

void h5_attr(hid_t obj, const std::string& name, const std::string& v) {
  auto s = scalar_space();
  H5Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.id(), v.empty() ? 1 : v.size());
  H5Tset_cset(t.id(), H5T_CSET_UTF8);
  H5Handle a(H5Acreate2(obj, name.c_str(), t.id(), s.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char empty = '\0';
  check(a.valid() && H5Awrite(a.id(), t.id(), v.empty() ? &empty : v.data()) >= 0,
        "cannot write attribute '" + name + "'");
}

void h5_attr(hid_t obj, const std::string& name, const std::vector<std::uint64_t>& shape,
             const std::vector<double>& v) {
  std::uint64_t n = 1;
  for (auto e : shape) n *= e;
  check(n == v.size(), "attribute '" + name + "': " + std::to_string(v.size()) + " values for " +
                           std::to_string(n) + " elements");
  auto s = simple_space(shape);
  H5Handle a(H5Acreate2(obj, name.c_str(), H5T_NATIVE_DOUBLE, s.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(a.valid() && (n == 0 || H5Awrite(a.id(), H5T_NATIVE_DOUBLE, v.data()) >= 0),
        "cannot write attribute '" + name + "'");
}

std::vector<double> h5_attr_doubles(hid_t obj, const std::string& name) {
  auto a = open_attr(obj, name);
  H5Handle space(H5Aget_space(a.id()), H5Sclose);
  const auto n = H5Sget_simple_extent_npoints(space.id());
  std::vector<double> v(static_cast<std::size_t>(n > 0 ? n : 0));
  check(v.empty() || H5Aread(a.id(), H5T_NATIVE_DOUBLE, v.data()) >= 0,
        "cannot read attribute '" + name + "'");
  return v;
}

double h5_attr_double(hid_t obj, const std::string& name) {
  auto a = open_attr(obj, name);
  double v = 0.0;
  check(H5Aread(a.id(), H5T_NATIVE_DOUBLE, &v) >= 0, "cannot read attribute '" + name + "'");
  return v;
}

std::int64_t h5_attr_int(hid_t obj, const std::string& name) {
  auto a = open_attr(obj, name);
  std::int64_t v = 0;
  check(H5Aread(a.id(), H5T_NATIVE_INT64, &v) >= 0, "cannot read attribute '" + name + "'");
  return v;
}

std::string h5_attr_string(hid_t obj, const std::string& name) {
  auto a = open_attr(obj, name);
  H5Handle t(H5Aget_type(a.id()), H5Tclose);
  const std::size_t n = H5Tget_size(t.id());
  std::string v(n, '\0');
  check(H5Aread(a.id(), t.id(), v.data()) >= 0, "cannot read attribute '" + name + "'");
  const auto end = v.find('\0');
  if (end != std::string::npos) v.resize(end);
  return v;
}

void h5_write(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& shape,
              const double* data) {
  write_dataset(parent, name, shape, data, H5T_NATIVE_DOUBLE);
}

void h5_write(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& shape,
              const std::int64_t* data) {
  write_dataset(parent, name, shape, data, H5T_NATIVE_INT64);
}

std::vector<double> h5_read_doubles(hid_t parent, const std::string& name,
                                    std::vector<std::uint64_t>* shape) {
  return read_dataset<double>(parent, name, H5T_NATIVE_DOUBLE, shape);
}

std::vector<std::int64_t> h5_read_ints(hid_t parent, const std::string& name) {
  return read_dataset<std::int64_t>(parent, name, H5T_NATIVE_INT64, nullptr);
}

}  // namespace mantissa::workflow::detail
