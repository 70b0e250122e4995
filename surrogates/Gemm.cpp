#include <surrogates/Gemm.hpp>
#include <surrogates/detail/AttentionAvx512Bf16.hpp>
#include <surrogates/detail/GemmVendor.hpp>

#include <KokkosBlas3_gemm.hpp>

#include <array>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>

namespace mantissa::surrogates {

namespace {
std::array<GemmCounter, 6> g_counters{};
std::mutex g_counter_mutex;
bool g_timing = false;
constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
// MANTISSA_FP32_GEMM=blas: fp32 through the BLAS TPL even where oneDNN is compiled in.
bool fp32_blas_forced() {
  static const bool forced = [] {
    const char* v = std::getenv("MANTISSA_FP32_GEMM");
    return v != nullptr && std::string(v) == "blas";
  }();
  return forced;
}
}  // namespace

std::string_view to_string(GemmPath p) {
  switch (p) {
    case GemmPath::kokkos_blas:
      return "kokkos_blas";
    case GemmPath::onednn_bf16:
      return "onednn_bf16";
    case GemmPath::fp32_embedded:
      return "fp32_embedded";
    case GemmPath::portable:
      return "portable";
    case GemmPath::vendor_lt:
      return "vendor_lt";
    case GemmPath::onednn_f32:
      return "onednn_f32";
  }
  return "unknown";
}

GemmPath gemm_path(Precision compute) {
  // Device memory with a vendor library compiled in: tensor cores for every 16/8-bit precision.
  if (!host_memory && detail::vendor_gemm_handles(compute)) return GemmPath::vendor_lt;
  switch (compute) {
    case Precision::fp64:
      return GemmPath::kokkos_blas;
    case Precision::fp32:
      return host_memory && onednn_available() && !fp32_blas_forced() ? GemmPath::onednn_f32
                                                                      : GemmPath::kokkos_blas;
    case Precision::bf16:
    case Precision::fp8_e4m3:
    case Precision::fp8_e5m2:
      if (host_memory && onednn_bf16_available()) return GemmPath::onednn_bf16;
      return host_memory ? GemmPath::fp32_embedded : GemmPath::portable;
    case Precision::fp16:
      return host_memory ? GemmPath::fp32_embedded : GemmPath::portable;
  }
  return GemmPath::portable;
}

std::string gemm_backends() {
  std::ostringstream os;
  os << "execution space " << ExecSpace::name() << (host_memory ? " (host memory)" : " (device memory)")
     << "\n";
  for (Precision p : all_precisions()) {
    const GemmPath path = gemm_path(p);
    os << "  " << to_string(p) << ": " << to_string(path);
    switch (path) {
      case GemmPath::kokkos_blas:
        os << " (KokkosBlas::gemm, BLAS TPL)";
        break;
      case GemmPath::onednn_bf16:
        os << " (oneDNN matmul bf16 x bf16 -> fp32"
           << (p == Precision::bf16 ? ")" : "; fp8 values are exact in bf16)");
        break;
      case GemmPath::fp32_embedded:
        os << " (values rounded to " << to_string(p) << ", fp32 BLAS accumulate)";
        break;
      case GemmPath::portable:
        os << " (Kokkos kernel, fp32 accumulate)";
        break;
      case GemmPath::onednn_f32:
        os << " (oneDNN matmul fp32; MANTISSA_FP32_GEMM=blas selects the BLAS TPL)";
        break;
      case GemmPath::vendor_lt:
        os << " (" << detail::vendor_gemm_library() << ", fp32 accumulate"
           << (p == Precision::fp8_e4m3 || p == Precision::fp8_e5m2
                   ? ", per-tensor scale pointers; E5M2 x E5M2 and declined shapes: portable)"
                   : ")");
        break;
    }
    os << "\n";
  }
  const std::string vendor = detail::vendor_gemm_library();
  os << "  vendor tensor-core GEMM: "
     << (vendor.empty()
             ? "none compiled in (cuBLASLt / hipBLASLt are built only for the CUDA / HIP back-ends "
               "when found)"
             : vendor + " compiled in" + (host_memory ? ", unused for host memory" : ""));
  // Attention's own products (ragged windows: loops, not GEMM calls).
  os << "\n  attention products under bf16 and fp8 (bf16 operands): "
     << (attention_avx512bf16_compiled() && std::is_same<ExecSpace, Kokkos::DefaultHostExecutionSpace>::value
             ? (attention_avx512bf16_enabled()
                    ? "AVX512-BF16 host kernel (heads of a multiple of 16 channels; others: portable)"
                    : "portable kernel (AVX512-BF16 kernel switched off)")
             : "portable kernel (bf16-rounded operands, fp32 accumulate)");
  return os.str();
}

GemmCounter gemm_counter(GemmPath p) {
  std::lock_guard<std::mutex> lock(g_counter_mutex);
  return g_counters[static_cast<int>(p)];
}
void reset_gemm_counters() {
  std::lock_guard<std::mutex> lock(g_counter_mutex);
  g_counters = {};
}
void count_gemm(GemmPath p, std::int64_t m, std::int64_t n, std::int64_t k, double seconds) {
  std::lock_guard<std::mutex> lock(g_counter_mutex);
  auto& c = g_counters[static_cast<int>(p)];
  c.calls += 1;
  c.flops += 2.0 * double(m) * double(n) * double(k);
  c.seconds += seconds;
}
void set_gemm_timing(bool on) {
  g_timing = on;
}
bool gemm_timing() {
  return g_timing;
}
double gemm_clock_start() {
  if (!g_timing) return 0.0;
  Kokkos::fence();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double gemm_elapsed(double start) {
  if (!g_timing) return 0.0;
  Kokkos::fence();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() - start;
}

void check_gemm_shapes(const char* who, char ta, char tb, std::int64_t a0, std::int64_t a1, std::int64_t b0,
                       std::int64_t b1, std::int64_t c0, std::int64_t c1) {
  const bool at = (ta == 'T' || ta == 't'), bt = (tb == 'T' || tb == 't');
  const std::int64_t m = at ? a1 : a0, ka = at ? a0 : a1, kb = bt ? b1 : b0, n = bt ? b0 : b1;
  if (m != c0 || n != c1 || ka != kb) {
    std::ostringstream os;
    os << "mantissa::surrogates::" << who << ": shapes do not match: op(A) is " << m << "x" << ka
       << ", op(B) is " << kb << "x" << n << ", C is " << c0 << "x" << c1;
    throw Error(os.str());
  }
}

template <class T>
void gemm(char ta, char tb, T alpha, const Matrix<const T>& A, const Matrix<const T>& B, T beta,
          const Matrix<T>& C) {
  check_gemm_shapes("gemm", ta, tb, A.extent(0), A.extent(1), B.extent(0), B.extent(1), C.extent(0),
                    C.extent(1));
  const bool at = (ta == 'T' || ta == 't');
  const std::int64_t k = at ? A.extent(0) : A.extent(1);
  if (C.extent(0) == 0 || C.extent(1) == 0) return;
  if (k == 0) {
    // BLAS leaves C untouched for k == 0 only when beta == 1; do the scaling ourselves.
    Kokkos::parallel_for(
        "mantissa::surrogates::gemm::scale", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(C.size())),
        KOKKOS_LAMBDA(const std::int64_t i) { C.data()[i] = beta == T(0) ? T(0) : beta * C.data()[i]; });
    return;
  }
  const char tas[2] = {at ? 'T' : 'N', '\0'};
  const char tbs[2] = {(tb == 'T' || tb == 't') ? 'T' : 'N', '\0'};
  const double t0 = gemm_clock_start();
  KokkosBlas::gemm(tas, tbs, alpha, A, B, beta, C);
  count_gemm(GemmPath::kokkos_blas, C.extent(0), C.extent(1), k, gemm_elapsed(t0));
}

void gemm_fp32(char ta, char tb, float alpha, const Matrix<const float>& A, const Matrix<const float>& B,
               float beta, const Matrix<float>& C) {
  if (gemm_path(Precision::fp32) == GemmPath::onednn_f32 && A.extent(0) * A.extent(1) > 0 &&
      B.extent(0) * B.extent(1) > 0)
    gemm_onednn_f32(ta, tb, alpha, A, B, beta, C);
  else
    gemm<float>(ta, tb, alpha, A, B, beta, C);
}

template void gemm<float>(char, char, float, const Matrix<const float>&, const Matrix<const float>&, float,
                          const Matrix<float>&);
template void gemm<double>(char, char, double, const Matrix<const double>&, const Matrix<const double>&,
                           double, const Matrix<double>&);

}  // namespace mantissa::surrogates
