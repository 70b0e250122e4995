// cuBLASLt / hipBLASLt tensor-core GEMM for bf16, fp16 and fp8 operands (see
// surrogates/detail/GemmVendor.hpp for the contract). hipBLASLt mirrors cuBLASLt's API, so one
// implementation serves both through the small alias layer `lt` below; which library is used is
// decided by surrogates/CMakeLists.txt (MANTISSA_HAVE_CUBLASLT / MANTISSA_HAVE_HIPBLASLT).
//
// Plans (matmul descriptor, layouts, the heuristic's first algorithm) are built once per shape,
// orientation and operand types and cached, as the surrogate calls the same few shapes every
// step. Accumulation and compute type are fp32 (CUBLAS_COMPUTE_32F), C and D fp32; fp8 "fast
// accumulation" stays off, so partial sums are promoted to fp32 as in the portable path.
#include <surrogates/detail/GemmVendor.hpp>

#if defined(MANTISSA_HAVE_CUBLASLT) && defined(MANTISSA_HAVE_HIPBLASLT)
#error "mantissa: cuBLASLt and hipBLASLt cannot both be enabled in one build"
#endif

#if defined(MANTISSA_HAVE_CUBLASLT)
#include <cublasLt.h>
#define MANTISSA_VENDOR_LT 1
#elif defined(MANTISSA_HAVE_HIPBLASLT)
#include <hipblaslt/hipblaslt.h>
#define MANTISSA_VENDOR_LT 1
#endif

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace mantissa::surrogates::detail {

#if defined(MANTISSA_VENDOR_LT)

// A named namespace, not an anonymous one: nvcc rejects extended (device) lambdas in functions
// with internal linkage, and the kernels below are such functions.
namespace vendor {

namespace lt {
#if defined(MANTISSA_HAVE_CUBLASLT)
using Status = cublasStatus_t;
using Handle = cublasLtHandle_t;
using Desc = cublasLtMatmulDesc_t;
using Layout = cublasLtMatrixLayout_t;
using Pref = cublasLtMatmulPreference_t;
using Heuristic = cublasLtMatmulHeuristicResult_t;
using Algo = cublasLtMatmulAlgo_t;
using DataType = cudaDataType_t;
using Op = cublasOperation_t;
constexpr Status success = CUBLAS_STATUS_SUCCESS;
constexpr Op op_n = CUBLAS_OP_N, op_t = CUBLAS_OP_T;
constexpr DataType r32f = CUDA_R_32F, r16bf = CUDA_R_16BF, r16f = CUDA_R_16F, r8e4m3 = CUDA_R_8F_E4M3,
                   r8e5m2 = CUDA_R_8F_E5M2;
constexpr bool has_fp8 = true;
inline Status create(Handle* h) {
  return cublasLtCreate(h);
}
inline Status destroy(Handle h) {
  return cublasLtDestroy(h);
}
inline Status desc_create(Desc* d) {
  return cublasLtMatmulDescCreate(d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
}
inline Status desc_destroy(Desc d) {
  return cublasLtMatmulDescDestroy(d);
}
inline Status set_trans(Desc d, bool first, Op op) {
  return cublasLtMatmulDescSetAttribute(d, first ? CUBLASLT_MATMUL_DESC_TRANSA : CUBLASLT_MATMUL_DESC_TRANSB,
                                        &op, sizeof(op));
}
inline Status set_scale(Desc d, bool first, const float* p) {
  return cublasLtMatmulDescSetAttribute(
      d, first ? CUBLASLT_MATMUL_DESC_A_SCALE_POINTER : CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p, sizeof(p));
}
inline Status layout_create(Layout* l, DataType t, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  return cublasLtMatrixLayoutCreate(l, t, rows, cols, ld);
}
inline Status layout_destroy(Layout l) {
  return cublasLtMatrixLayoutDestroy(l);
}
inline Status pref_create(Pref* p, std::uint64_t workspace) {
  Status s = cublasLtMatmulPreferenceCreate(p);
  if (s != success) return s;
  return cublasLtMatmulPreferenceSetAttribute(*p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                              sizeof(workspace));
}
inline Status pref_destroy(Pref p) {
  return cublasLtMatmulPreferenceDestroy(p);
}
inline Status heuristic(Handle h, Desc d, Layout a, Layout b, Layout c, Pref p, Heuristic* r, int* n) {
  return cublasLtMatmulAlgoGetHeuristic(h, d, a, b, c, c, p, 1, r, n);
}
inline Status matmul(Handle h, Desc d, const float* alpha, const void* a, Layout la, const void* b, Layout lb,
                     const float* beta, float* c, Layout lc, const Algo* algo, void* ws,
                     std::size_t ws_size) {
  return cublasLtMatmul(h, d, alpha, a, la, b, lb, beta, c, lc, c, lc, algo, ws, ws_size,
                        ExecSpace().cuda_stream());
}
inline std::string status_text(Status s) {
  return cublasLtGetStatusString(s);
}
inline std::string library() {
  return "cuBLASLt " + std::to_string(cublasLtGetVersion());
}
#else
using Status = hipblasStatus_t;
using Handle = hipblasLtHandle_t;
using Desc = hipblasLtMatmulDesc_t;
using Layout = hipblasLtMatrixLayout_t;
using Pref = hipblasLtMatmulPreference_t;
using Heuristic = hipblasLtMatmulHeuristicResult_t;
using Algo = hipblasLtMatmulAlgo_t;
using DataType = hipDataType;
using Op = hipblasOperation_t;
constexpr Status success = HIPBLAS_STATUS_SUCCESS;
constexpr Op op_n = HIPBLAS_OP_N, op_t = HIPBLAS_OP_T;
// HIP_R_8F_E4M3 / HIP_R_8F_E5M2 are the OCP formats (gfx950, MI355X); gfx942 (MI300) has only
// the FNUZ variants, which are different formats: there hipBLASLt declines and the portable
// path runs. HIP's hipDataType has the OCP values only from ROCm 6.3 (6.1 and 6.2 know just
// HIP_R_8F_E4M3_FNUZ / _E5M2_FNUZ), so they are looked up, not named: where they are missing,
// fp8 GEMMs are declined. A qualified name in a template, so that its absence is no error.
template <class E, class = void>
struct OcpFp8 {
  static constexpr bool available = false;
  static constexpr E e4m3 = HIPBLASLT_DATATYPE_INVALID, e5m2 = HIPBLASLT_DATATYPE_INVALID;
};
template <class E>
struct OcpFp8<E, decltype(void(E::HIP_R_8F_E4M3), void(E::HIP_R_8F_E5M2))> {
  static constexpr bool available = true;
  static constexpr E e4m3 = E::HIP_R_8F_E4M3, e5m2 = E::HIP_R_8F_E5M2;
};
constexpr DataType r32f = HIP_R_32F, r16bf = HIP_R_16BF, r16f = HIP_R_16F, r8e4m3 = OcpFp8<DataType>::e4m3,
                   r8e5m2 = OcpFp8<DataType>::e5m2;
constexpr bool has_fp8 = OcpFp8<DataType>::available;
inline Status create(Handle* h) {
  return hipblasLtCreate(h);
}
inline Status destroy(Handle h) {
  return hipblasLtDestroy(h);
}
inline Status desc_create(Desc* d) {
  return hipblasLtMatmulDescCreate(d, HIPBLAS_COMPUTE_32F, HIP_R_32F);
}
inline Status desc_destroy(Desc d) {
  return hipblasLtMatmulDescDestroy(d);
}
inline Status set_trans(Desc d, bool first, Op op) {
  return hipblasLtMatmulDescSetAttribute(
      d, first ? HIPBLASLT_MATMUL_DESC_TRANSA : HIPBLASLT_MATMUL_DESC_TRANSB, &op, sizeof(op));
}
inline Status set_scale(Desc d, bool first, const float* p) {
  return hipblasLtMatmulDescSetAttribute(
      d, first ? HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER : HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p,
      sizeof(p));
}
inline Status layout_create(Layout* l, DataType t, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  return hipblasLtMatrixLayoutCreate(l, t, rows, cols, ld);
}
inline Status layout_destroy(Layout l) {
  return hipblasLtMatrixLayoutDestroy(l);
}
inline Status pref_create(Pref* p, std::uint64_t workspace) {
  Status s = hipblasLtMatmulPreferenceCreate(p);
  if (s != success) return s;
  return hipblasLtMatmulPreferenceSetAttribute(*p, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                               sizeof(workspace));
}
inline Status pref_destroy(Pref p) {
  return hipblasLtMatmulPreferenceDestroy(p);
}
inline Status heuristic(Handle h, Desc d, Layout a, Layout b, Layout c, Pref p, Heuristic* r, int* n) {
  return hipblasLtMatmulAlgoGetHeuristic(h, d, a, b, c, c, p, 1, r, n);
}
inline Status matmul(Handle h, Desc d, const float* alpha, const void* a, Layout la, const void* b, Layout lb,
                     const float* beta, float* c, Layout lc, const Algo* algo, void* ws,
                     std::size_t ws_size) {
  return hipblasLtMatmul(h, d, alpha, a, la, b, lb, beta, c, lc, c, lc, algo, ws, ws_size,
                         ExecSpace().hip_stream());
}
inline std::string status_text(Status s) {
  return "hipblasStatus_t " + std::to_string(int(s));
}
// The version of the headers compiled against (hipblasLtGetVersion needs a handle, i.e. a GPU).
inline std::string library() {
  return "hipBLASLt " + std::to_string(HIPBLASLT_VERSION_MAJOR) + "." +
         std::to_string(HIPBLASLT_VERSION_MINOR) + "." + std::to_string(HIPBLASLT_VERSION_PATCH) +
         (has_fp8 ? "" : " (HIP without OCP fp8 types: fp8 runs on the portable kernel)");
}
#endif
}  // namespace lt

template <class T>
struct LtType;
template <>
struct LtType<bf16> {
  static constexpr lt::DataType value = lt::r16bf;
};
template <>
struct LtType<fp16> {
  static constexpr lt::DataType value = lt::r16f;
};
template <>
struct LtType<fp8_e4m3> {
  static constexpr lt::DataType value = lt::r8e4m3;
};
template <>
struct LtType<fp8_e5m2> {
  static constexpr lt::DataType value = lt::r8e5m2;
};

template <class T>
constexpr bool is_fp8_type = std::is_same<T, fp8_e4m3>::value || std::is_same<T, fp8_e5m2>::value;

using Bytes = Kokkos::View<std::uint8_t*, MemSpace>;

// Views over a byte buffer grown on demand, so the scratch operands are allocated once.
template <class T>
Matrix<T> scratch(Bytes& buffer, const char* label, std::int64_t rows, std::int64_t cols) {
  const std::size_t need = std::size_t(rows * cols) * sizeof(T);
  if (buffer.extent(0) < need)
    buffer = Bytes(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), need);
  return Matrix<T>(reinterpret_cast<T*>(buffer.data()), std::size_t(rows), std::size_t(cols));
}

template <class T>
void transpose_into(const Matrix<const T>& x, const Matrix<T>& out) {
  const std::int64_t rows = x.extent(0), cols = x.extent(1);
  Kokkos::parallel_for(
      "mantissa::surrogates::gemm_vendor::transpose", Kokkos::RangePolicy<ExecSpace>(0, rows * cols),
      KOKKOS_LAMBDA(const std::int64_t k) { out(k % cols, k / cols) = x(k / cols, k % cols); });
}

template <class T>
void convert_into(const Matrix<float>& x, const Matrix<T>& out) {
  Kokkos::parallel_for(
      "mantissa::surrogates::gemm_vendor::convert", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(x.size())),
      KOKKOS_LAMBDA(const std::int64_t k) { out.data()[k] = T(x.data()[k]); });
}

struct Plan {
  lt::Desc desc = nullptr;
  lt::Layout first = nullptr, second = nullptr, c = nullptr;
  lt::Algo algo{};
  bool ok = false;  // the library has a kernel for this problem
};

struct State {
  static constexpr std::uint64_t workspace_bytes = 32u << 20;  // NVIDIA's recommendation for Hopper
  lt::Handle handle = nullptr;
  Bytes workspace, conv_a, conv_b, trans_a, trans_b;
  Kokkos::View<float*, MemSpace> scales;  // [a_scale, b_scale] for the fp8 scale pointers
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, int, int, int, int>;
  std::map<Key, Plan> plans;
  std::mutex mutex;
};

void check(lt::Status s, const char* what) {
  if (s != lt::success)
    throw Error("mantissa::surrogates::gemm_vendor: " + lt::library() + " " + what +
                " failed: " + lt::status_text(s));
}

void release(State& s) {
  for (auto& [key, p] : s.plans) {
    if (p.c) lt::layout_destroy(p.c);
    if (p.second) lt::layout_destroy(p.second);
    if (p.first) lt::layout_destroy(p.first);
    if (p.desc) lt::desc_destroy(p.desc);
  }
  s.plans.clear();
  s.workspace = s.conv_a = s.conv_b = s.trans_a = s.trans_b = Bytes();
  s.scales = Kokkos::View<float*, MemSpace>();
  if (s.handle) lt::destroy(s.handle);
  s.handle = nullptr;
}

// Created on first use, released by a Kokkos finalize hook (before the device goes away).
State& state() {
  static State* s = [] {
    auto* st = new State();
    check(lt::create(&st->handle), "handle creation");
    st->workspace = Bytes("mantissa::surrogates::gemm_vendor::workspace", State::workspace_bytes);
    st->scales = Kokkos::View<float*, MemSpace>("mantissa::surrogates::gemm_vendor::scales", 2);
    Kokkos::push_finalize_hook([st] { release(*st); });
    return st;
  }();
  if (s->handle == nullptr)
    throw Error("mantissa::surrogates::gemm_vendor: called after Kokkos::finalize (internal)");
  return *s;
}

// Column-major view of the row-major problem: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
// The first library operand is B's storage (k x n or n x k row-major = its transpose column-major),
// the second is A's.
Plan& plan_for(State& s, lt::DataType type_a, lt::DataType type_b, bool at, bool bt, std::int64_t a0,
               std::int64_t a1, std::int64_t b0, std::int64_t b1, std::int64_t m, std::int64_t n, bool fp8) {
  const State::Key key{m, n, at ? a0 : a1, at, bt, int(type_a), int(type_b)};
  auto it = s.plans.find(key);
  if (it != s.plans.end()) return it->second;
  Plan p;
  check(lt::desc_create(&p.desc), "matmul descriptor creation");
  check(lt::set_trans(p.desc, true, bt ? lt::op_t : lt::op_n), "transpose attribute");
  check(lt::set_trans(p.desc, false, at ? lt::op_t : lt::op_n), "transpose attribute");
  if (fp8) {
    check(lt::set_scale(p.desc, true, s.scales.data() + 1), "B scale pointer");
    check(lt::set_scale(p.desc, false, s.scales.data()), "A scale pointer");
  }
  check(lt::layout_create(&p.first, type_b, b1, b0, b1), "layout creation");
  check(lt::layout_create(&p.second, type_a, a1, a0, a1), "layout creation");
  check(lt::layout_create(&p.c, lt::r32f, n, m, n), "layout creation");
  lt::Pref pref = nullptr;
  check(lt::pref_create(&pref, State::workspace_bytes), "preference creation");
  lt::Heuristic result{};
  int found = 0;
  // NOT_SUPPORTED (or no result) means no kernel for this combination: decline, do not throw.
  const lt::Status hs = lt::heuristic(s.handle, p.desc, p.first, p.second, p.c, pref, &result, &found);
  lt::pref_destroy(pref);
  p.ok = hs == lt::success && found > 0 && result.state == lt::success;
  if (p.ok) p.algo = result.algo;
  return s.plans.emplace(key, p).first->second;
}

template <class TA, class TB>
bool run_locked(State& s, char ta, char tb, float alpha, Matrix<const TA> A, float a_scale,
                Matrix<const TB> B, float b_scale, float beta, const Matrix<float>& C) {
  check_gemm_shapes("gemm_vendor", ta, tb, A.extent(0), A.extent(1), B.extent(0), B.extent(1), C.extent(0),
                    C.extent(1));
  constexpr bool fp8 = is_fp8_type<TA> && is_fp8_type<TB>;
  static_assert(fp8 || std::is_same<TA, TB>::value, "16-bit vendor GEMMs take two operands of one type");
  bool at = (ta == 'T' || ta == 't'), bt = (tb == 'T' || tb == 't');
  const std::int64_t m = C.extent(0), n = C.extent(1), k = at ? A.extent(0) : A.extent(1);
  if (m == 0 || n == 0) return true;
  if (k == 0) return false;  // the portable path scales C by beta
  if constexpr (fp8) {
    if (!lt::has_fp8) return false;
    // No E5M2 x E5M2 kernel in cuBLASLt.
    if (std::is_same<TA, fp8_e5m2>::value && std::is_same<TB, fp8_e5m2>::value) return false;
    // fp8 kernels take only TN: first operand (B's storage) transposed, second (A's) not, i.e.
    // row-major op(A) = A (m x k) and op(B) = B^T with B stored n x k.
    if (at) {
      auto t = scratch<TA>(s.trans_a, "mantissa::surrogates::gemm_vendor::trans_a", m, k);
      transpose_into<TA>(A, t);
      A = t;
      at = false;
    }
    if (!bt) {
      auto t = scratch<TB>(s.trans_b, "mantissa::surrogates::gemm_vendor::trans_b", n, k);
      transpose_into<TB>(B, t);
      B = t;
      bt = true;
    }
    const float host[2] = {a_scale, b_scale};
    Kokkos::deep_copy(s.scales, Kokkos::View<const float*, Kokkos::HostSpace>(host, 2));
  } else if (a_scale != 1.0f || b_scale != 1.0f) {
    throw Error("mantissa::surrogates::gemm_vendor: scales apply to fp8 operands only (internal)");
  }
  Plan& p = plan_for(s, LtType<TA>::value, LtType<TB>::value, at, bt, A.extent(0), A.extent(1), B.extent(0),
                     B.extent(1), m, n, fp8);
  if (!p.ok) return false;
  check(lt::matmul(s.handle, p.desc, &alpha, B.data(), p.first, A.data(), p.second, &beta, C.data(), p.c,
                   &p.algo, s.workspace.data(), State::workspace_bytes),
        "matmul");
  count_gemm(GemmPath::vendor_lt, m, n, k);
  return true;
}

}  // namespace vendor

std::string vendor_gemm_library() {
  return vendor::lt::library();
}

bool vendor_gemm_handles(Precision compute) {
  return compute == Precision::bf16 || compute == Precision::fp16 || compute == Precision::fp8_e4m3 ||
         compute == Precision::fp8_e5m2;
}

template <class TA, class TB>
bool gemm_vendor(char ta, char tb, float alpha, const Matrix<const TA>& A, float a_scale,
                 const Matrix<const TB>& B, float b_scale, float beta, const Matrix<float>& C) {
  using namespace vendor;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return run_locked<TA, TB>(s, ta, tb, alpha, A, a_scale, B, b_scale, beta, C);
}

bool gemm_vendor_rounded(Precision compute, bool a_e5m2, bool b_e5m2, char ta, char tb, float alpha,
                         const Matrix<float>& A, float a_scale, const Matrix<float>& B, float b_scale,
                         float beta, const Matrix<float>& C) {
  using namespace vendor;
  if (!vendor_gemm_handles(compute)) return false;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto conv = [&](auto tag, Bytes& buffer, const char* label, const Matrix<float>& x) {
    using T = decltype(tag);
    auto out = scratch<T>(buffer, label, x.extent(0), x.extent(1));
    convert_into<T>(x, out);
    return Matrix<const T>(out);
  };
  const char* la = "mantissa::surrogates::gemm_vendor::conv_a";
  const char* lb = "mantissa::surrogates::gemm_vendor::conv_b";
  if (compute == Precision::bf16)
    return run_locked<bf16, bf16>(s, ta, tb, alpha, conv(bf16{}, s.conv_a, la, A), 1.0f,
                                  conv(bf16{}, s.conv_b, lb, B), 1.0f, beta, C);
  if (compute == Precision::fp16)
    return run_locked<fp16, fp16>(s, ta, tb, alpha, conv(fp16{}, s.conv_a, la, A), 1.0f,
                                  conv(fp16{}, s.conv_b, lb, B), 1.0f, beta, C);
  // fp8: the buffers hold scale * x; the library multiplies by the de-scales.
  const float da = 1.0f / a_scale, db = 1.0f / b_scale;
  if (!lt::has_fp8 || (a_e5m2 && b_e5m2)) return false;  // no kernel: skip the conversion
  if (!a_e5m2 && !b_e5m2)
    return run_locked<fp8_e4m3, fp8_e4m3>(s, ta, tb, alpha, conv(fp8_e4m3{}, s.conv_a, la, A), da,
                                          conv(fp8_e4m3{}, s.conv_b, lb, B), db, beta, C);
  if (a_e5m2)
    return run_locked<fp8_e5m2, fp8_e4m3>(s, ta, tb, alpha, conv(fp8_e5m2{}, s.conv_a, la, A), da,
                                          conv(fp8_e4m3{}, s.conv_b, lb, B), db, beta, C);
  return run_locked<fp8_e4m3, fp8_e5m2>(s, ta, tb, alpha, conv(fp8_e4m3{}, s.conv_a, la, A), da,
                                        conv(fp8_e5m2{}, s.conv_b, lb, B), db, beta, C);
}

#else  // no vendor library in this build

std::string vendor_gemm_library() {
  return {};
}

bool vendor_gemm_handles(Precision) {
  return false;
}

template <class TA, class TB>
bool gemm_vendor(char, char, float, const Matrix<const TA>&, float, const Matrix<const TB>&, float, float,
                 const Matrix<float>&) {
  throw Error(
      "mantissa::surrogates::gemm_vendor: this build has no cuBLASLt / hipBLASLt (they are compiled only for "
      "the CUDA / HIP back-ends when found; see docs/portability.md)");
}

bool gemm_vendor_rounded(Precision, bool, bool, char, char, float, const Matrix<float>&, float,
                         const Matrix<float>&, float, float, const Matrix<float>&) {
  return false;
}

#endif

#define MANTISSA_GEMM_VENDOR_INSTANTIATE(TA, TB)                                       \
  template bool gemm_vendor<TA, TB>(char, char, float, const Matrix<const TA>&, float, \
                                    const Matrix<const TB>&, float, float, const Matrix<float>&);
MANTISSA_GEMM_VENDOR_INSTANTIATE(bf16, bf16)
MANTISSA_GEMM_VENDOR_INSTANTIATE(fp16, fp16)
MANTISSA_GEMM_VENDOR_INSTANTIATE(fp8_e4m3, fp8_e4m3)
MANTISSA_GEMM_VENDOR_INSTANTIATE(fp8_e4m3, fp8_e5m2)
MANTISSA_GEMM_VENDOR_INSTANTIATE(fp8_e5m2, fp8_e4m3)
MANTISSA_GEMM_VENDOR_INSTANTIATE(fp8_e5m2, fp8_e5m2)
#undef MANTISSA_GEMM_VENDOR_INSTANTIATE

}  // namespace mantissa::surrogates::detail
