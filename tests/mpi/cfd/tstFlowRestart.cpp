// Checkpoint and restart of the flow solver through lib/mantissa/io (issue 14,
// apps/cfd/FlowCheckpoint.hpp), at every rank count of the harness:
//  - a run stopped at step 10, written, read into a fresh solver and continued to step 20 has
//    the bits of the uninterrupted run (velocity, both stage potentials, step, time), in fp64
//    and fp32 storage, 2D and 3D (u, v, w);
//  - the file read on one rank (MPI_COMM_SELF) holds the distributed run's state bit for bit,
//    and that one-rank continuation agrees to rounding (the CG's dot products, tstFlowMpi.cpp);
//  - a file of another viscosity, storage precision or grid is refused naming the deck key.
#include "../../unit/cfd/CfdTestUtils.hpp"

#include <cfd/FlowCheckpoint.hpp>
#include <mantissa/core/Error.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace {

using namespace mantissa_test;
namespace fs = std::filesystem;
namespace io = mantissa::io;

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A fresh directory per test and rank count, removed afterwards.
struct Scratch {
  std::string path;
  explicit Scratch(const std::string& name)
      : path("cfd-restart-" + name + "-np" + std::to_string(world_size())) {
    if (world_rank() == 0) {
      fs::remove_all(path);
      fs::create_directories(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Scratch() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(path);
  }
};

// The owned values of a field (fp64), x fastest (3D: then y, then z).
template <class T>
std::vector<double> owned(const Field<T>& f) {
  return owned_values(f);
}

// Number of owned values whose bits differ, summed over the ranks.
std::int64_t mismatches(const std::vector<double>& a, const std::vector<double>& b) {
  std::int64_t n = a.size() == b.size() ? 0 : 1;
  for (std::size_t q = 0; q < std::min(a.size(), b.size()); ++q)
    n += std::memcmp(&a[q], &b[q], sizeof(double)) != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return n;
}

template <class S>
void expect_same_bits(const FlowSolver<S>& a, const FlowSolver<S>& b, const char* what) {
  EXPECT_EQ(a.step_index(), b.step_index()) << what;
  EXPECT_EQ(a.time(), b.time()) << what;
  EXPECT_EQ(mismatches(owned(a.u()), owned(b.u())), 0) << what << ": u";
  EXPECT_EQ(mismatches(owned(a.v()), owned(b.v())), 0) << what << ": v";
  if (a.dim() == 3) {
    EXPECT_EQ(mismatches(owned(a.w()), owned(b.w())), 0) << what << ": w";
  }
  EXPECT_EQ(mismatches(owned(a.phi(0)), owned(b.phi(0))), 0) << what << ": phi_stage1";
  EXPECT_EQ(mismatches(owned(a.phi(1)), owned(b.phi(1))), 0) << what << ": phi_stage2";
  const auto da = a.diagnostics(), db = b.diagnostics();
  EXPECT_EQ(da.kinetic_energy, db.kinetic_energy) << what;
  EXPECT_EQ(da.enstrophy, db.enstrophy) << what;
}

template <class S>
void restart_is_bitwise(const Grid& g, const Config& c, const std::string& name) {
  Scratch dir(name);
  Decomposition decomp(MPI_COMM_WORLD, g);
  FlowSolver<S> whole(decomp, c), first(decomp, c), second(decomp, c);
  whole.initialize();
  whole.run(20);
  first.initialize();
  first.run(10);
  io::CheckpointWriter writer(decomp, dir.path, 2);
  const std::string file = write_checkpoint(writer, first);
  EXPECT_TRUE(fs::exists(file));
  second.initialize();  // a state of step 0 that the restart must overwrite entirely
  read_checkpoint(file, second);
  expect_same_bits(first, second, (name + " read back").c_str());
  second.run(10);
  expect_same_bits(whole, second, (name + " continued").c_str());
  const double ke = second.diagnostics().kinetic_energy;  // collective: on every rank
  if (world_rank() == 0)
    std::printf("%s at %d ranks: restart at step 10 continued to step %lld bit for bit (KE %.17g)\n",
                name.c_str(), world_size(), (long long)second.step_index(), ke);
}

TEST(FlowRestart, CavityContinuesBitwiseFp64) {
  restart_is_bitwise<double>(unit_square(29, 23, false), cavity_config(100.0), "cavity-fp64");
}

TEST(FlowRestart, CavityContinuesBitwiseFp32Storage) {
  restart_is_bitwise<float>(unit_square(29, 23, false), cavity_config(100.0), "cavity-fp32");
}

TEST(FlowRestart, TaylorGreenContinuesBitwise) {
  restart_is_bitwise<double>(unit_square(30, 22, true), taylor_green_config(), "taylor-green");
}

// An outflow face lives in the ghost layer, which a checkpoint does not store: the restored state
// sets it from continuity of the stored faces, as every step does.
TEST(FlowRestart, ChannelContinuesBitwiseFp32Storage) {
  restart_is_bitwise<float>(channel_grid(31, 11, 0.1), channel_config(0.05, InflowProfile::uniform),
                            "channel-fp32");
}

TEST(FlowRestart, Duct3dContinuesBitwise) {
  restart_is_bitwise<double>(channel_grid(15, 7, 0.1, 5), channel_config(0.05, InflowProfile::parabolic),
                             "duct3d-fp64");
}

TEST(FlowRestart, Cavity3dContinuesBitwise) {
  restart_is_bitwise<double>(box3(11, 9, 10, 1.0, 1.0, 1.0, false), cavity3_config(100.0), "cavity3d-fp64");
}

TEST(FlowRestart, TaylorGreen3dContinuesBitwiseFp32Storage) {
  restart_is_bitwise<float>(box3(12, 10, 9, 1.0, 1.0, 1.0, true),
                            periodic_config(InitialKind::taylor_green, 0.01), "taylor-green3d-fp32");
}

TEST(FlowRestart, ReadAtOneRankHoldsTheDistributedState) {
  Scratch dir("one-rank");
  const Grid g = unit_square(29, 23, false);
  const Config c = cavity_config(100.0);
  Decomposition dd(MPI_COMM_WORLD, g);
  FlowSolver<double> dist(dd, c);
  dist.initialize();
  dist.run(10);
  io::CheckpointWriter writer(dd, dir.path, 1);
  const std::string file = write_checkpoint(writer, dist);
  // every rank reads the whole file alone and compares its own part of the distributed state
  Decomposition ds(MPI_COMM_SELF, g);
  FlowSolver<double> serial(ds, c);
  serial.initialize();
  read_checkpoint(file, serial);
  EXPECT_EQ(serial.step_index(), 10);
  EXPECT_EQ(serial.time(), dist.time());
  const auto o = owned_velocity(dist), s = owned_velocity(serial);
  std::int64_t bad = 0;
  for (std::int64_t j = 0; j < o.extent[1]; ++j)
    for (std::int64_t i = 0; i < o.extent[0]; ++i) {
      const std::size_t q = std::size_t(j * o.extent[0] + i);
      const std::size_t r = std::size_t((o.offset[1] + j) * g.n[0] + o.offset[0] + i);
      bad += (std::memcmp(&o.u[q], &s.u[r], sizeof(double)) != 0) +
             (std::memcmp(&o.v[q], &s.v[r], sizeof(double)) != 0);
    }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(bad, 0);
  // continued on one rank: the same answer to rounding (not bitwise: the CG's dot products are
  // reduced per rank first; the bound is tstFlowMpi's, 1e-11 of the lid speed)
  dist.run(10);
  serial.run(10);
  const auto o2 = owned_velocity(dist), s2 = owned_velocity(serial);
  double diff = 0.0;
  for (std::int64_t j = 0; j < o2.extent[1]; ++j)
    for (std::int64_t i = 0; i < o2.extent[0]; ++i) {
      const std::size_t q = std::size_t(j * o2.extent[0] + i);
      const std::size_t r = std::size_t((o2.offset[1] + j) * g.n[0] + o2.offset[0] + i);
      diff = std::max({diff, std::abs(o2.u[q] - s2.u[r]), std::abs(o2.v[q] - s2.v[r])});
    }
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LE(diff, 1e-11);
}

template <class F>
void expect_refusal(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected a refusal naming '" << needle << "'";
  } catch (const mantissa::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(needle), std::string::npos) << m;
    EXPECT_NE(m.find("cfd-restart-refusals"), std::string::npos) << "the message names the file: " << m;
  }
}

TEST(FlowRestart, RefusesAnotherViscosityStorageOrGrid) {
  Scratch dir("refusals");
  const Grid g = unit_square(24, 20, false);
  Decomposition decomp(MPI_COMM_WORLD, g);
  const Config c = cavity_config(100.0);
  FlowSolver<double> s(decomp, c);
  s.initialize();
  s.run(2);
  io::CheckpointWriter writer(decomp, dir.path, 1);
  const std::string file = write_checkpoint(writer, s);

  Config other = c;
  other.viscosity = 1.0 / 400.0;
  other.dt = s.dt();  // the same dt, so that the viscosity is what differs
  FlowSolver<double> wrong_nu(decomp, other);
  expect_refusal([&] { read_checkpoint(file, wrong_nu); }, "cfd.viscosity");

  Config slower = c;
  slower.dt = 0.5 * s.dt();
  FlowSolver<double> wrong_dt(decomp, slower);
  expect_refusal([&] { read_checkpoint(file, wrong_dt); }, "cfd.dt");

  FlowSolver<float> wrong_storage(decomp, c);
  expect_refusal([&] { read_checkpoint(file, wrong_storage); }, "storage");

  Decomposition bigger(MPI_COMM_WORLD, unit_square(24, 24, false));
  FlowSolver<double> wrong_grid(bigger, c);
  expect_refusal([&] { read_checkpoint(file, wrong_grid); }, "mesh.n");

  // a 2D file read by a 3D solver of the same x and y cells
  Decomposition deeper(MPI_COMM_WORLD, box3(24, 20, 4, 1.0, 1.0, 0.2, false));
  FlowSolver<double> wrong_dim(deeper, cavity3_config(100.0));
  expect_refusal([&] { read_checkpoint(file, wrong_dim); }, "mesh.");
}

}  // namespace
