#pragma once
// Point-wise kernels of the 2D MAC discretisation (STYLE 7: one point testable on the host).
// Views are indexed (k, j, i) in storage coordinates; k is always 0 in 2D. u(j, i) is the x
// velocity on the low x face of cell (i, j), v(j, i) the y velocity on the low y face.
//
// Momentum: the second-order conservative (divergence) form of the advection term with
// face values averaged to cell centres and corners (Harlow and Welch 1965; the form conserves
// the discrete kinetic energy of the advective part on a periodic grid up to the time error),
// and the 5-point Laplacian for the viscous term. Rx, Ry are 1/h, Vx, Vy are nu/h^2.
#include <Kokkos_Core.hpp>

namespace mantissa::cfd::kernels {

// F_u = -d(uu)/dx - d(uv)/dy + nu lap u at the x face (j, i).
template <class C, class V>
KOKKOS_INLINE_FUNCTION C rhs_u(const V& u, const V& v, int j, int i, C rx, C ry, C vx, C vy) {
  const C h = C(0.5);
  const C uc = C(u(0, j, i));
  const C ue = h * (uc + C(u(0, j, i + 1))), uw = h * (C(u(0, j, i - 1)) + uc);
  const C un = h * (uc + C(u(0, j + 1, i))), us = h * (C(u(0, j - 1, i)) + uc);
  const C vn = h * (C(v(0, j + 1, i - 1)) + C(v(0, j + 1, i)));
  const C vs = h * (C(v(0, j, i - 1)) + C(v(0, j, i)));
  const C adv = (ue * ue - uw * uw) * rx + (un * vn - us * vs) * ry;
  const C lap = (C(u(0, j, i + 1)) - C(2) * uc + C(u(0, j, i - 1))) * vx +
                (C(u(0, j + 1, i)) - C(2) * uc + C(u(0, j - 1, i))) * vy;
  return lap - adv;
}

// F_v = -d(uv)/dx - d(vv)/dy + nu lap v at the y face (j, i).
template <class C, class V>
KOKKOS_INLINE_FUNCTION C rhs_v(const V& u, const V& v, int j, int i, C rx, C ry, C vx, C vy) {
  const C h = C(0.5);
  const C vc = C(v(0, j, i));
  const C ue = h * (C(u(0, j - 1, i + 1)) + C(u(0, j, i + 1))), ve = h * (vc + C(v(0, j, i + 1)));
  const C uw = h * (C(u(0, j - 1, i)) + C(u(0, j, i))), vw = h * (C(v(0, j, i - 1)) + vc);
  const C vn = h * (vc + C(v(0, j + 1, i))), vs = h * (C(v(0, j - 1, i)) + vc);
  const C adv = (ue * ve - uw * vw) * rx + (vn * vn - vs * vs) * ry;
  const C lap = (C(v(0, j, i + 1)) - C(2) * vc + C(v(0, j, i - 1))) * vx +
                (C(v(0, j + 1, i)) - C(2) * vc + C(v(0, j - 1, i))) * vy;
  return lap - adv;
}

// Discrete divergence of the cell (j, i): the transpose of the pressure gradient below, so
// that div(grad) is the 5-point Laplacian the Poisson solver inverts.
template <class C, class V>
KOKKOS_INLINE_FUNCTION C divergence(const V& u, const V& v, int j, int i, C rx, C ry) {
  return (C(u(0, j, i + 1)) - C(u(0, j, i))) * rx + (C(v(0, j + 1, i)) - C(v(0, j, i))) * ry;
}

// Vorticity dv/dx - du/dy at the cell corner (x_i, y_j), the low-left corner of cell (j, i).
template <class C, class V>
KOKKOS_INLINE_FUNCTION C vorticity(const V& u, const V& v, int j, int i, C rx, C ry) {
  return (C(v(0, j, i)) - C(v(0, j, i - 1))) * rx - (C(u(0, j, i)) - C(u(0, j - 1, i))) * ry;
}

}  // namespace mantissa::cfd::kernels
