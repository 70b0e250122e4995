#pragma once
// A distributed field: the rank's owned points plus ghost layers, in a Kokkos View indexed
// (z, y, x) row major so x is contiguous (the same order as the checkpoint datasets).
//
// Index spaces are kept apart by type: OwnedIndex counts from the first owned point (0 ..
// extent-1), GlobalIndex from the global origin; view() is indexed by storage position,
// which is owned index + ghost width. 2D fields have one z plane and no z ghosts.
#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/Decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace mantissa {

struct OwnedIndex {
  std::array<std::int64_t, 3> i;
};
struct GlobalIndex {
  std::array<std::int64_t, 3> i;
};

template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class Field {
 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  using view_type = Kokkos::View<T***, Kokkos::LayoutRight, MemorySpace>;

  Field() = default;
  Field(const std::string& label, const Decomposition& decomp, int ghost_width)
      : m_extent(decomp.extent()), m_offset(decomp.offset()) {
    if (ghost_width < 0 || ghost_width > 4)
      throw Error("Field '" + label + "': ghost width " + std::to_string(ghost_width) + " is outside 0..4");
    m_ghost = {ghost_width, ghost_width, decomp.grid().dim == 3 ? ghost_width : 0};
    m_view = view_type(Kokkos::view_alloc(label), static_cast<std::size_t>(m_extent[2] + 2 * m_ghost[2]),
                       static_cast<std::size_t>(m_extent[1] + 2 * m_ghost[1]),
                       static_cast<std::size_t>(m_extent[0] + 2 * m_ghost[0]));
  }

  const view_type& view() const { return m_view; }
  std::string label() const { return m_view.label(); }
  // Ghost width along an axis (0 for z in 2D).
  int ghost(int axis) const { return m_ghost[axis]; }
  const std::array<int, 3>& ghosts() const { return m_ghost; }
  const std::array<std::int64_t, 3>& extent() const { return m_extent; }
  const std::array<std::int64_t, 3>& offset() const { return m_offset; }

  // Storage position of an owned index, for use on the host side of index arithmetic.
  std::array<std::int64_t, 3> storage(OwnedIndex o) const {
    return {o.i[0] + m_ghost[0], o.i[1] + m_ghost[1], o.i[2] + m_ghost[2]};
  }
  OwnedIndex owned(GlobalIndex g) const {
    return {{g.i[0] - m_offset[0], g.i[1] - m_offset[1], g.i[2] - m_offset[2]}};
  }
  GlobalIndex global(OwnedIndex o) const {
    return {{o.i[0] + m_offset[0], o.i[1] + m_offset[1], o.i[2] + m_offset[2]}};
  }

  // Policy over the owned points in storage coordinates, iterating (z, y, x).
  Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<3>> owned_policy() const {
    using idx = typename Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<3>>::index_type;
    return Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<3>>(
        {idx(m_ghost[2]), idx(m_ghost[1]), idx(m_ghost[0])},
        {idx(m_ghost[2] + m_extent[2]), idx(m_ghost[1] + m_extent[1]), idx(m_ghost[0] + m_extent[0])});
  }

 private:
  view_type m_view;
  std::array<int, 3> m_ghost{0, 0, 0};
  std::array<std::int64_t, 3> m_extent{0, 0, 0};
  std::array<std::int64_t, 3> m_offset{0, 0, 0};
};

}  // namespace mantissa
