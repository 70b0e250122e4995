#pragma once
// The surrogate's tensors: every activation is a row-major matrix [tokens, features] in the
// default execution space's memory, so every layer is a GEMM or a row-wise kernel and
// batching is concatenation of rows.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace mantissa::surrogates {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
template <class T>
using Vector = Kokkos::View<T*, MemSpace>;
using IndexVector = Kokkos::View<int*, MemSpace>;

template <class T>
Matrix<T> make_matrix(const std::string& label, std::int64_t rows, std::int64_t cols) {
  return Matrix<T>(Kokkos::view_alloc(label), static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
}

// Reuses `m` when it already has the shape, so layers keep their buffers from step to step.
template <class T>
void ensure_shape(Matrix<T>& m, const std::string& label, std::int64_t rows, std::int64_t cols) {
  if (static_cast<std::int64_t>(m.extent(0)) != rows || static_cast<std::int64_t>(m.extent(1)) != cols)
    m = make_matrix<T>(label, rows, cols);
}

template <class T>
void ensure_size(Vector<T>& v, const std::string& label, std::int64_t n) {
  if (static_cast<std::int64_t>(v.extent(0)) != n)
    v = Vector<T>(Kokkos::view_alloc(label), static_cast<std::size_t>(n));
}

// y += x, element-wise, on matrices of the same shape (residual connections, gradient sums).
template <class T>
void add_into(const Matrix<T>& y, const Matrix<T>& x) {
  const std::size_t cols = y.extent(1);
  Kokkos::parallel_for(
      "mantissa::surrogates::add_into",
      Kokkos::RangePolicy<ExecSpace>(0, static_cast<std::int64_t>(y.extent(0) * cols)),
      KOKKOS_LAMBDA(const std::int64_t k) { y.data()[k] += x.data()[k]; });
}

// Flat element-wise copy between matrices of the same shape and any value types.
template <class TDst, class TSrc>
void convert(const Matrix<TDst>& dst, const Matrix<TSrc>& src) {
  if (dst.extent(0) != src.extent(0) || dst.extent(1) != src.extent(1))
    throw Error("mantissa::surrogates::convert: shapes differ (" + std::to_string(dst.extent(0)) + "x" +
                std::to_string(dst.extent(1)) + " vs " + std::to_string(src.extent(0)) + "x" +
                std::to_string(src.extent(1)) + ")");
  Kokkos::parallel_for(
      "mantissa::surrogates::convert",
      Kokkos::RangePolicy<ExecSpace>(0, static_cast<std::int64_t>(dst.size())),
      KOKKOS_LAMBDA(const std::int64_t k) { dst.data()[k] = TDst(src.data()[k]); });
}

}  // namespace mantissa::surrogates
