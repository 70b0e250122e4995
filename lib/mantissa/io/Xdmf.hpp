#pragma once
// XDMF sidecars with the grid's real geometry (origin and spacing in metres, as the deck gives
// them), so ParaView and VisIt place the data where it is: the quickstart's 160 x 96 points at
// 10 m show 0..1590 m by 0..950 m. The snapshot writer (Snapshot.hpp) and the campaign report
// (report.h5's /snapshots) both describe their HDF5 datasets with these functions.
// XDMF format: https://www.xdmf.org/index.php/XDMF_Model_and_Format
#include <mantissa/mesh/Grid.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {
namespace io {

struct XdmfField {
  std::string name;     // attribute name shown in the viewer (no '"', '<' or '&')
  std::string h5_file;  // HDF5 file, relative to the .xmf (a name beside it)
  std::string h5_path;  // dataset in it, e.g. "/snapshots/reference"
  int precision = 8;    // bytes per value: 8 (fp64) or 4 (fp32)
};

struct XdmfOptions {
  // Describe a 2D grid as a 3D one with one point along z (for datasets stored (1, ny, nx)).
  bool as_3d = false;
  double time = std::nan("");  // a <Time> element when finite
};

// The <Grid> element (uniform, CoRectMesh, ORIGIN_DXDY[DZ]) with the fields as node
// attributes, every line prefixed by `indent`. Throws mantissa::Error for a field name that
// XML cannot carry or a grid that is not valid.
std::string xdmf_grid(const Grid& grid, const std::string& name, const std::vector<XdmfField>& fields,
                      const XdmfOptions& options = {}, const std::string& indent = "    ");
// A whole document around one or more <Grid> elements (xdmf_grid's text).
std::string xdmf_document(const std::string& grids);
// A temporal collection of grids (one per time).
std::string xdmf_time_series(const std::string& name, const std::vector<std::string>& grids);
// Writes xdmf_document(xdmf_grid(...)) durably to `path` (DurableFile.hpp).
void write_xdmf(const std::string& path, const Grid& grid, const std::string& name,
                const std::vector<XdmfField>& fields, const XdmfOptions& options = {});

}  // namespace io
}  // namespace mantissa
