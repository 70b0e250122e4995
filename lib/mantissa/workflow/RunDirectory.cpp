#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/RunDirectory.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

namespace fs = std::filesystem;

namespace mantissa::workflow {

namespace {
// Rank 0 decides; the message (empty = fine) is broadcast so that every rank throws the same.
void broadcast_string(MPI_Comm comm, std::string& msg) {
  int n = static_cast<int>(msg.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  msg.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(msg.data(), n, MPI_CHAR, 0, comm);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The names of everything mantissa writes into a run directory: a directory that holds only
// these (and at least the deck or the log) is a run directory of a version before the marker.
bool is_legacy_run_dir(const fs::path& dir) {
  static const std::set<std::string> known = {
      "run.log",      "deck.resolved.yaml", "checkpoints",          "report.json",
      "report.md",    "report.h5",          "gathers.h5",           "snapshots",
      "logs",         "run.lock",           "surrogate-trained.h5", "gathers.xmf",
      "snapshots.xmf"};
  std::error_code ec;
  bool anchor = false;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    const bool tmp = n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0;
    if (known.count(n) == 0 && n.rfind("surrogate-", 0) != 0 && !tmp) return false;
    anchor = anchor || n == "deck.resolved.yaml" || n == "run.log";
  }
  return !ec && anchor;
}

bool has_entries_besides(const fs::path& dir, const std::set<std::string>& ignore) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (ignore.count(e.path().filename().string()) == 0) return true;
  return false;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void write_marker(const fs::path& dir) {
  const fs::path p = dir / RunDirectory::marker_name;
  std::ofstream out(p);
  out << "mantissa run directory: mantissa deletes or replaces (--overwrite) only directories that "
         "hold this file\ncreated "
      << utc_now() << " on " << host_name() << " by pid " << getpid() << "\n";
  out.close();
  if (!out)
    throw Error("cannot write in the run directory '" + dir.string() + "' (" + std::strerror(errno) +
                "); choose a writable run.output_dir");
}

// The holder text of a lock file, as "host H, pid P, started T".
std::string holder_words(const std::string& text) {
  std::istringstream in(text);
  std::string host = "?", pid = "?", started = "?";
  for (std::string tok; in >> tok;) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
    if (k == "host") host = v;
    if (k == "pid") pid = v;
    if (k == "started") started = v;
  }
  return "host " + host + ", pid " + pid + ", started " + started;
}

struct LockResult {
  int fd = -1;
  std::string error;  // empty: taken
  std::string note;   // a stale lock taken over
};

// Takes RUN_DIR/run.lock: flock(2) (released by the kernel when the holder dies, also over
// NFS), the file's text naming the holder. Where the file system has no locks the holder's
// pid is checked instead (on the same host).
LockResult take_lock(const fs::path& dir, const std::string& what) {
  LockResult r;
  const fs::path p = dir / RunDirectory::lock_name;
  const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    r.error = "cannot create the lock '" + p.string() + "' (" + std::strerror(errno) +
              "); the run directory must be writable: choose a writable run.output_dir";
    return r;
  }
  const std::string previous = read_text(p);
  bool taken = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (!taken && errno == EWOULDBLOCK) {
    ::close(fd);
    r.error = "the run directory '" + dir.string() + "' is in use by another mantissa run (" +
              holder_words(previous) + "); " + what +
              " once it has ended, or choose another run.name (the lock is " + p.string() + ")";
    return r;
  }
  if (!taken) {
    // No flock on this file system (ENOLCK, ENOSYS): judge by the holder's pid on this host.
    const std::string me = host_name();
    if (!previous.empty()) {
      const bool same_host = previous.find("host=" + me + " ") != std::string::npos;
      long pid = 0;
      const auto at = previous.find("pid=");
      if (at != std::string::npos) pid = std::strtol(previous.c_str() + at + 4, nullptr, 10);
      const bool alive = pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
      if (!same_host || alive) {
        ::close(fd);
        r.error = "the run directory '" + dir.string() + "' is locked by another mantissa run (" +
                  holder_words(previous) + ")" +
                  (same_host ? std::string()
                             : "; this file system has no file locks, so mantissa cannot tell whether it "
                               "still runs: if that job has ended, delete " +
                                   p.string()) +
                  "; or choose another run.name";
        return r;
      }
    }
  }
  if (!previous.empty())
    r.note = "took over the stale lock of a run that is no longer running (" + holder_words(previous) + ")";
  std::ostringstream text;
  text << "host=" << host_name() << " pid=" << getpid() << " started=" << utc_now() << "\n";
  const std::string s = text.str();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, s.data(), s.size(), 0) != static_cast<ssize_t>(s.size())) {
    r.error = "cannot write the lock '" + p.string() + "' (" + std::strerror(errno) +
              "); the run directory must be writable (is the disk full?)";
    ::close(fd);
    return r;
  }
  r.fd = fd;
  return r;
}

void release_lock(const fs::path& dir, int& fd) {
  if (fd < 0) return;
  std::error_code ec;
  fs::remove(dir / RunDirectory::lock_name, ec);
  ::close(fd);
  fd = -1;
}
}  // namespace

std::string RunDirectory::join(const std::string& output_dir, const std::string& name) {
  const fs::path n(name);
  const fs::path norm = n.lexically_normal();
  std::string why;
  if (name.empty())
    why = "is empty";
  else if (n.is_absolute() || n.has_root_name())
    why = "is an absolute path";
  else if (norm.empty() || norm == "." || *norm.begin() == "..")
    why = "leads out of run.output_dir";
  else if (name.find('\0') != std::string::npos)
    why = "holds a NUL character";
  if (!why.empty())
    throw Error("deck key 'run.name' = '" + name + "' " + why +
                ": the run directory is run.output_dir/run.name and must lie inside run.output_dir; "
                "give a plain name (e.g. run.name=study-1) and put the place in run.output_dir");
  std::string s = norm.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return (output_dir.empty() ? std::string(".") : output_dir) + "/" + s;
}

RunDirectory::RunDirectory(MPI_Comm comm, const std::string& output_dir, const std::string& name,
                           RunMode mode, const std::string& checkpoint_dir)
    : m_comm(comm), m_path(join(output_dir, name)), m_ckpt(checkpoint_dir), m_mode(mode) {
  open(mode);
}

RunDirectory::RunDirectory(MPI_Comm comm, const std::string& path, RunMode mode,
                           const std::string& checkpoint_dir)
    : m_comm(comm), m_path(path), m_ckpt(checkpoint_dir), m_mode(mode) {
  open(mode);
}

void RunDirectory::open(RunMode requested) {
  int rank = 0;
  MPI_Comm_rank(m_comm, &rank);
  std::string err, notes;
  int mode = static_cast<int>(requested);
  if (rank == 0) {
    try {
      const fs::path dir(m_path);
      std::error_code ec;
      const bool existed = fs::exists(dir, ec);
      const char* again = requested == RunMode::resume      ? "resume"
                          : requested == RunMode::overwrite ? "overwrite it"
                                                            : "run again";
      if (existed && !fs::is_directory(dir, ec))
        throw Error("run directory '" + m_path + "' exists and is not a directory; choose another run.name");
      if (!existed) {
        // Nothing to resume (a job script that always passes --resume, or a run stopped before
        // it wrote anything): start the run, and say so.
        if (requested == RunMode::resume)
          notes += "--resume: there is no run directory '" + m_path +
                   "' yet: starting the run from the beginning\n";
        fs::create_directories(dir, ec);
        if (ec)
          throw Error("cannot create the run directory '" + m_path + "' (" + ec.message() +
                      "); choose a writable run.output_dir");
        write_marker(dir);
        mode = static_cast<int>(RunMode::fresh);
      } else if (!fs::exists(dir / marker_name, ec)) {
        if (!has_entries_besides(dir, {})) {
          write_marker(dir);  // an empty directory (made by the user or a job script) is fine
        } else if (is_legacy_run_dir(dir)) {
          write_marker(dir);
          notes += "'" + m_path + "' was written by an earlier mantissa (no marker file); marked it\n";
        } else {
          throw Error(std::string(requested == RunMode::overwrite ? "--overwrite: refusing to delete '"
                                                                  : "refusing to use '") +
                      m_path + "': it is not a mantissa run directory (it has no " + marker_name +
                      " marker file and holds files mantissa does not write); choose another run.name or "
                      "run.output_dir, or move that directory away yourself");
        }
      }
      LockResult lock = take_lock(dir, std::string(again));
      if (!lock.error.empty()) throw Error(lock.error);
      m_lock_fd = lock.fd;
      if (!lock.note.empty()) notes += lock.note + "\n";

      const fs::path ckpt = dir / m_ckpt;
      const std::string ckpt_top = fs::path(m_ckpt).begin()->string();
      const bool has_ckpt = fs::exists(ckpt / "latest", ec);
      const bool has_report = fs::exists(dir / "report.json", ec);
      const bool content = has_entries_besides(dir, {marker_name, lock_name, ckpt_top}) ||
                           (fs::is_directory(ckpt, ec) && !fs::is_empty(ckpt, ec));
      bool aside = false;
      if (existed && requested == RunMode::fresh && (has_ckpt || has_report)) {
        // A finished run keeps its checkpoints (checkpoint.phase_end writes one after the last
        // phase): --resume would only write its report again.
        throw Error("run directory '" + m_path + "' already holds " +
                    (has_report ? std::string("a finished run (report.json); pass ")
                                : std::string("a run with a checkpoint; pass --resume to continue it or ")) +
                    "--overwrite to replace it (or choose another run.name)");
      } else if (existed && requested == RunMode::resume && !has_ckpt) {
        if (has_report)
          throw Error("--resume: the run in '" + m_path +
                      "' has finished (report.json) and has no checkpoint to continue from; pass "
                      "--overwrite instead of --resume to run it again");
        notes += "no checkpoint in '" + m_path +
                 "' yet (the earlier run stopped before its first one): starting from the beginning\n";
        mode = static_cast<int>(RunMode::fresh);
        aside = content;
      } else if (existed && requested == RunMode::fresh && content) {
        notes += "'" + m_path +
                 "' holds a run that stopped before its first checkpoint (nothing to resume): starting "
                 "it over\n";
        aside = true;
      } else if (existed && requested == RunMode::overwrite) {
        aside = content;
      }
      if (aside) {
        // Move the old run aside (its lock, still held by us, goes with it), make a new one.
        const std::string aside_path = m_path + ".previous";
        const fs::path prev(aside_path);
        if (fs::exists(prev, ec)) {
          if (!fs::exists(prev / marker_name, ec) && !is_legacy_run_dir(prev))
            throw Error("cannot move '" + m_path + "' aside: '" + aside_path +
                        "' exists and is not a mantissa run directory; move it away yourself");
          LockResult old = take_lock(prev, std::string(again));
          if (!old.error.empty()) throw Error(old.error);
          ::close(old.fd);
          fs::remove_all(prev, ec);
          if (ec) throw Error("cannot remove the earlier '" + aside_path + "' (" + ec.message() + ")");
        }
        fs::rename(dir, prev, ec);
        if (ec)
          throw Error("cannot move '" + m_path + "' aside to '" + aside_path + "' (" + ec.message() + ")");
        m_aside = aside_path;  // from here on a failure puts it back
        m_aside_lock_fd = m_lock_fd;
        m_lock_fd = -1;
        fs::create_directories(dir, ec);
        if (ec)
          throw Error("cannot create the run directory '" + m_path + "' (" + ec.message() +
                      "); choose a writable run.output_dir");
        write_marker(dir);
        LockResult fresh = take_lock(dir, std::string(again));
        if (!fresh.error.empty()) throw Error(fresh.error);
        m_lock_fd = fresh.fd;
      }
      fs::create_directories(ckpt, ec);
      if (ec)
        throw Error("cannot create '" + ckpt.string() + "' (" + ec.message() + "); check checkpoint.dir");
      // Writable for what the run writes (a read-only or full file system is found now, not
      // after the work): a probe file in the run directory and in its checkpoints.
      for (const fs::path& d : {dir, ckpt}) {
        const fs::path probe = d / ".write-probe";
        {
          std::ofstream out(probe);
          out << "probe\n";
          out.flush();
          if (!out)
            throw Error("cannot write in '" + d.string() + "' (" + std::strerror(errno) +
                        "); the run directory must be writable: choose another run.output_dir");
        }
        fs::remove(probe, ec);
      }
    } catch (const Error& e) {
      err = e.what();
    } catch (const std::exception& e) {
      err = std::string("run directory '") + m_path + "': " + e.what();
    }
  }
  broadcast_string(m_comm, err);
  if (!err.empty()) {
    if (rank == 0) {
      // Leave nothing half-done: the aside directory goes back, the lock is released.
      if (!m_aside.empty() && m_lock_fd >= 0) {
        // Only over a directory this start made and holds: the old run goes back.
        std::error_code ec;
        release_lock(m_path, m_lock_fd);
        fs::remove_all(m_path, ec);
        fs::rename(m_aside, m_path, ec);
      }
      release_lock(m_path, m_lock_fd);
      if (m_aside_lock_fd >= 0) {
        ::close(m_aside_lock_fd);
        m_aside_lock_fd = -1;
      }
      m_aside.clear();
    }
    throw Error(err);
  }
  MPI_Bcast(&mode, 1, MPI_INT, 0, m_comm);
  m_mode = static_cast<RunMode>(mode);
  broadcast_string(m_comm, notes);
  std::istringstream in(notes);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) m_notes.push_back(line);
  MPI_Barrier(m_comm);
}

void RunDirectory::commit() {
  int rank = 0;
  MPI_Comm_rank(m_comm, &rank);
  if (rank == 0 && !m_aside.empty()) {
    std::error_code ec;
    fs::remove_all(m_aside, ec);
    if (m_aside_lock_fd >= 0) ::close(m_aside_lock_fd);
    m_aside_lock_fd = -1;
  }
  m_committed = true;
}

RunDirectory::~RunDirectory() {
  int rank = 0, finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_rank(m_comm, &rank);
  if (rank != 0) return;
  std::error_code ec;
  if (!m_committed && !m_aside.empty() && m_lock_fd >= 0) {
    // A failed start: the previous run comes back (only over a directory this run holds).
    release_lock(m_path, m_lock_fd);
    fs::remove_all(m_path, ec);
    fs::rename(m_aside, m_path, ec);
    fs::remove(fs::path(m_path) / lock_name, ec);
  }
  release_lock(m_path, m_lock_fd);
  if (m_aside_lock_fd >= 0) ::close(m_aside_lock_fd);
}

}  // namespace mantissa::workflow
