#include <mantissa/core/Error.hpp>
#include <seismic/VelocityModel.hpp>

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace mantissa::seismic {

namespace {

// Reads dataset + attributes on the calling rank; throws mantissa::Error with the file name.
void read_file(const VelocityModelConfig& c, const Grid& grid, std::array<std::int64_t, 3>& n,
               std::array<double, 3>& origin, std::array<double, 3>& spacing, std::vector<double>& values) {
  const std::string where = "seismic.velocity.file '" + c.file + "'";
  H5E_auto2_t old_func = nullptr;
  void* old_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // we report errors ourselves
  struct Restore {
    H5E_auto2_t f;
    void* d;
    ~Restore() { H5Eset_auto2(H5E_DEFAULT, f, d); }
  } restore{old_func, old_data};
  const hid_t file = H5Fopen(c.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw Error(where + ": cannot open it as HDF5; check the path");
  const hid_t ds = H5Dopen2(file, c.dataset.c_str(), H5P_DEFAULT);
  if (ds < 0) {
    H5Fclose(file);
    throw Error(where + ": has no dataset '" + c.dataset + "'; set seismic.velocity.dataset");
  }
  const hid_t space = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[3] = {1, 1, 1};
  if (rank != grid.dim) {
    H5Sclose(space), H5Dclose(ds), H5Fclose(file);
    throw Error(where + ": dataset '" + c.dataset + "' has " + std::to_string(rank) +
                " dimensions, the grid " + std::to_string(grid.dim) + "; give a (z, y, x) or (y, x) dataset");
  }
  H5Sget_simple_extent_dims(space, dims, nullptr);
  // dims are (z, y, x) in 3D, (y, x) in 2D.
  n = {1, 1, 1};
  for (int a = 0; a < rank; ++a)
    n[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(dims[rank - 1 - a]);
  origin = grid.origin;
  spacing = grid.spacing;
  for (auto [name, target] : {std::pair<const char*, std::array<double, 3>*>{"origin", &origin},
                              std::pair<const char*, std::array<double, 3>*>{"spacing", &spacing}}) {
    if (H5Aexists(ds, name) > 0) {
      const hid_t attr = H5Aopen(ds, name, H5P_DEFAULT);
      const hid_t aspace = H5Aget_space(attr);
      const hssize_t count = H5Sget_simple_extent_npoints(aspace);
      std::vector<double> buf(static_cast<std::size_t>(std::max<hssize_t>(count, 0)));
      if (count >= grid.dim) H5Aread(attr, H5T_NATIVE_DOUBLE, buf.data());
      H5Sclose(aspace);
      H5Aclose(attr);
      if (count < grid.dim) {
        H5Sclose(space), H5Dclose(ds), H5Fclose(file);
        throw Error(where + ": attribute '" + std::string(name) + "' needs " + std::to_string(grid.dim) +
                    " values (x, y[, z])");
      }
      for (int a = 0; a < grid.dim; ++a)
        (*target)[static_cast<std::size_t>(a)] = buf[static_cast<std::size_t>(a)];
    }
  }
  values.resize(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  const herr_t status = H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(file);
  if (status < 0) throw Error(where + ": reading dataset '" + c.dataset + "' failed");
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
  const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) throw Error("write_velocity_file: cannot create '" + file + "'");
  hsize_t dims[3] = {static_cast<hsize_t>(grid.n[2]), static_cast<hsize_t>(grid.n[1]),
                     static_cast<hsize_t>(grid.n[0])};
  const int rank = grid.dim;
  const hid_t space = H5Screate_simple(rank, rank == 3 ? dims : dims + 1, nullptr);
  const hid_t ds =
      H5Dcreate2(f, dataset.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  hsize_t three = 3;
  const hid_t aspace = H5Screate_simple(1, &three, nullptr);
  for (auto [name, src] : {std::pair<const char*, const double*>{"origin", grid.origin.data()},
                           std::pair<const char*, const double*>{"spacing", grid.spacing.data()}}) {
    const hid_t attr = H5Acreate2(ds, name, H5T_NATIVE_DOUBLE, aspace, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, H5T_NATIVE_DOUBLE, src);
    H5Aclose(attr);
  }
  H5Sclose(aspace);
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(f);
}

}  // namespace mantissa::seismic
