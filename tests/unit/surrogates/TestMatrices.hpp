#pragma once
// Small helpers shared by the surrogate unit tests: a matrix of uniform random entries and the
// dot product of two matrices of the same shape (the scalar loss of the gradient checks).
#include <surrogates/Tensor.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <random>

namespace mantissa::surrogates::test {

// r x c entries uniform in [-scale, scale], from a fixed seed.
template <class T>
Matrix<T> random_matrix(std::int64_t r, std::int64_t c, unsigned seed, double scale = 1.0) {
  auto m = make_matrix<T>("test::m", r, c);
  auto h = Kokkos::create_mirror_view(m);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) h(i, j) = T(u(gen));
  Kokkos::deep_copy(m, h);
  return m;
}

// sum_ij a_ij b_ij in double.
template <class T>
double dot(const Matrix<T>& a, const Matrix<T>& b) {
  double s = 0.0;
  Kokkos::parallel_reduce(
      "test::dot", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(a.size())),
      KOKKOS_LAMBDA(const std::int64_t k, double& acc) { acc += double(a.data()[k]) * double(b.data()[k]); },
      s);
  return s;
}

}  // namespace mantissa::surrogates::test
