#pragma once
// serialize() (Results.hpp) onto io's HDF5 handle layer, for report.h5: scalars as attributes
// of the group, vectors as datasets (with io's checksum and element type), lists as groups
// 0..n-1 under a group holding the attribute `count`. Not included from outside
// lib/mantissa/workflow.
#include <mantissa/io/H5File.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::workflow::detail {

class H5ArchiveWriter {
 public:
  explicit H5ArchiveWriter(const io::H5Group& group) : m_group(group) {}
  void operator()(const std::string& k, double& v) { m_group.set(k, v); }
  void operator()(const std::string& k, std::int64_t& v) { m_group.set(k, v); }
  void operator()(const std::string& k, int& v) { m_group.set(k, std::int64_t(v)); }
  void operator()(const std::string& k, std::string& v) { m_group.set(k, v); }
  void operator()(const std::string& k, std::vector<double>& v) { m_group.write(k, v); }
  void operator()(const std::string& k, std::vector<std::int64_t>& v) { m_group.write(k, v); }
  template <class T>
  void list(const std::string& k, std::vector<T>& items) {
    const io::H5Group g = m_group.create_group(k);
    g.set("count", std::int64_t(items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) {
      const io::H5Group gi = g.create_group(std::to_string(i));
      H5ArchiveWriter w(gi);
      serialize(w, items[i]);
    }
  }

 private:
  const io::H5Group& m_group;
};

}  // namespace mantissa::workflow::detail
