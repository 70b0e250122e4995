#pragma once
// Vendor tensor-core GEMM for 16- and 8-bit operands: cuBLASLt on CUDA, hipBLASLt on HIP.
// Compiled in only where surrogates/CMakeLists.txt found the library for the Kokkos back-end
// (MANTISSA_HAVE_CUBLASLT / MANTISSA_HAVE_HIPBLASLT); everywhere else these functions exist,
// report "not compiled" and gemm_path() never selects GemmPath::vendor_lt.
//
// Contract: the one of gemm_portable<TL> (C = alpha * op(A) * op(B) + beta * C, row-major views,
// fp32 accumulation, fp32 C), with bf16 / fp16 / fp8 operands in device memory. The library is
// column-major, so the row-major product is computed as C^T = op(B)^T op(A)^T: the operands are
// passed swapped and no data is transposed (except for fp8, below).
//
// fp8 (E4M3 / E5M2, OCP formats = NVIDIA's __nv_fp8_e4m3 / __nv_fp8_e5m2): per-tensor scales
// are handed to the library as device pointers (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER), which
// multiply the operands inside the GEMM. cuBLASLt's fp8 kernels take only the "TN" layout
// (column-major A transposed, B not), so operands in the other orientation are transposed into
// a scratch buffer first; E5M2 x E5M2 has no kernel and is declined.
#include <mantissa/core/LowPrecision.hpp>
#include <surrogates/Gemm.hpp>

#include <string>

namespace mantissa::surrogates::detail {

// "cuBLASLt 130100" (the library's own version number), "hipBLASLt 0.11.0" (the version of the
// headers compiled against; noted when HIP lacks the OCP fp8 types, so fp8 is declined) or ""
// when no vendor GEMM is compiled in.
std::string vendor_gemm_library();

// Whether this build sends GEMMs of this compute precision to the vendor library: bf16, fp16,
// fp8_e4m3 and fp8_e5m2 when a library is compiled in, never fp32 / fp64 (KokkosBlas::gemm).
bool vendor_gemm_handles(Precision compute);

// C = alpha * (a_scale op(A)) * (b_scale op(B)) + beta * C. A, B: bf16 x bf16, fp16 x fp16 or any
// pair of fp8 formats; the scales must be 1 for 16-bit operands (the libraries take scale
// pointers for fp8 only). Returns false and leaves C untouched when the library declines the
// problem (no kernel for this combination, shape or GPU, e.g. fp8 on a GPU without fp8 tensor
// cores or with dimensions that are not multiples of 16): the caller then uses gemm_portable.
// Throws mantissa::Error when a library call fails, or when no vendor GEMM is compiled in.
template <class TA, class TB>
bool gemm_vendor(char ta, char tb, float alpha, const Matrix<const TA>& A, float a_scale,
                 const Matrix<const TB>& B, float b_scale, float beta, const Matrix<float>& C);

// Matmul's entry. A and B are fp32 buffers whose values are already rounded to the operand
// formats (16-bit: `compute`; fp8: E5M2 where *_e5m2, else E4M3) and, for fp8, already multiplied
// by the per-tensor scales a_scale / b_scale. They are converted (exactly) to those formats and
// multiplied by gemm_vendor with de-scales 1 / a_scale, 1 / b_scale, so C receives
// alpha * op(A) * op(B) / (a_scale * b_scale) + beta * C, as from the portable path.
bool gemm_vendor_rounded(Precision compute, bool a_e5m2, bool b_e5m2, char ta, char tb, float alpha,
                         const Matrix<float>& A, float a_scale, const Matrix<float>& B, float b_scale,
                         float beta, const Matrix<float>& C);

}  // namespace mantissa::surrogates::detail
