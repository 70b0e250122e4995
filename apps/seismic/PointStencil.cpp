#include <seismic/Solver.hpp>
#include <seismic/stencil_kernels.hpp>

#include <algorithm>
#include <cmath>

namespace mantissa::seismic {

PointStencil point_stencil(const std::array<double, 3>& position, const Grid& grid, int order) {
  std::array<std::int64_t, 3> first{0, 0, 0};
  std::array<int, 3> count{1, 1, 1};
  std::array<std::vector<double>, 3> w;
  for (int a = 0; a < 3; ++a) {
    if (a >= grid.dim) {
      w[a] = {1.0};
      continue;
    }
    const double s = (position[a] - grid.origin[a]) / grid.spacing[a];
    count[a] = static_cast<int>(std::min<std::int64_t>(order, grid.n[a]));
    const auto fl = static_cast<std::int64_t>(std::floor(s));
    first[a] = std::clamp<std::int64_t>(fl - count[a] / 2 + 1, 0, grid.n[a] - count[a]);
    w[a].resize(static_cast<std::size_t>(count[a]));
    lagrange_weights(s, static_cast<long>(first[a]), count[a], w[a].data());
  }
  PointStencil st;
  for (int k = 0; k < count[2]; ++k)
    for (int j = 0; j < count[1]; ++j)
      for (int i = 0; i < count[0]; ++i) {
        const double weight = w[0][i] * w[1][j] * w[2][k];
        if (weight == 0.0) continue;
        st.index.push_back({first[0] + i, first[1] + j, first[2] + k});
        st.weight.push_back(weight);
      }
  return st;
}

}  // namespace mantissa::seismic
