#pragma once
// Position encodings added to the patch embeddings, from global patch coordinates:
//  - sinusoidal (Vaswani et al. 2017), per axis: the D channels are split into dim groups of
//    Dg = D/dim; group a holds sin(g_a w_i), cos(g_a w_i) with w_i = 10000^(-2i/Dg);
//  - learned: a table [number of global patches, D], row (gz*Py + gy)*Px + gx;
//  - none: nothing added; the model is then equivariant to shifts of the patch grid (up to the
//    windows' partition and the domain edges), so what it learns at one source position carries
//    to another (the static inputs, e.g. the velocity, still say where a token is).
#include <surrogates/Parameter.hpp>
#include <surrogates/TokenLayout.hpp>

#include <random>
#include <string>
#include <vector>

namespace mantissa::surrogates {

enum class PositionKind { sinusoidal, learned, none };

template <class T>
class PositionEncoding {
 public:
  PositionEncoding() = default;
  PositionEncoding(PositionKind kind, int dim, int embed, std::array<std::int64_t, 3> global_patches)
      : m_kind(kind), m_dim(dim), m_d(embed), m_global(global_patches) {
    if (dim == 2) m_global[2] = 1;
    if (kind == PositionKind::sinusoidal && embed % (2 * dim) != 0)
      throw Error("surrogate position encoding: sinusoidal encoding needs surrogate.embed (" +
                  std::to_string(embed) + ") divisible by 2*dim = " + std::to_string(2 * dim));
    if (kind == PositionKind::learned) {
      const std::int64_t rows = m_global[0] * m_global[1] * m_global[2];
      m_table = make_matrix<T>("mantissa::surrogates::PositionEncoding::pos.table", rows, embed);
      m_dtable = make_matrix<T>("mantissa::surrogates::PositionEncoding::pos.table.grad", rows, embed);
    }
  }

  void initialize(std::mt19937_64& gen) {
    if (m_kind != PositionKind::learned) return;
    // Small values so the initial encoding does not swamp the patch embedding (ViT uses std 0.02).
    std::uniform_real_distribution<double> u(-0.02, 0.02);
    auto h = Kokkos::create_mirror_view(m_table);
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j) h(i, j) = T(u(gen));
    Kokkos::deep_copy(m_table, h);
  }

  // x += encoding(token coordinates).
  void forward(const TokenLayout& layout, const Matrix<T>& x) {
    if (m_kind == PositionKind::none) return;
    check(layout);
    auto coords = layout.coords();
    auto xx = x;
    const int d = m_d;
    const std::int64_t n = x.extent(0);
    if (m_kind == PositionKind::sinusoidal) {
      const int dim = m_dim, dg = m_d / m_dim;
      Kokkos::parallel_for(
          "mantissa::surrogates::PositionEncoding::sinusoidal", Kokkos::RangePolicy<ExecSpace>(0, n * d),
          KOKKOS_LAMBDA(const std::int64_t k) {
            const std::int64_t t = k / d;
            const int c = int(k % d), a = c / dg, i = (c % dg) / 2;
            if (a >= dim) return;
            const T freq = math::exp(-T(2 * i) / T(dg) * math::log(T(10000)));
            const T arg = T(coords(t, a)) * freq;
            xx(t, c) += (c % 2 == 0) ? math::sin(arg) : math::cos(arg);
          });
    } else {
      auto table = m_table;
      const std::int64_t gx = m_global[0], gy = m_global[1];
      Kokkos::parallel_for(
          "mantissa::surrogates::PositionEncoding::learned", Kokkos::RangePolicy<ExecSpace>(0, n * d),
          KOKKOS_LAMBDA(const std::int64_t k) {
            const std::int64_t t = k / d;
            const int c = int(k % d);
            const std::int64_t row = (coords(t, 2) * gy + coords(t, 1)) * gx + coords(t, 0);
            xx(t, c) += table(row, c);
          });
    }
  }

  // Gradient of the learned table (the sinusoidal encoding has no parameters).
  void backward(const TokenLayout& layout, const Matrix<T>& dx) {
    if (m_kind != PositionKind::learned) return;
    auto coords = layout.coords();
    auto dt = m_dtable;
    const int d = m_d;
    const std::int64_t gx = m_global[0], gy = m_global[1];
    // Several tiles of a batch may cover the same global patch: atomic adds.
    Kokkos::parallel_for(
        "mantissa::surrogates::PositionEncoding::backward",
        Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(dx.extent(0)) * d),
        KOKKOS_LAMBDA(const std::int64_t k) {
          const std::int64_t t = k / d;
          const int c = int(k % d);
          const std::int64_t row = (coords(t, 2) * gy + coords(t, 1)) * gx + coords(t, 0);
          Kokkos::atomic_add(&dt(row, c), dx(t, c));
        });
  }

  void parameters(std::vector<Parameter<T>>& out) {
    if (m_kind == PositionKind::learned)
      out.push_back(make_parameter(std::string("pos.table"), m_table, m_dtable));
  }

 private:
  void check(const TokenLayout& layout) const {
    if (m_kind != PositionKind::learned) return;
    for (const auto& o : layout.offsets())
      for (int a = 0; a < m_dim; ++a)
        if (o[a] < 0 || o[a] + layout.extent()[a] > m_global[a])
          throw Error("surrogate position encoding: a tile reaches patch " +
                      std::to_string(o[a] + layout.extent()[a]) + " along axis " + std::to_string(a) +
                      " but the learned table covers " + std::to_string(m_global[a]) +
                      " patches; use the grid the model was built for");
  }

  PositionKind m_kind = PositionKind::sinusoidal;
  int m_dim = 2, m_d = 0;
  std::array<std::int64_t, 3> m_global{1, 1, 1};
  Matrix<T> m_table, m_dtable;
};

}  // namespace mantissa::surrogates
