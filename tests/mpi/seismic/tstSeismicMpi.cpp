// Results are bitwise identical at 1, 2, 3 and 4 ranks (every storage precision), and checkpoint/restart
// continues bitwise (also at another rank count): every rank also runs the same deck on MPI_COMM_SELF (the
// 1-rank reference, in the same process) and compares its owned points and the gathers. The decks use every
// code path that touches a rank boundary: CPML on three sides (memory variables are exchanged), a free
// surface on top, off-grid sources and receivers whose stencils straddle ranks.
#include <mantissa/io/Checkpoint.hpp>
#include <seismic/Solver.hpp>
#include <seismic/SolverCheckpoint.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

namespace {

using mantissa::Decomposition;
using mantissa::Field;
using mantissa::Grid;
using namespace mantissa::seismic;

Grid make_grid(int dim) {
  Grid g;
  g.dim = dim;
  g.n = dim == 3 ? std::array<std::int64_t, 3>{30, 26, 22} : std::array<std::int64_t, 3>{90, 70, 1};
  g.spacing = {5.0, 5.0, dim == 3 ? 5.0 : 1.0};
  return g;
}

Config make_config(int dim, int order) {
  Config c;
  c.order = order;
  c.quiet = true;
  c.pml_cells = dim == 3 ? 6 : 12;
  c.boundary[dim - 1][0] = Boundary::free_surface;
  c.boundary[0][1] = Boundary::rigid;
  c.velocity.kind = ModelKind::layered;
  c.velocity.interfaces = {dim == 3 ? 60.0 : 180.0};
  c.velocity.velocities = {1500.0, 2200.0};
  Source s1, s2;
  s1.frequency = 20.0;
  s1.position = {dim == 3 ? 71.3 : 222.2, dim == 3 ? 62.9 : 30.7, dim == 3 ? 21.1 : 0.0};
  s2 = s1;
  s2.wavelet = WaveletKind::gaussian_derivative;
  s2.position[0] += 13.7;
  c.shots = {Shot{{s1, s2}}, Shot{{s2}}};
  for (int r = 0; r < 5; ++r)
    c.receivers.push_back(
        {20.0 + 27.3 * r, dim == 3 ? 40.1 + 9.0 * r : 12.5 + 40.0 * r, dim == 3 ? 33.3 : 0.0});
  c.record_every = 2;
  return c;
}

// Owned points of `dist` equal the same global points of `serial`, bit for bit.
template <class S>
int count_mismatches(const Field<S>& dist, const Field<S>& serial) {
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dist.view());
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), serial.view());
  const auto g = dist.ghosts();
  const auto off = dist.offset();
  int bad = 0;
  for (std::int64_t k = 0; k < dist.extent()[2]; ++k)
    for (std::int64_t j = 0; j < dist.extent()[1]; ++j)
      for (std::int64_t i = 0; i < dist.extent()[0]; ++i) {
        const S x = a(k + g[2], j + g[1], i + g[0]);
        const S y = b(off[2] + k + g[2], off[1] + j + g[1], off[0] + i + g[0]);
        if (std::memcmp(&x, &y, sizeof(S)) != 0) ++bad;
      }
  return bad;
}

int compare_traces(const Traces& a, const Traces& b) {
  int bad = 0;
  if (a.data.size() != b.data.size()) return 1000000;
  for (std::size_t r = 0; r < a.data.size(); ++r) {
    if (a.data[r].size() != b.data[r].size()) return 1000000;
    for (std::size_t s = 0; s < a.data[r].size(); ++s) bad += !(a.data[r][s] == b.data[r][s]);
  }
  return bad;
}

class SeismicRanks : public ::testing::TestWithParam<std::tuple<int, int>> {};

template <class S, class C>
void expect_same_as_one_rank(int dim, int order) {
  const Grid grid = make_grid(dim);
  const Config config = make_config(dim, order);
  const int steps = dim == 3 ? 60 : 160;
  Decomposition world(MPI_COMM_WORLD, grid), self(MPI_COMM_SELF, grid);
  Solver<S, C> dist(world, config), serial(self, config);
  for (int shot = 0; shot < 2; ++shot) {
    dist.initialize(shot);
    serial.initialize(shot);
    dist.run(steps);
    serial.run(steps);
    const auto dd = dist.diagnostics(), ds = serial.diagnostics();
    EXPECT_GT(ds.max_abs, 0.0);
    EXPECT_EQ(count_mismatches(dist.pressure(), serial.pressure()), 0) << "shot " << shot;
    EXPECT_EQ(count_mismatches(dist.previous_pressure(), serial.previous_pressure()), 0) << "shot " << shot;
    EXPECT_EQ(compare_traces(dist.traces(), serial.traces()), 0) << "shot " << shot;
    EXPECT_EQ(dd.max_abs, ds.max_abs);  // a max is exact at any rank count
    // The energy is a sum whose order depends on the decomposition: equal to ~1e-13 relative
    // (a few ulps per partial sum, tens of partial sums).
    // The energy is summed in double whatever the storage.
    EXPECT_NEAR(dd.energy, ds.energy, 1e-12 * std::fabs(ds.energy) + 1e-300);
  }
}

TEST_P(SeismicRanks, Fp64IsBitwiseIdenticalToOneRank) {
  const auto [dim, order] = GetParam();
  expect_same_as_one_rank<double, double>(dim, order);
}

// The other storage types too: every point's value depends only on its neighbours' in every
// precision (16-bit storage: p converted once per step for the CPML kernels, on every rank's
// boxes, ghosts included).
TEST_P(SeismicRanks, LowerPrecisionStorageIsBitwiseIdenticalToOneRank) {
  const auto [dim, order] = GetParam();
  expect_same_as_one_rank<float, float>(dim, order);
  expect_same_as_one_rank<mantissa::bf16, float>(dim, order);
  expect_same_as_one_rank<mantissa::fp16, float>(dim, order);
}

INSTANTIATE_TEST_SUITE_P(Seismic, SeismicRanks,
                         ::testing::Values(std::make_tuple(2, 8), std::make_tuple(2, 2),
                                           std::make_tuple(3, 8)));

// The x slabs' CPML runs inside the interior's sweep, its memory update too where no other rank
// reads its psi (Solver's m_pml_rows_memory). Ranks along x only, with a 10-cell CPML on every
// face of a 30-point axis: at 2 ranks each slab and its reach are on one rank (memory update in
// the sweep), at 3 each rank owns a slab exactly and its reach is a neighbour's (memory update
// before the psi exchange), at 4 a rank boundary cuts each slab. Every storage type, bitwise.
template <class S, class C>
void expect_x_slabs_same_as_one_rank() {
  Grid grid = make_grid(3);
  grid.n = {30, 26, 24};
  Config config = make_config(3, 8);
  config.pml_cells = 10;
  for (auto& side : config.boundary) side = {Boundary::pml, Boundary::pml};
  for (auto& shot : config.shots)
    for (auto& src : shot.sources) src.position = {4.0 + src.position[0] / 10.0, 27.2, 31.4};
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Decomposition world(MPI_COMM_WORLD, grid, {size, 1, 1}), self(MPI_COMM_SELF, grid);
  Solver<S, C> dist(world, config), serial(self, config);
  dist.initialize(0);
  serial.initialize(0);
  dist.run(50);
  serial.run(50);
  EXPECT_GT(serial.diagnostics().max_abs, 0.0);
  EXPECT_EQ(count_mismatches(dist.pressure(), serial.pressure()), 0);
  EXPECT_EQ(count_mismatches(dist.previous_pressure(), serial.previous_pressure()), 0);
}

TEST(SeismicRanks, XSlabsInTheInteriorSweepAreBitwiseIdenticalToOneRank) {
  expect_x_slabs_same_as_one_rank<double, double>();
  expect_x_slabs_same_as_one_rank<float, float>();
  expect_x_slabs_same_as_one_rank<mantissa::bf16, float>();
  expect_x_slabs_same_as_one_rank<mantissa::fp16, float>();
}

// N steps == N/2 steps, checkpoint, restart (here and on one rank), N/2 steps; bitwise.
TEST(SeismicRestart, CheckpointRestartContinuesBitwiseAtAnyRankCount) {
  for (int dim : {2, 3}) {
    const Grid grid = make_grid(dim);
    const Config config = make_config(dim, 8);
    const int half = dim == 3 ? 30 : 80;
    Decomposition world(MPI_COMM_WORLD, grid), self(MPI_COMM_SELF, grid);
    Solver<double, double> reference(self, config);
    reference.initialize(0);
    reference.run(2 * half);

    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string dir = "seismic_restart_np" + std::to_string(size) + "_" + std::to_string(dim) + "d";
    Solver<double, double> first(world, config);
    first.initialize(0);
    first.run(half);
    mantissa::io::CheckpointWriter writer(world, dir, 2);
    const std::string file = save_checkpoint(first, writer);

    Solver<double, double> again(world, config);  // same rank count
    {
      mantissa::io::CheckpointReader reader(file, MPI_COMM_WORLD);
      load_checkpoint(again, reader);
    }
    again.run(half);
    EXPECT_EQ(again.step_index(), 2 * half);
    EXPECT_EQ(count_mismatches(again.pressure(), reference.pressure()), 0) << dim << "D";
    EXPECT_EQ(count_mismatches(again.previous_pressure(), reference.previous_pressure()), 0) << dim << "D";
    EXPECT_EQ(compare_traces(again.traces(), reference.traces()), 0) << dim << "D";

    Solver<double, double> single(self, config);  // another rank count: 1
    {
      mantissa::io::CheckpointReader reader(file, MPI_COMM_SELF);
      load_checkpoint(single, reader);
    }
    single.run(half);
    EXPECT_EQ(count_mismatches(single.pressure(), reference.pressure()), 0)
        << dim << "D, restarted on 1 rank";
    EXPECT_EQ(compare_traces(single.traces(), reference.traces()), 0) << dim << "D, restarted on 1 rank";
    MPI_Barrier(MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::filesystem::remove_all(dir);
  }
}

}  // namespace
