// Rank-count invariance of the flow solver (issue 14): every rank also runs the whole problem
// alone (MPI_COMM_SELF) and compares its owned faces of the distributed run with it.
//
// Not bitwise, for a stated reason: the momentum update, the divergence, the gradient and the
// boundary values are point-wise, and the halo exchange copies exact values, so everything but
// the pressure solve is the same at any rank count; the solve's conjugate gradient reduces its
// dot products per rank first, so alpha and beta differ in the last bits with the split
// (tests/mpi/solvers/tstPoissonMpi.cpp), and each solve's answer agrees to ~1e-13 of phi. Over
// 30 steps those differences stay at the rounding level of the velocity: asserted <= 1e-11 of
// the lid speed (measured 1e-16 to 3e-16 at 2, 3 and 4 ranks), and the same number of multigrid cycles per
// step. The same in 3D (u, v, w; the cube cavity and the 3D Taylor-Green vortex).
#include "../../unit/cfd/CfdTestUtils.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace {

using namespace mantissa_test;

double compare(const Owned<double>& dist, const Owned<double>& serial, std::int64_t nx) {
  double diff = 0.0;
  for (std::int64_t j = 0; j < dist.extent[1]; ++j)
    for (std::int64_t i = 0; i < dist.extent[0]; ++i) {
      const std::size_t q = std::size_t(j * dist.extent[0] + i);
      const std::size_t r = std::size_t((dist.offset[1] + j) * nx + dist.offset[0] + i);
      diff = std::max({diff, std::abs(dist.u[q] - serial.u[r]), std::abs(dist.v[q] - serial.v[r])});
    }
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return diff;
}

void expect_invariant(const Grid& g, const Config& c, int steps, const char* what,
                      std::array<int, 3> dims = {0, 0, 1}) {
  Decomposition dd(MPI_COMM_WORLD, g, dims), ds(MPI_COMM_SELF, g);
  FlowSolver<double> dist(dd, c), serial(ds, c);
  dist.initialize();
  serial.initialize();
  for (int k = 0; k < steps; ++k) {
    dist.step();
    serial.step();
    EXPECT_EQ(dist.last_solves().iterations, serial.last_solves().iterations) << what << " step " << k;
  }
  const double diff = compare(owned_velocity(dist), owned_velocity(serial), g.n[0]);
  const auto a = dist.diagnostics(), b = serial.diagnostics();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("%s at %d ranks (%d x %d): max |u - u_serial| %.3e, KE %.15e vs %.15e\n", what, size,
                dd.dims()[0], dd.dims()[1], diff, a.kinetic_energy, b.kinetic_energy);
  EXPECT_LE(diff, 1e-11) << what;
  EXPECT_NEAR(a.kinetic_energy, b.kinetic_energy, 1e-12 * b.kinetic_energy) << what;
  EXPECT_NEAR(a.enstrophy, b.enstrophy, 1e-10 * b.enstrophy) << what;
  // the probes read the same values on every rank count (each point from its owner)
  const std::vector<std::array<double, 3>> pts{{0.5, 0.3, 0.0}, {0.97, 0.99, 0.0}, {0.0, 0.5, 0.0}};
  for (int axis = 0; axis < 2; ++axis) {
    const auto pa = dist.sample(axis, pts), pb = serial.sample(axis, pts);
    for (std::size_t q = 0; q < pts.size(); ++q) EXPECT_NEAR(pa[q], pb[q], 1e-11) << what << " probe " << q;
  }
}

TEST(FlowMpi, CavitySameAnswerAtEveryRankCount) {
  // odd sizes so 2 and 3 ranks split unevenly, non-square cells
  Config c = cavity_config(100.0);
  expect_invariant(unit_square(29, 23, false), c, 30, "cavity 29x23");
  // split along y: the lid's rank row and the ranks below it
  expect_invariant(unit_square(29, 23, false), c, 30, "cavity 29x23 split in y", {1, 0, 1});
}

TEST(FlowMpi, TaylorGreenSameAnswerAtEveryRankCount) {
  // periodic neighbours across ranks (and a rank its own neighbour)
  expect_invariant(unit_square(30, 22, true), taylor_green_config(), 30, "taylor-green 30x22");
}

TEST(FlowMpi, ChannelSameAnswerAtEveryRankCount) {
  // inflow and outflow: the outflow faces from continuity on the last rank, the inflow profile
  // from global positions; split along x (the outflow on one rank) and along y (on every rank)
  Config c = channel_config(0.05, InflowProfile::parabolic);
  expect_invariant(channel_grid(31, 11, 0.1), c, 30, "channel 31x11");
  expect_invariant(channel_grid(31, 11, 0.1), channel_config(0.05, InflowProfile::uniform), 30,
                   "channel 31x11 uniform, split in y", {1, 0, 1});
}

// 3D: every rank compares its owned faces of u, v, w with the one-rank run (the same reason
// for a rounding-level bound as in 2D: the CG's dot products; the rest is point-wise).
void expect_invariant3(const Grid& g, const Config& c, int steps, const char* what,
                       std::array<int, 3> dims = {0, 0, 0}) {
  Decomposition dd(MPI_COMM_WORLD, g, dims), ds(MPI_COMM_SELF, g);
  FlowSolver<double> dist(dd, c), serial(ds, c);
  dist.initialize();
  serial.initialize();
  for (int k = 0; k < steps; ++k) {
    dist.step();
    serial.step();
    EXPECT_EQ(dist.last_solves().iterations, serial.last_solves().iterations) << what << " step " << k;
  }
  double diff = 0.0;
  const auto off = dd.offset(), e = dd.extent();
  for (int a = 0; a < 3; ++a) {
    const auto p = owned_values(dist.velocity(a)), q = owned_values(serial.velocity(a));
    std::size_t n = 0;
    for (std::int64_t k = 0; k < e[2]; ++k)
      for (std::int64_t j = 0; j < e[1]; ++j)
        for (std::int64_t i = 0; i < e[0]; ++i, ++n) {
          const std::size_t r = std::size_t(((off[2] + k) * g.n[1] + off[1] + j) * g.n[0] + off[0] + i);
          diff = std::max(diff, std::abs(p[n] - q[r]));
        }
  }
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const auto a = dist.diagnostics(), b = serial.diagnostics();
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("%s at %d ranks (%d x %d x %d): max |u - u_serial| %.3e, KE %.15e vs %.15e\n", what, size,
                dd.dims()[0], dd.dims()[1], dd.dims()[2], diff, a.kinetic_energy, b.kinetic_energy);
  EXPECT_LE(diff, 1e-11) << what;
  EXPECT_NEAR(a.kinetic_energy, b.kinetic_energy, 1e-12 * b.kinetic_energy) << what;
  EXPECT_NEAR(a.enstrophy, b.enstrophy, 1e-10 * b.enstrophy) << what;
  EXPECT_NEAR(a.divergence, b.divergence, 1e-9) << what;
  const std::vector<std::array<double, 3>> pts{{0.5, 0.3, 0.41}, {0.97, 0.99, 0.02}, {0.0, 0.5, 0.77}};
  for (int axis = 0; axis < 3; ++axis) {
    const auto pa = dist.sample(axis, pts), pb = serial.sample(axis, pts);
    for (std::size_t q = 0; q < pts.size(); ++q) EXPECT_NEAR(pa[q], pb[q], 1e-11) << what << " probe " << q;
  }
}

TEST(FlowMpi, Cavity3dSameAnswerAtEveryRankCount) {
  // the lid-driven cube with odd, unequal sizes (uneven splits at 2 and 3 ranks), walls on all
  // six sides, split by MPI_Dims_create and once along z only
  const Grid g = box3(13, 11, 9, 1.0, 1.0, 1.0, false);
  expect_invariant3(g, cavity3_config(100.0), 12, "cavity 13x11x9");
  expect_invariant3(g, cavity3_config(100.0), 12, "cavity 13x11x9 split in z", {1, 1, 0});
}

TEST(FlowMpi, Duct3dSameAnswerAtEveryRankCount) {
  // a 3D duct: parabolic inflow across y and z, the outflow's continuity with v and w
  const Grid g = channel_grid(15, 9, 0.1, 5);  // 9: two cells a rank when 4 split y
  expect_invariant3(g, channel_config(0.05, InflowProfile::parabolic), 12, "duct 15x9x5");
  expect_invariant3(g, channel_config(0.05, InflowProfile::parabolic), 12, "duct 15x9x5 split in y",
                    {1, 0, 1});
}

TEST(FlowMpi, TaylorGreen3dSameAnswerAtEveryRankCount) {
  // periodic neighbours across ranks along all three axes (and a rank its own neighbour)
  const Grid g = box3(12, 10, 14, 1.0, 1.0, 1.0, true);
  expect_invariant3(g, periodic_config(InitialKind::taylor_green, 0.01), 12, "taylor-green 3D 12x10x14");
}

}  // namespace
