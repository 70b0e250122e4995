// Checkpoints: bitwise round trips (fields of several types, generic datasets, attributes) at
// the rank count of the run, checksums equal to a serial computation, keep-last-N,
// temp-then-rename, and every refusal with its message.
#include "tstIoCommon.hpp"

#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/io/Checkpoint.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using iotest::count_mismatches;
using iotest::fill_known;
using iotest::ScratchDir;
using iotest::world_rank;
using mantissa::Decomposition;
using mantissa::Error;
using mantissa::Field;
using mantissa::Grid;
namespace io = mantissa::io;

Grid grid3() {
  Grid g;
  g.dim = 3;
  g.n = {17, 13, 11};  // odd sizes: uneven splits at 2, 3 and 4 ranks
  g.spacing = {10.0, 12.5, 15.0};
  g.origin = {-100.0, 0.0, 50.0};
  return g;
}
Grid grid2() {
  Grid g;
  g.dim = 2;
  g.n = {23, 19, 1};
  g.spacing = {1.0, 2.0, 1.0};
  return g;
}

// Runs `fn` and checks it throws mantissa::Error on this rank with `needle` in the message.
template <class F>
void expect_error(F&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no mantissa::Error thrown; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

// The generic datasets of the round-trip test: whole arrays from rank 0 and a distributed one.
std::vector<double> weights() {
  std::vector<double> w(6 * 5);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = iotest::known_value<double>(i, 7);
  return w;
}

void write_sample(const Decomposition& decomp, const std::string& dir, std::int64_t step, int keep = 3,
                  io::CheckpointOptions opt = {}) {
  const Grid& g = decomp.grid();
  Field<double> p("mantissa::test::p", decomp, 2);
  Field<float> v("mantissa::test::v", decomp, 1);
  Field<mantissa::bf16> b("mantissa::test::b", decomp, 1);
  fill_known(p, g, 0);
  fill_known(v, g, 1);
  fill_known(b, g, 2);
  io::CheckpointWriter writer(decomp, dir, keep, opt);
  writer.write(step, 0.5 * double(step), io::Attributes().set("physics", "seismic"),
               {io::field_ref("p", p), io::field_ref("v", v), io::field_ref("b", b)});
}

class CheckpointRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(CheckpointRoundTrip, FieldsDatasetsAttributesBitwise) {
  const Grid g = GetParam() == 3 ? grid3() : grid2();
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("roundtrip" + std::to_string(GetParam()));
  Field<double> p("mantissa::test::p", decomp, 2);
  Field<float> v("mantissa::test::v", decomp, 3);
  fill_known(p, g, 0);
  fill_known(v, g, 1);

  // Rows of a receivers x samples array spread over ranks: rank r holds r+1 rows.
  const int rank = world_rank(), size = iotest::world_size();
  const std::int64_t cols = 7, total_rows = std::int64_t(size) * (size + 1) / 2;
  const std::int64_t my_first = std::int64_t(rank) * (rank + 1) / 2, my_rows = rank + 1;
  std::vector<float> traces(std::size_t(my_rows * cols));
  for (std::int64_t r = 0; r < my_rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      traces[std::size_t(r * cols + c)] =
          iotest::known_value<float>(std::uint64_t((my_first + r) * cols + c), 3);
  std::vector<std::uint8_t> rng{1, 2, 3, 250, 0, 7};
  // Only rank 0's copy of a whole() dataset counts: the others pass nothing.
  const auto w = rank == 0 ? weights() : std::vector<double>{};

  io::CheckpointOptions opt;
  opt.deck_text = "physics: seismic\nmesh:\n  dim: 3\n";
  opt.precision.set("state", "fp64").set("compute", "fp64");
  io::CheckpointWriter writer(decomp, dir.path(), 2, opt);
  io::Attributes attrs;
  attrs.set("physics", "seismic")
      .set("cfl", 0.45)
      .set("sources", std::vector<std::int64_t>{3, 4})
      .set("rel", std::vector<double>{0.1, -2.5});
  const std::string path = writer.write(
      42, 1.25, attrs, {io::field_ref("p", p), io::field_ref("v", v)},
      {io::Dataset::whole("surrogate/weights/layer0", w, {6, 5}, io::Attributes().set("activation", "gelu")),
       io::Dataset::rows("seismograms/p", traces, {total_rows, cols}, my_first),
       io::Dataset::whole("rng/state", rank == 0 ? rng : std::vector<std::uint8_t>{}, {6})});
  EXPECT_EQ(path, writer.path_for(42));
  EXPECT_TRUE(fs::exists(path));

  Field<double> p2("mantissa::test::p2", decomp, 2);
  Field<float> v2("mantissa::test::v2", decomp, 3);
  fill_known(p2, g, 99);  // owned values wrong on purpose; ghosts sentinel
  fill_known(v2, g, 99);
  io::CheckpointReader reader(path, MPI_COMM_WORLD);
  reader.validate_against(g, {{"p", "v"}, "seismic"});
  reader.read_field("p", p2);
  reader.read_field("v", v2);
  EXPECT_EQ(iotest::sum_all(count_mismatches(p2, g, 0)), 0);
  EXPECT_EQ(iotest::sum_all(count_mismatches(v2, g, 1)), 0);

  std::vector<std::int64_t> dims;
  const auto w2 = reader.read_dataset<double>("surrogate/weights/layer0", &dims);
  EXPECT_EQ(dims, (std::vector<std::int64_t>{6, 5}));
  const auto wref = weights();
  ASSERT_EQ(w2.size(), wref.size());
  EXPECT_EQ(std::memcmp(w2.data(), wref.data(), wref.size() * sizeof(double)), 0);
  EXPECT_EQ(reader.dataset_attributes("surrogate/weights/layer0").get_string("activation"), "gelu");
  const auto t2 = reader.read_dataset<float>("seismograms/p", &dims);
  EXPECT_EQ(dims, (std::vector<std::int64_t>{total_rows, cols}));
  for (std::int64_t i = 0; i < total_rows * cols; ++i) {
    const float want = iotest::known_value<float>(std::uint64_t(i), 3);
    EXPECT_EQ(std::memcmp(&t2[std::size_t(i)], &want, 4), 0) << "element " << i;
  }
  EXPECT_EQ(reader.read_dataset<std::uint8_t>("rng/state"), rng);

  EXPECT_EQ(reader.step(), 42);
  EXPECT_EQ(reader.time(), 1.25);
  EXPECT_EQ(reader.deck_text(), opt.deck_text);
  const auto& a = reader.attributes();
  EXPECT_EQ(a.get_string("format"), "mantissa-checkpoint");
  EXPECT_EQ(a.get_int("format_version"), 1);
  EXPECT_EQ(a.get_string("physics"), "seismic");
  EXPECT_EQ(a.get_real("cfl"), 0.45);
  EXPECT_EQ(a.get_ints("sources"), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(a.get_reals("rel"), (std::vector<double>{0.1, -2.5}));
  EXPECT_EQ(a.get_string("precision.state"), "fp64");
  EXPECT_EQ(a.get_int("ranks"), size);
  EXPECT_FALSE(a.get_string("git_hash").empty());
  EXPECT_FALSE(a.get_string("backend").empty());
  const auto pg = a.get_ints("process_grid");
  EXPECT_EQ(pg[0] * pg[1] * pg[2], size);
  const Grid back = reader.grid();
  EXPECT_EQ(back.n, g.n);
  EXPECT_EQ(back.spacing, g.spacing);
  EXPECT_EQ(back.origin, g.origin);
  EXPECT_EQ(reader.field_names(), (std::vector<std::string>{"p", "v"}));
}

INSTANTIATE_TEST_SUITE_P(Io, CheckpointRoundTrip, ::testing::Values(2, 3));

// bf16 and fp16 are stored as uint16 bits, fp8 as uint8 bits, named by mantissa_type, and
// read back bitwise; a type mix-up between two 16-bit formats is refused.
TEST(Checkpoint, LowPrecisionFieldsBitwise) {
  const Grid g = grid3();
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("lowprec");
  Field<mantissa::bf16> b("mantissa::test::b", decomp, 1);
  Field<mantissa::fp16> h("mantissa::test::h", decomp, 2);
  Field<mantissa::fp8_e4m3> e("mantissa::test::e", decomp, 1);
  fill_known(b, g, 0);
  fill_known(h, g, 1);
  fill_known(e, g, 2);
  io::CheckpointWriter writer(decomp, dir.path(), 1);
  const auto path =
      writer.write(1, 0.0, {}, {io::field_ref("b", b), io::field_ref("h", h), io::field_ref("e", e)});
  Field<mantissa::bf16> b2("mantissa::test::b2", decomp, 1);
  Field<mantissa::fp16> h2("mantissa::test::h2", decomp, 3);
  Field<mantissa::fp8_e4m3> e2("mantissa::test::e2", decomp, 1);
  fill_known(b2, g, 99);
  fill_known(h2, g, 99);
  fill_known(e2, g, 99);
  io::CheckpointReader reader(path, MPI_COMM_WORLD);
  reader.read_field("b", b2);
  reader.read_field("h", h2);
  reader.read_field("e", e2);
  EXPECT_EQ(iotest::sum_all(count_mismatches(b2, g, 0)), 0);
  EXPECT_EQ(iotest::sum_all(count_mismatches(h2, g, 1)), 0);
  EXPECT_EQ(iotest::sum_all(count_mismatches(e2, g, 2)), 0);
  EXPECT_EQ(reader.dataset_attributes("fields/b").get_string("mantissa_type"), "bf16");
  EXPECT_EQ(reader.dataset_attributes("fields/e").get_string("mantissa_type"), "fp8_e4m3");
  expect_error([&] { reader.read_field("b", h2); }, "is stored as bf16 but is read as fp16");
  if (world_rank() == 0) {  // plain HDF5 sees 16-bit unsigned integers
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/fields/b", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    EXPECT_EQ(H5Tget_class(t), H5T_INTEGER);
    EXPECT_EQ(H5Tget_size(t), 2u);
    EXPECT_EQ(H5Tget_sign(t), H5T_SGN_NONE);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
  }
}

// The checksum stored by a parallel write equals the one computed serially over the whole
// global array, so it cannot depend on the rank count.
TEST(Checkpoint, ChecksumEqualsSerialComputation) {
  const Grid g = grid3();
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("checksum");
  write_sample(decomp, dir.path(), 1);
  std::vector<double> global(std::size_t(g.num_points()));
  for (std::size_t i = 0; i < global.size(); ++i) global[i] = iotest::known_value<double>(i, 0);
  const std::uint64_t serial =
      io::partial_checksum(global.data(), 8, {g.n[2], g.n[1], g.n[0]}, {0, 0, 0}, {g.n[2], g.n[1], g.n[0]});
  io::CheckpointReader reader(dir.file("ckpt-0000000001.h5"), MPI_COMM_WORLD);
  EXPECT_EQ(static_cast<std::uint64_t>(reader.dataset_attributes("fields/p").get_int("checksum")), serial);
  // And the checksum notices a swap of two elements (the index enters the hash).
  std::swap(global[0], global[1]);
  EXPECT_NE(
      io::partial_checksum(global.data(), 8, {g.n[2], g.n[1], g.n[0]}, {0, 0, 0}, {g.n[2], g.n[1], g.n[0]}),
      serial);
}

TEST(Checkpoint, KeepsLastNAndLeavesNoTemporaries) {
  const Grid g = grid2();
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("keep");
  for (std::int64_t step = 0; step <= 50; step += 10) write_sample(decomp, dir.path(), step, 2);
  EXPECT_EQ(iotest::list_dir(dir.path()),
            (std::vector<std::string>{"ckpt-0000000040.h5", "ckpt-0000000050.h5"}));
  EXPECT_EQ(io::list_checkpoint_steps(dir.path()), (std::vector<std::int64_t>{40, 50}));
  ASSERT_TRUE(io::latest_checkpoint(dir.path()).has_value());
  EXPECT_EQ(*io::latest_checkpoint(dir.path()), dir.file("ckpt-0000000050.h5"));
  EXPECT_FALSE(io::latest_checkpoint(dir.file("nowhere")).has_value());
  expect_error([&] { io::CheckpointWriter w(decomp, dir.path(), 0); }, "keep_last_n is 0");
}

TEST(Checkpoint, FailedWriteLeavesPreviousCheckpointsIntact) {
  const Grid g = grid3();
  Decomposition decomp(MPI_COMM_WORLD, g);
  ScratchDir dir("fail");
  write_sample(decomp, dir.path(), 1, 1);
  io::CheckpointOptions opt;
  opt.fail_after_datasets = 1;  // dies after the first field, mid-file
  // keep=1: a completed write would delete step 1; the failed one must not.
  expect_error([&] { write_sample(decomp, dir.path(), 2, 1, opt); }, "simulated failure");
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(iotest::list_dir(dir.path()), (std::vector<std::string>{"ckpt-0000000001.h5"}));
  Field<double> p("mantissa::test::p", decomp, 2);
  fill_known(p, g, 99);  // wrong owned values, sentinel ghosts: the read must fix the former only
  io::CheckpointReader reader(dir.file("ckpt-0000000001.h5"), MPI_COMM_WORLD);
  reader.read_field("p", p);
  EXPECT_EQ(iotest::sum_all(count_mismatches(p, g, 0)), 0);
}

// ------------------------------------------------------------------ refusals

// Serial HDF5 edits by rank 0, then a barrier.
template <class F>
void on_rank0(F&& fn) {
  if (world_rank() == 0) fn();
  MPI_Barrier(MPI_COMM_WORLD);
}

class CheckpointRefusal : public ::testing::Test {
 protected:
  void SetUp() override {
    m_decomp = std::make_unique<Decomposition>(MPI_COMM_WORLD, grid3());
    m_dir = std::make_unique<ScratchDir>("refuse");
    write_sample(*m_decomp, m_dir->path(), 7);
    m_file = m_dir->file("ckpt-0000000007.h5");
  }
  void TearDown() override {
    m_dir.reset();
    m_decomp.reset();
  }
  std::unique_ptr<Decomposition> m_decomp;
  std::unique_ptr<ScratchDir> m_dir;
  std::string m_file;
};

TEST_F(CheckpointRefusal, MissingFile) {
  expect_error([&] { io::CheckpointReader r(m_dir->file("ckpt-0000000008.h5"), MPI_COMM_WORLD); },
               "does not exist");
}

TEST_F(CheckpointRefusal, NotHdf5) {
  const std::string f = m_dir->file("notes.h5");
  on_rank0([&] { std::ofstream(f) << "step: 7\nthis is a text file, not HDF5\n"; });
  expect_error([&] { io::CheckpointReader r(f, MPI_COMM_WORLD); }, "is not an HDF5 file");
}

TEST_F(CheckpointRefusal, ForeignHdf5) {
  const std::string f = m_dir->file("foreign.h5");
  const std::string g = m_dir->file("other_format.h5");
  on_rank0([&] {
    hid_t file = H5Fcreate(f.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(file);
    fs::copy_file(m_file, g);
    hid_t h = H5Fopen(g.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t a = H5Aopen(h, "format", H5P_DEFAULT);
    const char* other = "someone-elses-format";
    H5Awrite(a, t, &other);
    H5Aclose(a);
    H5Tclose(t);
    H5Fclose(h);
  });
  expect_error([&] { io::CheckpointReader r(f, MPI_COMM_WORLD); },
               "not a mantissa checkpoint (it has no 'format'");
  expect_error([&] { io::CheckpointReader r(g, MPI_COMM_WORLD); }, "its format is 'someone-elses-format'");
}

TEST_F(CheckpointRefusal, NewerFormatVersion) {
  on_rank0([&] {
    hid_t h = H5Fopen(m_file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(h, "format_version", H5P_DEFAULT);
    const std::int64_t v = 2;
    H5Awrite(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
    H5Fclose(h);
  });
  expect_error([&] { io::CheckpointReader r(m_file, MPI_COMM_WORLD); },
               "format version 2, newer than this build reads (1)");
}

TEST_F(CheckpointRefusal, Truncated) {
  on_rank0([&] { fs::resize_file(m_file, fs::file_size(m_file) / 2); });
  expect_error([&] { io::CheckpointReader r(m_file, MPI_COMM_WORLD); }, "is truncated");
}

TEST_F(CheckpointRefusal, DamagedDataFailsChecksumNamingTheDataset) {
  on_rank0([&] {
    hid_t h = H5Fopen(m_file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(h, "/fields/v", H5P_DEFAULT);
    const haddr_t off = H5Dget_offset(d);
    H5Dclose(d);
    H5Fclose(h);
    ASSERT_NE(off, HADDR_UNDEF);
    std::fstream f(m_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(std::streamoff(off + 100));
    char c = 0;
    f.read(&c, 1);
    c = char(c ^ 0x10);  // one bit of one element
    f.seekp(std::streamoff(off + 100));
    f.write(&c, 1);
  });
  Field<double> p("mantissa::test::p", *m_decomp, 2);
  Field<float> v("mantissa::test::v", *m_decomp, 1);
  fill_known(p, m_decomp->grid(), 99);
  fill_known(v, m_decomp->grid(), 5);
  io::CheckpointReader reader(m_file, MPI_COMM_WORLD);
  reader.read_field("p", p);  // undamaged dataset still reads
  EXPECT_EQ(iotest::sum_all(count_mismatches(p, m_decomp->grid(), 0)), 0);
  expect_error([&] { reader.read_field("v", v); }, "dataset 'fields/v' fails its checksum");
  // A failed read leaves the field as it was.
  EXPECT_EQ(iotest::sum_all(count_mismatches(v, m_decomp->grid(), 5)), 0);
}

TEST_F(CheckpointRefusal, GridMismatchNamesBothSizes) {
  io::CheckpointReader reader(m_file, MPI_COMM_WORLD);
  Grid other = grid3();
  other.n = {34, 13, 11};
  expect_error([&] { reader.validate_against(other); },
               "has grid 17x13x11 but the deck asks for 34x13x11 (mesh.n)");
  other = grid3();
  other.spacing[1] = 5.0;
  expect_error([&] { reader.validate_against(other); }, "spacing");
  expect_error([&] { reader.validate_against(grid2()); }, "holds a 3D grid but the deck asks for 2D");
  expect_error(
      [&] {
        reader.validate_against(grid3(), {{"p", "q"}, ""});
      },
      "has no field 'q' (it has: b, p, v)");
  expect_error([&] { reader.validate_against(grid3(), {{}, "cfd"}); }, "written by physics 'seismic'");
  // Reading into a field of another grid.
  Grid big = grid3();
  big.n = {20, 13, 11};
  Decomposition d2(MPI_COMM_WORLD, big);
  Field<double> p("mantissa::test::p", d2, 1);
  expect_error([&] { reader.read_field("p", p); }, "is 17x13x11 (x, y, z) but the run's grid is 20x13x11");
}

TEST_F(CheckpointRefusal, MissingDatasetAndTypeMismatch) {
  io::CheckpointReader reader(m_file, MPI_COMM_WORLD);
  Field<double> q("mantissa::test::q", *m_decomp, 1);
  expect_error([&] { reader.read_field("q", q); }, "has no field 'q' (it has: b, p, v)");
  Field<float> pf("mantissa::test::pf", *m_decomp, 1);
  expect_error([&] { reader.read_field("p", pf); },
               "dataset 'fields/p' is stored as fp64 but is read as fp32");
  expect_error([&] { reader.read_dataset<double>("surrogate/none"); }, "has no dataset 'surrogate/none'");
}

TEST_F(CheckpointRefusal, WriterChecksItsInputs) {
  io::CheckpointWriter writer(*m_decomp, m_dir->path(), 2);
  Field<double> p("mantissa::test::p", *m_decomp, 1);
  expect_error(
      [&] {
        writer.write(8, 0.0, {}, {io::field_ref("p", p), io::field_ref("p", p)});
      },
      "given twice");
  expect_error([&] { writer.write(8, 0.0, io::Attributes().set("step", 3), {io::field_ref("p", p)}); },
               "attribute 'step' is reserved");
  Grid other = grid3();
  other.n = {30, 13, 11};
  Decomposition d2(MPI_COMM_WORLD, other);
  Field<double> wrong("mantissa::test::wrong", d2, 1);
  expect_error([&] { writer.write(8, 0.0, {}, {io::field_ref("w", wrong)}); },
               "does not match the writer's decomposition");
  // Nothing was written by the refused calls.
  EXPECT_EQ(io::list_checkpoint_steps(m_dir->path()), (std::vector<std::int64_t>{7}));
}

// ------------------------------------------------------------------ across rank counts

// Run by ctest as a fixture at 2 ranks (MANTISSA_IO_XRANK_DIR set), then read at 3 ranks.
TEST(CrossRank, WriteFixture) {
  const char* dir = std::getenv("MANTISSA_IO_XRANK_DIR");
  if (!dir) GTEST_SKIP() << "only run as the ctest fixture mantissa_mpi_io_xrank_write";
  Decomposition decomp(MPI_COMM_WORLD, grid3());
  write_sample(decomp, dir, 5, 1);
}

TEST(CrossRank, ReadAtOtherRankCount) {
  const char* dir = std::getenv("MANTISSA_IO_XRANK_DIR");
  if (!dir) GTEST_SKIP() << "only run as ctest's mantissa_mpi_io_xrank_read after the write fixture";
  const Grid g = grid3();
  Decomposition decomp(MPI_COMM_WORLD, g);
  const auto latest = io::latest_checkpoint(dir);
  ASSERT_TRUE(latest.has_value());
  io::CheckpointReader reader(*latest, MPI_COMM_WORLD);
  EXPECT_NE(reader.attributes().get_int("ranks"), iotest::world_size())
      << "the fixture should use another rank count";
  reader.validate_against(g, {{"p", "v"}, "seismic"});
  Field<double> p("mantissa::test::p", decomp, 3);
  Field<float> v("mantissa::test::v", decomp, 2);
  Field<mantissa::bf16> b("mantissa::test::b", decomp, 4);
  fill_known(p, g, 99);
  fill_known(v, g, 99);
  fill_known(b, g, 99);
  reader.read_field("p", p);
  reader.read_field("v", v);
  reader.read_field("b", b);
  EXPECT_EQ(iotest::sum_all(count_mismatches(p, g, 0)), 0);
  EXPECT_EQ(iotest::sum_all(count_mismatches(v, g, 1)), 0);
  EXPECT_EQ(iotest::sum_all(count_mismatches(b, g, 2)), 0);
}

}  // namespace
