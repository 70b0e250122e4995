#pragma once
// A generic small dataset for checkpoints and time-series files: 1D or 2D arrays such as
// seismograms, surrogate weights, optimizer moments or RNG state, stored under a path with
// groups ("surrogate/weights/layer0").
//
// Two ways to contribute data:
//  - whole():  the array is known on rank 0 (other ranks may pass an empty vector but the same
//              dims); rank 0 writes it.
//  - rows():   every rank holds a block of consecutive rows (dimension 0) of the global array,
//              e.g. the receivers it owns; the blocks are written collectively.
#include <mantissa/core/Error.hpp>
#include <mantissa/io/Attributes.hpp>
#include <mantissa/io/ScalarIo.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mantissa {
namespace io {

struct Dataset {
  std::string name;
  StorageKind kind = StorageKind::f64;
  std::string type_name;
  std::size_t elem_size = 0;
  std::vector<std::int64_t> dims;  // global, 1 or 2 entries, slowest first
  bool distributed = false;        // rows() when true
  std::int64_t row_offset = 0;     // first global row held here (distributed only)
  std::int64_t local_rows = 0;     // rows held here (distributed only)
  std::vector<unsigned char> bytes;
  Attributes attrs;

  template <class T>
  static Dataset whole(const std::string& name, const std::vector<T>& data, std::vector<std::int64_t> dims,
                       Attributes attrs = {}) {
    Dataset d = make<T>(name, std::move(dims), std::move(attrs));
    d.copy_in(data);
    return d;
  }
  template <class T>
  static Dataset whole(const std::string& name, const std::vector<T>& data, Attributes attrs = {}) {
    return whole(name, data, {static_cast<std::int64_t>(data.size())}, std::move(attrs));
  }
  // data holds local_rows = data.size() / row_length rows starting at global row row_offset.
  template <class T>
  static Dataset rows(const std::string& name, const std::vector<T>& data,
                      std::vector<std::int64_t> global_dims, std::int64_t row_offset, Attributes attrs = {}) {
    Dataset d = make<T>(name, std::move(global_dims), std::move(attrs));
    const std::int64_t row_len = d.dims.size() == 2 ? d.dims[1] : 1;
    if (row_len == 0 ? !data.empty() : std::int64_t(data.size()) % row_len != 0)
      throw Error("dataset '" + name + "': " + std::to_string(data.size()) +
                  " local values are not a whole number of rows of " + std::to_string(row_len));
    d.distributed = true;
    d.row_offset = row_offset;
    d.local_rows = row_len == 0 ? 0 : std::int64_t(data.size()) / row_len;
    d.copy_in(data);
    return d;
  }

  std::int64_t num_elements() const {
    std::int64_t n = 1;
    for (auto v : dims) n *= v;
    return n;
  }

 private:
  template <class T>
  static Dataset make(const std::string& name, std::vector<std::int64_t> dims, Attributes attrs) {
    static_assert(sizeof(T) <= 8, "mantissa::io: element types wider than 8 bytes are not supported");
    if (dims.empty() || dims.size() > 2)
      throw Error("dataset '" + name + "': " + std::to_string(dims.size()) + " dimensions given; use 1 or 2");
    for (auto v : dims)
      if (v < 0) throw Error("dataset '" + name + "': negative extent " + std::to_string(v));
    Dataset d;
    d.name = name;
    d.kind = ScalarIo<T>::kind;
    d.type_name = ScalarIo<T>::name();
    d.elem_size = sizeof(T);
    d.dims = std::move(dims);
    d.attrs = std::move(attrs);
    return d;
  }
  template <class T>
  void copy_in(const std::vector<T>& data) {
    bytes.resize(data.size() * sizeof(T));
    if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
  }
};

}  // namespace io
}  // namespace mantissa
