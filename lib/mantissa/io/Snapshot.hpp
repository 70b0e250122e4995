#pragma once
// Snapshots for visualization: chosen fields at a step in one HDF5 file (written collectively,
// global arrays without ghosts, (z, y, x)) plus an XDMF sidecar describing the grid as a
// 3DCoRectMesh / 2DCoRectMesh with origin and spacing, so ParaView and VisIt open the .xmf
// directly; and a time-series .xmf (a temporal collection) over all snapshots of the run.
// Fields in fp64/fp32 are written as they are; bf16/fp16 and other types as fp32, since the
// tools cannot read their bits (checkpoints keep them bitwise instead).
//
// Files: <dir>/<base>_<step, 6 digits>.h5, <dir>/<base>_<step>.xmf, <dir>/<base>.xmf.
// XDMF format: https://www.xdmf.org/index.php/XDMF_Model_and_Format
#include <mantissa/io/FieldRef.hpp>
#include <mantissa/mesh/Decomposition.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {
namespace io {

inline constexpr const char* snapshot_format_name = "mantissa-snapshot";

class SnapshotWriter {
 public:
  SnapshotWriter(const Decomposition& decomp, std::string dir, std::string basename = "snapshot");

  // Collective. Writes the snapshot and its sidecar and rewrites the time-series .xmf.
  // Build the references with snapshot_ref() (or field_ref() for fp64/fp32 fields). Returns the
  // path of the snapshot's .xmf.
  std::string write(std::int64_t step, double time, const std::vector<FieldRef>& fields);

  std::string series_path() const;

  struct Entry {
    std::int64_t step;
    double time;
    std::string h5_name;           // file name only: sidecars refer to files beside them
    std::vector<FieldRef> fields;  // names and types (copy functions unused)
  };
  const std::vector<Entry>& entries() const { return m_entries; }

 private:
  std::string grid_xml(const Entry& e, const std::string& indent) const;

  const Decomposition& m_decomp;
  std::string m_dir, m_base;
  std::vector<Entry> m_entries;
};

}  // namespace io
}  // namespace mantissa
