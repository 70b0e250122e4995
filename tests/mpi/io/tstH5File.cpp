// The HDF5 handle layer (H5File.hpp) and durable writes (DurableFile.hpp): bitwise round trips
// written at the run's rank count and read back at other counts (serially on rank 0 and
// collectively on fewer ranks), checksums independent of the rank count, and every refusal
// and failure with its message: damaged byte, truncated file, foreign files, a real full disk
// (a 1 MiB tmpfs) and a read-only file system. Mounting needs root (CAP_SYS_ADMIN): where the
// mount is refused those tests are skipped with a message saying so.
#include "tstIoCommon.hpp"

#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/io/Xdmf.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
namespace io = mantissa::io;
using io::FileProblem;
using iotest::known_value;
using iotest::ScratchDir;
using iotest::world_rank;
using iotest::world_size;

template <class F>
void on_rank0(F&& fn) {
  if (world_rank() == 0) fn();
  MPI_Barrier(MPI_COMM_WORLD);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Runs fn, expects a FileError of `problem` whose message contains every needle.
template <class F>
void expect_file_error(F&& fn, FileProblem problem, std::vector<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "no FileError thrown; expected " << io::to_string(problem);
  } catch (const io::FileError& e) {
    EXPECT_EQ(e.problem(), problem) << "got " << io::to_string(e.problem()) << ": " << e.what();
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "'" << n << "' not in: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a FileError: " << e.what();
  }
}

// Captures what the calling process writes to stderr (fd 2) while fn runs.
template <class F>
std::string capture_stderr(F&& fn) {
  std::fflush(stderr);
  char name[] = "/tmp/mantissa-stderr-XXXXXX";
  const int fd = mkstemp(name);
  const int saved = dup(2);
  dup2(fd, 2);
  try {
    fn();
  } catch (...) {
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  const std::string text = slurp(name);
  unlink(name);
  return text;
}

std::vector<double> known_doubles(std::size_t n, int which) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = known_value<double>(i, which);
  return v;
}

// Rows of a (rows x cols) array owned by `rank` of `size`: an uneven block split.
std::pair<std::int64_t, std::int64_t> block(std::int64_t rows, int rank, int size) {
  const std::int64_t base = rows / size, extra = rows % size;
  const std::int64_t first = rank * base + std::min<std::int64_t>(rank, extra);
  return {first, base + (rank < extra ? 1 : 0)};
}

// ------------------------------------------------------------------ round trips

// Everything the layer writes, written collectively at this run's rank count.
void write_sample(const std::string& path, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  io::PendingFile out(path, comm);
  io::H5File f = io::H5File::create(out, comm);
  f.set("format", "mantissa-test");
  f.set("format_version", 3);
  f.set("time", 0.125);
  f.set("grid_n", std::vector<std::int64_t>{17, 13, 1});
  f.set("spacing", std::vector<double>{10.0, 12.5});
  f.set("deck", "mesh:\n  n: [17, 13]\n\"quoted\" \xc3\xa9");
  io::H5Group g = f.create_group("variants/fp32");
  g.set("status", "ok");
  g.write("rel_l2", known_doubles(11, 1), io::Attributes().set("unit", "1"));
  g.write("empty", std::vector<double>{});
  const std::vector<std::int64_t> steps{0, 10, 20, -7, std::int64_t(1) << 62};
  g.write("steps", steps);
  std::vector<float> w(2 * 3 * 4);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = known_value<float>(i, 2);
  f.create_group("surrogate").write("weights/blocks.0.qkv.weight", {2, 3, 4}, w.data());
  f.write_strings("receiver_names", {"r0", "", "r\xc3\xa9", "long name with spaces"});
  // 29 rows x 5 columns, each rank its block of rows.
  const auto [first, rows] = block(29, rank, size);
  std::vector<double> local;
  for (std::int64_t r = first; r < first + rows; ++r)
    for (std::int64_t c = 0; c < 5; ++c) local.push_back(known_value<double>(std::uint64_t(r * 5 + c), 3));
  f.write_rows("traces", {29, 5}, first, local, io::Attributes().set("axes", "receiver,time"));
  f.close();
  out.commit();
}

void check_sample(const io::H5File& f, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  f.require_format("mantissa-test", 3);
  EXPECT_EQ(f.get_real("time"), 0.125);
  EXPECT_EQ(f.get_ints("grid_n"), (std::vector<std::int64_t>{17, 13, 1}));
  EXPECT_EQ(f.get_reals("spacing"), (std::vector<double>{10.0, 12.5}));
  EXPECT_EQ(f.get_string("deck"), "mesh:\n  n: [17, 13]\n\"quoted\" \xc3\xa9");
  io::H5Group g = f.group("variants/fp32");
  EXPECT_EQ(g.get_string("status"), "ok");
  std::vector<std::int64_t> shape;
  const auto rel = g.read<double>("rel_l2", &shape);
  EXPECT_EQ(shape, (std::vector<std::int64_t>{11}));
  const auto want = known_doubles(11, 1);
  EXPECT_EQ(std::memcmp(rel.data(), want.data(), rel.size() * 8), 0);
  EXPECT_EQ(g.dataset_attributes("rel_l2").get_string("unit"), "1");
  EXPECT_TRUE(g.read<double>("empty").empty());
  EXPECT_EQ(g.read<std::int64_t>("steps"), (std::vector<std::int64_t>{0, 10, 20, -7, std::int64_t(1) << 62}));
  const auto w = f.group("surrogate").read<float>("weights/blocks.0.qkv.weight", &shape);
  EXPECT_EQ(shape, (std::vector<std::int64_t>{2, 3, 4}));
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float k = known_value<float>(i, 2);
    EXPECT_EQ(std::memcmp(&w[i], &k, 4), 0) << i;
  }
  EXPECT_EQ(f.read_strings("receiver_names"),
            (std::vector<std::string>{"r0", "", "r\xc3\xa9", "long name with spaces"}));
  EXPECT_EQ(f.names(), (std::vector<std::string>{"receiver_names", "surrogate", "traces", "variants"}));
  // Rows at this communicator's count: every element bitwise.
  const auto [first, rows] = block(29, rank, size);
  const auto mine = f.read_rows<double>("traces", first, rows, &shape);
  EXPECT_EQ(shape, (std::vector<std::int64_t>{29, 5}));
  ASSERT_EQ(mine.size(), std::size_t(rows * 5));
  std::int64_t bad = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < 5; ++c) {
      const double k = known_value<double>(std::uint64_t((first + r) * 5 + c), 3);
      bad += std::memcmp(&mine[std::size_t(r * 5 + c)], &k, 8) != 0;
    }
  EXPECT_EQ(bad, 0);
}

TEST(H5File, RoundTripAtOtherRankCounts) {
  ScratchDir dir("h5-roundtrip");
  const std::string path = dir.file("sample.h5");
  write_sample(path, MPI_COMM_WORLD);
  // No temporary is left beside the file.
  on_rank0([&] { EXPECT_EQ(iotest::list_dir(dir.path()), std::vector<std::string>{"sample.h5"}); });
  // Read at the same count, collectively.
  {
    io::H5File f = io::H5File::open(path, MPI_COMM_WORLD);
    check_sample(f, MPI_COMM_WORLD);
  }
  // Read serially on rank 0 (1 rank), and collectively on one rank fewer than wrote it.
  on_rank0([&] {
    io::H5File f = io::H5File::open(path);
    check_sample(f, MPI_COMM_SELF);
  });
  if (world_size() > 1) {
    MPI_Comm fewer;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < world_size() - 1 ? 0 : MPI_UNDEFINED, world_rank(), &fewer);
    if (fewer != MPI_COMM_NULL) {
      io::H5File f = io::H5File::open(path, fewer);
      check_sample(f, fewer);
      f.close();
      MPI_Comm_free(&fewer);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // The file written serially (1 rank) has the same checksums as the one written at N ranks.
  on_rank0([&] {
    const std::string serial = dir.file("serial.h5");
    write_sample(serial, MPI_COMM_SELF);
    io::H5File a = io::H5File::open(path), b = io::H5File::open(serial);
    EXPECT_EQ(a.dataset_attributes("traces").get_int("checksum"),
              b.dataset_attributes("traces").get_int("checksum"));
    EXPECT_EQ(a.group("variants/fp32").dataset_attributes("rel_l2").get_int("checksum"),
              b.group("variants/fp32").dataset_attributes("rel_l2").get_int("checksum"));
  });
}

TEST(H5File, FieldsRoundTripBitwise) {
  ScratchDir dir("h5-fields");
  mantissa::Grid grid;
  grid.dim = 3;
  grid.n = {9, 7, 5};
  mantissa::Decomposition decomp(MPI_COMM_WORLD, grid);
  mantissa::Field<double> p("mantissa::test::p", decomp, 1);
  iotest::fill_known(p, grid, 4);
  const std::string path = dir.file("fields.h5");
  {
    io::PendingFile out(path, MPI_COMM_WORLD);
    io::H5File f = io::H5File::create(out, MPI_COMM_WORLD);
    f.write_field("fields/p", io::field_ref("p", p), grid);
    f.close();
    out.commit();
  }
  mantissa::Field<double> q("mantissa::test::q", decomp, 1);
  iotest::fill_known(q, grid, 9);  // other values; the read must replace every owned point
  {
    io::H5File f = io::H5File::open(path, MPI_COMM_WORLD);
    f.read_field("fields/p", io::field_ref("q", q));
    mantissa::Field<float> wrong("mantissa::test::w", decomp, 1);
    expect_file_error([&] { f.read_field("fields/p", io::field_ref("w", wrong)); },
                      FileProblem::invalid_content, {"is stored as fp64 but is read as fp32"});
  }
  EXPECT_EQ(iotest::sum_all(iotest::count_mismatches(q, grid, 4)), 0);
}

// ------------------------------------------------------------------ refusals

TEST(H5File, DamagedByteFailsTheChecksum) {
  ScratchDir dir("h5-damaged");
  const std::string path = dir.file("sample.h5");
  write_sample(path, MPI_COMM_WORLD);
  on_rank0([&] {
    // Flip one bit inside the raw data of /traces (its file offset from HDF5 itself).
    haddr_t offset = 0;
    {
      hid_t h = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      hid_t d = H5Dopen2(h, "/traces", H5P_DEFAULT);
      offset = H5Dget_offset(d);
      H5Dclose(d);
      H5Fclose(h);
    }
    ASSERT_NE(offset, HADDR_UNDEF);
    std::fstream fs(path, std::ios::in | std::ios::out | std::ios::binary);
    fs.seekg(std::streamoff(offset + 8 * 17 + 3));
    char c = 0;
    fs.read(&c, 1);
    c = char(c ^ 0x10);
    fs.seekp(std::streamoff(offset + 8 * 17 + 3));
    fs.write(&c, 1);
  });
  io::H5File f = io::H5File::open(path, MPI_COMM_WORLD);
  // Not a structured binding: a lambda capturing one is C++20 (nvcc warns in C++17).
  const auto part = block(29, world_rank(), world_size());
  const std::int64_t first = part.first, rows = part.second;
  expect_file_error([&] { f.read_rows<double>("traces", first, rows); }, FileProblem::damaged,
                    {"'/traces' in '" + path + "'", "fails its checksum", "damaged"});
  // The undamaged datasets of the same file still read.
  EXPECT_EQ(f.group("variants/fp32").read<double>("rel_l2").size(), 11u);
}

TEST(H5File, TruncatedNotHdf5AndForeignFilesAreRefused) {
  ScratchDir dir("h5-refused");
  const std::string path = dir.file("sample.h5"), cut = dir.file("cut.h5"), text = dir.file("notes.h5"),
                    foreign = dir.file("foreign.h5");
  write_sample(path, MPI_COMM_WORLD);
  on_rank0([&] {
    fs::copy_file(path, cut);
    fs::resize_file(cut, fs::file_size(cut) / 2);
    std::ofstream(text) << "this is a text file, not HDF5\n";
    // A foreign HDF5 file: written by another tool, without mantissa's attributes.
    hid_t h = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t n = 4;
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t d = H5Dcreate2(h, "v", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const float v[4] = {1.5f, 2.5f, 3.5f, 4.5f};
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(h);
  });
  // And no HDF5-DIAG output on the way.
  std::string err;
  if (world_rank() == 0) {
    err = capture_stderr([&] {
      expect_file_error([&] { io::H5File::open(cut); }, FileProblem::truncated,
                        {cut, "truncated", "intact copy"});
      expect_file_error([&] { io::H5File::open(text); }, FileProblem::not_hdf5, {text, "not an HDF5 file"});
      expect_file_error([&] { io::H5File::open(dir.file("absent.h5")); }, FileProblem::missing,
                        {"absent.h5", "does not exist"});
      expect_file_error([&] { io::H5File::open(dir.path()); }, FileProblem::wrong_format, {"is a directory"});
      io::H5File f = io::H5File::open(foreign);
      expect_file_error([&] { f.require_format("mantissa-test", 3); }, FileProblem::wrong_format,
                        {foreign, "no attribute 'format'"});
      expect_file_error([&] { f.read<double>("v"); }, FileProblem::damaged, {"'/v' in", "no mantissa_type"});
      expect_file_error([&] { f.read<double>("w"); }, FileProblem::missing_object, {"no dataset '/w'"});
      expect_file_error([&] { f.group("g"); }, FileProblem::missing_object, {"has no group 'g'"});
      expect_file_error([&] { f.get_int("step"); }, FileProblem::missing_object, {"no attribute 'step'"});
    });
    EXPECT_EQ(err.find("HDF5-DIAG"), std::string::npos) << err;
    // A user-written input is read with HDF5's conversion when asked to (velocity models).
    io::H5File f = io::H5File::open(foreign, io::Verify::checksums_if_present);
    EXPECT_EQ(f.read<double>("v"), (std::vector<double>{1.5, 2.5, 3.5, 4.5}));
    io::H5File s = io::H5File::open(path);
    expect_file_error([&] { s.require_format("mantissa-test", 2); }, FileProblem::wrong_format,
                      {"version 3", "reads version 2", "newer mantissa"});
    expect_file_error([&] { s.require_format("mantissa-report", 3); }, FileProblem::wrong_format,
                      {"is a 'mantissa-test' file, not a 'mantissa-report'"});
    expect_file_error([&] { s.group("variants/fp32").read<float>("rel_l2"); }, FileProblem::invalid_content,
                      {"stored as fp64 but is read as fp32"});
  }
  // Collectively too, on every rank.
  expect_file_error([&] { io::H5File::open(cut, MPI_COMM_WORLD); }, FileProblem::truncated, {cut});
  expect_file_error([&] { io::H5File::open(text, MPI_COMM_WORLD); }, FileProblem::not_hdf5, {text});
}

// ------------------------------------------------------------------ full disk, read-only

// A small tmpfs mounted by rank 0 under the scratch directory; skipped where mount is refused.
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, const char* size) : m_dir(dir) {
    int ok = 0, err = 0;
    if (world_rank() == 0) {
      fs::create_directories(dir);
      const std::string opts = std::string("size=") + size;
      ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0;
      err = ok ? 0 : errno;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    m_mounted = ok != 0;
    if (!m_mounted) m_why = std::string("mount -t tmpfs refused: ") + std::strerror(err) + " (needs root)";
  }
  ~SmallDisk() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (m_mounted && world_rank() == 0) ::umount2(m_dir.c_str(), MNT_DETACH);
  }
  bool mounted() const { return m_mounted; }
  const std::string& why() const { return m_why; }
  // Collective: remounts read-only.
  bool make_read_only() {
    int ok = 1;
    if (world_rank() == 0)
      ok = ::mount("tmpfs", m_dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok != 0;
  }

 private:
  std::string m_dir, m_why;
  bool m_mounted = false;
};

void write_big(const std::string& path, MPI_Comm comm, std::int64_t rows_total) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  io::PendingFile out(path, comm);
  io::H5File f = io::H5File::create(out, comm);
  f.set("format", "mantissa-test");
  f.set("format_version", 3);
  const auto [first, rows] = block(rows_total, rank, size);
  std::vector<double> local(std::size_t(rows * 1024), 1.0);
  f.write_rows("big", {rows_total, 1024}, first, local);
  f.close();
  out.commit();
}

TEST(DurableFile, FullDiskKeepsThePreviousFile) {
  ScratchDir dir("full-disk");
  SmallDisk disk(dir.file("disk"), "1m");
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  const std::string h5 = dir.file("disk/report.h5"), json = dir.file("disk/report.json");
  // The previous, good versions.
  write_big(h5, MPI_COMM_WORLD, 8);  // 64 KiB
  on_rank0([&] { io::write_file_durably(json, "{\"previous\": true}\n"); });
  const std::string before = world_rank() == 0 ? slurp(h5) : std::string();
  // 2 MiB does not fit on 1 MiB: refused on every rank, naming the file and the cause.
  std::string err;
  auto attempt = [&] {
    expect_file_error([&] { write_big(h5, MPI_COMM_WORLD, 256); }, FileProblem::disk_full,
                      {h5, "file system is full", "free space"});
  };
  if (world_rank() == 0)
    err = capture_stderr(attempt);
  else
    attempt();
  EXPECT_EQ(err.find("HDF5-DIAG"), std::string::npos) << err;
  on_rank0([&] {
    expect_file_error([&] { io::write_file_durably(json, std::string(2 << 20, 'x')); },
                      FileProblem::disk_full, {json, "No space left on device"});
    // Previous files intact, bit for bit, and no temporaries left behind.
    EXPECT_EQ(slurp(h5), before);
    EXPECT_EQ(slurp(json), "{\"previous\": true}\n");
    EXPECT_EQ(iotest::list_dir(dir.file("disk")), (std::vector<std::string>{"report.h5", "report.json"}));
    io::H5File f = io::H5File::open(h5);
    EXPECT_EQ(f.read<double>("big").size(), 8u * 1024u);
    // The up-front check says so before anything is written.
    const auto c = io::check_directory(dir.file("disk/run"), 4 << 20);
    EXPECT_TRUE(c.writable);
    EXPECT_FALSE(c.ok());
    EXPECT_EQ(c.problem, FileProblem::disk_full);
    EXPECT_NE(c.message.find("free but the run will write about 4.0 MiB"), std::string::npos) << c.message;
    EXPECT_TRUE(io::check_directory(dir.file("disk"), 100 << 10).ok());
  });
}

TEST(DurableFile, ReadOnlyFileSystem) {
  ScratchDir dir("read-only");
  SmallDisk disk(dir.file("disk"), "1m");
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  const std::string h5 = dir.file("disk/report.h5"), md = dir.file("disk/report.md");
  write_big(h5, MPI_COMM_WORLD, 4);
  on_rank0([&] { io::write_file_durably(md, "# previous\n"); });
  ASSERT_TRUE(disk.make_read_only());
  expect_file_error([&] { write_big(h5, MPI_COMM_WORLD, 4); }, FileProblem::read_only,
                    {h5, "read-only file system"});
  on_rank0([&] {
    expect_file_error([&] { io::write_file_durably(md, "# new\n"); }, FileProblem::read_only,
                      {md, "read-only"});
    EXPECT_EQ(slurp(md), "# previous\n");
    io::H5File f = io::H5File::open(h5);
    EXPECT_EQ(f.read<double>("big").size(), 4u * 1024u);
    const auto c = io::check_directory(dir.file("disk/run"));
    EXPECT_FALSE(c.writable);
    EXPECT_EQ(c.problem, FileProblem::read_only);
    expect_file_error([&] { io::require_directory(dir.file("disk/run"), 0, "run directory"); },
                      FileProblem::read_only, {"run directory", "cannot write in", "read-only"});
  });
}

TEST(DurableFile, ReplacesAtomicallyAndCleansUp) {
  ScratchDir dir("durable");
  on_rank0([&] {
    const std::string p = dir.file("sub/deck.resolved.yaml");
    expect_file_error([&] { io::write_file_durably(p, "a: 1\n"); }, FileProblem::missing,
                      {p, "its directory", "does not exist"});
    fs::create_directories(dir.file("sub"));
    io::write_file_durably(p, "a: 1\n");
    io::write_file_durably(p, "a: 2\n");
    EXPECT_EQ(slurp(p), "a: 2\n");
    {
      io::PendingFile out(dir.file("sub/never.h5"));
      EXPECT_TRUE(fs::exists(out.temp_path()));
      EXPECT_EQ(fs::path(out.temp_path()).parent_path(), fs::path(dir.file("sub")));
    }  // not committed: the temporary goes, no file appears
    EXPECT_EQ(iotest::list_dir(dir.file("sub")), std::vector<std::string>{"deck.resolved.yaml"});
    const auto c = io::check_directory(dir.file("sub/new/deeper"));
    EXPECT_TRUE(c.ok()) << c.message;
    EXPECT_EQ(c.checked, fs::absolute(dir.file("sub")).string());
    EXPECT_GT(c.free_bytes, 0u);
    expect_file_error([&] { io::write_file_durably(dir.file("sub/deck.resolved.yaml/x"), "x"); },
                      FileProblem::not_a_directory, {"deck.resolved.yaml/x", "is not a directory"});
  });
}

// ------------------------------------------------------------------ XDMF

TEST(Xdmf, CarriesTheRealGeometry) {
  ScratchDir dir("xdmf");
  // The quickstart's mesh: 160 x 96 points at 10 m, so ParaView shows 0..1590 m by 0..950 m.
  mantissa::Grid g;
  g.dim = 2;
  g.n = {160, 96, 1};
  g.spacing = {10.0, 10.0, 1.0};
  const std::string h5 = dir.file("report.h5"), xmf = dir.file("snapshots.xmf");
  // As report.h5 stores its gathered snapshots: (1, ny, nx) fp64 under /snapshots.
  std::vector<double> v(std::size_t(160 * 96));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = double(k % 160) + 100.0 * double(k / 160);
  on_rank0([&] {
    io::PendingFile out(h5);
    io::H5File f = io::H5File::create(out);
    f.create_group("snapshots").write("reference", {1, 96, 160}, v.data());
    f.close();
    out.commit();
    io::XdmfOptions opt;
    opt.as_3d = true;
    opt.time = 1.5;  // the final time of the run (the checker wants every grid timed)
    io::write_xdmf(xmf, g, "final", {{"reference", "report.h5", "/snapshots/reference", 8}}, opt);
    const std::string text = slurp(xmf);
    EXPECT_NE(text.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"1 96 160\""), std::string::npos) << text;
    EXPECT_NE(text.find(">0 0 0</DataItem>"), std::string::npos) << text;
    EXPECT_NE(text.find(">1 10 10</DataItem>"), std::string::npos) << text;  // z, y, x spacing
    EXPECT_NE(text.find("report.h5:/snapshots/reference"), std::string::npos) << text;
    // A 2D description of a shifted grid, with its time.
    mantissa::Grid s = g;
    s.origin = {-800.0, 25.5, 0.0};
    io::XdmfOptions t;
    t.time = 0.25;
    const std::string grid = io::xdmf_grid(s, "shifted", {}, t);
    EXPECT_NE(grid.find("ORIGIN_DXDY\""), std::string::npos) << grid;
    EXPECT_NE(grid.find(">25.5 -800</DataItem>"), std::string::npos) << grid;
    EXPECT_NE(grid.find("<Time Value=\"0.25\"/>"), std::string::npos) << grid;
    mantissa::Grid bad = g;
    bad.spacing[0] = 0.0;
    EXPECT_THROW(io::xdmf_grid(bad, "bad", {}), mantissa::Error);
    EXPECT_THROW(io::xdmf_grid(g, "a<b", {}), mantissa::Error);
    // The sidecar describes the dataset (the project's XDMF checker, with h5py).
    const std::string py = MANTISSA_TEST_PYTHON;
    if (std::system((py + " -c 'import h5py, numpy' 2>/dev/null").c_str()) == 0) {
      const std::string cmd = py + " " + MANTISSA_IO_TEST_SOURCE_DIR + "/check_xdmf.py " + xmf;
      EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
  });
}

}  // namespace
