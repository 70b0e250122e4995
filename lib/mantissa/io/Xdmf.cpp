#include <mantissa/core/Error.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/Xdmf.hpp>

#include <cstdio>

namespace mantissa {
namespace io {

namespace {
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
bool xml_safe(const std::string& s) {
  return !s.empty() && s.find_first_of("\"<&") == std::string::npos;
}
}  // namespace

std::string xdmf_grid(const Grid& grid, const std::string& name, const std::vector<XdmfField>& fields,
                      const XdmfOptions& options, const std::string& in) {
  const int dim = options.as_3d ? 3 : grid.dim;
  if (grid.dim != 2 && grid.dim != 3)
    throw Error("XDMF: grid dimension " + std::to_string(grid.dim) + " is not 2 or 3");
  if (!xml_safe(name))
    throw Error("XDMF: grid name '" + name + "' must be non-empty, without '\"', '<' or '&'");
  for (int a = 0; a < grid.dim; ++a)
    if (!(grid.spacing[a] > 0.0) || !std::isfinite(grid.spacing[a]) || !std::isfinite(grid.origin[a]))
      throw Error("XDMF: grid spacing " + num(grid.spacing[a]) + " / origin " + num(grid.origin[a]) +
                  " along axis " + std::to_string(a) + " is not a finite (positive) number");
  // XDMF lists dimensions slowest first, like the HDF5 datasets: (z, y, x) or (y, x).
  std::string dims, origin, spacing;
  for (int a = dim - 1; a >= 0; --a) {
    const std::string sep = a == dim - 1 ? "" : " ";
    const bool flat = a >= grid.dim;  // the added z of a 2D grid
    dims += sep + std::to_string(flat ? 1 : grid.n[a]);
    origin += sep + num(flat ? 0.0 : grid.origin[a]);
    spacing += sep + num(flat ? 1.0 : grid.spacing[a]);
  }
  const std::string d = std::to_string(dim);
  std::string x;
  x += in + "<Grid Name=\"" + name + "\" GridType=\"Uniform\">\n";
  if (std::isfinite(options.time)) x += in + "  <Time Value=\"" + num(options.time) + "\"/>\n";
  x += in + "  <Topology TopologyType=\"" + d + "DCoRectMesh\" Dimensions=\"" + dims + "\"/>\n";
  x += in + "  <Geometry GeometryType=\"" + std::string(dim == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY") + "\">\n";
  x += in + "    <DataItem Name=\"Origin\" Dimensions=\"" + d +
       "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" + origin + "</DataItem>\n";
  x += in + "    <DataItem Name=\"Spacing\" Dimensions=\"" + d +
       "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" + spacing + "</DataItem>\n";
  x += in + "  </Geometry>\n";
  for (const auto& f : fields) {
    if (!xml_safe(f.name) || !xml_safe(f.h5_file) || !xml_safe(f.h5_path))
      throw Error("XDMF: field '" + f.name + "' (" + f.h5_file + ":" + f.h5_path +
                  "): names must be non-empty, without '\"', '<' or '&'");
    if (f.precision != 4 && f.precision != 8)
      throw Error("XDMF: field '" + f.name + "' has precision " + std::to_string(f.precision) +
                  "; use 4 or 8");
    x += in + "  <Attribute Name=\"" + f.name + "\" AttributeType=\"Scalar\" Center=\"Node\">\n";
    x += in + "    <DataItem Dimensions=\"" + dims + "\" NumberType=\"Float\" Precision=\"" +
         std::to_string(f.precision) + "\" Format=\"HDF\">" + f.h5_file + ":" + f.h5_path + "</DataItem>\n";
    x += in + "  </Attribute>\n";
  }
  x += in + "</Grid>\n";
  return x;
}

std::string xdmf_document(const std::string& grids) {
  return "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
         "<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n  <Domain>\n" +
         grids + "  </Domain>\n</Xdmf>\n";
}

std::string xdmf_time_series(const std::string& name, const std::vector<std::string>& grids) {
  std::string s = "    <Grid Name=\"" + name + "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& g : grids) s += g;
  return s + "    </Grid>\n";
}

void write_xdmf(const std::string& path, const Grid& grid, const std::string& name,
                const std::vector<XdmfField>& fields, const XdmfOptions& options) {
  write_file_durably(path, xdmf_document(xdmf_grid(grid, name, fields, options)));
}

}  // namespace io
}  // namespace mantissa
