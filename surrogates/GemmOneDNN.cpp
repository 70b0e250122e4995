// The oneDNN matmuls (host only): bf16 x bf16 -> fp32 and fp32 x fp32 -> fp32. Primitives are
// JIT-compiled per shape by oneDNN, so they are built once per (operand type, m, n, k, transposes,
// beta, bias, residual) and cached: the surrogate calls the same few shapes every step.
#include <surrogates/Gemm.hpp>

#if defined(MANTISSA_HAVE_ONEDNN)
#include <dnnl.hpp>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>
#endif

namespace mantissa::surrogates {

#if defined(MANTISSA_HAVE_ONEDNN)
namespace {
struct OneDnnState {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, bool, bool, bool, bool, bool>;
  struct Entry {
    dnnl::matmul matmul;
    dnnl::memory::desc scratch_md;
  };
  std::map<Key, Entry> cache;
  // One scratchpad for every primitive (user mode): oneDNN's own per-call scratchpad is a fresh
  // allocation each time, whose page faults cost more than small matmuls themselves.
  std::vector<char> scratch;
  std::mutex mutex;
};
OneDnnState& state() {
  static OneDnnState s;
  return s;
}

// C = alpha op(A) op(B) + beta C with A, B of oneDNN type `type` (bf16 or f32), C fp32; with a
// bias (n values, fp32) C = (alpha op(A) op(B) + bias) + residual instead (beta must be 0; the
// residual, m x n fp32 like C, is optional), the additions done by the matmul's own epilogue.
void onednn_matmul(const char* who, GemmPath path, dnnl::memory::data_type type, char ta, char tb,
                   float alpha, const void* A, std::int64_t a0, std::int64_t a1, const void* B,
                   std::int64_t b0, std::int64_t b1, float beta, const Matrix<float>& C,
                   const float* bias = nullptr, const float* residual = nullptr) {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible,
                "the oneDNN path is compiled only for host execution spaces");
  check_gemm_shapes(who, ta, tb, a0, a1, b0, b1, C.extent(0), C.extent(1));
  const bool at = (ta == 'T' || ta == 't'), bt = (tb == 'T' || tb == 't');
  const std::int64_t m = C.extent(0), n = C.extent(1), k = at ? a0 : a1;
  if (m == 0 || n == 0) return;
  using dt = dnnl::memory::data_type;
  // Row-major storage; a transposed operand is described by swapped strides.
  const dnnl::memory::desc a_md({m, k}, type, at ? dnnl::memory::dims{1, m} : dnnl::memory::dims{k, 1});
  const dnnl::memory::desc b_md({k, n}, type, bt ? dnnl::memory::dims{1, k} : dnnl::memory::dims{n, 1});
  const dnnl::memory::desc c_md({m, n}, dt::f32, dnnl::memory::dims{n, 1});
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const bool accumulate = beta != 0.0f, has_bias = bias != nullptr, has_res = residual != nullptr;
  if ((has_bias && accumulate) || (has_res && !has_bias))
    throw Error(std::string("mantissa::surrogates::") + who +
                ": a bias or residual needs beta = 0 and the residual a bias (internal)");
  const dnnl::memory::desc bias_md({1, n}, dt::f32, dnnl::memory::dims{n, 1});
  const OneDnnState::Key key{int(type), m, n, k, at, bt, accumulate, has_bias, has_res};
  auto it = s.cache.find(key);
  if (it == s.cache.end()) {
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (accumulate || has_res) {
      dnnl::post_ops ops;
      if (accumulate) ops.append_sum(1.0f);
      if (has_res) ops.append_binary(dnnl::algorithm::binary_add, c_md);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(
        has_bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md), attr,
        s.engine);
    it = s.cache.emplace(key, OneDnnState::Entry{dnnl::matmul(pd), pd.scratchpad_desc()}).first;
    if (s.scratch.size() < it->second.scratch_md.get_size())
      s.scratch.resize(it->second.scratch_md.get_size());
  }
  // beta other than 0 or 1: scale C first so the sum post-op can stay 1 (one cached primitive).
  if (accumulate && beta != 1.0f) {
    Kokkos::parallel_for(
        "mantissa::surrogates::gemm_onednn_bf16::scale_c",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(C.size())),
        KOKKOS_LAMBDA(const std::int64_t i) { C.data()[i] *= beta; });
    Kokkos::fence();
  }
  const double t0 = gemm_clock_start();
  dnnl::memory a_mem(a_md, s.engine, const_cast<void*>(A));
  dnnl::memory b_mem(b_md, s.engine, const_cast<void*>(B));
  dnnl::memory c_mem(c_md, s.engine, C.data());
  float alpha_copy = alpha;
  dnnl::memory scale_mem({{1}, dt::f32, {1}}, s.engine, &alpha_copy);
  dnnl::memory scratch_mem(it->second.scratch_md, s.engine, s.scratch.data());
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, a_mem},
                                             {DNNL_ARG_WEIGHTS, b_mem},
                                             {DNNL_ARG_DST, c_mem},
                                             {DNNL_ARG_ATTR_OUTPUT_SCALES, scale_mem},
                                             {DNNL_ARG_SCRATCHPAD, scratch_mem}};
  if (has_bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_md, s.engine, const_cast<float*>(bias)));
  if (has_res)
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                 dnnl::memory(c_md, s.engine, const_cast<float*>(residual)));
  it->second.matmul.execute(s.stream, args);
  s.stream.wait();
  count_gemm(path, m, n, k, gemm_elapsed(t0));
}
}  // namespace

bool onednn_available() {
  return true;
}

// oneDNN implements bf16 matmuls only on CPUs with AVX512 (AVX512-BF16 or its AVX512 emulation);
// on an AVX2-only CPU it has no implementation and primitive creation throws. Probed once.
bool onednn_bf16_available() {
  static const bool ok = [] {
    try {
      using dt = dnnl::memory::data_type;
      const dnnl::memory::desc a({16, 16}, dt::bf16, dnnl::memory::dims{16, 1});
      const dnnl::memory::desc c({16, 16}, dt::f32, dnnl::memory::dims{16, 1});
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, a, c), state().engine);
      (void)pd;
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return ok;
}

void gemm_onednn_bf16(char ta, char tb, float alpha, const Matrix<const std::uint16_t>& A,
                      const Matrix<const std::uint16_t>& B, float beta, const Matrix<float>& C) {
  onednn_matmul("gemm_onednn_bf16", GemmPath::onednn_bf16, dnnl::memory::data_type::bf16, ta, tb, alpha,
                A.data(), A.extent(0), A.extent(1), B.data(), B.extent(0), B.extent(1), beta, C);
}

void gemm_onednn_f32(char ta, char tb, float alpha, const Matrix<const float>& A,
                     const Matrix<const float>& B, float beta, const Matrix<float>& C) {
  onednn_matmul("gemm_onednn_f32", GemmPath::onednn_f32, dnnl::memory::data_type::f32, ta, tb, alpha,
                A.data(), A.extent(0), A.extent(1), B.data(), B.extent(0), B.extent(1), beta, C);
}

bool linear_onednn_f32(const Matrix<const float>& X, const Matrix<const float>& W,
                       const Vector<const float>& bias, const Matrix<const float>& residual,
                       const Matrix<float>& Y) {
  if (gemm_path(Precision::fp32) != GemmPath::onednn_f32 || X.extent(0) * X.extent(1) == 0 ||
      W.extent(0) * W.extent(1) == 0)
    return false;
  if (bias.extent(0) != Y.extent(1) ||
      (residual.data() && (residual.extent(0) != Y.extent(0) || residual.extent(1) != Y.extent(1))))
    throw Error(
        "mantissa::surrogates::linear_onednn_f32: bias or residual shape does not match the output "
        "(internal)");
  onednn_matmul("linear_onednn_f32", GemmPath::onednn_f32, dnnl::memory::data_type::f32, 'N', 'T', 1.0f,
                X.data(), X.extent(0), X.extent(1), W.data(), W.extent(0), W.extent(1), 0.0f, Y, bias.data(),
                residual.data());
  return true;
}

#else

bool linear_onednn_f32(const Matrix<const float>&, const Matrix<const float>&, const Vector<const float>&,
                       const Matrix<const float>&, const Matrix<float>&) {
  return false;
}

bool onednn_available() {
  return false;
}
bool onednn_bf16_available() {
  return false;
}

void gemm_onednn_bf16(char, char, float, const Matrix<const std::uint16_t>&,
                      const Matrix<const std::uint16_t>&, float, const Matrix<float>&) {
  throw Error(
      "mantissa::surrogates::gemm_onednn_bf16: this build has no oneDNN; configure with "
      "-DMantissa_ENABLE_ONEDNN=ON (Debian: apt install libdnnl-dev)");
}
void gemm_onednn_f32(char, char, float, const Matrix<const float>&, const Matrix<const float>&, float,
                     const Matrix<float>&) {
  throw Error(
      "mantissa::surrogates::gemm_onednn_f32: this build has no oneDNN; configure with "
      "-DMantissa_ENABLE_ONEDNN=ON (Debian: apt install libdnnl-dev)");
}

#endif

}  // namespace mantissa::surrogates
