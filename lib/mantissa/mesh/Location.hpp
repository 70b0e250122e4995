#pragma once
// Where a field's values live on the structured grid, as a type (Cabana
// Cabana_Grid_Types.hpp: Cell, Node, Face<Dim::I>). Grid's points are the cells; a Face<A>
// value sits on the low face of cell i along axis A (the MAC grid's normal velocity), so a
// rank owning cells [o, o+e) along A owns faces [o, o+e) and the face at the global high end
// belongs to the last rank only when the axis is not periodic.
#include <type_traits>

namespace mantissa {

struct Cell {};
struct Node {};
template <int A>
struct Face {
  static_assert(A >= 0 && A < 3, "Face<A>: A is an axis, 0 (x), 1 (y) or 2 (z)");
  static constexpr int axis = A;
};
using FaceX = Face<0>;
using FaceY = Face<1>;
using FaceZ = Face<2>;

template <class L>
struct is_face : std::false_type {};
template <int A>
struct is_face<Face<A>> : std::true_type {};

template <class L>
inline constexpr const char* location_name() {
  if constexpr (std::is_same<L, Cell>::value)
    return "cell";
  else if constexpr (std::is_same<L, Node>::value)
    return "node";
  else if constexpr (is_face<L>::value)
    return L::axis == 0 ? "face_x" : (L::axis == 1 ? "face_y" : "face_z");
  else
    return "unknown";
}

}  // namespace mantissa
