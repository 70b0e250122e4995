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

// ---- 3D -------------------------------------------------------------------------------------
// Views indexed (k, j, i) with a ghost layer along z too; the velocity component along axis
// A lives on the low A faces (Face<A>). The same discretisation as the 2D kernels above, one
// more axis: for the component A, the advective flux through the sides of its control volume
// along B is (u_A averaged along B) x (u_B averaged along A) on the A-B edges (B != A) and the
// square of u_A averaged to the cell centres (B == A); the viscous term is the 7-point
// Laplacian. r[a] = 1/h_a, vis[a] = nu/h_a^2.
namespace detail3 {

// The view of component B among (u, v, w).
template <int B, class V>
KOKKOS_INLINE_FUNCTION const V& comp(const V& u, const V& v, const V& w) {
  if constexpr (B == 0)
    return u;
  else if constexpr (B == 1)
    return v;
  else
    return w;
}

// Unit offsets of axis A in (k, j, i).
template <int A>
struct unit {
  static constexpr int i = A == 0 ? 1 : 0, j = A == 1 ? 1 : 0, k = A == 2 ? 1 : 0;
};

// Advective flux difference of component A along axis B (B != A) at the A face (k, j, i).
template <int A, int B, class C, class V>
KOKKOS_INLINE_FUNCTION C cross_flux(const V& ua, const V& ub, int k, int j, int i) {
  using a = unit<A>;
  using b = unit<B>;
  const C h = C(0.5);
  const C uc = C(ua(k, j, i));
  const C a_hi = h * (uc + C(ua(k + b::k, j + b::j, i + b::i)));
  const C a_lo = h * (C(ua(k - b::k, j - b::j, i - b::i)) + uc);
  const C b_hi =
      h * (C(ub(k + b::k - a::k, j + b::j - a::j, i + b::i - a::i)) + C(ub(k + b::k, j + b::j, i + b::i)));
  const C b_lo = h * (C(ub(k - a::k, j - a::j, i - a::i)) + C(ub(k, j, i)));
  return a_hi * b_hi - a_lo * b_lo;
}

// Second difference of f along axis B at (k, j, i).
template <int B, class C, class V>
KOKKOS_INLINE_FUNCTION C second(const V& f, int k, int j, int i) {
  using b = unit<B>;
  return C(f(k + b::k, j + b::j, i + b::i)) - C(2) * C(f(k, j, i)) + C(f(k - b::k, j - b::j, i - b::i));
}

}  // namespace detail3

// F_A = -sum_B d(u_B u_A)/dx_B + nu lap u_A at the A face (k, j, i), 3D.
template <int A, class C, class V>
KOKKOS_INLINE_FUNCTION C rhs3(const V& u, const V& v, const V& w, int k, int j, int i, const C r[3],
                              const C vis[3]) {
  using namespace detail3;
  using a = unit<A>;
  const V& ua = comp<A>(u, v, w);
  const C h = C(0.5);
  const C uc = C(ua(k, j, i));
  const C hi = h * (uc + C(ua(k + a::k, j + a::j, i + a::i)));
  const C lo = h * (C(ua(k - a::k, j - a::j, i - a::i)) + uc);
  C adv[3];
  adv[A] = hi * hi - lo * lo;
  constexpr int B1 = (A + 1) % 3, B2 = (A + 2) % 3;
  adv[B1] = cross_flux<A, B1, C>(ua, comp<B1>(u, v, w), k, j, i);
  adv[B2] = cross_flux<A, B2, C>(ua, comp<B2>(u, v, w), k, j, i);
  const C a_sum = adv[0] * r[0] + adv[1] * r[1] + adv[2] * r[2];
  const C lap = second<0, C>(ua, k, j, i) * vis[0] + second<1, C>(ua, k, j, i) * vis[1] +
                second<2, C>(ua, k, j, i) * vis[2];
  return lap - a_sum;
}

// Discrete divergence of the cell (k, j, i), 3D: the transpose of the pressure gradient.
template <class C, class V>
KOKKOS_INLINE_FUNCTION C divergence3(const V& u, const V& v, const V& w, int k, int j, int i, const C r[3]) {
  return (C(u(k, j, i + 1)) - C(u(k, j, i))) * r[0] + (C(v(k, j + 1, i)) - C(v(k, j, i))) * r[1] +
         (C(w(k + 1, j, i)) - C(w(k, j, i))) * r[2];
}

// The vorticity component along axis A on the A edges through (k, j, i), 3D:
//   A = 0: dw/dy - dv/dz at (x_i + h/2, y_j, z_k); A = 1: du/dz - dw/dx; A = 2: dv/dx - du/dy.
template <int A, class C, class V>
KOKKOS_INLINE_FUNCTION C vorticity3(const V& u, const V& v, const V& w, int k, int j, int i, const C r[3]) {
  if constexpr (A == 0)
    return (C(w(k, j, i)) - C(w(k, j - 1, i))) * r[1] - (C(v(k, j, i)) - C(v(k - 1, j, i))) * r[2];
  else if constexpr (A == 1)
    return (C(u(k, j, i)) - C(u(k - 1, j, i))) * r[2] - (C(w(k, j, i)) - C(w(k, j, i - 1))) * r[0];
  else
    return (C(v(k, j, i)) - C(v(k, j, i - 1))) * r[0] - (C(u(k, j, i)) - C(u(k, j - 1, i))) * r[1];
}
}  // namespace mantissa::cfd::kernels
