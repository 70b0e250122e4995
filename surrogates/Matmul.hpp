#pragma once
// Mixed-precision matrix multiply used by the layers: operands held in T (the master/activation
// type, fp32 or fp64) are rounded to the compute precision, multiplied with fp32 accumulation
// on the path gemm_path() names, and the fp32 result is written to C.
//
// fp8 follows the "hybrid" recipe of Micikevicius et al., "FP8 Formats for Deep Learning"
// (arXiv:2209.05433, 2022): activations and weights in E4M3, gradients in E5M2, each tensor
// with its own per-tensor scale from a delayed-scaling amax history (mantissa::DelayedScaling);
// the product is de-scaled by alpha / (scale_a * scale_b).
#include <mantissa/core/LowPrecision.hpp>
#include <surrogates/Gemm.hpp>
#include <surrogates/detail/GemmVendor.hpp>

#include <mpi.h>

#include <string>

namespace mantissa::surrogates {

// What kind of tensor an operand is: decides the fp8 format (E4M3 / E5M2).
enum class OperandKind { activation, weight, gradient };

// Where an fp8 operand's amax comes from, shared by all GEMMs of one forward/backward.
//  - comm: the amax of activations and gradients is all-reduced (MPI_MAX) over it, so every rank
//    of a domain-decomposed or data-parallel run casts with the same scale (the scale is then a
//    property of the global tensor, not of a rank's part: rank-count invariance). MPI_COMM_NULL:
//    no reduction.
//  - counted_rows: tokens (rows) whose values count for that amax; empty = all. A rank's
//    inference or training tile carries a halo of tokens owned by its neighbours, whose outer
//    rows see cut windows: they must not set the scale the owned tokens are cast with.
//  - current: just-in-time scaling from the tensor about to be cast, delayed-scaling history left
//    alone (inference: no warm-up or earlier state can saturate the first real prediction).
struct Fp8Amax {
  MPI_Comm comm = MPI_COMM_NULL;
  Kokkos::View<const std::uint8_t*, MemSpace> counted_rows;
  bool current = false;
};

// Delayed scaling for one operand; null means "no fp8 scaling state" (16-bit and up).
struct Fp8Operand {
  DelayedScaling* scaling = nullptr;
  OperandKind kind = OperandKind::activation;
  const Fp8Amax* amax = nullptr;  // null: local amax of all rows, delayed scaling
};

namespace detail {
// fp8 format of an operand under a compute precision: Precision::fp8_e4m3 is the hybrid recipe
// (E5M2 for gradients), Precision::fp8_e5m2 uses E5M2 everywhere.
inline bool use_e5m2(Precision compute, OperandKind kind) {
  return compute == Precision::fp8_e5m2 || kind == OperandKind::gradient;
}

template <class Q>
KOKKOS_INLINE_FUNCTION float round_through(float x) {
  return float(Q(x));
}
}  // namespace detail

inline bool is_fp8(Precision p) {
  return p == Precision::fp8_e4m3 || p == Precision::fp8_e5m2;
}

template <class T>
class Matmul {
 public:
  // C = alpha * op(A) * op(B) + beta * C at compute precision `p`.
  void run(Precision p, char ta, char tb, T alpha, const Matrix<T>& A, Fp8Operand fa, const Matrix<T>& B,
           Fp8Operand fb, T beta, const Matrix<T>& C) {
    if constexpr (std::is_same<T, double>::value) {
      if (p != Precision::fp64)
        throw Error("mantissa::surrogates::Matmul: an fp64 model computes in fp64 only, not " +
                    std::string(to_string(p)) + "; use master precision fp32 for low-precision compute");
      gemm<double>(ta, tb, alpha, A, B, beta, C);
    } else {
      if (p == Precision::fp64)
        throw Error("mantissa::surrogates::Matmul: an fp32 model cannot compute in fp64; use the fp64 model");
      if (p == Precision::fp32) {
        gemm_fp32(ta, tb, alpha, A, B, beta, C);
        return;
      }
      float sa = 1.0f, sb = 1.0f;
      if (is_fp8(p)) {
        sa = fp8_scale(fa, A);
        sb = fp8_scale(fb, B);
      }
      const float a = alpha / (sa * sb);
      const GemmPath path = gemm_path(p);
      if (path == GemmPath::onednn_bf16) {
        quantize_bits(p, fa.kind, A, sa, m_a16, "mantissa::surrogates::Matmul::a16");
        quantize_bits(p, fb.kind, B, sb, m_b16, "mantissa::surrogates::Matmul::b16");
        gemm_onednn_bf16(ta, tb, a, m_a16, m_b16, beta, C);
      } else {
        quantize_float(p, fa.kind, A, sa, m_af, "mantissa::surrogates::Matmul::af");
        quantize_float(p, fb.kind, B, sb, m_bf, "mantissa::surrogates::Matmul::bf");
        if (path == GemmPath::fp32_embedded) {
          const double t0 = gemm_clock_start();
          gemm_fp32(ta, tb, a, m_af, m_bf, beta, C);
          // Count under the path that names the arithmetic, not only the BLAS call underneath.
          count_gemm(GemmPath::fp32_embedded, C.extent(0), C.extent(1),
                     (ta == 'T' || ta == 't') ? A.extent(0) : A.extent(1), gemm_elapsed(t0));
        } else if (path != GemmPath::vendor_lt ||
                   !detail::gemm_vendor_rounded(p, detail::use_e5m2(p, fa.kind), detail::use_e5m2(p, fb.kind),
                                                ta, tb, alpha, m_af, sa, m_bf, sb, beta, C)) {
          // Portable kernel, also for what the vendor library declines (it then leaves C alone).
          gemm_portable<float>(ta, tb, a, m_af, m_bf, beta, C);
        }
      }
    }
  }

 private:
  // Scale for this cast from the amax history; the first cast (empty history) uses its own amax.
  // With Fp8Amax::current, from this tensor's amax (history untouched).
  static float fp8_scale(Fp8Operand f, const Matrix<T>& X) {
    if (f.scaling == nullptr)
      throw Error(
          "mantissa::surrogates::Matmul: fp8 compute needs a scaling state for every operand (internal)");
    float current = 0.0f;
    const bool tokens = f.kind != OperandKind::weight;  // rows are tokens
    if (f.amax != nullptr && tokens && f.amax->counted_rows.extent(0) == X.extent(0))
      current = counted_amax(X, f.amax->counted_rows);
    else
      current = amax(X);
    // Weights are the same on every rank; activations and gradients are parts of one tensor.
    if (f.amax != nullptr && tokens && f.amax->comm != MPI_COMM_NULL)
      MPI_Allreduce(MPI_IN_PLACE, &current, 1, MPI_FLOAT, MPI_MAX, f.amax->comm);
    if (f.amax != nullptr && f.amax->current) {
      // The format's range as Linear gives it to its states (E5M2 for gradients), the same margin.
      DelayedScaling now(f.kind == OperandKind::gradient ? float(precision_traits<fp8_e5m2>::max())
                                                         : float(precision_traits<fp8_e4m3>::max()),
                         f.scaling->config());
      now.update(current);
      return now.scale();
    }
    if (f.scaling->history().empty()) f.scaling->update(current);
    const float s = f.scaling->scale();
    f.scaling->update(current);  // the amax seen now shapes the next step's scale
    return s;
  }

 public:
  // max |X(r, :)| over the rows r with counted(r) != 0 (0 when none).
  static float counted_amax(const Matrix<T>& X, const Kokkos::View<const std::uint8_t*, MemSpace>& counted) {
    const auto x = X;
    const auto c = counted;
    const std::int64_t cols = X.extent(1);
    float result = 0.0f;
    Kokkos::parallel_reduce(
        "mantissa::surrogates::Matmul::counted_amax",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(X.size())),
        KOKKOS_LAMBDA(const std::int64_t i, float& m) {
          if (c(i / cols) != 0) m = math::fmax(m, math::fabs(float(x.data()[i])));
        },
        Kokkos::Max<float>(result));
    return result > 0.0f ? result : 0.0f;
  }

  // Public only because nvcc rejects an extended __host__ __device__ lambda (KOKKOS_LAMBDA)
  // inside a private or protected member function; not part of the interface.
 public:
  // One loop per format (the format is not a run-time branch inside the loop), so the bf16 one,
  // the hot one, is a plain vectorisable loop.
  static void quantize_bits(Precision p, OperandKind kind, const Matrix<T>& X, float s,
                            Matrix<std::uint16_t>& out, const char* label) {
    ensure_shape(out, label, X.extent(0), X.extent(1));
    auto o = out;
    const auto x = X;
    const auto policy = Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(X.size()));
    // fp8 values are exact in bf16: round to fp8 first, then the bf16 pattern is exact.
    if (p == Precision::bf16) {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_bits_bf16", policy,
          KOKKOS_LAMBDA(const std::int64_t i) { o.data()[i] = bf16(float(x.data()[i]) * s).bits(); });
    } else if (detail::use_e5m2(p, kind)) {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_bits_e5m2", policy, KOKKOS_LAMBDA(const std::int64_t i) {
            o.data()[i] = bf16(detail::round_through<fp8_e5m2>(float(x.data()[i]) * s)).bits();
          });
    } else {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_bits_e4m3", policy, KOKKOS_LAMBDA(const std::int64_t i) {
            o.data()[i] = bf16(detail::round_through<fp8_e4m3>(float(x.data()[i]) * s)).bits();
          });
    }
  }

  static void quantize_float(Precision p, OperandKind kind, const Matrix<T>& X, float s, Matrix<float>& out,
                             const char* label) {
    ensure_shape(out, label, X.extent(0), X.extent(1));
    auto o = out;
    const auto x = X;
    const auto policy = Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(X.size()));
    if (p == Precision::bf16) {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_float_bf16", policy, KOKKOS_LAMBDA(const std::int64_t i) {
            o.data()[i] = detail::round_through<bf16>(float(x.data()[i]) * s);
          });
    } else if (p == Precision::fp16) {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_float_fp16", policy, KOKKOS_LAMBDA(const std::int64_t i) {
            o.data()[i] = detail::round_through<fp16>(float(x.data()[i]) * s);
          });
    } else if (detail::use_e5m2(p, kind)) {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_float_e5m2", policy, KOKKOS_LAMBDA(const std::int64_t i) {
            o.data()[i] = detail::round_through<fp8_e5m2>(float(x.data()[i]) * s);
          });
    } else {
      Kokkos::parallel_for(
          "mantissa::surrogates::Matmul::quantize_float_e4m3", policy, KOKKOS_LAMBDA(const std::int64_t i) {
            o.data()[i] = detail::round_through<fp8_e4m3>(float(x.data()[i]) * s);
          });
    }
  }

 private:
  Matrix<std::uint16_t> m_a16, m_b16;
  Matrix<float> m_af, m_bf;
};

// An fp32 operand rounded once to a 16-bit compute precision (bf16 or fp16; no scaling state)
// and kept, so a layer reuses it in several GEMMs: the input and weight of the forward GEMM in
// the two backward GEMMs, the output gradient in both backward GEMMs. This is what autocast does
// (the cast copies are saved for backward); the values are those Matmul::run would round.
struct RoundedOperand {
  Matrix<std::uint16_t> bits;  // bf16 patterns (onednn_bf16 path)
  Matrix<float> values;        // rounded values in fp32 (fp32_embedded, portable paths)
  void round(Precision p, const Matrix<float>& x, const char* label) {
    if (gemm_path(p) == GemmPath::onednn_bf16)
      Matmul<float>::quantize_bits(p, OperandKind::activation, x, 1.0f, bits, label);
    else
      Matmul<float>::quantize_float(p, OperandKind::activation, x, 1.0f, values, label);
  }
};

// Whether a compute precision rounds operands without scaling state on a path that takes
// pre-rounded operands (oneDNN bf16, fp32-embedded BLAS), so RoundedOperand applies; other
// paths (portable, vendor libraries) go through Matmul::run.
inline bool rounds_without_scaling(Precision p) {
  if (p != Precision::bf16 && p != Precision::fp16) return false;
  const GemmPath path = gemm_path(p);
  return path == GemmPath::onednn_bf16 || path == GemmPath::fp32_embedded;
}

// C = alpha * op(A) * op(B) + beta * C on operands rounded by RoundedOperand::round, on the paths
// rounds_without_scaling admits.
inline void gemm_rounded(Precision p, char ta, char tb, float alpha, const RoundedOperand& A,
                         const RoundedOperand& B, float beta, const Matrix<float>& C) {
  const GemmPath path = gemm_path(p);
  if (path == GemmPath::onednn_bf16) {
    gemm_onednn_bf16(ta, tb, alpha, A.bits, B.bits, beta, C);
  } else {
    const double t0 = gemm_clock_start();
    gemm_fp32(ta, tb, alpha, A.values, B.values, beta, C);
    count_gemm(GemmPath::fp32_embedded, C.extent(0), C.extent(1),
               (ta == 'T' || ta == 't') ? A.values.extent(0) : A.values.extent(1), gemm_elapsed(t0));
  }
}

}  // namespace mantissa::surrogates
