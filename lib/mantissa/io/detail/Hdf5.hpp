#pragma once
// Internal HDF5 helpers of mantissa::io (not included outside lib/mantissa/io): handle
// ownership, error capture, attributes, and the collective hyperslab writes and reads shared
// by checkpoints, snapshots and time series.
#include <mantissa/io/Attributes.hpp>
#include <mantissa/io/Dataset.hpp>
#include <mantissa/io/FieldRef.hpp>
#include <mantissa/io/FileError.hpp>

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {
namespace io {
namespace detail {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : m_id(id) {}
  ~Hid() { reset(); }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  Hid(Hid&& o) noexcept : m_id(o.m_id) { o.m_id = H5I_INVALID_HID; }
  Hid& operator=(Hid&& o) noexcept {
    if (this != &o) {
      reset();
      m_id = o.m_id;
      o.m_id = H5I_INVALID_HID;
    }
    return *this;
  }
  hid_t get() const { return m_id; }
  operator hid_t() const { return m_id; }  // NOLINT: handles are passed straight to H5 calls
  bool valid() const { return m_id >= 0; }
  // Closes now; returns the H5?close status (negative on failure: for a file, data not flushed).
  herr_t reset();

 private:
  hid_t m_id = H5I_INVALID_HID;
};

// Turns off HDF5's printing of its error stack while alive; errors are reported through
// mantissa::Error with the stack's text (last_hdf5_error()) instead.
class QuietHdf5 {
 public:
  QuietHdf5();
  ~QuietHdf5();
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t m_func = nullptr;
  void* m_data = nullptr;
};

// Turns HDF5's automatic error printing off for the whole process, once (every entry point
// of the I/O layer calls it): failures are reported as FileError instead of HDF5-DIAG output.
void silence_hdf5();

// The descriptions on HDF5's current error stack, innermost last, joined by "; " (clears it).
std::string last_hdf5_error();
// HDF5's current error stack (cleared) as a problem: the errno it reports (sec2 driver:
// "errno = 28"; MPI-IO: "MPI_ERR_NO_SPACE"), a missing signature (not HDF5), a truncated file,
// or, for reads, damaged metadata.
struct Hdf5Failure {
  FileProblem problem = FileProblem::other;
  int err = 0;
  std::string text;
};
Hdf5Failure take_hdf5_failure(bool reading);
// Throws FileError("<what>: <cause>; <remedy>") for the current HDF5 error stack; `path` is the
// file as the user knows it (may be empty).
[[noreturn]] void throw_hdf5(const std::string& what, const std::string& path, bool reading);
// Throws as throw_hdf5 (writing) when id/status is negative.
hid_t check(hid_t id, const std::string& what);
hid_t check(hid_t id, const std::string& what, const std::string& path, bool reading);

// Throws the same mantissa::Error on every rank of comm when any rank passes a non-empty
// message (the lowest such rank's text), so that collective code stays in step.
void collective_check(MPI_Comm comm, const std::string& local_error);

hid_t memory_type(StorageKind k);  // native HDF5 type (not to be closed)

// File access with the MPI-IO driver and mantissa's tuning.
struct AccessTuning {
  std::int64_t alignment = 1 << 20;  // align datasets >= alignment bytes to this boundary
  bool collective_metadata = true;
};
Hid file_access(MPI_Comm comm, const AccessTuning& tuning = {});
Hid transfer(bool collective);

// Groups along a slash path are created when missing.
Hid create_dataset(hid_t file, const std::string& path, StorageKind kind, const std::vector<hsize_t>& dims);
bool link_exists(hid_t loc, const std::string& path);

void write_attributes(hid_t obj, const Attributes& attrs);
void write_attribute(hid_t obj, const std::string& key, const AttributeValue& v);
void write_checksum(hid_t obj, std::uint64_t sum);
Attributes read_attributes(hid_t obj);

// Collective: writes one field as a global dataset (dims (nz, ny, nx) or (ny, nx)) at `path`,
// returns its rank-count independent checksum (also stored as attribute "checksum").
std::uint64_t write_field(hid_t file, MPI_Comm comm, const std::string& path, const FieldRef& f,
                          const std::array<std::int64_t, 3>& global_n, int dim, bool collective);
// Collective: writes a generic dataset; returns its checksum.
std::uint64_t write_dataset(hid_t file, MPI_Comm comm, int rank, const Dataset& d, bool collective);

}  // namespace detail
}  // namespace io
}  // namespace mantissa
