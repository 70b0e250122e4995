#pragma once
// A global structured Cartesian grid in 2D or 3D. Axis 0 is x, 1 is y, 2 is z; a 2D grid has
// n[2] == 1. Cells are points of the finite-difference grid (node-centred): the coordinate of
// global index i along axis a is origin[a] + i * spacing[a].
#include <array>
#include <cstdint>

namespace mantissa {

enum class Axis : int { x = 0, y = 1, z = 2 };

struct Grid {
  int dim = 3;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<double, 3> spacing{1.0, 1.0, 1.0};
  std::array<double, 3> origin{0.0, 0.0, 0.0};
  std::array<bool, 3> periodic{false, false, false};

  std::int64_t num_points() const { return n[0] * n[1] * n[2]; }
  double coordinate(int axis, std::int64_t i) const { return origin[axis] + double(i) * spacing[axis]; }
  // Throws mantissa::Error when the grid is not usable (dim, sizes, spacing).
  void validate() const;
};

}  // namespace mantissa
