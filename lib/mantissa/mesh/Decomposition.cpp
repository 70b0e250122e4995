#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/Decomposition.hpp>

#include <string>

namespace mantissa {

void Grid::validate() const {
  if (dim != 2 && dim != 3)
    throw Error("grid: dimension " + std::to_string(dim) + " is not supported; use 2 or 3");
  for (int a = 0; a < dim; ++a) {
    if (n[a] < 1)
      throw Error("grid: axis " + std::to_string(a) + " has " + std::to_string(n[a]) +
                  " points; need at least 1");
    if (!(spacing[a] > 0.0))
      throw Error("grid: spacing along axis " + std::to_string(a) + " must be positive");
  }
  if (dim == 2 && n[2] != 1) throw Error("grid: a 2D grid must have n[2] == 1");
}

std::array<std::int64_t, 2> Decomposition::split(std::int64_t n, int parts, int p) {
  const std::int64_t base = n / parts, rem = n % parts;
  const std::int64_t first = p * base + (p < rem ? p : rem);
  return {first, base + (p < rem ? 1 : 0)};
}

Decomposition::Decomposition(MPI_Comm comm, const Grid& grid, std::array<int, 3> dims) : m_grid(grid) {
  setup(comm, dims);
}

Decomposition::Decomposition(MPI_Comm comm, const Grid& grid, std::array<int, 3> dims,
                             const std::array<std::vector<std::int64_t>, 3>& starts)
    : m_grid(grid) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (dims[0] * dims[1] * dims[2] != size || dims[0] < 1 || dims[1] < 1 || dims[2] < 1)
    throw Error("decomposition: an explicit partition needs a full process grid for " + std::to_string(size) +
                " ranks, got " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                std::to_string(dims[2]));
  for (int a = 0; a < 3; ++a) {
    const auto& s = starts[a];
    if (s.size() != std::size_t(dims[a]) + 1 || s.front() != 0 || s.back() != grid.n[a])
      throw Error("decomposition: partition of axis " + std::to_string(a) + " must have " +
                  std::to_string(dims[a] + 1) + " boundaries from 0 to " + std::to_string(grid.n[a]));
    for (std::size_t p = 0; p + 1 < s.size(); ++p)
      if (s[p + 1] <= s[p])
        throw Error("decomposition: partition of axis " + std::to_string(a) + " leaves part " +
                    std::to_string(p) + " without points; every rank needs at least one");
  }
  m_starts = starts;
  setup(comm, dims);
}

std::vector<std::int64_t> Decomposition::starts(int axis) const {
  if (!m_starts[axis].empty()) return m_starts[axis];
  std::vector<std::int64_t> s(std::size_t(m_dims[axis]) + 1);
  for (int p = 0; p < m_dims[axis]; ++p) s[std::size_t(p)] = split(m_grid.n[axis], m_dims[axis], p)[0];
  s.back() = m_grid.n[axis];
  return s;
}

void Decomposition::setup(MPI_Comm comm, std::array<int, 3> dims) {
  m_grid.validate();
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (m_grid.dim == 2) {
    if (dims[2] > 1)
      throw Error("decomposition: a 2D grid cannot be split along z (process grid z = " +
                  std::to_string(dims[2]) + "); set it to 1 or 0");
    dims[2] = 1;
  }
  for (int a = 0; a < 3; ++a)
    if (dims[a] < 0) throw Error("decomposition: process grid entries must be >= 0");
  int fixed = 1;
  for (int a = 0; a < 3; ++a) fixed *= (dims[a] > 0 ? dims[a] : 1);
  if (size % fixed != 0)
    throw Error("decomposition: the process grid " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) +
                "x" + std::to_string(dims[2]) + " does not fit " + std::to_string(size) +
                " ranks; use 0 entries to let mantissa choose");
  MPI_Dims_create(size, 3, dims.data());
  for (int a = 0; a < 3; ++a) {
    if (dims[a] > m_grid.n[a])
      throw Error("decomposition: " + std::to_string(dims[a]) + " ranks along axis " + std::to_string(a) +
                  " but only " + std::to_string(m_grid.n[a]) + " points; use fewer ranks or a finer grid");
  }
  int periods[3] = {m_grid.periodic[0], m_grid.periodic[1], m_grid.periodic[2]};
  // MPI's Cartesian order is row major with the last dimension fastest; we pass (x, y, z) as
  // given so coords[0] is x.
  MPI_Cart_create(comm, 3, dims.data(), periods, /*reorder=*/0, &m_cart);
  MPI_Comm_rank(m_cart, &m_rank);
  MPI_Comm_size(m_cart, &m_size);
  m_dims = dims;
  MPI_Cart_coords(m_cart, m_rank, 3, m_coords.data());
  m_offset = offset_of(m_coords);
  m_extent = extent_of(m_coords);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        std::array<int, 3> c{m_coords[0] + dx, m_coords[1] + dy, m_coords[2] + dz};
        const std::array<int, 3> d{dx, dy, dz};
        bool outside = false;
        for (int a = 0; a < 3; ++a) {
          if (c[a] < 0 || c[a] >= m_dims[a]) {
            if (m_grid.periodic[a] && d[a] != 0 && (m_grid.dim == 3 || a < 2))
              c[a] = (c[a] + m_dims[a]) % m_dims[a];
            else
              outside = true;
          }
        }
        int r = MPI_PROC_NULL;
        if (!outside) MPI_Cart_rank(m_cart, c.data(), &r);
        m_neighbors[(dz + 1) * 9 + (dy + 1) * 3 + (dx + 1)] = r;
      }
}

Decomposition::~Decomposition() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && m_cart != MPI_COMM_NULL) MPI_Comm_free(&m_cart);
}

int Decomposition::neighbor(int dx, int dy, int dz) const {
  return m_neighbors[(dz + 1) * 9 + (dy + 1) * 3 + (dx + 1)];
}

std::array<std::int64_t, 3> Decomposition::offset_of(const std::array<int, 3>& c) const {
  std::array<std::int64_t, 3> o{};
  for (int a = 0; a < 3; ++a)
    o[a] = m_starts[a].empty() ? split(m_grid.n[a], m_dims[a], c[a])[0] : m_starts[a][std::size_t(c[a])];
  return o;
}

std::array<std::int64_t, 3> Decomposition::extent_of(const std::array<int, 3>& c) const {
  std::array<std::int64_t, 3> e{};
  for (int a = 0; a < 3; ++a)
    e[a] = m_starts[a].empty() ? split(m_grid.n[a], m_dims[a], c[a])[1]
                               : m_starts[a][std::size_t(c[a]) + 1] - m_starts[a][std::size_t(c[a])];
  return e;
}

}  // namespace mantissa
