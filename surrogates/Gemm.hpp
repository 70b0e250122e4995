#pragma once
// One matrix-multiply interface for every layer of the surrogate:
//
//   C = alpha * op(A) * op(B) + beta * C        (op = identity or transpose, row-major views)
//
// Paths, chosen in one place (gemm_path) from the compute precision and the build:
//  - onednn_f32:    fp32 with oneDNN's matmul on hosts when built with Mantissa_ENABLE_ONEDNN: its
//                   JIT kernels use AVX-512 where the BLAS TPL may not (Debian's OpenBLAS 0.3.21 runs
//                   its AVX2 Haswell kernels on Zen 4); MANTISSA_FP32_GEMM=blas in the environment
//                   selects kokkos_blas instead;
//  - kokkos_blas:   fp64/fp32 through KokkosBlas::gemm, i.e. the BLAS TPL on hosts (OpenBLAS
//                   here), cuBLAS / rocBLAS on GPUs;
//  - onednn_bf16:   bf16 x bf16 -> fp32 with oneDNN's matmul (AVX-512 BF16 / AMX), host only,
//                   when built with Mantissa_ENABLE_ONEDNN; fp8 operands are sent here too,
//                   because every e4m3/e5m2 value is exactly a bf16 value, so the products and
//                   the fp32 accumulation are those of an fp8 GEMM;
//  - fp32_embedded: 16/8-bit operands, rounded to their format, multiplied by the fp32 BLAS:
//                   each 16/8-bit value is exact in fp32, so this is the fp32-accumulate GEMM
//                   of the low-precision values (host without oneDNN, and fp16 on CPUs that
//                   lack AVX-512 FP16);
//  - portable:      a Kokkos kernel with fp32 accumulation for any 16/8-bit storage type, the
//                   path for device back-ends without a vendor low-precision GEMM;
//  - vendor_lt:     bf16 / fp16 / fp8 on tensor cores through cuBLASLt (CUDA) or hipBLASLt (HIP),
//                   fp32 accumulate, compiled only where the library was found
//                   (surrogates/detail/GemmVendor.hpp); a problem the library declines (fp8
//                   E5M2 x E5M2, unsupported shapes or GPU) runs on the portable path and is
//                   counted there. gemm_backends() says which library, if any, is compiled in.
#include <mantissa/core/Precision.hpp>
#include <surrogates/Tensor.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mantissa::surrogates {

enum class GemmPath { kokkos_blas, onednn_bf16, fp32_embedded, portable, vendor_lt, onednn_f32 };
std::string_view to_string(GemmPath p);

// The path the GEMM of a given compute precision takes in this build on this execution space.
GemmPath gemm_path(Precision compute);
// Whether the oneDNN bf16 matmul is compiled in (it is only used for host memory).
bool onednn_available();
// Whether oneDNN has a bf16 matmul on this CPU (it needs AVX512; AVX2-only CPUs have none).
bool onednn_bf16_available();
// One line per precision: "bf16: onednn_bf16 (oneDNN 2.6, ...)"; for `mantissa info`, reports.
std::string gemm_backends();

// Calls and floating-point operations per path since the last reset, so a report can say which
// path actually ran (not only which one would).
// With timing on (set_gemm_timing, for benchmarks), every call is fenced before and after and
// its wall time added to `seconds`, so flops / seconds is the rate the layers' GEMMs reach.
struct GemmCounter {
  std::int64_t calls = 0;
  double flops = 0.0;
  double seconds = 0.0;
};
GemmCounter gemm_counter(GemmPath p);
void reset_gemm_counters();
void count_gemm(GemmPath p, std::int64_t m, std::int64_t n, std::int64_t k, double seconds = 0.0);
void set_gemm_timing(bool on);
bool gemm_timing();
// Starts a measurement when timing is on (fences first); returns a token for gemm_elapsed.
double gemm_clock_start();
// Seconds since gemm_clock_start (fences first), or 0 when timing is off.
double gemm_elapsed(double start);

// op(A) is m x k, op(B) k x n, C m x n. trans: 'N' or 'T'. Throws mantissa::Error on shapes.
void check_gemm_shapes(const char* who, char ta, char tb, std::int64_t a0, std::int64_t a1, std::int64_t b0,
                       std::int64_t b1, std::int64_t c0, std::int64_t c1);

// fp64 / fp32 through KokkosBlas::gemm.
template <class T>
void gemm(char ta, char tb, T alpha, const Matrix<const T>& A, const Matrix<const T>& B, T beta,
          const Matrix<T>& C);

// Portable kernel: any storage type TL convertible to float, fp32 accumulation, fp32 C.
// Each thread computes a kTile x kTile block of C so that operands are reused from cache.
template <class TL>
void gemm_portable(char ta, char tb, float alpha, const Matrix<const TL>& A, const Matrix<const TL>& B,
                   float beta, const Matrix<float>& C) {
  check_gemm_shapes("gemm_portable", ta, tb, A.extent(0), A.extent(1), B.extent(0), B.extent(1), C.extent(0),
                    C.extent(1));
  const bool at = (ta == 'T' || ta == 't'), bt = (tb == 'T' || tb == 't');
  const std::int64_t m = C.extent(0), n = C.extent(1), k = at ? A.extent(0) : A.extent(1);
  constexpr int kTile = 4;
  const std::int64_t mt = (m + kTile - 1) / kTile, nt = (n + kTile - 1) / kTile;
  const double t0 = gemm_clock_start();
  Kokkos::parallel_for(
      "mantissa::surrogates::gemm_portable", Kokkos::RangePolicy<ExecSpace>(0, mt * nt),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i0 = (t / nt) * kTile, j0 = (t % nt) * kTile;
        float acc[kTile][kTile] = {};
        for (std::int64_t l = 0; l < k; ++l) {
          float a[kTile], b[kTile];
          for (int r = 0; r < kTile; ++r) {
            const std::int64_t i = i0 + r < m ? i0 + r : m - 1;
            const std::int64_t j = j0 + r < n ? j0 + r : n - 1;
            a[r] = float(at ? A(l, i) : A(i, l));
            b[r] = float(bt ? B(j, l) : B(l, j));
          }
          for (int r = 0; r < kTile; ++r)
            for (int c = 0; c < kTile; ++c) acc[r][c] += a[r] * b[c];
        }
        for (int r = 0; r < kTile; ++r)
          for (int c = 0; c < kTile; ++c) {
            const std::int64_t i = i0 + r, j = j0 + c;
            if (i < m && j < n) C(i, j) = alpha * acc[r][c] + (beta == 0.0f ? 0.0f : beta * C(i, j));
          }
      });
  count_gemm(GemmPath::portable, m, n, k, gemm_elapsed(t0));
}

// fp32 on the path gemm_path(Precision::fp32) names (onednn_f32 or kokkos_blas).
void gemm_fp32(char ta, char tb, float alpha, const Matrix<const float>& A, const Matrix<const float>& B,
               float beta, const Matrix<float>& C);

// fp32 x fp32 -> fp32 with oneDNN. Host memory only; throws mantissa::Error without oneDNN.
void gemm_onednn_f32(char ta, char tb, float alpha, const Matrix<const float>& A,
                     const Matrix<const float>& B, float beta, const Matrix<float>& C);

// Y = (X W^T + bias) + residual (an empty residual: none) in one oneDNN fp32 matmul, the bias and
// the residual added by its epilogue instead of a pass that writes them into Y before a GEMM with
// beta = 1 (a tenth of a small surrogate's training step, docs/performance.md). Returns false,
// touching nothing, where fp32 GEMMs do not take the onednn_f32 path (the caller does the rest).
bool linear_onednn_f32(const Matrix<const float>& X, const Matrix<const float>& W,
                       const Vector<const float>& bias, const Matrix<const float>& residual,
                       const Matrix<float>& Y);

// bf16 x bf16 -> fp32 with oneDNN; A and B hold bf16 bit patterns (uint16). Host memory only.
// Throws mantissa::Error when oneDNN is not compiled in.
void gemm_onednn_bf16(char ta, char tb, float alpha, const Matrix<const std::uint16_t>& A,
                      const Matrix<const std::uint16_t>& B, float beta, const Matrix<float>& C);

}  // namespace mantissa::surrogates
