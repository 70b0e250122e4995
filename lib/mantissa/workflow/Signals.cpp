#include <mantissa/workflow/Signals.hpp>

#include <atomic>
#include <csignal>

namespace mantissa::workflow {

namespace {
// Only lock-free atomics may be touched from a signal handler ([support.signal]).
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag must be lock-free");
bool g_process_wide = false;  // set once, before any thread exists (main)
int g_scoped = 0;             // StopSignals objects alive that installed the handlers
struct sigaction g_old_term, g_old_usr1;

extern "C" void mantissa_stop_handler(int sig) {
  g_signal.store(sig, std::memory_order_relaxed);
}

void install(struct sigaction* old_term, struct sigaction* old_usr1) {
  struct sigaction sa {};
  sa.sa_handler = mantissa_stop_handler;
  sigemptyset(&sa.sa_mask);
  // Interrupted system calls restart: a stop request must not make a read, write or wait in
  // MPI, HDF5 or a library fail with EINTR; it is acted on at the next safe point.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, old_term);
  sigaction(SIGUSR1, &sa, old_usr1);
}
}  // namespace

void StopSignals::install_for_process() {
  if (g_process_wide) return;
  install(nullptr, nullptr);
  g_process_wide = true;
}

StopSignals::StopSignals() {
  if (g_process_wide || g_scoped++ > 0) return;
  install(&g_old_term, &g_old_usr1);
}

StopSignals::~StopSignals() {
  if (g_process_wide || --g_scoped > 0) return;
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGUSR1, &g_old_usr1, nullptr);
}

bool StopSignals::received_local() {
  return g_signal.load(std::memory_order_relaxed) != 0;
}

bool StopSignals::received(MPI_Comm comm) {
  int local = g_signal.load(std::memory_order_relaxed), any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm);
  // Every rank then names the same signal, also one that only another rank received.
  if (any != 0 && local == 0) g_signal.store(any, std::memory_order_relaxed);
  return any != 0;
}

bool StopSignals::received(MPI_Comm comm, bool local_reason, bool* any_local) {
  return received(comm, local_reason, any_local, false, nullptr);
}

bool StopSignals::received(MPI_Comm comm, bool local_a, bool* any_a, bool local_b, bool* any_b) {
  const int local[3] = {g_signal.load(std::memory_order_relaxed), local_a ? 1 : 0, local_b ? 1 : 0};
  int any[3] = {0, 0, 0};
  MPI_Allreduce(local, any, 3, MPI_INT, MPI_MAX, comm);
  if (any[0] != 0 && local[0] == 0) g_signal.store(any[0], std::memory_order_relaxed);
  if (any_a) *any_a = any[1] != 0;
  if (any_b) *any_b = any[2] != 0;
  return any[0] != 0;
}

int StopSignals::last_signal() {
  return g_signal.load(std::memory_order_relaxed);
}

std::string StopSignals::name(int sig) {
  if (sig == SIGTERM) return "SIGTERM";
  if (sig == SIGUSR1) return "SIGUSR1";
  return "signal " + std::to_string(sig);
}

void StopSignals::clear() {
  g_signal.store(0, std::memory_order_relaxed);
}

}  // namespace mantissa::workflow
