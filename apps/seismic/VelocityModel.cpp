#include <mantissa/core/Error.hpp>
#include <seismic/VelocityModel.hpp>

#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace mantissa::seismic {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Reads dataset + attributes on the calling rank through mantissa's HDF5 layer and checks
// everything the solver relies on; throws FileError naming the file, the dataset or attribute,
// the value and the remedy.
void read_file(const VelocityModelConfig& c, const Grid& grid, std::array<std::int64_t, 3>& n,
               std::array<double, 3>& origin, std::array<double, 3>& spacing, std::vector<double>& values) {
  const std::string where = "seismic.velocity.file '" + c.file + "'";
  auto refuse = [&](const std::string& what) {
    throw io::FileError(io::FileProblem::invalid_content, c.file, where + ": " + what);
  };
  // Files written by other tools carry no mantissa checksums; ours (write_velocity_file) do,
  // and those are verified.
  io::H5File f = [&] {
    try {
      return io::H5File::open(c.file, io::Verify::checksums_if_present);
    } catch (const io::FileError& e) {
      throw io::FileError(e.problem(), c.file, "seismic.velocity.file: " + std::string(e.what()));
    }
  }();
  if (!f.has(c.dataset))
    throw io::FileError(io::FileProblem::missing_object, c.file,
                        where + " has no dataset '" + c.dataset +
                            "'; set seismic.velocity.dataset to the "
                            "dataset holding the velocities (h5ls shows what the file holds)");
  const auto dims = f.shape(c.dataset);
  const char* layout = grid.dim == 3 ? "(z, y, x)" : "(y, x)";
  if (int(dims.size()) != grid.dim)
    refuse("dataset '" + c.dataset + "' has " + std::to_string(dims.size()) +
           " dimensions but the grid has " + std::to_string(grid.dim) + " (mesh.dim); give a " + layout +
           " dataset");
  // dims are (z, y, x) in 3D, (y, x) in 2D.
  n = {1, 1, 1};
  for (int a = 0; a < grid.dim; ++a) {
    n[std::size_t(a)] = dims[std::size_t(grid.dim - 1 - a)];
    if (n[std::size_t(a)] < 1)
      refuse("dataset '" + c.dataset + "' has no points along " +
             std::string("xyz").substr(std::size_t(a), 1) +
             "; give a dataset with at least one point along every axis");
  }
  origin = grid.origin;
  spacing = grid.spacing;
  const io::Attributes attrs = f.dataset_attributes(c.dataset);
  for (auto [name, target] : {std::pair<const char*, std::array<double, 3>*>{"origin", &origin},
                              std::pair<const char*, std::array<double, 3>*>{"spacing", &spacing}}) {
    if (!attrs.has(name)) continue;  // the mesh's own
    std::vector<double> v;
    const auto& a = attrs.all().at(name);
    if (const auto* d = std::get_if<std::vector<double>>(&a))
      v = *d;
    else if (const auto* i = std::get_if<std::vector<std::int64_t>>(&a))
      v.assign(i->begin(), i->end());
    else if (const auto* d1 = std::get_if<double>(&a))
      v = {*d1};
    else if (const auto* i1 = std::get_if<std::int64_t>(&a))
      v = {double(*i1)};
    if (int(v.size()) < grid.dim)
      refuse("attribute '" + std::string(name) + "' of dataset '" + c.dataset + "' has " +
             std::to_string(v.size()) + " values; it needs " + std::to_string(grid.dim) +
             " (x, y[, z]) in metres");
    for (int ax = 0; ax < grid.dim; ++ax) {
      const double x = v[std::size_t(ax)];
      const bool spacing_attr = std::string(name) == "spacing";
      if (!std::isfinite(x) || (spacing_attr && !(x > 0.0)))
        refuse("attribute '" + std::string(name) + "' of dataset '" + c.dataset + "' is " + num(x) +
               " along " + std::string("xyz").substr(std::size_t(ax), 1) + "; " +
               (spacing_attr ? "a spacing must be a finite positive number of metres"
                             : "an origin must be a finite number of metres") +
               ": fix the file's attribute");
      (*target)[std::size_t(ax)] = x;
    }
  }
  values = f.read<double>(c.dataset);
  // Every value: finite and at least the deck's own bound for velocities.
  for (std::size_t k = 0; k < values.size(); ++k) {
    const double v = values[k];
    if (std::isfinite(v) && v >= min_velocity) continue;
    const std::int64_t i = std::int64_t(k) % n[0], j = (std::int64_t(k) / n[0]) % n[1],
                       l = std::int64_t(k) / (n[0] * n[1]);
    std::string at = "(x index " + std::to_string(i) + ", y index " + std::to_string(j) +
                     (grid.dim == 3 ? ", z index " + std::to_string(l) : std::string()) + ")";
    refuse("dataset '" + c.dataset + "' holds " + num(v) + " m/s at " + at + "; every velocity must be " +
           (std::isnan(v)       ? "a number"
            : !std::isfinite(v) ? "finite"
            : v <= 0.0          ? "positive"
                                : "at least " + num(min_velocity) + " m/s (the deck's lower bound)") +
           ": fix the file (e.g. fill gaps from the neighbouring values)");
  }
  // The file must cover the mesh (half a file cell of slack at the edges); clamping further
  // out would silently invent velocities.
  for (int a = 0; a < grid.dim; ++a) {
    const auto A = std::size_t(a);
    if (n[A] == 1) continue;  // constant along this axis by construction
    const double lo = origin[A] - 0.5 * spacing[A], hi = origin[A] + (double(n[A] - 1) + 0.5) * spacing[A];
    const double mlo = grid.origin[A], mhi = grid.coordinate(a, grid.n[a] - 1);
    if (mlo < lo || mhi > hi)
      refuse("dataset '" + c.dataset + "' covers " + num(origin[A]) + ".." +
             num(origin[A] + double(n[A] - 1) * spacing[A]) + " m along " + std::string("xyz").substr(A, 1) +
             " (" + std::to_string(n[A]) + " points, spacing " + num(spacing[A]) + ") but the mesh spans " +
             num(mlo) + ".." + num(mhi) +
             " m (mesh.origin, mesh.n, mesh.spacing); give a model that covers the mesh");
  }
}

}  // namespace

VelocityModel::VelocityModel(const VelocityModelConfig& config, const Grid& grid, MPI_Comm comm)
    : m_config(config), m_grid(grid) {
  const int vertical = grid.dim - 1;
  (void)vertical;
  if (config.kind == ModelKind::layered) {
    if (config.velocities.size() != config.interfaces.size() + 1)
      throw Error("seismic.velocity: a layered model needs one velocity more than interfaces; got " +
                  std::to_string(config.velocities.size()) + " velocities and " +
                  std::to_string(config.interfaces.size()) + " interfaces");
    for (std::size_t i = 1; i < config.interfaces.size(); ++i)
      if (!(config.interfaces[i] > config.interfaces[i - 1]))
        throw Error("seismic.velocity.interfaces must increase (entry " + std::to_string(i) + ")");
  }
  if (config.kind != ModelKind::file) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0 reads; the error text (if any) is broadcast so that every rank throws the same.
  std::string error;
  if (rank == 0) {
    try {
      read_file(config, grid, m_fn, m_forigin, m_fspacing, m_values);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  int len = static_cast<int>(error.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  error.resize(static_cast<std::size_t>(len));
  MPI_Bcast(error.data(), len, MPI_CHAR, 0, comm);
  if (len > 0) throw Error(error);
  MPI_Bcast(m_fn.data(), 3, MPI_INT64_T, 0, comm);
  MPI_Bcast(m_forigin.data(), 3, MPI_DOUBLE, 0, comm);
  MPI_Bcast(m_fspacing.data(), 3, MPI_DOUBLE, 0, comm);
  m_values.resize(static_cast<std::size_t>(m_fn[0] * m_fn[1] * m_fn[2]));
  MPI_Bcast(m_values.data(), static_cast<int>(m_values.size()), MPI_DOUBLE, 0, comm);
  m_same_grid = true;
  for (int a = 0; a < grid.dim; ++a)
    m_same_grid = m_same_grid && m_fn[a] == grid.n[a] && m_forigin[a] == grid.origin[a] &&
                  m_fspacing[a] == grid.spacing[a];
}

double VelocityModel::at(std::int64_t ix, std::int64_t iy, std::int64_t iz) const {
  if (m_config.kind == ModelKind::file && m_same_grid && m_config.bodies.empty())
    return m_values[static_cast<std::size_t>((iz * m_fn[1] + iy) * m_fn[0] + ix)];
  return at_position({m_grid.coordinate(0, ix), m_grid.coordinate(1, iy), m_grid.coordinate(2, iz)});
}

double VelocityModel::at_position(const std::array<double, 3>& x) const {
  for (auto b = m_config.bodies.rbegin(); b != m_config.bodies.rend(); ++b) {
    double r2 = 0.0;
    for (int a = 0; a < m_grid.dim; ++a) {
      const double d = (x[a] - b->center[a]) / b->radii[a];
      r2 += d * d;
    }
    if (r2 <= 1.0) return b->velocity;
  }
  return base_at_position(x);
}

double VelocityModel::base_at_position(const std::array<double, 3>& x) const {
  const double depth = x[static_cast<std::size_t>(m_grid.dim - 1)];
  switch (m_config.kind) {
    case ModelKind::constant:
      return m_config.velocity;
    case ModelKind::layered: {
      std::size_t layer = 0;
      while (layer < m_config.interfaces.size() && depth >= m_config.interfaces[layer]) ++layer;
      return m_config.velocities[layer];
    }
    case ModelKind::gradient:
      return m_config.top_velocity + m_config.gradient * depth;
    case ModelKind::file: {
      // Multilinear resampling of the file's grid, clamped at its edges.
      std::array<std::int64_t, 3> i0{0, 0, 0};
      std::array<double, 3> w{0, 0, 0};
      for (int a = 0; a < m_grid.dim; ++a) {
        const auto A = static_cast<std::size_t>(a);
        if (m_fn[A] == 1) continue;
        double s = (x[A] - m_forigin[A]) / m_fspacing[A];
        s = std::clamp(s, 0.0, double(m_fn[A] - 1));
        i0[A] = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(s)), m_fn[A] - 2);
        w[A] = s - double(i0[A]);
      }
      double v = 0.0;
      for (int c = 0; c < 8; ++c) {
        const std::array<int, 3> d{c & 1, (c >> 1) & 1, (c >> 2) & 1};
        double weight = 1.0;
        std::array<std::int64_t, 3> idx{};
        bool skip = false;
        for (std::size_t a = 0; a < 3; ++a) {
          if (m_fn[a] == 1) {
            if (d[a]) skip = true;
            idx[a] = 0;
            continue;
          }
          weight *= d[a] ? w[a] : 1.0 - w[a];
          idx[a] = i0[a] + d[a];
        }
        if (skip) continue;
        v += weight * m_values[static_cast<std::size_t>((idx[2] * m_fn[1] + idx[1]) * m_fn[0] + idx[0])];
      }
      return v;
    }
  }
  return 0.0;
}

void write_velocity_file(const std::string& file, const std::string& dataset, const Grid& grid,
                         const std::vector<double>& values) {
  std::vector<std::int64_t> shape;
  for (int a = grid.dim - 1; a >= 0; --a) shape.push_back(grid.n[std::size_t(a)]);
  io::PendingFile out(file);
  io::H5File f = io::H5File::create(out);
  io::Attributes attrs;
  attrs.set("origin", std::vector<double>(grid.origin.begin(), grid.origin.end()))
      .set("spacing", std::vector<double>(grid.spacing.begin(), grid.spacing.end()));
  if (std::int64_t(values.size()) != grid.n[0] * grid.n[1] * (grid.dim == 3 ? grid.n[2] : 1))
    throw Error("write_velocity_file: " + std::to_string(values.size()) + " values for a grid of " +
                std::to_string(grid.num_points()) + " points");
  f.write(dataset, shape, values.data(), attrs);
  f.close();
  out.commit();
}

}  // namespace mantissa::seismic
