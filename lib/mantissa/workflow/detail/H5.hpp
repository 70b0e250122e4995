#pragma once
// Small serial HDF5 helpers for the workflow's own files (report.h5, the campaign part of
// checkpoints): RAII handles and two archives, H5Writer and H5Reader, that walk serialize()
// (Results.hpp). Not included from outside lib/mantissa/workflow.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::workflow::detail {

class H5Handle {
 public:
  H5Handle() = default;
  explicit H5Handle(hid_t id, herr_t (*close)(hid_t)) : m_id(id), m_close(close) {}
  H5Handle(H5Handle&& o) noexcept : m_id(o.m_id), m_close(o.m_close) { o.m_id = -1; }
  H5Handle& operator=(H5Handle&& o) noexcept;
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle();
  hid_t id() const { return m_id; }
  bool valid() const { return m_id >= 0; }

 private:
  hid_t m_id = -1;
  herr_t (*m_close)(hid_t) = nullptr;
};

// Files are written by one process (MPI-IO is not used for these small files).
H5Handle h5_create(const std::string& path);  // truncates
H5Handle h5_open(const std::string& path);    // read-only; throws mantissa::Error naming the path
H5Handle h5_group(hid_t parent, const std::string& name);       // create
H5Handle h5_open_group(hid_t parent, const std::string& name);  // open; throws if absent
bool h5_exists(hid_t parent, const std::string& name);

void h5_attr(hid_t obj, const std::string& name, double v);
void h5_attr(hid_t obj, const std::string& name, std::int64_t v);
void h5_attr(hid_t obj, const std::string& name, const std::string& v);
// An array attribute of doubles with the given shape (row major), e.g. coordinates (n x dim).
void h5_attr(hid_t obj, const std::string& name, const std::vector<std::uint64_t>& shape,
             const std::vector<double>& v);
double h5_attr_double(hid_t obj, const std::string& name);
std::int64_t h5_attr_int(hid_t obj, const std::string& name);
std::string h5_attr_string(hid_t obj, const std::string& name);
std::vector<double> h5_attr_doubles(hid_t obj, const std::string& name);

// Datasets of doubles / int64 with the given shape (row major); shape {n} for 1D.
void h5_write(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& shape,
              const double* data);
void h5_write(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& shape,
              const std::int64_t* data);
std::vector<double> h5_read_doubles(hid_t parent, const std::string& name,
                                    std::vector<std::uint64_t>* shape = nullptr);
std::vector<std::int64_t> h5_read_ints(hid_t parent, const std::string& name);

class H5Writer {
 public:
  explicit H5Writer(hid_t group) : m_group(group) {}
  void operator()(const std::string& k, double& v) { h5_attr(m_group, k, v); }
  void operator()(const std::string& k, std::int64_t& v) { h5_attr(m_group, k, v); }
  void operator()(const std::string& k, int& v) { h5_attr(m_group, k, std::int64_t(v)); }
  void operator()(const std::string& k, std::string& v) { h5_attr(m_group, k, v); }
  void operator()(const std::string& k, std::vector<double>& v) {
    h5_write(m_group, k, {v.size()}, v.data());
  }
  void operator()(const std::string& k, std::vector<std::int64_t>& v) {
    h5_write(m_group, k, {v.size()}, v.data());
  }
  template <class T>
  void list(const std::string& k, std::vector<T>& items) {
    auto g = h5_group(m_group, k);
    h5_attr(g.id(), "count", std::int64_t(items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto gi = h5_group(g.id(), std::to_string(i));
      H5Writer w(gi.id());
      serialize(w, items[i]);
    }
  }

 private:
  hid_t m_group;
};

class H5Reader {
 public:
  explicit H5Reader(hid_t group) : m_group(group) {}
  void operator()(const std::string& k, double& v) { v = h5_attr_double(m_group, k); }
  void operator()(const std::string& k, std::int64_t& v) { v = h5_attr_int(m_group, k); }
  void operator()(const std::string& k, int& v) { v = static_cast<int>(h5_attr_int(m_group, k)); }
  void operator()(const std::string& k, std::string& v) { v = h5_attr_string(m_group, k); }
  void operator()(const std::string& k, std::vector<double>& v) { v = h5_read_doubles(m_group, k); }
  void operator()(const std::string& k, std::vector<std::int64_t>& v) { v = h5_read_ints(m_group, k); }
  template <class T>
  void list(const std::string& k, std::vector<T>& items) {
    auto g = h5_open_group(m_group, k);
    items.resize(static_cast<std::size_t>(h5_attr_int(g.id(), "count")));
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto gi = h5_open_group(g.id(), std::to_string(i));
      H5Reader r(gi.id());
      serialize(r, items[i]);
    }
  }

 private:
  hid_t m_group;
};

}  // namespace mantissa::workflow::detail
