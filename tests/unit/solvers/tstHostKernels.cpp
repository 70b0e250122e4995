// The host row kernels (lib/mantissa/solvers/detail/HostKernels.hpp) against the point-wise
// form of the same update (PoissonKernels.hpp, the form device back-ends run), cell by cell and
// bit for bit: red-black Gauss-Seidel per colour, weighted Jacobi, the residual, the
// restriction, the prolongation and the y / z face ghost fills, in every storage precision, 2D
// and 3D, odd sizes, Dirichlet and Neumann faces mixed (so the face cells' own diagonals and the
// x-face mirrors are exercised). The host kernels reorganise the loops for a CPU core; a
// mismatch in any bit means a cell computed another expression.
#include <mantissa/solvers/Multigrid.hpp>
#include <mantissa/solvers/PoissonSolver.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {
// A named namespace holds the using-directives: at file scope (or in the unnamed namespace)
// they would make mantissa::log visible to global lookup, where the stub code nvcc appends
// calls ::log unqualified ("reference to 'log' is ambiguous").
namespace host_kernels {

using namespace mantissa;
using namespace mantissa::solvers;
namespace sd = mantissa::solvers::detail;

template <class T>
std::uint64_t bits_of(const T& v) {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

struct Case {
  int dim;
  std::array<std::int64_t, 3> n;
};

Grid grid_of(const Case& c) {
  Grid g;
  g.dim = c.dim;
  g.n = c.n;
  g.spacing = {1.0 / double(c.n[0]), 1.0 / double(c.n[1]), 1.0 / double(c.n[2])};
  return g;
}

template <class T>
std::string tag_of(const Case& c) {
  return std::string(precision_traits<T>::name) + " " + std::to_string(c.dim) + "D " +
         std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" + std::to_string(c.n[2]);
}

Boundary mixed_faces() {
  Boundary b = Boundary::all(BoundaryKind::dirichlet);
  b.face[1] = BoundaryKind::neumann;  // x+
  b.face[2] = BoundaryKind::neumann;  // y-
  b.face[5] = BoundaryKind::neumann;  // z+
  return b;
}

// A host copy in its own memory (create_mirror_view of a host view would be the view itself,
// and the comparison would compare a field with itself).
template <class V>
auto copy_of(const V& v) {
  Kokkos::View<typename V::non_const_value_type***, Kokkos::HostSpace> h(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy"), v.extent(0), v.extent(1), v.extent(2));
  Kokkos::deep_copy(h, v);
  return h;
}

template <class V>
void fill_random(const V& h, std::uint64_t seed) {
  using T = typename V::non_const_value_type;
  for (std::size_t q = 0; q < h.size(); ++q) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    h.data()[q] = T(float(double(seed >> 11) * (1.0 / 9007199254740992.0) - 0.5));
  }
}

// Returns the number of owned cells whose bits differ between the host kernel's result and
// the point-wise one.
template <class A, class B>
std::int64_t compare(const std::string& what, const A& got, const B& want, const sd::Box& b) {
  using T = typename A::non_const_value_type;
  std::int64_t bad = 0;
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
        if (bits_of(got(k, j, i)) != bits_of(want(k, j, i))) {
          if (bad++ < 3)
            ADD_FAILURE() << what << ": cell (" << k << ", " << j << ", " << i << ") host "
                          << double(sd::compute_t<T>(got(k, j, i))) << " point-wise "
                          << double(sd::compute_t<T>(want(k, j, i)));
        }
  return bad;
}

template <class T>
void check_kernels(const Case& c) {
  using C = sd::compute_t<T>;
  Decomposition decomp(MPI_COMM_WORLD, grid_of(c));
  MultigridOptions mo;
  mo.precisions = std::vector<Precision>{precision_traits<T>::precision};
  Multigrid<> mg(decomp, mixed_faces(), mo);
  auto& lv = mg.level(0);
  auto& d = std::get<Multigrid<>::LevelData<T>>(lv.data);
  const auto s = level_stencil<C>(lv, c.dim);
  const sd::Box b = lv.place.owned();
  const std::int64_t shift = (lv.place.offset[0] - lv.place.ghost[0]) +
                             (lv.place.offset[1] - lv.place.ghost[1]) +
                             (lv.place.offset[2] - lv.place.ghost[2]);
  const Kokkos::DefaultHostExecutionSpace host;
  const std::string tag = tag_of<T>(c);

  auto xh = copy_of(d.x.view());
  auto fh = copy_of(d.f.view());
  fill_random(xh, 7);
  fill_random(fh, 11);
  Kokkos::deep_copy(d.x.view(), xh);
  Kokkos::deep_copy(d.f.view(), fh);

  // point-wise update of one cell, as PoissonKernels.hpp computes it on a device
  auto point = [&](const auto& x, std::int64_t k, std::int64_t j, std::int64_t i) {
    const C xc = C(x(k, j, i));
    return C(fh(k, j, i)) - s.diag * xc + sd::neighbour_sum(x, s, k, j, i);
  };

  std::int64_t bad = 0;
  // residual, then Jacobi, from the same x with every ghost filled
  mg.fill_ghosts(lv, d, d.x, false, false, false);
  Kokkos::deep_copy(xh, d.x.view());
  {
    auto want = copy_of(d.r.view());
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) want(k, j, i) = T(point(xh, k, j, i));
    sd::residual(host, lv.place, s, d.x.view(), d.f.view(), d.r.view());
    auto got = copy_of(d.r.view());
    bad += compare(tag + " residual", got, want, b);
  }
  {
    const C w = C(0.8);
    auto want = copy_of(d.x2.view());
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i)
          want(k, j, i) = T(C(xh(k, j, i)) + w * point(xh, k, j, i) * s.inv_diag_at(k, j, i));
    sd::jacobi(host, lv.place, s, w, d.x.view(), d.x2.view(), d.f.view(), false);
    auto got = copy_of(d.x2.view());
    bad += compare(tag + " jacobi", got, want, b);
  }
  // both colours of red-black Gauss-Seidel, the ghosts refilled between them as smooth() does
  for (int colour : {0, 1}) {
    mg.fill_ghosts(lv, d, d.x, false, false, false);
    auto want = copy_of(d.x.view());
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
          if (((k + j + i + shift) % 2 + 2) % 2 != colour) continue;
          const C xc = C(want(k, j, i));
          want(k, j, i) = T(xc + point(want, k, j, i) * s.inv_diag_at(k, j, i));
        }
    sd::rbgs(host, lv.place, s, d.x.view(), d.f.view(), colour);
    auto got = copy_of(d.x.view());
    bad += compare(tag + " rbgs colour " + std::to_string(colour), got, want, b);
  }
  // several colour passes in one sweep over the planes (3D, every face physical) against the
  // same passes one at a time with the ghosts filled before each, as Multigrid::smooth ran them
  if (c.dim == 3) {
    const std::vector<std::vector<int>> sequences = {{1, 0, 1}, {1, 0, 1, 0}, {0, 1}, {0, 1, 0, 1, 0, 1, 0}};
    for (const auto& colours : sequences) {
      fill_random(xh, 29 + colours.size());
      Kokkos::deep_copy(d.x.view(), xh);
      for (int colour : colours) {
        mg.fill_ghosts(lv, d, d.x, false, false, true);
        sd::rbgs(host, lv.place, s, d.x.view(), d.f.view(), colour);
      }
      auto want = copy_of(d.x.view());
      // tile 0: as the solver runs it; then tiles of rows, the smallest the sweep takes (one row
      // for the first tile's last pass) and two more rows
      const std::int64_t m = std::int64_t(colours.size());
      for (const std::int64_t tile : {std::int64_t(0), m, m + 2}) {
        Kokkos::deep_copy(d.x.view(), xh);
        mg.fill_ghosts(lv, d, d.x, false, false, true);
        sd::rbgs_passes(host, lv.place, s, d.x.view(), d.f.view(), colours.data(), int(m), lv.mirror, tile);
        auto got = copy_of(d.x.view());
        bad += compare(
            tag + " rbgs_passes of " + std::to_string(m) + ", tiles of " + std::to_string(tile) + " rows",
            got, want, b);
      }
    }
  }
  // the ghost layers of the y and z faces (whole rows on hosts), every sign and side, against
  // the point-wise mirror
  sd::Box all;
  for (int a = 0; a < 3; ++a) {
    all.lo[a] = 0;
    all.hi[a] = std::int64_t(d.x.view().extent(std::size_t(2 - a)));
  }
  for (int axis = 1; axis < c.dim; ++axis)
    for (const bool high : {false, true})
      for (const int sign : {-1, 1, 0})
        for (int width = 1; width <= lv.place.ghost[std::size_t(axis)]; ++width) {
          fill_random(xh, 13 + std::uint64_t(4 * axis + 2 * sign + int(high)));
          Kokkos::deep_copy(d.x.view(), xh);
          const std::int64_t first = lv.place.ghost[std::size_t(axis)];
          const std::int64_t last = first + lv.place.extent[std::size_t(axis)] - 1;
          const std::int64_t pivot = high ? 2 * last + 1 : 2 * first - 1;
          auto want = copy_of(d.x.view());
          for (std::int64_t k = all.lo[2]; k < all.hi[2]; ++k)
            for (std::int64_t j = all.lo[1]; j < all.hi[1]; ++j)
              for (std::int64_t i = all.lo[0]; i < all.hi[0]; ++i) {
                const std::int64_t g = axis == 1 ? j : k;
                if (high ? (g <= last || g > last + width) : (g >= first || g < first - width)) continue;
                want(k, j, i) = T(C(sign) * C(axis == 1 ? xh(k, pivot - j, i) : xh(pivot - k, j, i)));
              }
          sd::mirror_face(host, d.x.view(), axis, high, width, first, last, sign);
          auto got = copy_of(d.x.view());
          bad += compare(tag + " mirror axis " + std::to_string(axis) + (high ? " high" : " low") + " sign " +
                             std::to_string(sign) + " width " + std::to_string(width),
                         got, want, all);
        }
  // x_f += scale P x_c from level 1 (random, ghosts included) into level 0, against
  // prolong_add's point-wise form: x interpolation, then y, then z
  if (mg.num_levels() > 1) {
    auto& lc = mg.level(1);
    auto& dc = std::get<Multigrid<>::LevelData<T>>(lc.data);
    auto ch = copy_of(dc.x.view());
    fill_random(ch, 17);
    Kokkos::deep_copy(dc.x.view(), ch);
    fill_random(xh, 19);
    Kokkos::deep_copy(d.x.view(), xh);
    const double scale = 0.375;
    const C a = C(0.75), bw = C(0.25), ps = C(scale);
    const std::int64_t fo[3] = {lv.place.offset[0] - lv.place.ghost[0],
                                lv.place.offset[1] - lv.place.ghost[1],
                                lv.place.offset[2] - lv.place.ghost[2]};
    const std::int64_t co[3] = {lc.place.ghost[0] - lc.place.offset[0],
                                lc.place.ghost[1] - lc.place.offset[1],
                                lc.place.ghost[2] - lc.place.offset[2]};
    auto want = copy_of(d.x.view());
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) {
          const std::int64_t gi = i + fo[0], gj = j + fo[1], gk = k + fo[2];
          const std::int64_t ci = (gi >> 1) + co[0], cj = (gj >> 1) + co[1];
          const std::int64_t di = (gi & 1) ? 1 : -1, dj = (gj & 1) ? 1 : -1;
          const auto along_x = [&](std::int64_t kk, std::int64_t jj) {
            return a * C(ch(kk, jj, ci)) + bw * C(ch(kk, jj, ci + di));
          };
          C v;
          if (c.dim == 3) {
            const std::int64_t ck = (gk >> 1) + co[2], dk = (gk & 1) ? 1 : -1;
            const C p0 = a * along_x(ck, cj) + bw * along_x(ck, cj + dj);
            const C p1 = a * along_x(ck + dk, cj) + bw * along_x(ck + dk, cj + dj);
            v = a * p0 + bw * p1;
          } else {
            v = a * along_x(k, cj) + bw * along_x(k, cj + dj);
          }
          want(k, j, i) = T(C(xh(k, j, i)) + ps * v);
        }
    sd::prolong_add(host, lv.place, lc.place, c.dim, dc.x.view(), d.x.view(), scale);
    auto got = copy_of(d.x.view());
    bad += compare(tag + " prolong", got, want, b);

    // f_c = scale R r_f (full weighting) from level 0's r (random, ghosts included), against
    // restrict_full_weighting's point-wise form: per fine column the (y, z)-weighted sum, then x
    auto rh = copy_of(d.r.view());
    fill_random(rh, 23);
    Kokkos::deep_copy(d.r.view(), rh);
    const std::int64_t base[3] = {
        2 * (lc.place.offset[0] - lc.place.ghost[0]) - lv.place.offset[0] + lv.place.ghost[0],
        2 * (lc.place.offset[1] - lc.place.ghost[1]) - lv.place.offset[1] + lv.place.ghost[1],
        2 * (lc.place.offset[2] - lc.place.ghost[2]) - lv.place.offset[2] + lv.place.ghost[2]};
    const C w[4] = {C(0.125), C(0.375), C(0.375), C(0.125)};
    auto fwant = copy_of(dc.f.view());
    const sd::Box cb = lc.place.owned();
    for (std::int64_t k = cb.lo[2]; k < cb.hi[2]; ++k)
      for (std::int64_t j = cb.lo[1]; j < cb.hi[1]; ++j)
        for (std::int64_t i = cb.lo[0]; i < cb.hi[0]; ++i) {
          const std::int64_t fi = 2 * i + base[0] - 1, fj = 2 * j + base[1] - 1;
          const std::int64_t fk = c.dim == 3 ? 2 * k + base[2] - 1 : k;
          const int planes = c.dim == 3 ? 4 : 1;
          C acc = C(0);
          for (int a2 = 0; a2 < 4; ++a2) {
            C col = C(0);
            for (int pz = 0; pz < planes; ++pz)
              for (int py = 0; py < 4; ++py)
                col += (c.dim == 3 ? w[pz] * w[py] : w[py]) * C(rh(fk + pz, fj + py, fi + a2));
            acc += w[a2] * col;
          }
          fwant(k, j, i) = T(C(scale) * acc);
        }
    sd::restrict_full_weighting(host, lv.place, lc.place, c.dim, scale, d.r.view(), dc.f.view());
    auto fgot = copy_of(dc.f.view());
    bad += compare(tag + " restrict", fgot, fwant, cb);
  } else {
    ADD_FAILURE() << tag << ": one level only, the prolongation is not checked";
  }
  EXPECT_EQ(bad, 0) << tag;
}

// Rows of 71 cells take two 32-cell blocks of the AVX-512 fp32 sweep, a 16-cell block and a
// scalar tail, in either colour. 40 and 33 cells give a scalar tail after the 16-cell blocks in
// one colour or both; the 3D cases check the colour passes swept over the planes together
// (host::rbgs_passes) on 4 to 11 planes. Rows of 512 doubles make the fp64 residual's tiles 21
// rows (host::stencil_tile_rows), so 45 rows are three tiles, the last one short. 90 rows make
// 10 to 45 tiles of the swept passes (forced to m and m + 2 rows), which the threads of a team
// take in turn, each a step behind the one before (the test runs at 1 and at 3 threads).
const Case k_cases[] = {{3, {13, 11, 9}}, {3, {16, 8, 6}},   {3, {71, 5, 4}},
                        {3, {40, 7, 9}},  {3, {33, 6, 7}},   {2, {15, 9, 1}},
                        {2, {32, 17, 1}}, {3, {512, 45, 3}}, {3, {40, 90, 14}}};

// The multigrid's host row kernels run where its levels live in host memory. A device build
// (CUDA, HIP) keeps them in device memory and runs the point-wise forms only, which the solver
// tests check; there these comparisons would read device memory from the host, so they skip
// (in the else branch: nvcc warns that the loop after an always-taken `if (...) GTEST_SKIP()`
// is not reachable, and `if constexpr` would leave its helpers unreferenced).
constexpr bool k_levels_on_host =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Multigrid<>::memory_space>::accessible;
constexpr const char* k_device_levels = "the multigrid's levels are in device memory in this build";

TEST(HostKernels, MatchPointwiseFp64) {
  if (k_levels_on_host) {
    for (const Case& c : k_cases) check_kernels<double>(c);
  } else {
    GTEST_SKIP() << k_device_levels;
  }
}
TEST(HostKernels, MatchPointwiseFp32) {
  if (k_levels_on_host) {
    for (const Case& c : k_cases) check_kernels<float>(c);
  } else {
    GTEST_SKIP() << k_device_levels;
  }
}
TEST(HostKernels, MatchPointwiseBf16) {
  if (k_levels_on_host) {
    for (const Case& c : k_cases) check_kernels<bf16>(c);
  } else {
    GTEST_SKIP() << k_device_levels;
  }
}
TEST(HostKernels, MatchPointwiseFp16) {
  if (k_levels_on_host) {
    for (const Case& c : k_cases) check_kernels<fp16>(c);
  } else {
    GTEST_SKIP() << k_device_levels;
  }
}

// The multigrid's entry in one pass (detail::load_entry: level 0's f = scale r and x = the first
// red half-sweep from zero) against the three passes it replaces (load_rhs, x = 0, the red
// half-sweep): the cycle that follows each must give the same bits in every cell, in every
// storage precision (the 16-bit rows take the eight-wide path where it is compiled). A cell
// given another value by the entry, or a wrong colour, would change the cycle's result.
template <class T>
void check_entry(const Case& c) {
  Decomposition decomp(MPI_COMM_WORLD, grid_of(c));
  MultigridOptions mo;
  mo.precisions = std::vector<Precision>{precision_traits<T>::precision};
  mo.pre_sweeps = 2;
  mo.post_sweeps = 2;
  Multigrid<> mg(decomp, mixed_faces(), mo);
  ASSERT_TRUE(mg.entry_possible());
  ASSERT_GT(mg.num_levels(), 1);
  auto& lv = mg.level(0);
  auto& d = std::get<Multigrid<>::LevelData<T>>(lv.data);
  const std::string tag = tag_of<T>(c);
  Field<double> r("r", decomp, 1);
  auto rh = copy_of(r.view());
  fill_random(rh, 5);
  for (std::size_t q = 0; q < rh.size(); q += 7) rh.data()[q] = q % 2 ? -0.0 : 0.0;  // signed zeros too
  Kokkos::deep_copy(r.view(), rh);
  const double scale = 1.0 / 0.37;
  const sd::Box b = lv.place.owned();

  mg.load_rhs(r, scale);
  auto f_three = copy_of(d.f.view());
  mg.cycle(0, Cycle::v, true);
  auto x_three = copy_of(d.x.view());

  {  // stale values in x: the entry must write every owned cell, black ones included
    auto junk = copy_of(d.x.view());
    fill_random(junk, 3);
    Kokkos::deep_copy(d.x.view(), junk);
  }
  EXPECT_TRUE(mg.load_entry(r, scale));
  auto f_one = copy_of(d.f.view());
  mg.cycle(0, Cycle::v, true, true);
  auto x_one = copy_of(d.x.view());
  std::int64_t bad =
      compare(tag + " entry f", f_one, f_three, b) + compare(tag + " entry cycle x", x_one, x_three, b);
  if constexpr (std::is_same<T, double>::value || std::is_same<T, float>::value) {
    // the CG's r update writing the same entry in its pass (detail::update_r_entry, which the
    // solver uses for fp64 and fp32 levels): f and the cycle after it as load_entry of the
    // updated r gives them
    Field<double> ap("ap", decomp, 1);
    auto ah = copy_of(ap.view());
    fill_random(ah, 9);
    Kokkos::deep_copy(ap.view(), ah);
    Kokkos::deep_copy(r.view(), rh);
    auto junk = copy_of(d.x.view());
    fill_random(junk, 4);
    Kokkos::deep_copy(d.x.view(), junk);
    sd::update_r_entry(Kokkos::DefaultHostExecutionSpace(), sd::placement_of(r), 0.5, r.view(), ap.view(),
                       lv.place, level_stencil<sd::compute_t<T>>(lv, c.dim), d.f.view(), d.x.view(), scale);
    auto f_upd = copy_of(d.f.view());
    mg.cycle(0, Cycle::v, true, true);
    auto x_upd = copy_of(d.x.view());
    EXPECT_TRUE(mg.load_entry(r, scale));  // r is r - 0.5 ap now
    auto f_ref = copy_of(d.f.view());
    mg.cycle(0, Cycle::v, true, true);
    auto x_ref = copy_of(d.x.view());
    bad += compare(tag + " r update's entry f", f_upd, f_ref, b) +
           compare(tag + " r update's entry cycle x", x_upd, x_ref, b);
  }
  EXPECT_EQ(bad, 0) << tag;
}

TEST(HostKernels, EntryIsTheUnfusedStart) {
  if (k_levels_on_host) {
    for (const Case& c : k_cases) {
      check_entry<double>(c);
      check_entry<float>(c);
      check_entry<bf16>(c);
      check_entry<fp16>(c);
    }
  } else {
    GTEST_SKIP() << k_device_levels;
  }
}

// The CG's row norms (sum of squares, sum, maximum magnitude), which the host runs as vectors,
// against their definition: sd::host::lanes partial sums, lane l taking elements l, l + lanes,
// ..., the remainder in lane 0, lanes added in order. Any other order (a vector compiled with
// reassociation, a changed remainder) changes bits of the CG's residual norms.
template <class K>
void check_row_norms() {
  constexpr int L = sd::host::lanes;
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(5), std::int64_t(8), std::int64_t(13),
                               std::int64_t(64), std::int64_t(203)}) {
    std::vector<K> v(std::size_t(n) + 1);
    std::uint64_t seed = 12345 + std::uint64_t(n);
    for (auto& x : v) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      // magnitudes over 8 decades, both signs, so that the sums round at every add
      const double u = double(seed >> 11) * (1.0 / 9007199254740992.0);
      x = K((u - 0.5) * std::pow(10.0, double((seed >> 3) % 8) - 4.0));
    }
    double s2[L] = {}, s1[L] = {}, mx[L] = {};
    std::int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int l = 0; l < L; ++l) {
        const double t = double(v[std::size_t(i + l)]);
        s2[l] += t * t;
        s1[l] += t;
        mx[l] = std::fabs(t) > mx[l] ? std::fabs(t) : mx[l];
      }
    for (; i < n; ++i) {
      const double t = double(v[std::size_t(i)]);
      s2[0] += t * t;
      s1[0] += t;
      mx[0] = std::fabs(t) > mx[0] ? std::fabs(t) : mx[0];
    }
    sd::NormMax want;
    for (int l = 0; l < L; ++l) {
      want.sum2 += s2[l];
      want.sum += s1[l];
      if (mx[l] > want.max) want.max = mx[l];
    }
    sd::NormMax got;
    sd::host::norms_of_row(v.data(), n, got);
    EXPECT_EQ(bits_of(got.sum2), bits_of(want.sum2)) << "n = " << n;
    EXPECT_EQ(bits_of(got.sum), bits_of(want.sum)) << "n = " << n;
    EXPECT_EQ(bits_of(got.max), bits_of(want.max)) << "n = " << n;
  }
}

TEST(HostKernels, RowNormsInLaneOrderFp64) {
  check_row_norms<double>();
}
TEST(HostKernels, RowNormsInLaneOrderFp32) {
  check_row_norms<float>();
}

// The CG's dots of the preconditioned residual z = zs x (x: level 0's row in its compute type C)
// with r and Ap, and the three sums of the singular projection, against their definition as for
// the norms above. The host computes them as vectors; a lane out of order, a product rounded in
// another type, or a missing remainder changes the bits of alpha and beta.
template <class C>
void check_row_dots() {
  constexpr int L = sd::host::lanes;
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(5), std::int64_t(8), std::int64_t(13),
                               std::int64_t(64), std::int64_t(203), std::int64_t(1000), std::int64_t(4099)}) {
    std::vector<C> x(std::size_t(n) + 1);
    std::vector<double> r(std::size_t(n) + 1), a(std::size_t(n) + 1);
    std::uint64_t seed = 777 + std::uint64_t(n);
    auto next = [&seed](int decades) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      const double u = double(seed >> 11) * (1.0 / 9007199254740992.0);
      return (u - 0.5) * std::pow(10.0, double((seed >> 3) % std::uint64_t(decades)) - 2.0);
    };
    // magnitudes within two decades: each lane's sum rounds at nearly every add, so another
    // order of the lanes or of their final sum changes the bits
    for (std::size_t q = 0; q < x.size(); ++q) {
      x[q] = C(next(2));
      r[q] = next(2);
      a[q] = next(2);
    }
    const C zs = C(0.37109375 * 3.0);
    double s[5][L] = {};
    std::int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int l = 0; l < L; ++l) {
        const auto q = std::size_t(i + l);
        const C zc = zs * x[q];
        const double z = double(zc);
        s[0][l] += z * r[q];
        s[1][l] += z * a[q];
        s[2][l] += z;
        s[3][l] += r[q];
        s[4][l] += a[q];
      }
    for (; i < n; ++i) {
      const auto q = std::size_t(i);
      const C zc = zs * x[q];
      const double z = double(zc);
      s[0][0] += z * r[q];
      s[1][0] += z * a[q];
      s[2][0] += z;
      s[3][0] += r[q];
      s[4][0] += a[q];
    }
    sd::Sums<5> want;
    for (int v = 0; v < 5; ++v)
      for (int l = 0; l < L; ++l) want.v[v] += s[v][l];
    sd::Sums<5> five, two, one;
    const double* ap = a.data();
    sd::five_sums_of_row<double>(
        x.data(), zs, r.data(), [ap](std::int64_t q) { return ap[q]; }, n, five);
    sd::two_dots_of_row<double, true>(x.data(), zs, r.data(), a.data(), n, two);
    // the standard beta's (z, r) alone: the same bits, Ap never read
    sd::two_dots_of_row<double, false>(x.data(), zs, r.data(), nullptr, n, one);
    for (int v = 0; v < 5; ++v)
      EXPECT_EQ(bits_of(five.v[v]), bits_of(want.v[v])) << "sum " << v << ", n = " << n;
    for (int v = 0; v < 2; ++v)
      EXPECT_EQ(bits_of(two.v[v]), bits_of(want.v[v])) << "dot " << v << ", n = " << n;
    EXPECT_EQ(bits_of(one.v[0]), bits_of(want.v[0])) << "(z, r) alone, n = " << n;
    EXPECT_EQ(one.v[1], 0.0) << "(z, Ap) without Ap, n = " << n;
  }
}

TEST(HostKernels, RowDotsInLaneOrderFp64Level) {
  check_row_dots<double>();
}
TEST(HostKernels, RowDotsInLaneOrderFp32Level) {
  check_row_dots<float>();
}

// The CG's A p with its dot (p, Ap) (detail::apply_dot: rows in tiles swept along z, and on a
// grid of stream_store_bytes or more the 3D rows stored past the caches, two blocks joined by a
// permute where a row does not start on a cache line) against its definition: every cell the
// point-wise product, bit for bit, and the dot the rows' lane sums (dot_of_row's eight lanes,
// the remainder in lane 0) added in row order. Rows of 131 cells with two ghosts start at every
// offset within a line, so a wrong join, a lost row end or a row out of order fails.
void check_apply_dot(int dim, std::array<std::int64_t, 3> n) {
  const std::int64_t nz = dim == 3 ? n[2] : 1, gz = dim == 3 ? 1 : 0;
  sd::View3<double, Kokkos::HostSpace> p("p", nz + 2 * gz, n[1] + 2, n[0] + 2),
      ap("ap", nz + 2 * gz, n[1] + 2, n[0] + 2);
  std::uint64_t seed = 4242;
  for (std::int64_t q = 0; q < std::int64_t(p.span()); ++q) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    p.data()[q] =
        (double(seed >> 11) * (1.0 / 9007199254740992.0) - 0.5) * std::pow(10.0, double((seed >> 3) % 3u));
  }
  sd::Placement pl;
  pl.ghost = {1, 1, gz};
  pl.extent = {n[0], n[1], nz};
  const auto st = sd::make_stencil<double>({1.1, 0.7, dim == 3 ? 1.3 : 0.0}, dim);
  const double dot = sd::apply_dot(Kokkos::DefaultHostExecutionSpace(), pl, st, p, ap);
  double want = 0.0;
  std::int64_t bad = 0;
  constexpr int L = sd::host::lanes;
  for (std::int64_t k = gz; k < gz + nz; ++k)
    for (std::int64_t j = 1; j <= n[1]; ++j) {
      double lane[L] = {};
      std::int64_t i = 0;
      for (; i < n[0]; ++i) {
        const std::int64_t x = i + 1;
        const double c = p(k, j, x);
        const double zs = dim == 3 ? p(k - 1, j, x) + p(k + 1, j, x) : 0.0;
        const double v =
            st.diag * c - (st.cx * (p(k, j, x - 1) + p(k, j, x + 1)) +
                           st.cy * (p(k, j - 1, x) + p(k, j + 1, x)) + (dim == 3 ? st.cz * zs : 0.0));
        if (bits_of(ap(k, j, x)) != bits_of(v) && bad++ < 5)
          ADD_FAILURE() << "Ap at (" << k << ", " << j << ", " << x << "): " << ap(k, j, x) << " != " << v;
        lane[i < n[0] / L * L ? i % L : 0] += c * v;
      }
      double row = 0.0;
      for (int l = 0; l < L; ++l) row += lane[l];
      want += row;
    }
  EXPECT_EQ(bad, 0) << dim << "D " << n[0] << "x" << n[1] << "x" << nz;
  EXPECT_EQ(bits_of(dot), bits_of(want))
      << dim << "D " << n[0] << "x" << n[1] << "x" << nz << ": " << dot << " != " << want;
}

TEST(HostKernels, ApplyDotIsThePointwiseProduct) {
  // 9.4 MB: above stream_store_bytes, the streamed rows
  static_assert(std::size_t(133) * 73 * 123 * sizeof(double) >= sd::host::stream_store_bytes);
  check_apply_dot(3, {131, 71, 121});
  check_apply_dot(3, {13, 9, 7});   // in the caches, tiles of whole planes
  check_apply_dot(3, {5, 300, 3});  // rows shorter than a block, many tiles
  check_apply_dot(2, {131, 71, 1});
}

// The CG's direction update with A p one plane behind (detail::update_p_apply, used on one rank
// where every face is physical) against the passes it replaces: update_p_from, the fill's
// mirrors (x, then y, then z faces) and apply_dot. p, x and A p at every owned cell and the dot,
// bit for bit; Dirichlet and Neumann faces mixed, with and without the deferred x step, tiles of
// one row up to whole planes, and the streamed rows of a large grid. A ghost row not mirrored, a
// row one plane early or a tile edge left out fails. P = float: the compressed search direction,
// A p not stored, against update_p_from, the fill and stencil_dot.
template <class T, class P = double>
void check_direction_apply(std::array<std::int64_t, 3> n, double alpha) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  constexpr bool store = std::is_same<P, double>::value;
  const std::int64_t ext[3] = {n[2] + 2, n[1] + 2, n[0] + 2};
  sd::View3<P, Kokkos::HostSpace> p("p", ext[0], ext[1], ext[2]);
  sd::View3<double, Kokkos::HostSpace> x("x", ext[0], ext[1], ext[2]), ap("ap", ext[0], ext[1], ext[2]);
  sd::View3<T, Kokkos::HostSpace> z("z", ext[0], ext[1], ext[2]);
  std::uint64_t seed = 977;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(seed >> 11) * (1.0 / 9007199254740992.0) - 0.5;
  };
  for (std::size_t q = 0; q < p.span(); ++q) {
    p.data()[q] = P(next());
    x.data()[q] = next();
    ap.data()[q] = next();
    z.data()[q] = T(next());
  }
  sd::View3<P, Kokkos::HostSpace> p2("p2", ext[0], ext[1], ext[2]);
  sd::View3<double, Kokkos::HostSpace> x2("x2", ext[0], ext[1], ext[2]), ap2("ap2", ext[0], ext[1], ext[2]);
  Kokkos::deep_copy(p2, p);
  Kokkos::deep_copy(x2, x);
  Kokkos::deep_copy(ap2, ap);
  sd::Placement pl;
  pl.ghost = {1, 1, 1};
  pl.extent = {n[0], n[1], n[2]};
  const std::array<int, 6> mirror{-1, 1, 1, -1, -1, 1};
  const auto st = sd::make_stencil<double>({1.1, 0.7, 1.3}, 3);
  const double zscale = 0.75, m = 0.01, beta = 0.3;
  const Host host;
  // the passes it replaces
  sd::update_p_from(host, pl, pl, z, zscale, m, beta, p, alpha, x);
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side)
      sd::mirror_face(host, p, a, side == 1, 1, pl.ghost[std::size_t(a)],
                      pl.ghost[std::size_t(a)] + pl.extent[std::size_t(a)] - 1,
                      mirror[std::size_t(2 * a + side)]);
  double want = 0.0, dot = 0.0;
  if constexpr (store) {
    want = sd::apply_dot(host, pl, st, p, ap);
    dot = sd::update_p_apply(host, pl, pl, z, zscale, m, beta, p2, alpha, x2, st, ap2, mirror);
  } else {
    want = sd::stencil_dot(host, pl, st, p);
    dot = sd::update_p_apply(host, pl, pl, z, zscale, m, beta, p2, alpha, x2, st,
                             sd::View3<double, Kokkos::HostSpace>(), mirror);
  }
  const std::string tag = std::string(precision_traits<T>::name) + (store ? "" : ", p in fp32") + " " +
                          std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) +
                          " alpha " + std::to_string(alpha);
  std::int64_t bad = 0;
  for (std::int64_t k = 1; k <= n[2]; ++k)
    for (std::int64_t j = 1; j <= n[1]; ++j)
      for (std::int64_t i = 1; i <= n[0]; ++i)
        if ((bits_of(p(k, j, i)) != bits_of(p2(k, j, i)) || bits_of(x(k, j, i)) != bits_of(x2(k, j, i)) ||
             bits_of(ap(k, j, i)) != bits_of(ap2(k, j, i))) &&
            bad++ < 5)
          ADD_FAILURE() << tag << " at (" << k << ", " << j << ", " << i << "): p " << p2(k, j, i) << " / "
                        << p(k, j, i) << ", x " << x2(k, j, i) << " / " << x(k, j, i) << ", Ap "
                        << ap2(k, j, i) << " / " << ap(k, j, i);
  EXPECT_EQ(bad, 0) << tag;
  EXPECT_EQ(bits_of(dot), bits_of(want)) << tag << ": " << dot << " != " << want;
}

TEST(HostKernels, DirectionWithApplyIsTheTwoPasses) {
  check_direction_apply<double>({131, 71, 121}, 0.4);  // streamed A p rows, several tiles
  check_direction_apply<double>({13, 9, 7}, 0.0);      // the first direction: no x step
  check_direction_apply<double>({5, 300, 3}, -0.2);    // many tiles
  check_direction_apply<double>({7, 1, 5}, 0.4);       // one row: a tile of one row
  check_direction_apply<double>({9, 2, 1}, 0.4);       // one plane
  check_direction_apply<float>({37, 45, 11}, 0.4);
  check_direction_apply<fp16>({37, 45, 11}, 0.4);
  check_direction_apply<bf16>({37, 45, 11}, 0.4);
  check_direction_apply<float, float>({131, 71, 121}, 0.4);  // the compressed p, several tiles
  check_direction_apply<double, float>({13, 9, 7}, 0.0);
  check_direction_apply<fp16, float>({5, 300, 3}, -0.2);
  check_direction_apply<float, float>({7, 1, 5}, 0.4);
}

}  // namespace host_kernels
}  // namespace
