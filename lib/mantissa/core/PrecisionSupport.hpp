#pragma once
// What the active Kokkos default execution space does with each precision: whether values of
// that format are stored and computed natively by the hardware or emulated by mantissa's
// portable value types (LowPrecision.hpp). `mantissa info` prints these tables and every
// report carries them, so a number measured in bf16 says whether it ran on bf16 hardware.
#include <mantissa/core/Precision.hpp>

#include <string>
#include <vector>

namespace mantissa {

struct PrecisionSupport {
  Precision precision;
  // Conversions to/from this format (loads, stores, casts) run on hardware instructions in
  // the code mantissa executes; false: software bit manipulation.
  bool storage_native = false;
  // Arithmetic runs in this format on the hardware; false: computed in a wider format (fp32)
  // and rounded back in software.
  bool arithmetic_native = false;
  // The hardware of the default execution space has instructions for this format at all
  // (some of which mantissa may not use, e.g. CPU bf16 dot products or GPU tensor cores).
  bool hardware_available = false;
  std::string note;  // one line for humans, e.g. "CPU: bf16 converts emulated in software; ..."
};

// x86 instruction-set extensions that matter for low precision; all false elsewhere. Read
// with CPUID and checked against the OS-enabled register state (XGETBV), so a flag is only
// true when the instructions can actually run.
struct CpuFeatures {
  bool avx2 = false;
  bool avx512f = false;
  bool avx512_bf16 = false;
  bool avx512_fp16 = false;
  bool f16c = false;
};
CpuFeatures cpu_features();

// One entry per precision of all_precisions(), in that order, for the default execution space.
std::vector<PrecisionSupport> precision_support();

// Name of the default execution space as Kokkos spells it ("OpenMP", "Cuda", "HIP", ...).
std::string default_execution_space_name();

}  // namespace mantissa
