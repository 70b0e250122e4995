#pragma once
// The floating-point environment kernels run under: whether subnormal (denormal) numbers are
// flushed to zero. On x86 a subnormal operand or result takes a microcode assist that costs
// ~100 cycles, so a wave whose tail decays into the subnormal range of fp32 (and of bf16, which
// has fp32's exponent range) runs several times slower than fp64 on the same data; with
// flush-to-zero (FTZ: subnormal results become 0) and denormals-are-zero (DAZ: subnormal inputs
// read as 0) the same arithmetic runs at full speed. This header sets and reads that mode
// (STYLE.md #22; Intel and AMD optimisation manuals on floating-point assists).
//
// Where the mode lives:
// - x86-64: MXCSR, a per-thread register (FTZ bit 15, DAZ bit 6). apply_float_env() sets it on
//   the calling thread and on every thread of Kokkos' host pool (all OpenMP threads, not only
//   the master), then reads it back on each of them.
// - AArch64: FPCR.FZ (bit 24, inputs and results, fp32 and fp64) and FPCR.FZ16 (bit 19), also
//   per thread, set the same way.
// - CUDA and HIP device code: fixed when the code is compiled (nvcc -ftz=true, clang/hipcc
//   -fgpu-flush-denormals-to-zero; both act on fp32 only). The CMake option
//   Mantissa_DEVICE_FLUSH_DENORMALS adds the flag and defines MANTISSA_DEVICE_FLUSH_DENORMALS=1;
//   the report then says "compile-time" and which mode that is, whatever the deck asks.
//
// Host only: nothing here is called from a kernel.
#include <string>
#include <string_view>

namespace mantissa {

enum class SubnormalMode { flush, keep };

std::string_view to_string(SubnormalMode m);
// Parses a deck value ("flush" | "keep"); throws mantissa::Error naming `where`, the value and
// the choices.
SubnormalMode parse_subnormal_mode(std::string_view text, std::string_view where = {});

// The mode of one host thread, as its control register says.
struct ThreadFloatEnv {
  bool flush_to_zero = false;       // FTZ: subnormal results become zero
  bool denormals_are_zero = false;  // DAZ: subnormal inputs read as zero
  bool flushing() const { return flush_to_zero && denormals_are_zero; }
};
// Whether this CPU's mode can be set at run time (x86-64 SSE, AArch64); false elsewhere.
bool host_float_env_controllable();
ThreadFloatEnv this_thread_float_env();
// Sets FTZ and DAZ together on the calling thread (no-op where not controllable).
void set_this_thread_float_env(SubnormalMode mode);

// What was in force after apply_float_env() / query_float_env().
struct FloatEnvReport {
  SubnormalMode requested = SubnormalMode::keep;
  // Where the kernels run: "host" (Serial, OpenMP, Threads) or the device back-end's name.
  std::string kernels_on;
  // How the mode is controlled there: "run-time" (per-thread register), "compile-time"
  // (device code) or "none" (a CPU whose mode mantissa cannot set; its default is in force).
  std::string control;
  std::string mechanism;  // "MXCSR FTZ+DAZ", "FPCR.FZ+FZ16", "nvcc -ftz=true", ...
  // The mode the kernels actually run under: "flush", "keep" or "mixed" (threads disagree).
  std::string in_force;
  int threads = 0;           // host threads read back (the calling thread + the pool's)
  int threads_flushing = 0;  // of those, with FTZ and DAZ set
  // True when the kernels run in the requested mode (every thread, or the compiled device mode).
  bool as_requested() const;
  // One line for logs and the report: "flush (run-time, MXCSR FTZ+DAZ on 2 of 2 host threads)".
  std::string describe() const;
};

// Sets the mode on the calling thread and on every thread of Kokkos' default host execution
// space, reads it back from each and reports it. Kokkos must be initialised. Call it again to
// change the mode (a variant with and one without flushing in the same run).
FloatEnvReport apply_float_env(SubnormalMode mode);
// Reads the mode back without changing it.
FloatEnvReport query_float_env(SubnormalMode requested = SubnormalMode::keep);

// Restores the modes of the calling thread and of the pool on destruction (tests, benches).
class ScopedFloatEnv {
 public:
  explicit ScopedFloatEnv(SubnormalMode mode);
  ~ScopedFloatEnv();
  ScopedFloatEnv(const ScopedFloatEnv&) = delete;
  ScopedFloatEnv& operator=(const ScopedFloatEnv&) = delete;
  const FloatEnvReport& report() const { return m_report; }

 private:
  SubnormalMode m_previous;
  FloatEnvReport m_report;
};

}  // namespace mantissa
