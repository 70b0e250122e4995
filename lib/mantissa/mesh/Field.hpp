#pragma once
// A distributed field: the rank's owned points plus ghost layers, in a Kokkos View indexed
// (z, y, x) row major so x is contiguous (the same order as the checkpoint datasets).
//
// Index spaces are kept apart by type: OwnedIndex counts from the first owned point (0 ..
// extent-1), GlobalIndex from the global origin; view() is indexed by storage position,
// which is owned index + ghost width. 2D fields have one z plane and no z ghosts.
//
// Row alignment (optional, align_bytes > 0): the first owned point of every row starts on an
// align_bytes boundary, so rows are padded at their end and view().extent(2) is the padded
// row length (at least extent()[0] + 2 ghost(0)); the points past the x ghosts are padding that
// nothing reads for its value. Index arithmetic is unchanged (storage = owned + ghost); code that
// needs the owned row length takes it from extent(), never from view().extent(2). The Field
// owns the memory of an aligned view (the view itself does not count references): keep the Field
// alive while its view is in use. Measured: a 7-point residual over 256^3 doubles ran at 18-19
// GB/s with aligned rows against 13-14 with rows one double off a cache line
// (docs/performance.md, 2026-12-07).
#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/Decomposition.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
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
  Field(const std::string& label, const Decomposition& decomp, int ghost_width, std::size_t align_bytes = 0)
      : m_extent(decomp.extent()), m_offset(decomp.offset()) {
    if (ghost_width < 0 || ghost_width > 4)
      throw Error("Field '" + label + "': ghost width " + std::to_string(ghost_width) + " is outside 0..4");
    if (align_bytes % sizeof(T) != 0 || (align_bytes & (align_bytes - 1)) != 0)
      throw Error("Field '" + label + "': row alignment " + std::to_string(align_bytes) +
                  " bytes is not a power of two that is a multiple of the value size " +
                  std::to_string(sizeof(T)));
    m_ghost = {ghost_width, ghost_width, decomp.grid().dim == 3 ? ghost_width : 0};
    const std::size_t nz = static_cast<std::size_t>(m_extent[2] + 2 * m_ghost[2]);
    const std::size_t ny = static_cast<std::size_t>(m_extent[1] + 2 * m_ghost[1]);
    const std::size_t nx = static_cast<std::size_t>(m_extent[0] + 2 * m_ghost[0]);
    if (align_bytes <= sizeof(T)) {
      m_view = view_type(Kokkos::view_alloc(label), nz, ny, nx);
      return;
    }
    // One allocation, one line of slack; the 3D view starts where its first owned point of row 0
    // (and so of every row, the row length being a multiple of the line) is aligned.
    const std::size_t per = align_bytes / sizeof(T), row = (nx + per - 1) / per * per;
    m_storage = Kokkos::View<T*, MemorySpace>(Kokkos::view_alloc(label), nz * ny * row + per);
    const std::size_t at = reinterpret_cast<std::uintptr_t>(m_storage.data() + m_ghost[0]) % align_bytes;
    const std::size_t lead = at == 0 ? 0 : (align_bytes - at) / sizeof(T);
    m_view = view_type(m_storage.data() + lead, nz, ny, row);
  }

  const view_type& view() const { return m_view; }
  std::string label() const { return m_storage.size() > 0 ? m_storage.label() : m_view.label(); }
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
  Kokkos::View<T*, MemorySpace> m_storage;  // owns m_view's memory when the rows are aligned
  std::array<int, 3> m_ghost{0, 0, 0};
  std::array<std::int64_t, 3> m_extent{0, 0, 0};
  std::array<std::int64_t, 3> m_offset{0, 0, 0};
};

// Copies into dst the points of src that both hold: the owned points and their ghosts, not the
// row padding. The fields are of one decomposition and ghost width; their rows may be padded
// differently (a solver's aligned field and a plain one). Throws naming both labels otherwise.
template <class T, class M>
void copy_points(const Field<T, M>& src, const Field<T, M>& dst) {
  const auto& a = src.view();
  const auto& b = dst.view();
  if (src.extent() != dst.extent() || src.ghosts() != dst.ghosts())
    throw Error("Field '" + src.label() + "' cannot be copied into '" + dst.label() +
                "': another decomposition or ghost width");
  if (a.extent(2) == b.extent(2)) {
    Kokkos::deep_copy(b, a);
    return;
  }
  const std::size_t nx = static_cast<std::size_t>(src.extent()[0] + 2 * src.ghost(0));
  using P = Kokkos::pair<std::size_t, std::size_t>;
  Kokkos::deep_copy(Kokkos::subview(b, Kokkos::ALL, Kokkos::ALL, P(0, nx)),
                    Kokkos::subview(a, Kokkos::ALL, Kokkos::ALL, P(0, nx)));
}

}  // namespace mantissa
