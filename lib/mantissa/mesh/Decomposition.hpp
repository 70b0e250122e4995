#pragma once
// Cartesian domain decomposition over an MPI Cartesian communicator. Sizes that do not divide
// evenly are spread: the first (n % p) ranks of an axis own one point more.
#include <mantissa/mesh/Grid.hpp>

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

namespace mantissa {

class Decomposition {
 public:
  // dims: process grid; 0 entries are chosen by MPI_Dims_create. For a 2D grid dims[2] is 1.
  Decomposition(MPI_Comm comm, const Grid& grid, std::array<int, 3> dims = {0, 0, 0});
  // An explicit partition (multigrid's coarse levels follow the fine level's split instead of
  // split()): dims must fill the communicator, starts[a] holds dims[a] + 1 increasing global
  // indices from 0 to grid.n[a], and every rank must own at least one point per axis.
  Decomposition(MPI_Comm comm, const Grid& grid, std::array<int, 3> dims,
                const std::array<std::vector<std::int64_t>, 3>& starts);
  ~Decomposition();
  Decomposition(const Decomposition&) = delete;
  Decomposition& operator=(const Decomposition&) = delete;

  const Grid& grid() const { return m_grid; }
  MPI_Comm comm() const { return m_cart; }
  int rank() const { return m_rank; }
  int size() const { return m_size; }
  const std::array<int, 3>& dims() const { return m_dims; }
  const std::array<int, 3>& coords() const { return m_coords; }

  // Owned points of this rank: global index of the first one, and how many, per axis.
  const std::array<std::int64_t, 3>& offset() const { return m_offset; }
  const std::array<std::int64_t, 3>& extent() const { return m_extent; }
  std::int64_t num_owned() const { return m_extent[0] * m_extent[1] * m_extent[2]; }

  // Rank of the neighbour at offset (dx, dy, dz) in {-1, 0, 1}^3, MPI_PROC_NULL outside a
  // non-periodic boundary.
  int neighbor(int dx, int dy, int dz) const;
  // Whether this rank touches the global low/high boundary of an axis.
  bool at_low_boundary(int axis) const { return m_coords[axis] == 0; }
  bool at_high_boundary(int axis) const { return m_coords[axis] == m_dims[axis] - 1; }

  // The partition boundaries along an axis (dims[a] + 1 entries, first 0, last n[a]).
  std::vector<std::int64_t> starts(int axis) const;

  // The uneven split: {first, count} of part p of n points over `parts`.
  static std::array<std::int64_t, 2> split(std::int64_t n, int parts, int p);
  // Owned range of any rank by its Cartesian coordinates.
  std::array<std::int64_t, 3> offset_of(const std::array<int, 3>& coords) const;
  std::array<std::int64_t, 3> extent_of(const std::array<int, 3>& coords) const;

 private:
  Grid m_grid;
  MPI_Comm m_cart = MPI_COMM_NULL;
  int m_rank = 0, m_size = 1;
  std::array<int, 3> m_dims{1, 1, 1}, m_coords{0, 0, 0};
  std::array<std::int64_t, 3> m_offset{0, 0, 0}, m_extent{1, 1, 1};
  std::array<int, 27> m_neighbors{};
  std::array<std::vector<std::int64_t>, 3> m_starts;  // empty: split()

  void setup(MPI_Comm comm, std::array<int, 3> dims);
};

}  // namespace mantissa
