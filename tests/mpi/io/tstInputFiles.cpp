// Input files read through mantissa::io: the seismic velocity model (read on rank 0 and
// broadcast, so at 1-4 ranks every rank must refuse the same file with the same message) and
// the surrogate's offline dataset. Every damaged or nonsensical input of issue 13 item 7 is
// refused naming the file, the dataset or attribute and the value.
#include "tstIoCommon.hpp"

#include <mantissa/io/H5File.hpp>
#include <seismic/VelocityModel.hpp>
#include <surrogates/Dataset.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace {

namespace fs = std::filesystem;
namespace io = mantissa::io;
using iotest::ScratchDir;
using iotest::world_rank;
using mantissa::Grid;
using mantissa::seismic::ModelKind;
using mantissa::seismic::VelocityModel;
using mantissa::seismic::VelocityModelConfig;

Grid mesh() {
  Grid g;
  g.dim = 2;
  g.n = {11, 21, 1};
  g.spacing = {10.0, 5.0, 1.0};
  g.origin = {0.0, 0.0, 0.0};
  return g;
}

// A (y, x) velocity dataset written by "another tool" (plain HDF5, no mantissa attributes),
// with optional origin / spacing attributes.
void write_foreign(const std::string& file, const std::vector<hsize_t>& dims, const std::vector<double>& v,
                   const std::vector<double>& origin, const std::vector<double>& spacing) {
  if (world_rank() == 0) {
    hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    hid_t d = H5Dcreate2(f, "velocity", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    for (auto [name, vals] : {std::pair<const char*, const std::vector<double>*>{"origin", &origin},
                              std::pair<const char*, const std::vector<double>*>{"spacing", &spacing}}) {
      if (vals->empty()) continue;
      const hsize_t n = vals->size();
      hid_t as = H5Screate_simple(1, &n, nullptr);
      hid_t a = H5Acreate2(d, name, H5T_NATIVE_DOUBLE, as, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, H5T_NATIVE_DOUBLE, vals->data());
      H5Aclose(a);
      H5Sclose(as);
    }
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

VelocityModelConfig file_model(const std::string& file) {
  VelocityModelConfig c;
  c.kind = ModelKind::file;
  c.file = file;
  return c;
}

// Every rank must refuse, with all the needles in the message.
void expect_refused(const std::string& file, const std::vector<std::string>& needles) {
  try {
    VelocityModel m(file_model(file), mesh(), MPI_COMM_WORLD);
    ADD_FAILURE() << "'" << file << "' was accepted on rank " << world_rank();
  } catch (const mantissa::Error& e) {
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
  }
}

TEST(VelocityFile, GoodFilesReadAtEveryRank) {
  ScratchDir dir("velocity-good");
  const Grid g = mesh();
  // Our own writer (checksummed), on the mesh's grid: values exactly as written.
  std::vector<double> v(std::size_t(g.n[0] * g.n[1]));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = 1500.0 + double(k);
  const std::string own = dir.file("own.h5");
  if (world_rank() == 0) mantissa::seismic::write_velocity_file(own, "velocity", g, v);
  MPI_Barrier(MPI_COMM_WORLD);
  VelocityModel m(file_model(own), g, MPI_COMM_WORLD);
  EXPECT_EQ(m.at(3, 7, 0), 1500.0 + 7 * 11 + 3);
  // A float32 file from another tool, on a coarser grid covering the mesh.
  const std::string foreign = dir.file("foreign.h5");
  write_foreign(foreign, {11, 6}, std::vector<double>(66, 2000.0), {0.0, 0.0}, {20.0, 10.0});
  VelocityModel f(file_model(foreign), g, MPI_COMM_WORLD);
  EXPECT_EQ(f.at(10, 20, 0), 2000.0);
}

TEST(VelocityFile, BadValuesAndGeometryAreRefusedNamingFileAndValue) {
  ScratchDir dir("velocity-bad");
  const std::vector<hsize_t> dims{21, 11};
  std::vector<double> good(231, 1500.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto with = [&](std::size_t k, double x) {
    auto v = good;
    v[k] = x;
    return v;
  };
  struct Case {
    std::string name;
    std::vector<double> values, origin, spacing;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {"nan.h5",
       with(3 * 11 + 4, nan),
       {},
       {},
       {"'velocity'", "holds nan m/s", "x index 4, y index 3", "a number"}},
      {"negative.h5", with(5, -1500.0), {}, {}, {"holds -1500 m/s", "x index 5", "positive"}},
      {"zero.h5", with(0, 0.0), {}, {}, {"holds 0 m/s", "positive"}},
      {"tiny.h5",
       with(7, 1e-20),
       {},
       {},
       {"m/s at (x index 7, y index 0)", "at least 1e-09 m/s (the deck's lower bound)"}},
      {"inf.h5", with(9, std::numeric_limits<double>::infinity()), {}, {}, {"holds inf m/s", "finite"}},
      {"spacing0.h5",
       good,
       {0.0, 0.0},
       {10.0, 0.0},
       {"attribute 'spacing'", "is 0 along y", "finite positive"}},
      {"spacingnan.h5", good, {}, {nan, 5.0}, {"attribute 'spacing'", "is nan along x"}},
      {"originnan.h5", good, {nan, 0.0}, {}, {"attribute 'origin'", "is nan along x", "finite number"}},
      {"short.h5", good, {0.0}, {}, {"attribute 'origin'", "has 1 values; it needs 2"}},
      {"small.h5",
       good,
       {0.0, 0.0},
       {5.0, 2.5},
       {"covers 0..50 m along x", "mesh spans 0..100 m", "covers the mesh"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string f = dir.file(c.name);
    write_foreign(f, dims, c.values, c.origin, c.spacing);
    auto needles = c.needles;
    needles.push_back("seismic.velocity.file '" + f + "'");
    expect_refused(f, needles);
  }
  // Shape: a 3D dataset for a 2D mesh.
  const std::string three = dir.file("three.h5");
  write_foreign(three, {2, 21, 11}, std::vector<double>(462, 1500.0), {}, {});
  expect_refused(three, {three, "has 3 dimensions but the grid has 2 (mesh.dim)", "(y, x)"});
  // Not HDF5, missing, damaged.
  const std::string text = dir.file("text.h5");
  if (world_rank() == 0) std::ofstream(text) << "velocity 1500\n";
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(text, {text, "not an HDF5 file"});
  expect_refused(dir.file("absent.h5"), {"absent.h5", "does not exist"});
  const std::string own = dir.file("own.h5");
  if (world_rank() == 0) {
    mantissa::seismic::write_velocity_file(own, "velocity", mesh(), good);
    // Flip a byte inside the data: the checksum written by write_velocity_file catches it.
    hid_t h = H5Fopen(own.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(h, "velocity", H5P_DEFAULT);
    const haddr_t off = H5Dget_offset(d);
    H5Dclose(d);
    H5Fclose(h);
    std::fstream fs(own, std::ios::in | std::ios::out | std::ios::binary);
    fs.seekp(std::streamoff(off + 8 * 100));
    const char one = 1;
    fs.write(&one, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(own, {own, "fails its checksum", "damaged"});
  VelocityModelConfig c = file_model(own);
  c.dataset = "vp";
  try {
    VelocityModel m(c, mesh(), MPI_COMM_WORLD);
    ADD_FAILURE() << "missing dataset accepted";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no dataset 'vp'; set seismic.velocity.dataset"),
              std::string::npos)
        << e.what();
  }
}

TEST(SurrogateDatasetFile, RoundTripIsVerifiedAndDamageRefused) {
  ScratchDir dir("surrogate-dataset");
  if (world_rank() == 0) {
    mantissa::surrogates::Dataset ds(2, 1, {4, 2, 1});
    for (int s = 0; s < 3; ++s) {
      std::vector<double> in(16), out(8);
      for (std::size_t k = 0; k < in.size(); ++k) in[k] = iotest::known_value<double>(k + 16 * s, 5);
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = iotest::known_value<double>(k + 8 * s, 6);
      ds.add(in, out, {4 * s, 0, 0});
    }
    const std::string file = dir.file("data.h5");
    ds.write_hdf5(file);
    const auto back = mantissa::surrogates::Dataset::read_hdf5(file);
    ASSERT_EQ(back.size(), 3);
    for (int s = 0; s < 3; ++s) {
      EXPECT_EQ(std::memcmp(back.input(s).data(), ds.input(s).data(), 16 * 8), 0);
      EXPECT_EQ(std::memcmp(back.target(s).data(), ds.target(s).data(), 8 * 8), 0);
      EXPECT_EQ(back.offset(s), ds.offset(s));
    }
    {
      io::H5File f = io::H5File::open(file);
      f.require_format("mantissa-surrogate-dataset", 1);
    }
    hid_t h = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(h, "targets", H5P_DEFAULT);
    const haddr_t off = H5Dget_offset(d);
    H5Dclose(d);
    H5Fclose(h);
    std::fstream fs(file, std::ios::in | std::ios::out | std::ios::binary);
    fs.seekp(std::streamoff(off + 8 * 5 + 7));
    const char flip = char(0x40);
    fs.write(&flip, 1);
    fs.close();
    try {
      (void)mantissa::surrogates::Dataset::read_hdf5(file);
      ADD_FAILURE() << "damaged dataset accepted";
    } catch (const io::FileError& e) {
      EXPECT_EQ(e.problem(), io::FileProblem::damaged) << e.what();
      EXPECT_NE(std::string(e.what()).find("'/targets' in '" + file + "' fails its checksum"),
                std::string::npos)
          << e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
