#include <mantissa/core/Error.hpp>
#include <mantissa/core/Version.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/Snapshot.hpp>
#include <mantissa/io/Xdmf.hpp>
#include <mantissa/io/detail/Files.hpp>
#include <mantissa/io/detail/Hdf5.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

namespace mantissa {
namespace io {

namespace fs = std::filesystem;
using detail::check;
using detail::Hid;

namespace {

// Sidecars are replaced durably (DurableFile.hpp), so a viewer never reads half a file.
std::string write_text(const std::string& path, const std::string& text) {
  try {
    write_file_durably(path, text);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace

SnapshotWriter::SnapshotWriter(const Decomposition& decomp, std::string dir, std::string basename)
    : m_decomp(decomp), m_dir(std::move(dir)), m_base(std::move(basename)) {
  if (m_dir.empty()) throw Error("snapshot: the output directory is empty; set output.dir");
  if (m_base.empty() || m_base.find('/') != std::string::npos)
    throw Error("snapshot: base name '" + m_base + "' must be a non-empty file name without '/'");
}

std::string SnapshotWriter::series_path() const {
  return (fs::path(m_dir) / (m_base + ".xmf")).string();
}

std::string SnapshotWriter::grid_xml(const Entry& e, const std::string& in) const {
  std::vector<XdmfField> fields;
  for (const auto& f : e.fields) fields.push_back({f.name, e.h5_name, "/fields/" + f.name, int(f.elem_size)});
  XdmfOptions opt;
  opt.time = e.time;
  return xdmf_grid(m_decomp.grid(), m_base + "_" + std::to_string(e.step), fields, opt, in);
}

std::string SnapshotWriter::write(std::int64_t step, double time, const std::vector<FieldRef>& fields) {
  Kokkos::Profiling::pushRegion("mantissa::io::SnapshotWriter::write");
  MPI_Comm comm = m_decomp.comm();
  const int rank = m_decomp.rank();
  const Grid& grid = m_decomp.grid();
  std::string err;
  std::set<std::string> names;
  for (const auto& f : fields) {
    if (f.name.empty() || f.name.find('/') != std::string::npos || f.name.find('"') != std::string::npos ||
        f.name.find('<') != std::string::npos || f.name.find('&') != std::string::npos)
      err = "snapshot: field name '" + f.name + "' must be non-empty, without '/', '\"', '<' or '&'";
    else if (!names.insert(f.name).second)
      err = "snapshot: field '" + f.name + "' is given twice";
    else if (f.kind != StorageKind::f64 && f.kind != StorageKind::f32)
      err = "snapshot: field '" + f.name + "' is " + f.type_name +
            "; pass it through snapshot_ref() to write it as fp32";
    else if (f.offset != m_decomp.offset() || f.extent != m_decomp.extent())
      err = "snapshot: field '" + f.name + "' does not match the writer's decomposition";
  }
  detail::collective_check(comm, err);

  char stepbuf[32];
  std::snprintf(stepbuf, sizeof stepbuf, "%06lld", static_cast<long long>(step));
  const std::string stem = m_base + "_" + stepbuf;
  const std::string h5 = (fs::path(m_dir) / (stem + ".h5")).string();
  std::string xmf = (fs::path(m_dir) / (stem + ".xmf")).string();
  const std::string tmp = detail::make_temp_file(comm, m_dir, ".tmp-" + m_base + "-");
  const bool collective = use_collective_transfer(IoTransfer::automatic);
  try {
    detail::QuietHdf5 quiet;
    Hid fapl = detail::file_access(comm);
    Hid file(check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
                   "snapshot: cannot create '" + tmp + "'"));
    Attributes root;
    root.set("format", snapshot_format_name)
        .set("format_version", std::int64_t(1))
        .set("code_version", MANTISSA_VERSION_STRING)
        .set("git_hash", MANTISSA_GIT_HASH)
        .set("step", step)
        .set("time", time)
        .set("grid_dim", grid.dim)
        .set("grid_n", std::vector<std::int64_t>{grid.n[0], grid.n[1], grid.n[2]})
        .set("grid_spacing", std::vector<double>{grid.spacing[0], grid.spacing[1], grid.spacing[2]})
        .set("grid_origin", std::vector<double>{grid.origin[0], grid.origin[1], grid.origin[2]});
    detail::write_attributes(file, root);
    for (const auto& f : fields)
      detail::write_field(file, comm, "/fields/" + f.name, f, grid.n, grid.dim, collective);
    if (file.reset() < 0) throw Error("snapshot: closing '" + tmp + "' failed");
  } catch (...) {
    if (rank == 0) {
      std::error_code ec;
      fs::remove(tmp, ec);
    }
    Kokkos::Profiling::popRegion();
    throw;
  }
  MPI_Barrier(comm);
  Entry e{step, time, stem + ".h5", {}};
  for (const auto& f : fields) {
    FieldRef meta = f;
    meta.to_host = nullptr;
    meta.from_host = nullptr;
    e.fields.push_back(meta);
  }
  // A rewritten step replaces its earlier entry.
  m_entries.erase(
      std::remove_if(m_entries.begin(), m_entries.end(), [&](const Entry& x) { return x.step == step; }),
      m_entries.end());
  m_entries.push_back(e);
  std::sort(m_entries.begin(), m_entries.end(),
            [](const Entry& a, const Entry& b) { return a.step < b.step; });
  err.clear();
  if (rank == 0) {
    err = detail::commit_file(tmp, h5, /*durable=*/true);
    if (err.empty()) err = write_text(xmf, xdmf_document(grid_xml(e, "    ")));
    if (err.empty()) {
      std::vector<std::string> grids;
      for (const auto& x : m_entries) grids.push_back(grid_xml(x, "      "));
      err = write_text(series_path(), xdmf_document(xdmf_time_series(m_base, grids)));
    }
  }
  detail::collective_check(comm, err.empty() ? err : "snapshot: " + err);
  Kokkos::Profiling::popRegion();
  return xmf;
}

}  // namespace io
}  // namespace mantissa
