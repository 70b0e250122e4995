#pragma once
// HDF5 checkpoints (DESIGN.md "Checkpoints"): one file per checkpoint, written collectively with
// parallel HDF5; global datasets without ghosts, row major (z, y, x); a rank-count independent
// checksum on every dataset; written under a temporary name and renamed when complete; the
// last N kept. Readers work at any rank count and refuse wrong, foreign or damaged files with
// a message that says what is wrong.
//
// Layout of a file (format "mantissa-checkpoint", version 1):
//   /                 attributes: format, format_version, code_version, git_hash, kokkos_version,
//                     backend, deck, step, time, ranks, process_grid, grid_dim, grid_n (x, y, z),
//                     grid_spacing, grid_origin, grid_periodic, precision.<role>, and the
//                     caller's attributes
//   /fields/<name>    one dataset per field: (nz, ny, nx) or (ny, nx); attributes mantissa_type
//                     ("fp64", "fp32", "bf16", ...), axes, checksum (uint64)
//   /<path>           generic datasets (Dataset.hpp), with mantissa_type, checksum and their own
//                     attributes
#include <mantissa/io/Attributes.hpp>
#include <mantissa/io/Dataset.hpp>
#include <mantissa/io/FieldRef.hpp>
#include <mantissa/mesh/Decomposition.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mantissa {
namespace io {

inline constexpr const char* checkpoint_format_name = "mantissa-checkpoint";
inline constexpr std::int64_t checkpoint_format_version = 1;

enum class IoTransfer { automatic, collective, independent };

// Whether `t` resolves to collective transfers with the MPI library in use.
bool use_collective_transfer(IoTransfer t);

struct CheckpointOptions {
  std::string prefix = "ckpt";  // files are <dir>/<prefix>-<step, 10 digits>.h5
  std::string deck_text;        // resolved deck, stored verbatim (attribute "deck")
  Attributes precision;         // precision configuration per role, stored as precision.<role>
  // fsync the file before the rename and the directory after it, so a crash never leaves a
  // complete-looking name on an incomplete file.
  bool durable = true;
  // MPI-IO data transfer: automatic is collective unless the MPI library is known to corrupt
  // collective writes (detail/MpiIo.hpp), then independent.
  IoTransfer transfer = IoTransfer::automatic;
  std::int64_t alignment = 1 << 20;  // HDF5 alignment of large datasets, bytes
  // Test hook: throw after writing this many datasets (fields and extras), to check that a
  // failed write leaves the previous checkpoints intact. -1: never.
  int fail_after_datasets = -1;
};

// Plan object: built once per run, write() called at every checkpoint step (collective).
class CheckpointWriter {
 public:
  CheckpointWriter(const Decomposition& decomp, std::string dir, int keep_last_n,
                   CheckpointOptions options = {});

  // Collective. Writes the fields (owned points of each rank) and the extra datasets, then
  // renames the temporary file to its final name and deletes checkpoints beyond the last N.
  // Returns the final path.
  std::string write(std::int64_t step, double time, const Attributes& attrs,
                    const std::vector<FieldRef>& fields, const std::vector<Dataset>& extra = {}) const;

  std::string path_for(std::int64_t step) const;
  const std::string& dir() const { return m_dir; }

 private:
  const Decomposition& m_decomp;
  std::string m_dir;
  int m_keep;
  CheckpointOptions m_opt;
};

// Steps of the complete checkpoints <prefix>-<step>.h5 in dir, ascending (temporaries ignored).
std::vector<std::int64_t> list_checkpoint_steps(const std::string& dir, const std::string& prefix = "ckpt");
// Path of the newest complete checkpoint in dir, if any.
std::optional<std::string> latest_checkpoint(const std::string& dir, const std::string& prefix = "ckpt");

// What a restart expects of a checkpoint (from the deck); empty members are not checked.
struct CheckpointExpectations {
  std::vector<std::string> fields;  // datasets that must be present under /fields
  std::string physics;              // compared to attribute "physics" when set
};

class CheckpointReader {
 public:
  // Collective over comm. Opens and checks the file: exists, HDF5, not truncated, mantissa
  // checkpoint format of a version this build reads. Throws mantissa::Error otherwise.
  CheckpointReader(const std::string& file, MPI_Comm comm);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::string& file() const { return m_file; }
  const Attributes& attributes() const { return m_attrs; }
  std::int64_t step() const { return m_attrs.get_int("step"); }
  double time() const { return m_attrs.get_real("time"); }
  const std::string& deck_text() const { return m_attrs.get_string("deck"); }
  Grid grid() const;
  std::vector<std::string> field_names() const;
  bool has_dataset(const std::string& path) const;

  // Throws mantissa::Error naming both values when the grid (dimension, sizes, spacing, origin)
  // differs from the deck's or an expected field is missing.
  void validate_against(const Grid& grid, const CheckpointExpectations& expect = {}) const;

  // Collective. Reads this rank's block of /fields/<name> (any rank count) and checks the
  // dataset's checksum; the field's type must match the stored type.
  void read_field(const FieldRef& f) const;
  template <class T, class M>
  void read_field(const std::string& name, Field<T, M>& f) const {
    read_field(field_ref(name, f));
  }

  // Collective. Reads a whole generic dataset on every rank, checks type and checksum.
  template <class T>
  std::vector<T> read_dataset(const std::string& path, std::vector<std::int64_t>* dims = nullptr) const {
    std::vector<std::int64_t> d;
    std::vector<T> out;
    read_dataset_raw(path, ScalarIo<T>::kind, ScalarIo<T>::name(), sizeof(T), d, [&](std::size_t n) -> void* {
      out.resize(n);
      return out.data();
    });
    if (dims) *dims = d;
    return out;
  }
  Attributes dataset_attributes(const std::string& path) const;

 private:
  template <class F>
  void read_dataset_raw(const std::string& path, StorageKind kind, const std::string& type_name,
                        std::size_t size, std::vector<std::int64_t>& dims, F&& alloc) const {
    read_dataset_impl(path, kind, type_name, size, dims, std::function<void*(std::size_t)>(alloc));
  }
  void read_dataset_impl(const std::string& path, StorageKind kind, const std::string& type_name,
                         std::size_t size, std::vector<std::int64_t>& dims,
                         const std::function<void*(std::size_t)>& alloc) const;

  struct Impl;
  std::unique_ptr<Impl> m_impl;
  std::string m_file;
  MPI_Comm m_comm;
  Attributes m_attrs;
  bool m_collective = true;
};

}  // namespace io
}  // namespace mantissa
