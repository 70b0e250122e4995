// The offline dataset: samples written with Dataset::write_hdf5 (the format read_hdf5 reads) come
// back bitwise, with their channels, extent and tile offsets, in 2D and 3D; batches built from
// the file equal batches built from the samples in memory; and a missing file, a file that is
// not HDF5, a missing dataset and misshapen datasets are refused with a message that names the
// file and the dataset.
#include <surrogates/Dataset.hpp>

#include <hdf5.h>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace ms = mantissa::surrogates;

namespace {

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "mantissa_tstDataset_" + std::to_string(::getpid()) + "_" + name;
}

// Random fp64 samples; the file stores fp64, so a bitwise round trip is expected.
ms::Dataset make_dataset(int cin, int cout, std::array<std::int64_t, 3> extent, int samples, unsigned seed) {
  ms::Dataset ds(cin, cout, extent);
  std::mt19937 gen(seed);
  std::normal_distribution<double> nd(0.5, 2.0);
  std::uniform_int_distribution<std::int64_t> off(0, 40);
  for (int s = 0; s < samples; ++s) {
    std::vector<double> in(cin * ds.cells()), out(cout * ds.cells());
    for (auto& v : in) v = nd(gen);
    for (auto& v : out) v = nd(gen);
    // Offsets in whole patches of 2 so that make_batch places the tiles on the patch grid.
    ds.add(in, out, {2 * off(gen), 2 * off(gen), extent[2] > 1 ? 2 * off(gen) : 0});
  }
  return ds;
}

void expect_same(const ms::Dataset& a, const ms::Dataset& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.in_channels(), b.in_channels());
  EXPECT_EQ(a.out_channels(), b.out_channels());
  EXPECT_EQ(a.extent(), b.extent());
  for (std::int64_t s = 0; s < a.size(); ++s) {
    EXPECT_EQ(a.input(s), b.input(s)) << "sample " << s;
    EXPECT_EQ(a.target(s), b.target(s)) << "sample " << s;
    EXPECT_EQ(a.offset(s), b.offset(s)) << "sample " << s;
  }
}

// Writes a file with datasets of the given shapes (fp64 zeros) through the HDF5 C API, to make
// files that Dataset::write_hdf5 never would.
void write_raw(const std::string& file,
               const std::vector<std::pair<std::string, std::vector<hsize_t>>>& sets) {
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  for (const auto& [name, dims] : sets) {
    std::size_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<double> zeros(n, 0.0);
    hid_t s = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    hid_t d = H5Dcreate2(f, name.c_str(), H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
    H5Dclose(d);
    H5Sclose(s);
  }
  H5Fclose(f);
}

// read_hdf5 must throw mantissa::Error whose message contains every one of `words`.
void expect_refused(const std::string& file, const std::vector<std::string>& words) {
  try {
    (void)ms::Dataset::read_hdf5(file);
    ADD_FAILURE() << "'" << file << "' was accepted";
  } catch (const mantissa::Error& e) {
    const std::string msg = e.what();
    for (const auto& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
  }
}

}  // namespace

TEST(SurrogateDataset, RoundTrip3DKeepsValuesExtentAndOffsetsBitwise) {
  const auto ds = make_dataset(3, 2, {6, 4, 2}, 5, 1);
  const std::string file = temp_path("3d.h5");
  ds.write_hdf5(file);
  const auto back = ms::Dataset::read_hdf5(file);
  expect_same(ds, back);
  // The file is what the header documents: inputs [S, C, nz, ny, nx], targets, offsets [S, 3].
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  auto dims_of = [&](const char* name) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    std::vector<hsize_t> dims(H5Sget_simple_extent_ndims(s));
    H5Sget_simple_extent_dims(s, dims.data(), nullptr);
    H5Sclose(s);
    H5Dclose(d);
    return dims;
  };
  EXPECT_EQ(dims_of("inputs"), (std::vector<hsize_t>{5, 3, 2, 4, 6}));
  EXPECT_EQ(dims_of("targets"), (std::vector<hsize_t>{5, 2, 2, 4, 6}));
  EXPECT_EQ(dims_of("offsets"), (std::vector<hsize_t>{5, 3}));
  // Entry (s=4, c=1, z=1, y=2, x=5) lies where row-major (z, y, x) puts it.
  std::vector<double> all(5 * 3 * 2 * 4 * 6);
  hid_t d = H5Dopen2(f, "inputs", H5P_DEFAULT);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data());
  H5Dclose(d);
  H5Fclose(f);
  EXPECT_EQ(all[(((4 * 3 + 1) * 2 + 1) * 4 + 2) * 6 + 5], ds.input(4)[((1 * 2 + 1) * 4 + 2) * 6 + 5]);
  std::remove(file.c_str());
  // A 3D batch from the file: tiles at the stored offsets, in patches of 2^3 cells.
  ms::ModelConfig c;
  c.dim = 3;
  c.in_channels = 3;
  c.out_channels = 2;
  c.patch = 2;
  c.window = 2;
  ms::TokenLayout la, lb;
  ms::Matrix<double> ia, ta, ib, tb;
  ds.make_batch({4, 1}, ds.normalization(), c, la, ia, ta);
  back.make_batch({4, 1}, back.normalization(), c, lb, ib, tb);
  ASSERT_EQ(lb.offsets().size(), 2u);
  for (int a = 0; a < 3; ++a) EXPECT_EQ(lb.offsets()[0][a], ds.offset(4)[a] / 2) << "axis " << a;
  EXPECT_EQ(la.offsets(), lb.offsets());
  EXPECT_EQ(lb.num_tokens(), 2 * 3 * 2 * 1);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ia);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ib);
  ASSERT_EQ(ha.size(), hb.size());
  for (std::size_t k = 0; k < ha.size(); ++k) ASSERT_EQ(ha.data()[k], hb.data()[k]) << "token value " << k;
}

TEST(SurrogateDataset, RoundTrip2DAndBatchesEqualTheInMemoryOnes) {
  const auto ds = make_dataset(2, 1, {8, 6, 1}, 4, 2);
  const std::string file = temp_path("2d.h5");
  ds.write_hdf5(file);
  const auto back = ms::Dataset::read_hdf5(file);
  expect_same(ds, back);
  std::remove(file.c_str());
  ms::ModelConfig c;
  c.dim = 2;
  c.in_channels = 2;
  c.out_channels = 1;
  c.patch = 2;
  c.window = 2;
  const std::vector<std::int64_t> idx{3, 0, 2};
  const auto norm = ds.normalization(), norm_back = back.normalization();
  EXPECT_EQ(norm.in_mean, norm_back.in_mean);
  EXPECT_EQ(norm.out_std, norm_back.out_std);
  ms::TokenLayout la, lb;
  ms::Matrix<double> ia, ta, ib, tb;
  ds.make_batch(idx, norm, c, la, ia, ta);
  back.make_batch(idx, norm_back, c, lb, ib, tb);
  ASSERT_EQ(la.offsets(), lb.offsets()) << "tile offsets lost in the file";
  for (std::size_t b = 0; b < idx.size(); ++b)
    EXPECT_EQ(lb.offsets()[b][0], ds.offset(idx[b])[0] / c.patch) << "offsets in patches";
  auto h = [](const ms::Matrix<double>& m) {
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m);
    return std::vector<double>(v.data(), v.data() + v.size());
  };
  EXPECT_EQ(h(ia), h(ib));
  EXPECT_EQ(h(ta), h(tb));
  // make_targets (a pushforward chain's next sample) gives make_batch's targets, in fp64 and fp32.
  ms::Matrix<double> t_only;
  ds.make_targets(idx, norm, c, t_only);
  EXPECT_EQ(h(t_only), h(ta));
  ms::TokenLayout l32;
  ms::Matrix<float> i32, t32, t32_only;
  ds.make_batch(idx, norm, c, l32, i32, t32);
  ds.make_targets(idx, norm, c, t32_only);
  auto h32 = [](const ms::Matrix<float>& m) {
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m);
    return std::vector<float>(v.data(), v.data() + v.size());
  };
  ASSERT_EQ(t32_only.extent(0), t32.extent(0));
  ASSERT_EQ(t32_only.extent(1), t32.extent(1));
  EXPECT_EQ(h32(t32_only), h32(t32));
}

TEST(SurrogateDataset, FileWithoutOffsetsReadsTilesAtTheOrigin) {
  // Files written before offsets were stored: inputs and targets only.
  const std::string file = temp_path("no_offsets.h5");
  write_raw(file, {{"inputs", {2, 1, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 4}}});
  const auto ds = ms::Dataset::read_hdf5(file);
  EXPECT_EQ(ds.size(), 2);
  EXPECT_EQ(ds.extent(), (std::array<std::int64_t, 3>{4, 2, 1}));
  EXPECT_EQ(ds.offset(1), (std::array<std::int64_t, 3>{0, 0, 0}));
  std::remove(file.c_str());
}

TEST(SurrogateDataset, RefusesMissingOrForeignFiles) {
  const std::string missing = temp_path("does_not_exist.h5");
  expect_refused(missing, {missing, "cannot open", "surrogate.dataset"});
  const std::string text = temp_path("not_hdf5.h5");
  std::ofstream(text) << "this is not an HDF5 file\n";
  expect_refused(text, {text, "not an HDF5 file"});
  std::remove(text.c_str());
}

TEST(SurrogateDataset, RefusesMissingAndMisshapenDatasetsNamingFileAndDataset) {
  const std::string file = temp_path("bad.h5");
  write_raw(file, {{"inputs", {2, 1, 1, 2, 4}}});
  expect_refused(file, {file, "'targets'", "no dataset", "[samples, channels, nz, ny, nx]"});
  write_raw(file, {{"inputs", {2, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 4}}});
  expect_refused(file, {file, "'inputs'", "[2, 1, 2, 4]", "rank 5"});
  write_raw(file, {{"inputs", {3, 1, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 4}}});
  expect_refused(file, {file, "'inputs' [3, 1, 1, 2, 4]", "'targets' [2, 1, 1, 2, 4]", "samples or extent"});
  write_raw(file, {{"inputs", {2, 1, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 5}}});
  expect_refused(file, {file, "[2, 1, 1, 2, 5]", "samples or extent"});
  write_raw(file, {{"inputs", {2, 0, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 4}}});
  expect_refused(file, {file, "'inputs' [2, 0, 1, 2, 4]", "at least one channel"});
  write_raw(file, {{"inputs", {2, 1, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 4}}, {"offsets", {3, 3}}});
  expect_refused(file, {file, "'offsets'", "[3, 3]", "expected [2, 3]"});
  write_raw(file, {{"inputs", {2, 1, 1, 2, 4}}, {"targets", {2, 1, 1, 2, 4}}, {"offsets", {2, 2}}});
  expect_refused(file, {file, "'offsets'", "[2, 2]"});
  std::remove(file.c_str());
}

TEST(SurrogateDataset, RefusesSamplesOfTheWrongSizeAndUnwritablePaths) {
  ms::Dataset ds(2, 1, {4, 2, 1});
  try {
    ds.add(std::vector<double>(15), std::vector<double>(8));
    FAIL() << "a sample of 15 input values was accepted (expected 2 x 8)";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("expects 16 and 8"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ds.size(), 0);
  const std::string bad = temp_path("no_such_dir") + "/x.h5";
  try {
    make_dataset(1, 1, {2, 2, 1}, 1, 3).write_hdf5(bad);
    FAIL() << "wrote into a missing directory";
  } catch (const mantissa::Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}
