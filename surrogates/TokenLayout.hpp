#pragma once
// Where every token (patch) of a batch sits and which attention window it belongs to.
//
// A batch is B tiles of the same extent in patches; tile b starts at a global patch offset, so
// position encodings and window boundaries follow global coordinates. Tokens are ordered tile
// by tile, row-major (z, y, x) inside a tile. Windows partition a tile into blocks of w^d
// patches aligned to the global patch grid; the shifted partition (Liu et al., "Swin
// Transformer", ICCV 2021) moves the block boundaries by w/2. A window cut by a tile's edge is
// simply smaller (no cyclic shift, no mask), which is what lets a rank run its subdomain plus a
// halo of patches and get the one-rank result for every window that is complete.
#include <surrogates/Tensor.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace mantissa::surrogates {

struct Windows {
  int count = 0;        // number of windows
  int max_size = 0;     // largest window (tokens)
  IndexVector offsets;  // [count + 1] into members
  IndexVector members;  // token indices, window by window, each window in token order
};

class TokenLayout {
 public:
  TokenLayout() = default;
  // dim: 2 or 3; extent: patches per tile along x, y, z (z = 1 in 2D); offsets: global patch
  // offset of each tile; window: w patches per axis.
  TokenLayout(int dim, std::array<std::int64_t, 3> extent,
              const std::vector<std::array<std::int64_t, 3>>& offsets, int window);

  int dim() const { return m_dim; }
  int window() const { return m_window; }
  std::int64_t num_tiles() const { return static_cast<std::int64_t>(m_offsets.size()); }
  std::int64_t tokens_per_tile() const { return m_extent[0] * m_extent[1] * m_extent[2]; }
  std::int64_t num_tokens() const { return num_tiles() * tokens_per_tile(); }
  const std::array<std::int64_t, 3>& extent() const { return m_extent; }
  const std::vector<std::array<std::int64_t, 3>>& offsets() const { return m_offsets; }
  // Global patch coordinates of each token, [num_tokens, 3] (x, y, z).
  const Kokkos::View<int**, Kokkos::LayoutRight, MemSpace>& coords() const { return m_coords; }
  const Windows& windows(bool shifted) const { return shifted ? m_shifted : m_plain; }
  // Moves the window grid by `origin` patches per axis (the positions stay): the windows of a
  // token at global patch x are those of x + origin. SurrogateConfig::window_shift draws a new
  // origin for every training step and every prediction, so that no window edge stays at the
  // same place through a rollout.
  void set_window_origin(const std::array<int, 3>& origin);
  const std::array<int, 3>& window_origin() const { return m_origin; }

 private:
  Windows build(int shift) const;
  int m_dim = 2, m_window = 1;
  std::array<std::int64_t, 3> m_extent{1, 1, 1};
  std::array<int, 3> m_origin{0, 0, 0};
  std::vector<std::array<std::int64_t, 3>> m_offsets;
  Kokkos::View<int**, Kokkos::LayoutRight, MemSpace> m_coords;
  Windows m_plain, m_shifted;
};

}  // namespace mantissa::surrogates
