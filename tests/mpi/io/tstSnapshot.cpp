// Snapshots: the XDMF sidecars and the time series are checked by parsing them in Python
// (xml.etree + h5py: every referenced dataset exists with the stated dimensions, values as
// written); time series files and their datasets read back bitwise.
#include "tstIoCommon.hpp"

#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/io/Checkpoint.hpp>
#include <mantissa/io/Snapshot.hpp>
#include <mantissa/io/TimeSeries.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

using iotest::ScratchDir;
using iotest::world_rank;
using mantissa::Decomposition;
using mantissa::Field;
using mantissa::Grid;
namespace io = mantissa::io;

// Values exact in fp32 for the grids used: x + 100 y + 10000 z + 1e6 * field.
template <class T>
void fill_smooth(Field<T>& f, int field) {
  auto h = Kokkos::create_mirror_view(f.view());
  const auto g = f.ghosts();
  const auto e = f.extent();
  const auto o = f.offset();
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i)
        h(k + g[2], j + g[1], i + g[0]) =
            T(double(o[0] + i) + 100.0 * double(o[1] + j) + 10000.0 * double(o[2] + k) + 1000000.0 * field);
  Kokkos::deep_copy(f.view(), h);
}

// Runs the Python checker on rank 0; the result is shared with every rank.
int run_checker(const std::string& args) {
  int rc = 0;
  if (world_rank() == 0) {
    const std::string cmd =
        std::string(MANTISSA_TEST_PYTHON) + " " + MANTISSA_IO_TEST_SOURCE_DIR + "/check_xdmf.py " + args;
    rc = std::system(cmd.c_str());
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

bool python_has_h5py() {
  int rc = 0;
  if (world_rank() == 0)
    rc = std::system((std::string(MANTISSA_TEST_PYTHON) + " -c 'import h5py, numpy' 2>/dev/null").c_str());
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc == 0;
}

class SnapshotXdmf : public ::testing::TestWithParam<int> {};

TEST_P(SnapshotXdmf, SidecarsDescribeTheDatasets) {
  if (!python_has_h5py()) GTEST_SKIP() << MANTISSA_TEST_PYTHON << " lacks h5py/numpy";
  Grid g;
  g.dim = GetParam();
  g.n = {12, 9, g.dim == 3 ? 7 : 1};
  g.spacing = {0.5, 0.25, 2.0};
  g.origin = {1.0, -2.0, 3.0};
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("snap" + std::to_string(g.dim));
  Field<double> p("mantissa::test::p", decomp, 2);
  Field<float> v("mantissa::test::v", decomp, 1);
  fill_smooth(p, 0);
  fill_smooth(v, 1);
  io::SnapshotWriter writer(decomp, dir.path() + "/out", "wave");
  std::string last;
  for (int s = 0; s < 3; ++s)
    last = writer.write(10 * s, 0.1 * s, {io::snapshot_ref("p", p), io::snapshot_ref("v", v)});
  EXPECT_EQ(last, dir.path() + "/out/wave_000020.xmf");
  EXPECT_EQ(writer.entries().size(), 3u);
  EXPECT_EQ(run_checker("--values " + dir.path() + "/out/wave_000000.xmf " + dir.path() +
                        "/out/wave_000020.xmf " + writer.series_path()),
            0);
  // No temporaries left behind.
  for (const auto& n : iotest::list_dir(dir.path() + "/out"))
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  // The checker does notice a wrong sidecar: break a dimension.
  if (world_rank() == 0) {
    const std::string f = dir.path() + "/out/wave_000010.xmf";
    std::ifstream in(f);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("Dimensions=\"" + std::to_string(g.n[g.dim - 1]));
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos)
      text.replace(at, 12 + std::to_string(g.n[g.dim - 1]).size(), "Dimensions=\"99");
    std::ofstream(f) << text;
  }
  EXPECT_NE(run_checker(dir.path() + "/out/wave_000010.xmf > /dev/null"), 0);
}

INSTANTIATE_TEST_SUITE_P(Io, SnapshotXdmf, ::testing::Values(2, 3));

TEST(Snapshot, RefusesRawLowPrecisionAndBadNames) {
  Grid g;
  g.dim = 2;
  g.n = {8, 8, 1};
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("snapbad");
  Field<std::uint16_t> bits("mantissa::test::bits", decomp, 1);
  io::SnapshotWriter writer(decomp, dir.path());
  try {
    writer.write(0, 0.0, {io::field_ref("bits", bits)});
    ADD_FAILURE() << "no error";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pass it through snapshot_ref()"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::SnapshotWriter(decomp, dir.path(), "a/b"), mantissa::Error);
  // bf16 through snapshot_ref: stored as fp32 holding exactly the bf16 values.
  Field<mantissa::bf16> b("mantissa::test::b", decomp, 1);
  iotest::fill_known(b, g, 3);
  writer.write(1, 0.0, {io::snapshot_ref("b", b)});
  if (world_rank() == 0) {
    hid_t f = H5Fopen((dir.path() + "/snapshot_000001.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/fields/b", H5P_DEFAULT);
    std::vector<float> all(64);
    H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data());
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const float want = float(iotest::known_value<mantissa::bf16>(i, 3));
      if (!(all[i] == want || (want != want && all[i] != all[i]))) ++bad;  // NaN stays NaN
    }
    EXPECT_EQ(bad, 0);
    H5Dclose(d);
    H5Fclose(f);
  }
}

TEST(TimeSeries, FileAndCheckpointRoundTrip) {
  const int rank = world_rank(), size = iotest::world_size();
  ScratchDir dir("series");
  const std::int64_t samples = 11, receivers = 2 * size + 1;
  auto value = [](std::int64_t r, std::int64_t t) {
    return iotest::known_value<double>(std::uint64_t(r * 1000 + t), 4);
  };
  // Receivers split over ranks: rank r owns 2 (rank 0: 3), as a seismic run would.
  const std::int64_t first = rank == 0 ? 0 : 1 + 2 * rank, mine = rank == 0 ? 3 : 2;
  std::vector<double> vals, coords;
  for (std::int64_t r = first; r < first + mine; ++r) {
    for (std::int64_t t = 0; t < samples; ++t) vals.push_back(value(r, t));
    coords.insert(coords.end(), {double(r), 2.0 * r, -1.0});
  }
  auto ts =
      io::TimeSeries::from_rows("seismograms/pressure", vals, coords, first, receivers, samples, 1e-3, 0.5);
  ts.quantity = "pressure";
  ts.unit = "Pa";
  const std::string file = dir.file("seismograms.h5");
  io::write_time_series_file(file, MPI_COMM_WORLD, {ts}, io::Attributes().set("run", "test"));
  // Read back through h5py-independent C: serial HDF5 on rank 0.
  if (rank == 0) {
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    hid_t d = H5Dopen2(f, "/seismograms/pressure", H5P_DEFAULT);
    std::vector<double> all(std::size_t(receivers * samples));
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data());
    std::int64_t bad = 0;
    for (std::int64_t r = 0; r < receivers; ++r)
      for (std::int64_t t = 0; t < samples; ++t) {
        const double want = value(r, t);
        if (std::memcmp(&all[std::size_t(r * samples + t)], &want, 8) != 0) ++bad;
      }
    EXPECT_EQ(bad, 0);
    double dt = 0;
    hid_t a = H5Aopen(d, "sampling_interval", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_DOUBLE, &dt);
    H5Aclose(a);
    EXPECT_EQ(dt, 1e-3);
    H5Dclose(d);
    H5Fclose(f);
  }
  // The same series as extra datasets of a checkpoint, read back with checksum checks.
  Grid g;
  g.dim = 2;
  g.n = {9, 9, 1};
  Decomposition decomp(MPI_COMM_WORLD, g);
  Field<double> p("mantissa::test::p", decomp, 1);
  io::CheckpointWriter writer(decomp, dir.path(), 1);
  const auto path = writer.write(3, 0.0, {}, {io::field_ref("p", p)}, ts.datasets());
  io::CheckpointReader reader(path, MPI_COMM_WORLD);
  std::vector<std::int64_t> dims;
  const auto back = reader.read_dataset<double>("seismograms/pressure", &dims);
  EXPECT_EQ(dims, (std::vector<std::int64_t>{receivers, samples}));
  EXPECT_EQ(back[std::size_t(samples + 2)], value(1, 2));
  const auto xyz = reader.read_dataset<double>("seismograms/pressure_receivers", &dims);
  EXPECT_EQ(dims, (std::vector<std::int64_t>{receivers, 3}));
  EXPECT_EQ(xyz[std::size_t(3 * (receivers - 1) + 1)], 2.0 * double(receivers - 1));
  EXPECT_EQ(reader.dataset_attributes("seismograms/pressure").get_string("unit"), "Pa");
}

}  // namespace
