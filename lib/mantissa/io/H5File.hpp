#pragma once
// mantissa's one HDF5 handle layer: files, groups, attributes and datasets with RAII handles,
// serial (one process) or collective (parallel HDF5 over an MPI communicator). Everything in
// mantissa that reads or writes HDF5 goes through it (or through the checkpoint, snapshot and
// time-series writers built on the same internals), so that
//  - HDF5 never prints its error stack (no HDF5-DIAG output): a failure is a FileError that
//    names the file, the group/dataset/attribute, the cause (disk full, quota, permission,
//    read-only file system, damaged or truncated file, not an HDF5 file) and the remedy;
//  - every dataset written carries a checksum that does not depend on the rank count
//    (Checksum.hpp: a sum over elements of a hash of (global row-major index, bits)) and its
//    element type (attribute mantissa_type), both checked when it is read back; a dataset
//    without them is refused unless the file was opened with Verify::checksums_if_present
//    (inputs that users write themselves, such as velocity models);
//  - files are written under a temporary name and appear only when complete (DurableFile.hpp):
//
//   io::PendingFile out(dir + "/report.h5");
//   io::H5File f = io::H5File::create(out);                   // serial; (out, comm): collective
//   f.set("schema", "mantissa-report");                        // attributes of the root group
//   io::H5Group g = f.create_group("variants/fp32");
//   g.write("rel_l2", values);                                 // 1-D std::vector<T>
//   g.write("traces", {nrec, nsamples}, traces.data());        // any shape, row major
//   f.close();                                                 // flush; throws on failure
//   out.commit();                                              // fsync + rename + fsync(dir)
//
//   io::H5File in = io::H5File::open(path);                   // (path, comm): collective
//   in.require_format("mantissa-report", 1, "schema", "schema_version");
//   std::vector<double> v = in.group("variants/fp32").read<double>("rel_l2");
//
// Element types: every T with a ScalarIo<T> (fp64, fp32, int32/64, uint8/16/64, bf16, fp16,
// fp8), and strings (write_strings/read_strings). On a collective file every rank makes the
// same calls in the same order (HDF5 metadata is collective): write() stores rank 0's data,
// read() gives every rank the whole dataset, write_rows()/read_rows() and write_field()/
// read_field() move each rank's block.
#include <mantissa/io/Attributes.hpp>
#include <mantissa/io/FieldRef.hpp>
#include <mantissa/io/FileError.hpp>
#include <mantissa/io/ScalarIo.hpp>
#include <mantissa/mesh/Grid.hpp>

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace mantissa {
namespace io {

class PendingFile;

enum class Verify {
  checksums,             // every dataset read must carry mantissa_type and checksum (own files)
  checksums_if_present,  // check them where present (inputs written by other tools)
  none,                  // neither: the caller verifies what it reads itself (surrogate weights:
                         // finite values first, then the checksum, for the clearer message)
};

namespace detail {
struct H5Context;
}

class H5Group {
 public:
  H5Group() = default;
  ~H5Group();
  H5Group(H5Group&& o) noexcept;
  H5Group& operator=(H5Group&& o) noexcept;
  H5Group(const H5Group&) = delete;
  H5Group& operator=(const H5Group&) = delete;

  bool valid() const { return m_id >= 0; }
  const std::string& name() const { return m_name; }  // path in the file, "/" for the root
  const std::string& file_path() const;               // the file as the user knows it
  bool collective() const;

  // ------------------------------------------------------------------ groups and links
  // Creates a group (and missing parents along a slash path).
  H5Group create_group(const std::string& name) const;
  // Opens a group; FileError (missing_object) naming the file and group when absent.
  H5Group group(const std::string& name) const;
  // Whether a group or dataset exists at the (relative, slash-separated) path.
  bool has(const std::string& name) const;
  // Names of the links directly in this group, in name order.
  std::vector<std::string> names() const;

  // ------------------------------------------------------------------ attributes of this group
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  void set(const std::string& key, I v) const {
    set_value(key, AttributeValue(std::int64_t(v)));
  }
  void set(const std::string& key, double v) const { set_value(key, AttributeValue(v)); }
  void set(const std::string& key, const std::string& v) const { set_value(key, AttributeValue(v)); }
  void set(const std::string& key, const char* v) const { set_value(key, AttributeValue(std::string(v))); }
  void set(const std::string& key, const std::vector<double>& v) const { set_value(key, AttributeValue(v)); }
  void set(const std::string& key, const std::vector<std::int64_t>& v) const {
    set_value(key, AttributeValue(v));
  }
  void set(const Attributes& attrs) const;
  // An attribute of an object below this group that exists already (a dataset written before:
  // its units, axes, coordinates); `object` "" is this group. "checksum" and "mantissa_type" are
  // mantissa's own and refused.
  void set_on(const std::string& object, const std::string& key, const AttributeValue& v) const;
  // An array attribute of doubles of any shape (row major, slowest first), e.g. coordinates
  // (n x dim), on `object` ("" this group).
  void set_array_on(const std::string& object, const std::string& key, const std::vector<std::int64_t>& shape,
                    const std::vector<double>& v) const;
  bool has_attribute(const std::string& key) const;
  // Typed reads; FileError (missing_object / invalid_content) naming file, object and key.
  double get_real(const std::string& key) const;  // integers are accepted
  std::int64_t get_int(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  std::vector<double> get_reals(const std::string& key) const;
  std::vector<std::int64_t> get_ints(const std::string& key) const;
  Attributes attributes() const;
  // Refuses (FileError wrong_format) a file whose attribute `format_key` is not `format` or
  // whose `version_key` is not `version`, naming what the file holds.
  void require_format(const std::string& format, std::int64_t version,
                      const std::string& format_key = "format",
                      const std::string& version_key = "format_version") const;

  // ------------------------------------------------------------------ whole datasets
  // shape: slowest first (row major), at least one dimension. `attrs` go on the dataset.
  template <class T>
  void write(const std::string& name, const std::vector<std::int64_t>& shape, const T* data,
             const Attributes& attrs = {}) const {
    write_raw(name, shape, ScalarIo<T>::kind, ScalarIo<T>::name(), sizeof(T), data, attrs);
  }
  template <class T>
  void write(const std::string& name, const std::vector<T>& data, const Attributes& attrs = {}) const {
    write(name, {std::int64_t(data.size())}, data.data(), attrs);
  }
  void write_strings(const std::string& name, const std::vector<std::string>& v,
                     const Attributes& attrs = {}) const;

  // Reads a whole dataset and verifies type and checksum. A dataset without mantissa_type
  // (Verify::checksums_if_present) is converted by HDF5 from its stored numeric type.
  template <class T>
  std::vector<T> read(const std::string& name, std::vector<std::int64_t>* shape = nullptr) const {
    std::vector<T> out;
    std::vector<std::int64_t> dims;
    read_raw(name, ScalarIo<T>::kind, ScalarIo<T>::name(), sizeof(T), dims, 0, -1, [&](std::size_t n) {
      out.resize(n);
      return static_cast<void*>(out.data());
    });
    if (shape) *shape = dims;
    return out;
  }
  std::vector<std::string> read_strings(const std::string& name) const;
  std::vector<std::int64_t> shape(const std::string& name) const;
  Attributes dataset_attributes(const std::string& name) const;
  // The element type of a dataset as ScalarIo names it: its mantissa_type when mantissa wrote
  // it, else what HDF5 stores ("fp64", "fp32" for IEEE floats, "int64", "int32", "uint8",
  // "uint16", "uint64" for integers), "string", or "" for anything else.
  std::string element_type(const std::string& name) const;

  // ------------------------------------------------------------------ distributed datasets
  // Collective: every rank holds `local.size() / row_length` consecutive rows (dimension 0)
  // starting at global row `row_offset` of an array of `global_shape`; the blocks must
  // cover the rows exactly once.
  template <class T>
  void write_rows(const std::string& name, const std::vector<std::int64_t>& global_shape,
                  std::int64_t row_offset, const std::vector<T>& local, const Attributes& attrs = {}) const {
    write_rows_raw(name, global_shape, row_offset, std::int64_t(local.size()), ScalarIo<T>::kind,
                   ScalarIo<T>::name(), sizeof(T), local.data(), attrs);
  }
  // Collective: rows [row_offset, row_offset + rows) on this rank. The checksum is verified
  // when the ranks' blocks together cover the dataset (as a restart at any rank count does).
  template <class T>
  std::vector<T> read_rows(const std::string& name, std::int64_t row_offset, std::int64_t rows,
                           std::vector<std::int64_t>* shape = nullptr) const {
    std::vector<T> out;
    std::vector<std::int64_t> dims;
    read_raw(name, ScalarIo<T>::kind, ScalarIo<T>::name(), sizeof(T), dims, row_offset, rows,
             [&](std::size_t n) {
               out.resize(n);
               return static_cast<void*>(out.data());
             });
    if (shape) *shape = dims;
    return out;
  }
  // Collective: a distributed field as the global array (z, y, x) / (y, x) without ghosts, in
  // its own type (field_ref) or as fp32/fp64 for viewing (snapshot_ref).
  void write_field(const std::string& name, const FieldRef& f, const Grid& grid) const;
  // Collective: this rank's block, at any rank count; checks type, global size and checksum
  // before the field is touched.
  void read_field(const std::string& name, const FieldRef& f) const;

 protected:
  H5Group(std::shared_ptr<const detail::H5Context> ctx, std::int64_t id, std::string name);
  void close_handle() noexcept;
  std::shared_ptr<const detail::H5Context> m_ctx;
  std::int64_t m_id = -1;  // hid_t (int64_t since HDF5 1.10)
  std::string m_name;

 private:
  void set_value(const std::string& key, const AttributeValue& v) const;
  void write_raw(const std::string& name, const std::vector<std::int64_t>& shape, StorageKind kind,
                 const std::string& type_name, std::size_t elem_size, const void* data,
                 const Attributes& attrs) const;
  void write_rows_raw(const std::string& name, const std::vector<std::int64_t>& shape,
                      std::int64_t row_offset, std::int64_t local_values, StorageKind kind,
                      const std::string& type_name, std::size_t elem_size, const void* data,
                      const Attributes& attrs) const;
  void read_raw(const std::string& name, StorageKind kind, const std::string& type_name,
                std::size_t elem_size, std::vector<std::int64_t>& dims, std::int64_t row_offset,
                std::int64_t rows, const std::function<void*(std::size_t)>& alloc) const;
  std::string where(const std::string& object = {}) const;
};

class H5File : public H5Group {
 public:
  // Serial (this process alone). create() truncates; prefer create(PendingFile&), which
  // names the final file in messages and leaves the previous one intact on failure.
  static H5File create(const std::string& path);
  static H5File create(const PendingFile& out);
  static H5File open(const std::string& path, Verify verify = Verify::checksums);
  // Read-write, to add to an existing file.
  static H5File open_rw(const std::string& path, Verify verify = Verify::checksums);
  // Collective over comm (the MPI-IO driver); every rank calls.
  static H5File create(const std::string& path, MPI_Comm comm);
  static H5File create(const PendingFile& out, MPI_Comm comm);
  static H5File open(const std::string& path, MPI_Comm comm, Verify verify = Verify::checksums);

  H5File() = default;
  ~H5File();
  H5File(H5File&&) noexcept;
  H5File& operator=(H5File&&) noexcept;

  // Flushes and closes the file (collective for a collective file); FileError naming the file
  // and the cause when the data could not be written. The destructor closes without throwing.
  void close();

 private:
  H5File(std::shared_ptr<const detail::H5Context> ctx, std::int64_t file, std::int64_t root);
  static H5File open_impl(const std::string& open_path, const std::string& shown, MPI_Comm comm, bool create,
                          bool rw, Verify verify);
  std::int64_t m_file = -1;
};

}  // namespace io
}  // namespace mantissa
