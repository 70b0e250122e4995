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
// `cells` points on the faces named in pml[axis][side], the rest of the owned box between them.
std::vector<sk::Box> pml_boxes(int dim, const int n[3], int ghost, const bool pml[3][2], int cells) {
  sk::Box rem;
  for (int a = 0; a < 3; ++a) {
    const int g = a < dim ? ghost : 0;
    rem.lo[a] = g;
    rem.hi[a] = g + (a < dim ? n[a] : 1);
  }
  std::vector<sk::Box> boxes;
  for (int a = 2; a >= 0; --a) {
    if (a >= dim) continue;
    sk::Box low = rem, high = rem;
    low.hi[a] = pml[a][0] ? std::min(rem.hi[a], ghost + cells) : rem.lo[a];
    high.lo[a] = pml[a][1] ? std::max(rem.lo[a], ghost + n[a] - cells) : rem.hi[a];
    if (!low.empty()) boxes.push_back(low);
    if (!high.empty()) boxes.push_back(high);
    rem.lo[a] = std::max(rem.lo[a], low.hi[a]);
    rem.hi[a] = std::min(rem.hi[a], high.lo[a]);
  }
  return boxes;
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
  // Third: the host kernels reading p's compute-type copy, as the solver runs them when the
  // storage is not the compute type (decode_box over the boxes grown by the radius, the rest of
  // the copy left at a value the kernels must not read).
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

// Each axis's CPML work restricted to its own slab (CpmlSlabs) against the full work at every CPML
// point, bitwise: the state obeys the solver's invariant (profiles a = 0, b = 1 outside an axis's
// slab, as cpml_coefficients gives, a sometimes -0 there; psi_a and zeta_a random inside it and +0
// outside), three steps (p and p_old swapped between them, so a skipped zeta or psi that should
// have stayed +0 and did not would show in the next step), host row kernels and point kernels,
// restricted and full, all four equal in p, psi and zeta, ghosts included.
template <class S, class C, int R>
void compare_slabs(int dim, int nx, int ny, int nz, int ghost, const bool pml[3][2], int cells) {
  const int gz = dim == 3 ? ghost : 0;
  const int ex = nx + 2 * ghost, ey = ny + 2 * ghost, ez = (dim == 3 ? nz : 1) + 2 * gz;
  std::mt19937_64 rng(777 + 31 * R + dim + 5 * nx);
  const test::RandomFields<S> f(ez, ey, ex, rng);
  const auto& m = f.m;
  std::uniform_real_distribution<double> u(-1.0, 1.0), prof(0.05, 0.95);
  const int len[3] = {ex, ey, ez}, n[3] = {nx, ny, nz}, g[3] = {ghost, ghost, gz};
  std::array<Profile<C>, 3> pa, pb;
  std::array<std::vector<bool>, 3> in_slab;
  CpmlSlabs slabs;
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
  // The run found is the owned part between the slabs.
  for (int a = 0; a < dim; ++a) {
    EXPECT_EQ(slabs.lo[a], g[a] + (pml[a][0] ? cells : 0)) << "axis " << a;
    EXPECT_EQ(slabs.hi[a], g[a] + n[a] - (pml[a][1] ? cells : 0)) << "axis " << a;
  }
  struct State {
    HostView<S> p, q;
    std::array<HostField<C>, 3> psi, zeta;
  };
  State st[4];
  st[0].p = copy_of(f.p, "p");
  st[0].q = copy_of(f.q, "q");
  for (int a = 0; a < 3; ++a) {
    st[0].psi[a].v = HostView<C>("psi", ez, ey, ex);
    st[0].zeta[a].v = HostView<C>("zeta", ez, ey, ex);
    for (int k = 0; k < ez; ++k)
      for (int j = 0; j < ey; ++j)
        for (int i = 0; i < ex; ++i) {
          const int idx[3] = {i, j, k};
          const bool in = in_slab[std::size_t(a)][std::size_t(idx[a])];
          st[0].psi[a].v(k, j, i) = in ? C(0.1 * u(rng)) : C(0);
          st[0].zeta[a].v(k, j, i) = in ? C(0.1 * u(rng)) : C(0);
        }
  }
  for (int v = 1; v < 4; ++v) {
    st[v].p = copy_of(st[0].p, "p");
    st[v].q = copy_of(st[0].q, "q");
    for (int a = 0; a < 3; ++a) {
      st[v].psi[a].v = copy_of(st[0].psi[a].v, "psi");
      st[v].zeta[a].v = copy_of(st[0].zeta[a].v, "zeta");
    }
  }
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
        sk::pml_memory_update<R>(space, box, s.p, s.psi, pa, pb, *rule[v], w, point[v]);
      for (const auto& box : boxes)
        sk::pml_update<R>(space, box, s.p, s.q, m, s.psi, s.zeta, pa, pb, *rule[v], w, point[v]);
      space.fence();
      std::swap(s.p, s.q);
    }
  const std::string where = "slabs, order " + std::to_string(2 * R) + ", " + std::to_string(dim) + "D " +
                            std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
  const char* names[4] = {"host full", "host restricted", "point restricted", "point full"};
  long bad = 0;
  for (int v = 1; v < 4; ++v) {
    const std::string w2 = where + ", " + names[v] + " vs host full";
    bad += test::count_mismatches(st[v].p, st[0].p, w2 + ", p");
    bad += test::count_mismatches(st[v].q, st[0].q, w2 + ", p_old");
    for (int a = 0; a < dim; ++a) {
      bad += test::count_mismatches(st[v].psi[a].v, st[0].psi[a].v, w2 + ", psi_" + std::to_string(a));
      bad += test::count_mismatches(st[v].zeta[a].v, st[0].zeta[a].v, w2 + ", zeta_" + std::to_string(a));
    }
  }
  EXPECT_EQ(bad, 0) << where;
  // The steps did something: p changed at a point of the first box.
  const auto& b = boxes.front();
  EXPECT_NE(bits_of(st[0].p(b.lo[2], b.lo[1], b.lo[0])), bits_of(f.p(b.lo[2], b.lo[1], b.lo[0])));
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
}

MANTISSA_TEST_EVERY_STORAGE_COMPUTE_PAIR(HostCpml)

}  // namespace
