#pragma once
// Kernel launches of the acoustic solver. Free functions (not members) so that device lambdas
// never capture `this` and may live in any back-end's compilation; the point-wise math they
// call is in stencil_kernels.hpp.
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/mesh/Field.hpp>
#include <seismic/detail/HostCpml.hpp>
#include <seismic/detail/HostStencil.hpp>
#include <seismic/detail/Launch.hpp>
#include <seismic/stencil_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <utility>
#include <vector>

namespace mantissa::seismic::detail {

// Storage -> compute conversion (16-bit types convert through float).
template <class C, class S>
KOKKOS_INLINE_FUNCTION C to_compute(const S& s) {
  return C(s);
}

// Image ghosts at a physical side: ghost at plane + dir*m takes sign * value at plane - dir*m
// for m = 1..g (rigid: sign +1, Neumann; free surface: sign -1 and the plane itself is zero).
// A copy or a sign flip, both exact in every storage type, so no conversion to the compute type
// (which for fp16 storage is a software decode and encode per ghost point).
// The axis is a template argument so that, for y and z sides, the x loop is a plain
// contiguous copy the compiler vectorises (with a run-time axis the index shuffling kept the
// fill at half the cost of the interior update in the 128^3 benchmark).
template <int Axis, class ExecSpace, class View>
void mirror_fill_axis(const ExecSpace& space, const View& v, const Box& box, int plane, int dir,
                      bool negate) {
  for_each_point(
      "mantissa::seismic::Solver::mirror_fill", space, box, KOKKOS_LAMBDA(int k, int j, int i) {
        // Axis is a constant, so the index arrays fold away (no constexpr-if: nvcc refuses a
        // first capture inside one in an extended lambda).
        int dst[3] = {i, j, k}, src[3] = {i, j, k};
        dst[Axis] = plane + dir * dst[Axis];
        src[Axis] = plane - dir * src[Axis];
        const auto value = v(src[2], src[1], src[0]);
        v(dst[2], dst[1], dst[0]) = negate ? -value : value;
      });
}

template <class S, class C, class ExecSpace, class View>
void mirror_fill(const ExecSpace& space, const View& v, const Box& owned, int axis, int plane, int dir, int g,
                 bool free_surface) {
  Box box = owned;
  box.lo[axis] = 1;
  box.hi[axis] = g + 1;
  if (axis == 0)
    mirror_fill_axis<0>(space, v, box, plane, dir, free_surface);
  else if (axis == 1)
    mirror_fill_axis<1>(space, v, box, plane, dir, free_surface);
  else
    mirror_fill_axis<2>(space, v, box, plane, dir, free_surface);
  if (free_surface) {
    Box p = owned;
    p.lo[axis] = plane;
    p.hi[axis] = plane + 1;
    for_each_point(
        "mantissa::seismic::Solver::free_surface", space, p,
        KOKKOS_LAMBDA(int k, int j, int i) { v(k, j, i) = S(C(0)); });
  }
}

template <class ExecSpace, class View>
void zero_plane(const ExecSpace& space, const View& v, const Box& owned, int axis, int plane) {
  using S = typename View::value_type;
  Box p = owned;
  p.lo[axis] = plane;
  p.hi[axis] = plane + 1;
  for_each_point(
      "mantissa::seismic::Solver::free_surface", space, p,
      KOKKOS_LAMBDA(int k, int j, int i) { v(k, j, i) = S(0.0f); });
}

// p_old <- 2 p - p_old + (c dt)^2 L p, in place, over a box outside every PML, one point per
// work item. This is the device form (flat indexing with restrict-qualified pointers: p, p_old
// and the model never alias); host back-ends use the row kernel in HostStencil.hpp, which
// gives bitwise the same result.
template <int R, int Dim, class ExecSpace, class PView, class MView, class C>
void interior_update_points(const ExecSpace& space, const Box& box, const PView& p, const PView& q,
                            const MView& m, const StencilWeights<C, R>& w) {
  using S = typename PView::value_type;
  using M = typename MView::value_type;
  const S* const pp = p.data();
  S* const qp = q.data();
  const M* const mp = m.data();
  const long sz = long(p.stride(0)), sy = long(p.stride(1));
  for_each_point(
      "mantissa::seismic::Solver::step::interior", space, box, KOKKOS_LAMBDA(int k, int j, int i) {
        const S* KOKKOS_RESTRICT pr = pp;
        S* KOKKOS_RESTRICT qr = qp;
        const M* KOKKOS_RESTRICT mr = mp;
        const long x = k * sz + j * sy + i;
        const C lap = laplacian_flat<R, Dim>(pr, x, sy, sz, w);
        qr[x] = S(leapfrog<C>(C(pr[x]), C(qr[x]), C(mr[x]), lap));
      });
}

// The interior update with the kernel of the back-end; point_kernel forces the point-wise form
// on host back-ends too (tests compare the two).
template <int R, class ExecSpace, class PView, class MView, class C>
void interior_update(const ExecSpace& space, const Box& box, const PView& p, const PView& q, const MView& m,
                     const StencilWeights<C, R>& w, bool point_kernel = false) {
  if constexpr (is_host_space<ExecSpace>()) {
    if (!point_kernel) {
      if (w.dim == 3)
        host::interior_update<R, 3>(space, box, p, q, m, w);
      else
        host::interior_update<R, 2>(space, box, p, q, m, w);
      return;
    }
  } else {
    (void)point_kernel;
  }
  if (w.dim == 3)
    interior_update_points<R, 3>(space, box, p, q, m, w);
  else
    interior_update_points<R, 2>(space, box, p, q, m, w);
}

// psi_a <- b_a psi_a + a_a dp/dx_a on a PML box, for the axes whose slab holds the point
// (CpmlSlabs: elsewhere psi_a stays +0). The dimension is a template argument: with a run-time
// test the conditional z update kept GCC from vectorising the x loop at all, and the CPML boxes
// cost 8x the interior per point.
template <int R, int Dim, class ExecSpace, class PView, class MemField, class Profile, class C>
void pml_memory_update_dim(const ExecSpace& space, const Box& box, const PView& p,
                           const std::array<MemField, 3>& psi, const std::array<Profile, 3>& pa,
                           const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                           const StencilWeights<C, R>& w) {
  const auto psi0 = psi[0].view(), psi1 = psi[1].view(), psi2 = psi[2].view();
  const auto a0 = pa[0], a1 = pa[1], a2 = pa[2], b0 = pb[0], b1 = pb[1], b2 = pb[2];
  constexpr int dim = Dim;
  for_each_point(
      "mantissa::seismic::Solver::step::pml_memory", space, box, KOKKOS_LAMBDA(int k, int j, int i) {
        if (slabs.memory(0, i))
          psi0(k, j, i) = cpml_memory<C>(psi0(k, j, i), a0(i), b0(i), first_derivative<R>(p, 0, k, j, i, w));
        if (slabs.memory(1, j))
          psi1(k, j, i) = cpml_memory<C>(psi1(k, j, i), a1(j), b1(j), first_derivative<R>(p, 1, k, j, i, w));
        if (dim == 3 && slabs.memory(2, k))
          psi2(k, j, i) = cpml_memory<C>(psi2(k, j, i), a2(k), b2(k), first_derivative<R>(p, 2, k, j, i, w));
      });
}

// The memory update with the kernel of the back-end: host back-ends run the row kernel of
// HostCpml.hpp (bitwise the same result); point_kernel forces the point-wise form there too.
template <int R, class ExecSpace, class PView, class MemField, class Profile, class C>
void pml_memory_update(const ExecSpace& space, const Box& box, const PView& p,
                       const std::array<MemField, 3>& psi, const std::array<Profile, 3>& pa,
                       const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                       const StencilWeights<C, R>& w, bool point_kernel = false) {
  if constexpr (is_host_space<ExecSpace>()) {
    if (!point_kernel) {
      if (w.dim == 3)
        host::pml_memory_update<R, 3>(space, box, p, psi, pa, pb, slabs, w);
      else
        host::pml_memory_update<R, 2>(space, box, p, psi, pa, pb, slabs, w);
      return;
    }
  } else {
    (void)point_kernel;
  }
  if (w.dim == 3)
    pml_memory_update_dim<R, 3>(space, box, p, psi, pa, pb, slabs, w);
  else
    pml_memory_update_dim<R, 2>(space, box, p, psi, pa, pb, slabs, w);
}

// The CPML update of p on a PML box (Pasalic and McGarry 2010), zeta updated on the way; an
// axis whose psi and zeta are +0 around the point (CpmlSlabs) adds its second derivative + 0,
// the same bits as the full term there.
// p may be the storage field or its compute-type copy (decode_box below): the kernel converts
// every value it reads to C, so both give the same bits.
template <int R, int Dim, class ExecSpace, class PView, class QView, class MView, class MemField,
          class Profile, class C>
void pml_update_dim(const ExecSpace& space, const Box& box, const PView& p, const QView& q, const MView& m,
                    const std::array<MemField, 3>& psi, const std::array<MemField, 3>& zeta,
                    const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb,
                    const CpmlSlabs& slabs, const StencilWeights<C, R>& w) {
  using S = typename QView::value_type;
  const auto psi0 = psi[0].view(), psi1 = psi[1].view(), psi2 = psi[2].view();
  const auto zeta0 = zeta[0].view(), zeta1 = zeta[1].view(), zeta2 = zeta[2].view();
  const auto a0 = pa[0], a1 = pa[1], a2 = pa[2], b0 = pb[0], b1 = pb[1], b2 = pb[2];
  constexpr int dim = Dim;
  for_each_point(
      "mantissa::seismic::Solver::step::pml", space, box, KOKKOS_LAMBDA(int k, int j, int i) {
        C sum = C(0);
        if (slabs.update(0, i, R)) {
          const C d2 = second_derivative<R>(p, 0, k, j, i, w) + first_derivative<R>(psi0, 0, k, j, i, w);
          const C z = cpml_memory<C>(zeta0(k, j, i), a0(i), b0(i), d2);
          zeta0(k, j, i) = z;
          sum += d2 + z;
        } else {
          sum += second_derivative<R>(p, 0, k, j, i, w) + C(0);
        }
        if (slabs.update(1, j, R)) {
          const C d2 = second_derivative<R>(p, 1, k, j, i, w) + first_derivative<R>(psi1, 1, k, j, i, w);
          const C z = cpml_memory<C>(zeta1(k, j, i), a1(j), b1(j), d2);
          zeta1(k, j, i) = z;
          sum += d2 + z;
        } else {
          sum += second_derivative<R>(p, 1, k, j, i, w) + C(0);
        }
        if (dim == 3) {
          if (slabs.update(2, k, R)) {
            const C d2 = second_derivative<R>(p, 2, k, j, i, w) + first_derivative<R>(psi2, 2, k, j, i, w);
            const C z = cpml_memory<C>(zeta2(k, j, i), a2(k), b2(k), d2);
            zeta2(k, j, i) = z;
            sum += d2 + z;
          } else {
            sum += second_derivative<R>(p, 2, k, j, i, w) + C(0);
          }
        }
        q(k, j, i) = S(leapfrog<C>(C(p(k, j, i)), C(q(k, j, i)), C(m(k, j, i)), sum));
      });
}

// The CPML update with the kernel of the back-end, as pml_memory_update above.
template <int R, class ExecSpace, class PView, class QView, class MView, class MemField, class Profile,
          class C>
void pml_update(const ExecSpace& space, const Box& box, const PView& p, const QView& q, const MView& m,
                const std::array<MemField, 3>& psi, const std::array<MemField, 3>& zeta,
                const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb, const CpmlSlabs& slabs,
                const StencilWeights<C, R>& w, bool point_kernel = false) {
  if constexpr (is_host_space<ExecSpace>()) {
    if (!point_kernel) {
      if (w.dim == 3)
        host::pml_update<R, 3>(space, box, p, q, m, psi, zeta, pa, pb, slabs, w);
      else
        host::pml_update<R, 2>(space, box, p, q, m, psi, zeta, pa, pb, slabs, w);
      return;
    }
  } else {
    (void)point_kernel;
  }
  if (w.dim == 3)
    pml_update_dim<R, 3>(space, box, p, q, m, psi, zeta, pa, pb, slabs, w);
  else
    pml_update_dim<R, 2>(space, box, p, q, m, psi, zeta, pa, pb, slabs, w);
}

// The interior update and the CPML p update of `rows`: boxes whose rows continue the interior's
// rows (the x slabs: the interior's y and z range), with `memory` their memory update too (which
// the caller has then left out of the memory update before the psi halo exchange: only allowed
// when no rank reads these psi values, Solver's m_pml_rows_memory). On host back-ends in one
// sweep, each block of the interior's rows followed by the same rows of those boxes
// (host::interior_and_pml_rows_update); elsewhere, or when the boxes are not of that shape, the
// kernels one after the other. The same arithmetic per point either way (each point's p update
// reads p, psi and its own zeta and writes only q and zeta there; a row's memory update reads p
// and writes psi on that row), so the same bits.
template <int R, class ExecSpace, class PView, class CView, class MView, class MemField, class Profile,
          class C>
void interior_and_pml_rows_update(const ExecSpace& space, const Box& interior, const std::vector<Box>& rows,
                                  const PView& p, const CView& pc, const PView& q, const MView& m,
                                  const std::array<MemField, 3>& psi, const std::array<MemField, 3>& zeta,
                                  const std::array<Profile, 3>& pa, const std::array<Profile, 3>& pb,
                                  const CpmlSlabs& slabs, const StencilWeights<C, R>& w, bool memory) {
  if constexpr (is_host_space<ExecSpace>()) {
    const bool done = w.dim == 3
                          ? host::interior_and_pml_rows_update<R, 3>(space, interior, rows, p, pc, q, m, psi,
                                                                     zeta, pa, pb, slabs, w, memory)
                          : host::interior_and_pml_rows_update<R, 2>(space, interior, rows, p, pc, q, m, psi,
                                                                     zeta, pa, pb, slabs, w, memory);
    if (done) return;
  }
  if (memory)
    for (const auto& box : rows) pml_memory_update<R>(space, box, pc, psi, pa, pb, slabs, w);
  interior_update<R>(space, interior, p, q, m, w);
  for (const auto& box : rows) pml_update<R>(space, box, pc, q, m, psi, zeta, pa, pb, slabs, w);
}

// out <- C(p) on a box: the compute-type copy of p that the CPML kernels read on device back-ends
// where storage is not the compute type. They read every point of a PML box and R points around
// it along each axis 4R(Dim-1)+1 times per step (memory update and p update); converted once here
// instead, with the conversion each of those reads made, so the results are the same bits. The
// solver's host back-ends decode into a ring per thread instead (host::CpmlRing); the host form
// here converts whole rows (HostStencil.hpp's branch-free decode), for tests.
template <class ExecSpace, class PView, class CView>
void decode_box(const ExecSpace& space, const Box& box, const PView& p, const CView& out) {
  using C = typename CView::value_type;
  if constexpr (is_host_space<ExecSpace>()) {
    host::decode_box(space, box, p, out);
  } else {
    for_each_point(
        "mantissa::seismic::Solver::step::pml_decode", space, box,
        KOKKOS_LAMBDA(int k, int j, int i) { out(k, j, i) = C(p(k, j, i)); });
  }
}

// q(point) += (c dt)^2 amplitude weight, for one source's owned stencil points.
template <class C, class ExecSpace, class PView, class MView, class IView, class WView>
void inject(const ExecSpace& space, const PView& q, const MView& m, const IView& idx, const WView& weight,
            C amplitude) {
  using S = typename PView::value_type;
  Kokkos::parallel_for(
      "mantissa::seismic::Solver::step::inject", Kokkos::RangePolicy<ExecSpace>(space, 0, int(idx.extent(0))),
      KOKKOS_LAMBDA(int e) {
        const int i = idx(e, 0), j = idx(e, 1), k = idx(e, 2);
        q(k, j, i) = S(C(q(k, j, i)) + C(m(k, j, i)) * amplitude * weight(e));
      });
}

// values(e) = p at entry e where this rank owns it, 0 elsewhere.
template <class C, class ExecSpace, class PView, class IView, class VView>
void gather_points(const ExecSpace& space, const PView& p, const IView& idx, const VView& values) {
  Kokkos::parallel_for(
      "mantissa::seismic::Solver::record::gather",
      Kokkos::RangePolicy<ExecSpace>(space, 0, int(idx.extent(0))), KOKKOS_LAMBDA(int e) {
        const int i = idx(e, 0), j = idx(e, 1), k = idx(e, 2);
        values(e) = i >= 0 ? double(C(p(k, j, i))) : 0.0;
      });
  fence(space, "mantissa::seismic::Solver::record::gather");
}

// Boundary nodes of rigid sides weigh 1/2 in the energy's inner product (storage indices).
struct EnergyWeights {
  int first[3], last[3];
  bool rigid_lo[3], rigid_hi[3];
};

// This rank's part of the energy, as an exact sum (Solver::energy_impl sums the ranks' parts).
template <int R, class ExecSpace, class PView, class MView>
ExactAccumulator energy(const ExecSpace& space, const Box& owned, const PView& p, const PView& q,
                        const MView& m, const StencilWeights<double, R>& w, const EnergyWeights& ew) {
  using C = std::conditional_t<(sizeof(typename PView::value_type) >= 4), typename PView::value_type, float>;
  // p_q: p^n converted once, so the Laplacian below sees exactly the stored values.
  return exact_sum_over_points(
      "mantissa::seismic::Solver::diagnostics::energy", space, owned,
      KOKKOS_LAMBDA(int k, int j, int i, ExactAccumulator& acc) {
        const int idx[3] = {i, j, k};
        double weight = 1.0;
        for (int a = 0; a < 3; ++a) {
          if (ew.rigid_lo[a] && idx[a] == ew.first[a]) weight *= 0.5;
          if (ew.rigid_hi[a] && idx[a] == ew.last[a]) weight *= 0.5;
        }
        const double pc = double(C(p(k, j, i))), pp = double(C(q(k, j, i)));
        double lap = w.center * pp;
        for (int r = 1; r <= R; ++r) {
          lap += w.d2[0][r] * (double(C(q(k, j, i - r))) + double(C(q(k, j, i + r)))) +
                 w.d2[1][r] * (double(C(q(k, j - r, i))) + double(C(q(k, j + r, i))));
          if (w.dim == 3) lap += w.d2[2][r] * (double(C(q(k - r, j, i))) + double(C(q(k + r, j, i))));
        }
        const double d = pc - pp;
        acc.add(weight * (d * d / double(m(k, j, i)) - pc * lap));
      });
}

// {max |p|, number of non-finite values} over the owned points.
template <class ExecSpace, class PView>
std::pair<double, double> max_abs_and_nonfinite(const ExecSpace& space, const Box& owned, const PView& p) {
  using C = std::conditional_t<(sizeof(typename PView::value_type) >= 4), typename PView::value_type, float>;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>;
  using idx = typename Policy::index_type;
  const Policy policy(space, {idx(owned.lo[2]), idx(owned.lo[1]), idx(owned.lo[0])},
                      {idx(owned.hi[2]), idx(owned.hi[1]), idx(owned.hi[0])});
  double mx = 0.0, bad = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::seismic::Solver::diagnostics::max_abs", policy,
      KOKKOS_LAMBDA(int k, int j, int i, double& acc) {
        const double v = double(C(p(k, j, i)));
        const double a = v < 0.0 ? -v : v;
        if (a > acc) acc = a;
      },
      Kokkos::Max<double>(mx));
  Kokkos::parallel_reduce(
      "mantissa::seismic::Solver::diagnostics::nonfinite", policy,
      KOKKOS_LAMBDA(int k, int j, int i, double& acc) {
        if (!math::isfinite(double(C(p(k, j, i))))) acc += 1.0;
      },
      bad);
  return {mx, bad};
}

}  // namespace mantissa::seismic::detail
