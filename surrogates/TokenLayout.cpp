#include <surrogates/TokenLayout.hpp>

#include <map>
#include <string>

namespace mantissa::surrogates {

namespace {
// floor division for possibly negative numerators (shifted windows start at -w/2).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
}  // namespace

TokenLayout::TokenLayout(int dim, std::array<std::int64_t, 3> extent,
                         const std::vector<std::array<std::int64_t, 3>>& offsets, int window)
    : m_dim(dim), m_window(window), m_extent(extent), m_offsets(offsets) {
  if (dim != 2 && dim != 3)
    throw Error("surrogate token layout: dim " + std::to_string(dim) + " must be 2 or 3");
  if (window < 1) throw Error("surrogate token layout: window " + std::to_string(window) + " must be >= 1");
  if (dim == 2) m_extent[2] = 1;
  for (int a = 0; a < 3; ++a)
    if (m_extent[a] < 1)
      throw Error("surrogate token layout: a tile has " + std::to_string(m_extent[a]) +
                  " patches along axis " + std::to_string(a) + "; it needs at least one");
  const std::int64_t n = num_tokens();
  m_coords =
      Kokkos::View<int**, Kokkos::LayoutRight, MemSpace>("mantissa::surrogates::TokenLayout::coords", n, 3);
  auto h = Kokkos::create_mirror_view(m_coords);
  std::int64_t t = 0;
  for (const auto& o : m_offsets)
    for (std::int64_t z = 0; z < m_extent[2]; ++z)
      for (std::int64_t y = 0; y < m_extent[1]; ++y)
        for (std::int64_t x = 0; x < m_extent[0]; ++x, ++t) {
          h(t, 0) = int(o[0] + x);
          h(t, 1) = int(o[1] + y);
          h(t, 2) = int(o[2] + z);
        }
  Kokkos::deep_copy(m_coords, h);
  m_plain = build(0);
  m_shifted = build(window / 2);
}

void TokenLayout::set_window_origin(const std::array<int, 3>& origin) {
  if (origin == m_origin) return;
  m_origin = origin;
  if (m_dim == 2) m_origin[2] = 0;
  m_plain = build(0);
  m_shifted = build(m_window / 2);
}

Windows TokenLayout::build(int shift) const {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_coords);
  const std::int64_t per_tile = tokens_per_tile();
  std::vector<int> offsets{0}, members;
  members.reserve(num_tokens());
  int max_size = 0;
  for (std::int64_t b = 0; b < num_tiles(); ++b) {
    // Window key -> tokens, in order of first appearance (row-major), so that a window's members
    // are in the same relative order whatever tile or rank it is built on.
    std::map<std::array<std::int64_t, 3>, std::vector<int>> groups;
    std::vector<std::array<std::int64_t, 3>> order;
    for (std::int64_t k = 0; k < per_tile; ++k) {
      const std::int64_t t = b * per_tile + k;
      std::array<std::int64_t, 3> key{floor_div(h(t, 0) + shift + m_origin[0], m_window),
                                      floor_div(h(t, 1) + shift + m_origin[1], m_window),
                                      m_dim == 3 ? floor_div(h(t, 2) + shift + m_origin[2], m_window) : 0};
      auto& g = groups[key];
      if (g.empty()) order.push_back(key);
      g.push_back(int(t));
    }
    for (const auto& key : order) {
      const auto& g = groups[key];
      members.insert(members.end(), g.begin(), g.end());
      offsets.push_back(int(members.size()));
      max_size = std::max(max_size, int(g.size()));
    }
  }
  Windows w;
  w.count = int(offsets.size()) - 1;
  w.max_size = max_size;
  w.offsets = IndexVector("mantissa::surrogates::TokenLayout::window_offsets", offsets.size());
  w.members = IndexVector("mantissa::surrogates::TokenLayout::window_members", members.size());
  auto ho = Kokkos::create_mirror_view(w.offsets);
  auto hm = Kokkos::create_mirror_view(w.members);
  for (std::size_t i = 0; i < offsets.size(); ++i) ho(i) = offsets[i];
  for (std::size_t i = 0; i < members.size(); ++i) hm(i) = members[i];
  Kokkos::deep_copy(w.offsets, ho);
  Kokkos::deep_copy(w.members, hm);
  return w;
}

}  // namespace mantissa::surrogates
