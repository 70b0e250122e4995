// Back-end specifics for precision reporting live here and nowhere else (STYLE.md item 4).
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/PrecisionSupport.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MANTISSA_X86_CPUID 1
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

namespace mantissa {

namespace {

#if defined(MANTISSA_X86_CPUID)
// XCR0: which register states the OS saves on context switch. AVX needs XMM|YMM (bits 1,2);
// AVX-512 also needs opmask|ZMM_Hi256|Hi16_ZMM (bits 5,6,7). Intel SDM vol. 1, 13.3.
unsigned long long read_xcr0() {
  unsigned int lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}
#endif

}  // namespace

CpuFeatures cpu_features() {
  CpuFeatures f;
#if defined(MANTISSA_X86_CPUID)
  unsigned int a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1u;
  if (!osxsave) return f;
  const unsigned long long xcr0 = read_xcr0();
  const bool os_avx = (xcr0 & 0x6u) == 0x6u;
  const bool os_avx512 = os_avx && (xcr0 & 0xE0u) == 0xE0u;
  const bool avx = ((c >> 28) & 1u) && os_avx;
  f.f16c = avx && ((c >> 29) & 1u);
  unsigned int a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) {
    f.avx2 = avx && ((b7 >> 5) & 1u);
    f.avx512f = os_avx512 && ((b7 >> 16) & 1u);
    f.avx512_fp16 = f.avx512f && ((d7 >> 23) & 1u);
    unsigned int a71 = 0, b71 = 0, c71 = 0, d71 = 0;
    if (a7 >= 1 && __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71))
      f.avx512_bf16 = f.avx512f && ((a71 >> 5) & 1u);
  }
#endif
  return f;
}

std::string default_execution_space_name() {
  return Kokkos::DefaultExecutionSpace::name();
}

std::vector<PrecisionSupport> precision_support() {
  std::vector<PrecisionSupport> out;
  for (Precision p : all_precisions()) {
    PrecisionSupport s;
    s.precision = p;
    out.push_back(s);
  }
  auto at = [&](Precision p) -> PrecisionSupport& { return out[static_cast<std::size_t>(p)]; };
  for (Precision p : {Precision::fp64, Precision::fp32}) {
    at(p).storage_native = at(p).arithmetic_native = at(p).hardware_available = true;
  }

#if defined(KOKKOS_ENABLE_CUDA)
  int dev = 0, major = 0, minor = 0;
  std::string arch = "unknown device";
  if (cudaGetDevice(&dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess)
    arch = "sm_" + std::to_string(major * 10 + minor);
  const int cc = major * 10 + minor;
  at(Precision::fp64).note = at(Precision::fp32).note = "CUDA " + arch + ": native";
  for (Precision p : {Precision::bf16, Precision::fp16}) {
    at(p).hardware_available = cc >= (p == Precision::bf16 ? 80 : 53);
    at(p).note = "CUDA " + arch + ": " + std::string(to_string(p)) +
                 " hardware converts and tensor cores available; mantissa's value type converts with "
                 "portable integer code and computes in fp32";
  }
  for (Precision p : {Precision::fp8_e4m3, Precision::fp8_e5m2}) {
    at(p).hardware_available = cc >= 89;
    at(p).note = "CUDA " + arch + ": fp8 " +
                 std::string(cc >= 89 ? "hardware (sm_89+) available" : "not in hardware (needs sm_89+)") +
                 "; mantissa's value type converts with portable integer code and computes in fp32";
  }
#elif defined(KOKKOS_ENABLE_HIP)
  int dev = 0;
  std::string arch = "unknown device";
  hipDeviceProp_t prop{};
  if (hipGetDevice(&dev) == hipSuccess && hipGetDeviceProperties(&prop, dev) == hipSuccess)
    arch = prop.gcnArchName;
  auto has = [&](const char* gfx) { return arch.rfind(gfx, 0) == 0; };
  const bool cdna = has("gfx90a") || has("gfx94") || has("gfx95");
  const bool fp8 = has("gfx94") || has("gfx95");
  at(Precision::fp64).note = at(Precision::fp32).note = "HIP " + arch + ": native";
  for (Precision p : {Precision::bf16, Precision::fp16}) {
    at(p).hardware_available = cdna || p == Precision::fp16;
    at(p).note =
        "HIP " + arch + ": " + std::string(to_string(p)) +
        " hardware available; mantissa's value type converts with portable integer code and computes in fp32";
  }
  for (Precision p : {Precision::fp8_e4m3, Precision::fp8_e5m2}) {
    at(p).hardware_available = fp8;
    at(p).note = "HIP " + arch + ": fp8 " +
                 std::string(fp8 ? "hardware (gfx942+) available" : "not in hardware (needs gfx942+)") +
                 "; mantissa's value type converts with portable integer code and computes in fp32";
  }
#else
  const CpuFeatures f = cpu_features();
  const std::string cpu = "CPU (" + default_execution_space_name() + ")";
  at(Precision::fp64).note = at(Precision::fp32).note = cpu + ": native";
  {
    auto& s = at(Precision::bf16);
    s.hardware_available = f.avx512_bf16;
    s.note = cpu + ": bf16 converts emulated in software, arithmetic in fp32; " +
             std::string(f.avx512_bf16 ? "AVX-512 BF16 converts and dot products available (avx512_bf16)"
                                       : "no AVX-512 BF16 on this CPU");
  }
  {
    auto& s = at(Precision::fp16);
    s.hardware_available = f.f16c || f.avx512_fp16;
    s.note =
        cpu + ": fp16 converts emulated in software, arithmetic in fp32; " +
        std::string(f.avx512_fp16 ? "AVX-512 FP16 arithmetic available (avx512_fp16)"
                                  : (f.f16c ? "F16C hardware converts available (f16c), no fp16 arithmetic"
                                            : "no fp16 hardware on this CPU"));
  }
  for (Precision p : {Precision::fp8_e4m3, Precision::fp8_e5m2})
    at(p).note = cpu + ": " + std::string(to_string(p)) +
                 " emulated in software (no x86 fp8 instructions), arithmetic in fp32";
#endif
  return out;
}

}  // namespace mantissa
