#include <mantissa/workflow/Signals.hpp>

#include <csignal>

namespace mantissa::workflow {

namespace {
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_term, g_old_usr1;

extern "C" void mantissa_stop_handler(int sig) {
  g_signal = sig;
}
}  // namespace

StopSignals::StopSignals() {
  struct sigaction sa {};
  sa.sa_handler = mantissa_stop_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGUSR1, &sa, &g_old_usr1);
}

StopSignals::~StopSignals() {
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGUSR1, &g_old_usr1, nullptr);
}

bool StopSignals::received_local() {
  return g_signal != 0;
}

bool StopSignals::received(MPI_Comm comm) {
  int local = g_signal != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

int StopSignals::last_signal() {
  return static_cast<int>(g_signal);
}

void StopSignals::clear() {
  g_signal = 0;
}

}  // namespace mantissa::workflow
