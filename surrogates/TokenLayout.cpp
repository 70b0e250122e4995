#include <surrogates/TokenLayout.hpp>

#include <algorithm>
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
  std::vector<int> offsets{0}, members(num_tokens());
  int max_size = 0;
  // A tile is a box of patches and floor((x + s) / w) is monotone, so its windows form a box of
  // keys, and the order in which a row-major walk over the tokens first meets them is the keys'
  // own row-major order. Windows in that order, each window's tokens in token order (so a
  // window's members are in the same relative order whatever tile or rank it is built on): a
  // stable counting sort by the key's row-major index.
  std::vector<int> first, fill;
  std::vector<std::int64_t> key;
  for (std::int64_t b = 0; b < num_tiles(); ++b) {
    const std::int64_t t0 = b * per_tile;
    std::array<std::int64_t, 3> lo{0, 0, 0}, n{1, 1, 1};
    for (int a = 0; a < m_dim; ++a) {
      lo[a] = floor_div(h(t0, a) + shift + m_origin[a], m_window);
      n[a] = floor_div(h(t0, a) + m_extent[a] - 1 + shift + m_origin[a], m_window) - lo[a] + 1;
    }
    key.resize(per_tile);
    first.assign(n[0] * n[1] * n[2] + 1, 0);
    for (std::int64_t k = 0; k < per_tile; ++k) {
      const std::int64_t t = t0 + k;
      std::int64_t id = 0;
      for (int a = m_dim; a-- > 0;)
        id = id * n[a] + floor_div(h(t, a) + shift + m_origin[a], m_window) - lo[a];
      key[k] = id;
      ++first[id + 1];
    }
    for (std::size_t g = 1; g < first.size(); ++g) {
      max_size = std::max(max_size, first[g]);
      first[g] += first[g - 1];
    }
    fill.assign(first.begin(), first.end() - 1);
    for (std::int64_t k = 0; k < per_tile; ++k) members[t0 + fill[key[k]]++] = int(t0 + k);
    for (std::size_t g = 1; g < first.size(); ++g)
      if (first[g] > first[g - 1]) offsets.push_back(int(t0) + first[g]);
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
