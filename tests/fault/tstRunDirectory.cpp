// The run-directory policy under faults (issue 13): names that leave run.output_dir, the
// --overwrite guard (only marked run directories are ever moved or deleted), the lock (a live
// run refuses a second one, naming it; a dead holder's lock is stale), and a run stopped before
// its first checkpoint (a plain run and --resume both start it over, neither sends the user to
// the other). Rank 0 touches the file system; every rank must get the same answer.
#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/RunDirectory.hpp>

#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
namespace mw = mantissa::workflow;

namespace {

int rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A fresh output directory, the same path on every rank.
std::string scratch(const std::string& name) {
  long pid = static_cast<long>(getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string path =
      (fs::temp_directory_path() / ("mantissa-fault-" + std::to_string(pid) + "-" + name)).string();
  if (rank_of_world() == 0) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// The message of the mantissa::Error `f` throws (every rank must throw), or "" if none.
template <class F>
std::string error_of(F&& f) {
  std::string msg;
  try {
    f();
  } catch (const mantissa::Error& e) {
    msg = e.what();
  }
  int got = msg.empty() ? 0 : 1, all = 0;
  MPI_Allreduce(&got, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int any = 0;
  MPI_Allreduce(&got, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(all, any) << "the ranks disagree on the error";
  return msg;
}

void write(const std::string& path, const std::string& text) {
  if (rank_of_world() == 0) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

bool exists0(const std::string& path) {
  int e = rank_of_world() == 0 && fs::exists(path) ? 1 : 0;
  MPI_Bcast(&e, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return e != 0;
}

}  // namespace

TEST(FaultRunDirectory, NamesCannotLeaveTheOutputDirectory) {
  const std::string out = scratch("escape");
  write(out + "/../mantissa-fault-sandbox-" + std::to_string(getpid()) + "/keep.txt", "precious");
  for (const std::string name : {"../../sandbox", "..", "a/../../b", "/tmp/elsewhere", "", "."}) {
    SCOPED_TRACE("run.name=" + name);
    const auto msg =
        error_of([&] { mw::RunDirectory rd(MPI_COMM_WORLD, out, name, mw::RunMode::overwrite); });
    EXPECT_NE(msg.find("run.name"), std::string::npos) << msg;
    EXPECT_NE(msg.find("inside run.output_dir"), std::string::npos) << msg;
  }
  // A name with a harmless inner "..", or a sub-directory, stays inside.
  EXPECT_EQ(mw::RunDirectory::join(out, "study/../a"), out + "/a");
  EXPECT_EQ(mw::RunDirectory::join(out, "study/a/"), out + "/study/a");
}

TEST(FaultRunDirectory, OverwriteDeletesOnlyMarkedRunDirectories) {
  const std::string out = scratch("guard");
  // An unrelated directory with files: neither --overwrite nor a plain run may touch it.
  write(out + "/other/notes.txt", "not mantissa's");
  write(out + "/other/data.bin", "x");
  for (auto mode : {mw::RunMode::overwrite, mw::RunMode::fresh, mw::RunMode::resume}) {
    const auto msg = error_of([&] { mw::RunDirectory rd(MPI_COMM_WORLD, out, "other", mode); });
    EXPECT_NE(msg.find("not a mantissa run directory"), std::string::npos) << msg;
  }
  EXPECT_TRUE(exists0(out + "/other/notes.txt"));
  EXPECT_TRUE(exists0(out + "/other/data.bin"));
  EXPECT_FALSE(exists0(out + "/other/" + mw::RunDirectory::marker_name));
  EXPECT_FALSE(exists0(out + "/other.previous"));

  // A run directory of mantissa's is replaced, and only once the new run has set up.
  {
    mw::RunDirectory rd(MPI_COMM_WORLD, out, "mine", mw::RunMode::fresh);
    EXPECT_TRUE(exists0(out + "/mine/" + mw::RunDirectory::marker_name));
  }
  write(out + "/mine/report.json", "{}");
  { mw::RunDirectory failed_start(MPI_COMM_WORLD, out, "mine", mw::RunMode::overwrite); }
  EXPECT_TRUE(exists0(out + "/mine/report.json")) << "a failed --overwrite start must put the old run back";
  {
    mw::RunDirectory rd(MPI_COMM_WORLD, out, "mine", mw::RunMode::overwrite);
    rd.commit();
  }
  EXPECT_FALSE(exists0(out + "/mine/report.json"));
  EXPECT_FALSE(exists0(out + "/mine.previous"));

  // An unmarked X.previous is not deleted to make room for the aside copy.
  write(out + "/mine/report.json", "{}");
  write(out + "/mine.previous/thesis.tex", "precious");
  const auto msg =
      error_of([&] { mw::RunDirectory rd(MPI_COMM_WORLD, out, "mine", mw::RunMode::overwrite); });
  EXPECT_NE(msg.find("mine.previous"), std::string::npos) << msg;
  EXPECT_TRUE(exists0(out + "/mine.previous/thesis.tex"));
  EXPECT_TRUE(exists0(out + "/mine/report.json"));
}

TEST(FaultRunDirectory, AnEarlierVersionsRunDirectoryIsRecognised) {
  const std::string out = scratch("legacy");
  write(out + "/old/deck.resolved.yaml", "physics: seismic\n");
  write(out + "/old/run.log", "log\n");
  write(out + "/old/report.json", "{}");
  {
    mw::RunDirectory rd(MPI_COMM_WORLD, out, "old", mw::RunMode::overwrite);
    rd.commit();
  }
  EXPECT_FALSE(exists0(out + "/old/report.json"));
  EXPECT_TRUE(exists0(out + "/old/" + mw::RunDirectory::marker_name));
}

TEST(FaultRunDirectory, ALiveRunLocksItsDirectory) {
  const std::string out = scratch("lock");
  mw::RunDirectory live(MPI_COMM_WORLD, out, "run", mw::RunMode::fresh);
  write(out + "/run/checkpoints/latest", "ckpt-1\n");
  // A second process (not just a second descriptor of this one) must be refused: a child of
  // rank 0 tries to take the lock the way RunDirectory does. (The fault suite runs two real
  // mantissa jobs into one directory.)
  if (rank_of_world() == 0) {
    const pid_t child = fork();
    if (child == 0) {
      const int fd = ::open((out + "/run/run.lock").c_str(), O_RDWR);
      _exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the lock is not held against other processes";
    std::ifstream in(out + "/run/run.lock");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("pid=" + std::to_string(getpid())), std::string::npos) << text;
    EXPECT_NE(text.find("host="), std::string::npos) << text;
    EXPECT_NE(text.find("started="), std::string::npos) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(FaultRunDirectory, AStaleLockIsTakenOverWithANote) {
  const std::string out = scratch("stale");
  { mw::RunDirectory first(MPI_COMM_WORLD, out, "run", mw::RunMode::fresh); }
  // What a killed run leaves: its lock file (nobody holds the flock) and a checkpoint.
  write(out + "/run/run.lock", "host=deadhost pid=999999 started=2026-01-01T00:00:00Z\n");
  write(out + "/run/checkpoints/latest", "ckpt-5\n");
  mw::RunDirectory rd(MPI_COMM_WORLD, out, "run", mw::RunMode::resume);
  EXPECT_TRUE(rd.resume());
  ASSERT_EQ(rd.notes().size(), 1u);
  EXPECT_NE(rd.notes()[0].find("stale lock"), std::string::npos) << rd.notes()[0];
  EXPECT_NE(rd.notes()[0].find("pid 999999"), std::string::npos) << rd.notes()[0];
}

TEST(FaultRunDirectory, KilledBeforeTheFirstCheckpointStartsOverWithoutACircle) {
  const std::string out = scratch("circle");
  { mw::RunDirectory first(MPI_COMM_WORLD, out, "run", mw::RunMode::fresh); }
  write(out + "/run/run.log", "started\n");
  write(out + "/run/deck.resolved.yaml", "physics: seismic\n");
  {
    // --resume finds nothing to resume: it starts from the beginning and says so.
    mw::RunDirectory rd(MPI_COMM_WORLD, out, "run", mw::RunMode::resume);
    EXPECT_FALSE(rd.resume());
    ASSERT_FALSE(rd.notes().empty());
    EXPECT_NE(rd.notes()[0].find("starting from the beginning"), std::string::npos) << rd.notes()[0];
    rd.commit();
  }
  write(out + "/run/run.log", "started again\n");
  {
    // A plain run does the same: nothing there is worth keeping.
    mw::RunDirectory rd(MPI_COMM_WORLD, out, "run", mw::RunMode::fresh);
    ASSERT_FALSE(rd.notes().empty());
    EXPECT_NE(rd.notes()[0].find("starting it over"), std::string::npos) << rd.notes()[0];
    rd.commit();
  }
  // With a checkpoint, a plain run is refused and points to --resume; with a finished report
  // and no checkpoint, --resume is refused and points to --overwrite (not back to a plain run).
  write(out + "/run/checkpoints/latest", "ckpt-3\n");
  auto msg = error_of([&] { mw::RunDirectory rd(MPI_COMM_WORLD, out, "run", mw::RunMode::fresh); });
  EXPECT_NE(msg.find("--resume"), std::string::npos) << msg;
  if (rank_of_world() == 0) fs::remove(out + "/run/checkpoints/latest");
  write(out + "/run/report.json", "{}");
  msg = error_of([&] { mw::RunDirectory rd(MPI_COMM_WORLD, out, "run", mw::RunMode::resume); });
  EXPECT_NE(msg.find("--overwrite"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("without --resume"), std::string::npos) << msg;
  // No directory at all: --resume starts the run (a job script may always pass --resume).
  mw::RunDirectory nothing(MPI_COMM_WORLD, out, "nothing", mw::RunMode::resume);
  EXPECT_FALSE(nothing.resume());
  ASSERT_FALSE(nothing.notes().empty());
  EXPECT_NE(nothing.notes()[0].find("from the beginning"), std::string::npos) << nothing.notes()[0];
  EXPECT_TRUE(exists0(out + "/nothing/" + mw::RunDirectory::marker_name));
}

TEST(FaultRunDirectory, AReadOnlyOutputDirectoryIsRefusedBeforeAnyWork) {
  if (geteuid() == 0) {
    // root writes through permission bits; the fault suite mounts a read-only tmpfs instead.
    GTEST_SKIP() << "running as root: permission bits do not stop root (see tests/fault/fault_suite.sh)";
  }
  const std::string out = scratch("readonly");
  if (rank_of_world() == 0) fs::permissions(out, fs::perms::owner_read | fs::perms::owner_exec);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto msg = error_of([&] { mw::RunDirectory rd(MPI_COMM_WORLD, out, "run", mw::RunMode::fresh); });
  EXPECT_NE(msg.find("writable"), std::string::npos) << msg;
  if (rank_of_world() == 0) fs::permissions(out, fs::perms::owner_all);
}
