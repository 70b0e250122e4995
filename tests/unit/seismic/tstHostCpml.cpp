// The host row kernels of the CPML updates (detail/HostCpml.hpp) against the point kernels
// (pml_memory_update_dim / pml_update_dim, the device form), bitwise: every storage/compute pair
// the solver is instantiated with, 2D and 3D, orders 2 to 8, odd sizes, CPML on some faces only
// (so boxes of every shape the solver builds: x slabs of short rows, y and z slabs, corners),
// random memory variables and profiles, and ghost layers wider than the radius. Bitwise for the
// reason tstHostStencil.cpp gives: results must not depend on which kernel computed a point.
#include <mantissa/core/LowPrecision.hpp>
#include <seismic/detail/SolverKernels.hpp>

#include "HostKernelCompare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace mantissa;
using namespace mantissa::seismic;
using Space = Kokkos::DefaultHostExecutionSpace;
namespace sk = mantissa::seismic::detail;

using test::bits_of;
using test::copy_of;
using test::HostView;
template <class T>
using Profile = Kokkos::View<T*, Kokkos::HostSpace>;

// What the kernels need of a memory field: view().
template <class T>
struct HostField {
  HostView<T> v;
  const HostView<T>& view() const { return v; }
};

// PML boxes as the solver builds them (Solver_impl.hpp): slabs in z, then y, then x, of
// `cells` points on the faces named in pml[axis][side], the rest of the owned box between them
// (the interior). `rows`: the x slabs, whose rows continue the interior's; `updates`: the others.
struct PmlLayout {
  std::vector<sk::Box> all, rows, updates;
  sk::Box interior;
};
PmlLayout pml_layout(int dim, const int n[3], int ghost, const bool pml[3][2], int cells) {
  PmlLayout out;
  sk::Box rem;
  for (int a = 0; a < 3; ++a) {
    const int g = a < dim ? ghost : 0;
    rem.lo[a] = g;
    rem.hi[a] = g + (a < dim ? n[a] : 1);
  }
  for (int a = 2; a >= 0; --a) {
    if (a >= dim) continue;
    sk::Box low = rem, high = rem;
    low.hi[a] = pml[a][0] ? std::min(rem.hi[a], ghost + cells) : rem.lo[a];
    high.lo[a] = pml[a][1] ? std::max(rem.lo[a], ghost + n[a] - cells) : rem.hi[a];
    for (const auto& b : {low, high})
      if (!b.empty()) {
        out.all.push_back(b);
        (a == 0 ? out.rows : out.updates).push_back(b);
      }
    rem.lo[a] = std::max(rem.lo[a], low.hi[a]);
    rem.hi[a] = std::min(rem.hi[a], high.lo[a]);
  }
  out.interior = rem;
  return out;
}
std::vector<sk::Box> pml_boxes(int dim, const int n[3], int ghost, const bool pml[3][2], int cells) {
  return pml_layout(dim, n, ghost, pml, cells).all;
}

// One CPML step (memory update on every box, then the p update on every box) by both kernels
// from the same random state; compares p_old, psi and zeta everywhere, ghosts included.
template <class S, class C, int R>
void compare_cpml(int dim, int nx, int ny, int nz, int ghost, const bool pml[3][2], int cells) {
  const int gz = dim == 3 ? ghost : 0;
  const int ex = nx + 2 * ghost, ey = ny + 2 * ghost, ez = (dim == 3 ? nz : 1) + 2 * gz;
  std::mt19937_64 rng(4321 + 97 * R + dim + 7 * nx);
  const test::RandomFields<S> f(ez, ey, ex, rng);
  const HostView<S>&p = f.p, &q1 = f.q;
  const auto& m = f.m;
  std::array<HostField<C>, 3> psi1, zeta1, psi2, zeta2, psi3, zeta3;
  std::array<Profile<C>, 3> pa, pb;
  std::uniform_real_distribution<double> u(-1.0, 1.0), prof(0.0, 1.0);
  const int len[3] = {ex, ey, ez};
  for (int a = 0; a < 3; ++a) {
    psi1[a].v = HostView<C>("psi", ez, ey, ex);
    zeta1[a].v = HostView<C>("zeta", ez, ey, ex);
    for (int k = 0; k < ez; ++k)
      for (int j = 0; j < ey; ++j)
        for (int i = 0; i < ex; ++i) {
          psi1[a].v(k, j, i) = C(0.1 * u(rng));
          zeta1[a].v(k, j, i) = C(0.1 * u(rng));
        }
    psi2[a].v = copy_of(psi1[a].v, "psi2");
    zeta2[a].v = copy_of(zeta1[a].v, "zeta2");
    psi3[a].v = copy_of(psi1[a].v, "psi3");
    zeta3[a].v = copy_of(zeta1[a].v, "zeta3");
    pa[a] = Profile<C>("a", std::size_t(len[a]));
    pb[a] = Profile<C>("b", std::size_t(len[a]));
    for (int s = 0; s < len[a]; ++s) {
      pa[a](s) = C(-prof(rng));
      pb[a](s) = C(prof(rng));
    }
  }
  const HostView<S> q2 = copy_of(q1, "q2"), q3 = copy_of(q1, "q3"), q0 = copy_of(q1, "q0");
  const double spacing[3] = {1.0, 0.8, 1.25};
  const auto w = make_stencil_weights<C, R>(dim, spacing);
  const int n[3] = {nx, ny, nz};
  const auto boxes = pml_boxes(dim, n, ghost, pml, cells);
  ASSERT_FALSE(boxes.empty());
  const Space space;
  const CpmlSlabs all;  // every point active: random memory variables obey no invariant
  for (const auto& box : boxes) {
    sk::pml_memory_update<R>(space, box, p, psi1, pa, pb, all, w, /*point_kernel=*/false);
    sk::pml_memory_update<R>(space, box, p, psi2, pa, pb, all, w, /*point_kernel=*/true);
  }
  for (const auto& box : boxes) {
    sk::pml_update<R>(space, box, p, q1, m, psi1, zeta1, pa, pb, all, w, /*point_kernel=*/false);
    sk::pml_update<R>(space, box, p, q2, m, psi2, zeta2, pa, pb, all, w, /*point_kernel=*/true);
  }
  // Third: the host kernels reading p's compute-type copy, the copy the solver gives the CPML
  // kernels on device back-ends when the storage is not the compute type (decode_box over the
  // boxes grown by the radius, the rest of the copy left at a value the kernels must not read).
  // The first reads p in storage, as the solver's host back-ends do (CpmlRing).
  HostView<C> pc("pc", ez, ey, ex);
  Kokkos::deep_copy(pc, C(1e30));
  for (auto b : boxes) {
    for (int a = 0; a < dim; ++a) {
      b.lo[a] -= R;
      b.hi[a] += R;
    }
    sk::decode_box(space, b, p, pc);
  }
  for (const auto& box : boxes) sk::pml_memory_update<R>(space, box, pc, psi3, pa, pb, all, w);
  for (const auto& box : boxes) sk::pml_update<R>(space, box, pc, q3, m, psi3, zeta3, pa, pb, all, w);
  space.fence();
  const std::string where = "order " + std::to_string(2 * R) + ", " + std::to_string(dim) + "D " +
                            std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
  long bad = test::count_mismatches(q1, q2, where + ", p_old");
  bad += test::count_mismatches(q3, q2, where + ", p_old from the compute copy");
  for (int a = 0; a < dim; ++a) {
    bad += test::count_mismatches(psi1[a].v, psi2[a].v, where + ", psi_" + std::to_string(a));
    bad += test::count_mismatches(zeta1[a].v, zeta2[a].v, where + ", zeta_" + std::to_string(a));
    bad += test::count_mismatches(psi3[a].v, psi2[a].v, where + ", psi_" + std::to_string(a) + " (copy)");
    bad += test::count_mismatches(zeta3[a].v, zeta2[a].v, where + ", zeta_" + std::to_string(a) + " (copy)");
  }
  EXPECT_EQ(bad, 0) << where;
  // The update did something: p_old changed at a point of the first box.
  const auto& b = boxes.front();
  const int k = b.lo[2], j = b.lo[1], i = b.lo[0];
  EXPECT_NE(bits_of(q1(k, j, i)), bits_of(q0(k, j, i)));
}

// A CPML state that obeys the solver's invariant: profiles a = 0, b = 1 outside an axis's slab, as
// cpml_coefficients gives (a sometimes -0 there); psi_a and zeta_a random inside it and +0
// outside; the slabs found from the profiles (find_inactive_run), as the solver finds them.
template <class S, class C>
struct SlabState {
  HostView<S> p, q;
  std::array<HostField<C>, 3> psi, zeta;
  SlabState copy() const {
    SlabState c;
    c.p = copy_of(p, "p");
    c.q = copy_of(q, "q");
    for (int a = 0; a < 3; ++a) {
      c.psi[a].v = copy_of(psi[a].v, "psi");
      c.zeta[a].v = copy_of(zeta[a].v, "zeta");
    }
    return c;
  }
};
template <class S, class C>
struct SlabProblem {
  test::RandomFields<S> f;
  std::array<Profile<C>, 3> pa, pb;
  CpmlSlabs slabs;
  SlabState<S, C> state;
  SlabProblem(int dim, const int n[3], int ghost, const bool pml[3][2], int cells, std::mt19937_64& rng)
      : f(dim == 3 ? n[2] + 2 * ghost : 1, n[1] + 2 * ghost, n[0] + 2 * ghost, rng) {
    const int gz = dim == 3 ? ghost : 0;
    const int ex = n[0] + 2 * ghost, ey = n[1] + 2 * ghost, ez = (dim == 3 ? n[2] : 1) + 2 * gz;
    std::uniform_real_distribution<double> u(-1.0, 1.0), prof(0.05, 0.95);
    const int len[3] = {ex, ey, ez}, g[3] = {ghost, ghost, gz};
    std::array<std::vector<bool>, 3> in_slab;
    for (int a = 0; a < 3; ++a) {
      pa[a] = Profile<C>("a", std::size_t(len[a]));
      pb[a] = Profile<C>("b", std::size_t(len[a]));
      in_slab[std::size_t(a)].assign(std::size_t(len[a]), false);
      for (int s = 0; s < len[a]; ++s) {
        const int gi = s - g[a];
        const bool in = a < dim && ((pml[a][0] && gi < cells) || (pml[a][1] && gi >= n[a] - cells));
        in_slab[std::size_t(a)][std::size_t(s)] = in;
        pa[a](s) = in ? C(-prof(rng)) : (s % 3 == 0 ? C(-0.0) : C(0));
        pb[a](s) = in ? C(prof(rng)) : C(1);
      }
      if (a < dim) find_inactive_run(pa[a].data(), pb[a].data(), g[a], g[a] + n[a], a, slabs);
    }
    state.p = copy_of(f.p, "p");
    state.q = copy_of(f.q, "q");
    for (int a = 0; a < 3; ++a) {
      state.psi[a].v = HostView<C>("psi", ez, ey, ex);
      state.zeta[a].v = HostView<C>("zeta", ez, ey, ex);
      for (int k = 0; k < ez; ++k)
        for (int j = 0; j < ey; ++j)
          for (int i = 0; i < ex; ++i) {
            const int idx[3] = {i, j, k};
            const bool in = in_slab[std::size_t(a)][std::size_t(idx[a])];
            state.psi[a].v(k, j, i) = in ? C(0.1 * u(rng)) : C(0);
            state.zeta[a].v(k, j, i) = in ? C(0.1 * u(rng)) : C(0);
          }
    }
  }
};

// Mismatches of p, p_old, psi and zeta (ghosts included) between two states.
template <class S, class C>
long count_state_mismatches(int dim, const SlabState<S, C>& x, const SlabState<S, C>& y,
                            const std::string& where) {
  long bad = test::count_mismatches(x.p, y.p, where + ", p");
  bad += test::count_mismatches(x.q, y.q, where + ", p_old");
  for (int a = 0; a < dim; ++a) {
    bad += test::count_mismatches(x.psi[a].v, y.psi[a].v, where + ", psi_" + std::to_string(a));
    bad += test::count_mismatches(x.zeta[a].v, y.zeta[a].v, where + ", zeta_" + std::to_string(a));
  }
  return bad;
}

// Each axis's CPML work restricted to its own slab (CpmlSlabs) against the full work at every CPML
// point, bitwise, in a state that obeys the solver's invariant (SlabProblem): three steps (p and
// p_old swapped between them, so a skipped zeta or psi that should have stayed +0 and did not
// would show in the next step, and the host kernels' rings of decoded rows (CpmlRing) meet p's
// buffers again with new values), host row kernels and point kernels, restricted and full, all
// four equal in p, psi and zeta, ghosts included.
template <class S, class C, int R>
void compare_slabs(int dim, int nx, int ny, int nz, int ghost, const bool pml[3][2], int cells) {
  const int gz = dim == 3 ? ghost : 0;
  std::mt19937_64 rng(777 + 31 * R + dim + 5 * nx);
  const int n[3] = {nx, ny, nz}, g[3] = {ghost, ghost, gz};
  const SlabProblem<S, C> prob(dim, n, ghost, pml, cells, rng);
  const auto& slabs = prob.slabs;
  // The run found is the owned part between the slabs.
  for (int a = 0; a < dim; ++a) {
    EXPECT_EQ(slabs.lo[a], g[a] + (pml[a][0] ? cells : 0)) << "axis " << a;
    EXPECT_EQ(slabs.hi[a], g[a] + n[a] - (pml[a][1] ? cells : 0)) << "axis " << a;
  }
  SlabState<S, C> st[4];
  for (int v = 0; v < 4; ++v) st[v] = prob.state.copy();
  const double spacing[3] = {1.0, 0.8, 1.25};
  const auto w = make_stencil_weights<C, R>(dim, spacing);
  const auto boxes = pml_boxes(dim, n, ghost, pml, cells);
  ASSERT_FALSE(boxes.empty());
  const Space space;
  const CpmlSlabs all;
  // 0: host full, 1: host restricted, 2: point restricted, 3: point full.
  const CpmlSlabs* rule[4] = {&all, &slabs, &slabs, &all};
  const bool point[4] = {false, false, true, true};
  for (int step = 0; step < 3; ++step)
    for (int v = 0; v < 4; ++v) {
      auto& s = st[v];
      for (const auto& box : boxes)
        sk::pml_memory_update<R>(space, box, s.p, s.psi, prob.pa, prob.pb, *rule[v], w, point[v]);
      for (const auto& box : boxes)
        sk::pml_update<R>(space, box, s.p, s.q, prob.f.m, s.psi, s.zeta, prob.pa, prob.pb, *rule[v], w,
                          point[v]);
      space.fence();
      std::swap(s.p, s.q);
    }
  const std::string where = "slabs, order " + std::to_string(2 * R) + ", " + std::to_string(dim) + "D " +
                            std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
  const char* names[4] = {"host full", "host restricted", "point restricted", "point full"};
  long bad = 0;
  for (int v = 1; v < 4; ++v)
    bad += count_state_mismatches(dim, st[v], st[0], where + ", " + names[v] + " vs host full");
  EXPECT_EQ(bad, 0) << where;
  // The steps did something: p changed at a point of the first box.
  const auto& b = boxes.front();
  EXPECT_NE(bits_of(st[0].p(b.lo[2], b.lo[1], b.lo[0])), bits_of(prob.f.p(b.lo[2], b.lo[1], b.lo[0])));
}

// The solver's host step with CPML (Solver::step_impl): the memory update of the y and z slabs,
// the interior with the x slabs' rows in its sweep (host::interior_and_pml_rows_update, with
// `memory` their memory update there too), then the p update of the y and z slabs; against the
// point kernels box by box (memory updates, interior, p updates), bitwise, over three steps with
// p and p_old swapped between them. The x slabs' rows read p through their own ring of decoded
// rows (CpmlRing) following the interior's tiles along z.
template <class S, class C, int R>
void compare_rows(int dim, int nx, int ny, int nz, int ghost, const bool pml[3][2], int cells, bool memory) {
  std::mt19937_64 rng(555 + 13 * R + dim + 3 * nx);
  const int n[3] = {nx, ny, nz};
  const SlabProblem<S, C> prob(dim, n, ghost, pml, cells, rng);
  const PmlLayout layout = pml_layout(dim, n, ghost, pml, cells);
  ASSERT_FALSE(layout.rows.empty());
  ASSERT_FALSE(layout.interior.empty());
  SlabState<S, C> host = prob.state.copy(), point = prob.state.copy();
  const double spacing[3] = {1.0, 0.8, 1.25};
  const auto w = make_stencil_weights<C, R>(dim, spacing);
  const Space space;
  const auto& pa = prob.pa;
  const auto& pb = prob.pb;
  const auto& m = prob.f.m;
  const auto& slabs = prob.slabs;
  for (int step = 0; step < 3; ++step) {
    {
      auto& s = host;
      for (const auto& box : layout.updates)
        sk::pml_memory_update<R>(space, box, s.p, s.psi, pa, pb, slabs, w);
      if (!memory)
        for (const auto& box : layout.rows)
          sk::pml_memory_update<R>(space, box, s.p, s.psi, pa, pb, slabs, w);
      const bool fused =
          dim == 3
              ? sk::host::interior_and_pml_rows_update<R, 3>(space, layout.interior, layout.rows, s.p, s.p,
                                                             s.q, m, s.psi, s.zeta, pa, pb, slabs, w, memory)
              : sk::host::interior_and_pml_rows_update<R, 2>(space, layout.interior, layout.rows, s.p, s.p,
                                                             s.q, m, s.psi, s.zeta, pa, pb, slabs, w, memory);
      ASSERT_TRUE(fused);
      for (const auto& box : layout.updates)
        sk::pml_update<R>(space, box, s.p, s.q, m, s.psi, s.zeta, pa, pb, slabs, w);
    }
    {
      auto& s = point;
      for (const auto& box : layout.all)
        sk::pml_memory_update<R>(space, box, s.p, s.psi, pa, pb, slabs, w, /*point_kernel=*/true);
      sk::interior_update<R>(space, layout.interior, s.p, s.q, m, w, /*point_kernel=*/true);
      for (const auto& box : layout.all)
        sk::pml_update<R>(space, box, s.p, s.q, m, s.psi, s.zeta, pa, pb, slabs, w, /*point_kernel=*/true);
    }
    space.fence();
    std::swap(host.p, host.q);
    std::swap(point.p, point.q);
  }
  const std::string where = std::string("interior and x slab rows") + (memory ? " with their memory" : "") +
                            ", order " + std::to_string(2 * R) + ", " + std::to_string(dim) + "D " +
                            std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
  EXPECT_EQ(count_state_mismatches(dim, host, point, where), 0) << where;
  const auto& b = layout.rows.front();
  EXPECT_NE(bits_of(host.p(b.lo[2], b.lo[1], b.lo[0])), bits_of(prob.f.p(b.lo[2], b.lo[1], b.lo[0])));
}

// The ring of decoded rows itself (host::CpmlRing): its rows are p's, decoded, whether it got
// there by moving one plane along z or by loading every plane; it decodes again for a new launch
// (epoch) even at the same place and buffer, and keeps its planes within one.
template <class S, class C>
void compare_ring() {
  constexpr int R = 2;
  const int ex = 19, ey = 23, ez = 17;
  std::mt19937_64 rng(99);
  const test::RandomFields<S> f(ez, ey, ex, rng);
  const S* p = f.p.data();
  const long sz = long(f.p.stride(0)), sy = long(f.p.stride(1));
  const int x0 = 3, nx = 11, j0 = 5, j1 = 14;
  sk::host::CpmlRing<C, R, 3> swept, fresh;
  long bad = 0;
  const auto check = [&](const sk::host::CpmlRing<C, R, 3>& ring, int k, const std::string& what) {
    long wrong = 0;
    for (int j = j0; j < j1; ++j) {
      const auto r = ring.rows(k, j);
      for (int i = -R; i < nx + R; ++i) {
        const auto expect = [&](int dk, int dj) { return C(f.p(k + dk, j + dj, x0 + i)); };
        wrong += bits_of(r.c[i]) != bits_of(expect(0, 0));
        if (i < 0 || i >= nx) continue;
        for (int s = 1; s <= R; ++s) {
          wrong += bits_of(r.ym[s - 1][i]) != bits_of(expect(0, -s));
          wrong += bits_of(r.yp[s - 1][i]) != bits_of(expect(0, s));
          wrong += bits_of(r.zm[s - 1][i]) != bits_of(expect(-s, 0));
          wrong += bits_of(r.zp[s - 1][i]) != bits_of(expect(s, 0));
        }
      }
    }
    if (wrong) ADD_FAILURE() << what << ": plane " << k << ", " << wrong << " values wrong";
    bad += wrong;
  };
  const long epoch = sk::host::next_ring_epoch();
  for (int k = R; k < ez - R; ++k) {
    swept.at(p, sz, sy, epoch, x0, nx, k, j0, j1);
    check(swept, k, "swept along z");
    fresh.at(p, sz, sy, sk::host::next_ring_epoch(), x0, nx, k, j0, j1);
    check(fresh, k, "loaded whole");
  }
  // A new launch at the same place of the same buffer, whose values have changed, decodes them.
  const int k = ez - R - 1;
  const S old = f.p(k, j0, x0);
  f.p(k, j0, x0) = S(float(old) + 1.0f);
  const long next = sk::host::next_ring_epoch();
  swept.at(p, sz, sy, next, x0, nx, k, j0, j1);
  check(swept, k, "a new launch");
  // The same launch keeps what it decoded (p does not change during one).
  f.p(k, j0, x0) = old;
  swept.at(p, sz, sy, next, x0, nx, k, j0, j1);
  EXPECT_NE(bits_of(swept.rows(k, j0).c[0]), bits_of(C(old)));
  EXPECT_EQ(bad, 0);
}

template <class S, class C>
void compare_all() {
  const bool all[3][2] = {{true, true}, {true, true}, {true, true}};
  const bool some[3][2] = {{true, false}, {false, true}, {true, false}};
  const bool three_sides[3][2] = {{true, true}, {false, true}, {false, false}};  // 2D: free top
  const bool y_only[3][2] = {{false, false}, {true, false}, {false, true}};
  compare_cpml<S, C, 4>(3, 37, 29, 27, 4, all, 7);
  compare_cpml<S, C, 4>(3, 33, 21, 19, 5, some, 6);
  compare_cpml<S, C, 3>(3, 13, 35, 17, 3, y_only, 5);
  compare_cpml<S, C, 1>(3, 9, 7, 11, 2, all, 3);
  compare_cpml<S, C, 4>(2, 51, 43, 1, 4, three_sides, 9);
  compare_cpml<S, C, 2>(2, 23, 17, 1, 2, some, 4);
  compare_cpml<S, C, 1>(2, 7, 9, 1, 1, all, 2);
  compare_slabs<S, C, 4>(3, 41, 37, 35, 4, all, 9);
  compare_slabs<S, C, 4>(3, 33, 21, 25, 5, some, 6);
  compare_slabs<S, C, 2>(3, 19, 23, 17, 2, y_only, 4);
  compare_slabs<S, C, 4>(2, 61, 47, 1, 4, three_sides, 12);
  compare_slabs<S, C, 1>(2, 9, 11, 1, 1, all, 2);
  for (const bool memory : {false, true}) {
    compare_rows<S, C, 4>(3, 45, 39, 37, 4, all, 8, memory);
    compare_rows<S, C, 3>(3, 29, 41, 23, 3, some, 5, memory);
    compare_rows<S, C, 4>(2, 61, 47, 1, 4, three_sides, 12, memory);
    compare_rows<S, C, 2>(2, 23, 37, 1, 2, all, 4, memory);
  }
  compare_ring<S, C>();
}

MANTISSA_TEST_EVERY_STORAGE_COMPUTE_PAIR(HostCpml)

}  // namespace
