#pragma once
// Patchify / unpatchify between fields and tokens. A batch of fields is a View
// [B, C, nz, ny, nx] (row-major, x fastest, like mantissa::Field); patch (pz, py, px) of tile b
// is token (b * Pz * Py * Px + (pz * Py + py) * Px + px), and its features are ordered
// c * p^d + (dz * p + dy) * p + dx (dz absent in 2D): the order of PyTorch's
// x.reshape(B, C, Pz, p, Py, p, Px, p).permute(0, 2, 4, 6, 1, 3, 5, 7).
#include <surrogates/Tensor.hpp>

namespace mantissa::surrogates {

template <class T>
using FieldBatch = Kokkos::View<T*****, Kokkos::LayoutRight, MemSpace>;

// Where entry k of a token matrix lives in the batch of fields: the one index map shared by
// patchify and its inverse.
struct PatchMap {
  std::int64_t Pz, Py, Px, feat;
  int p, patch_z;
  template <class TF>
  PatchMap(const FieldBatch<TF>& fields, int p_, int patch_z_)
      : Pz(std::int64_t(fields.extent(2)) / patch_z_),
        Py(std::int64_t(fields.extent(3)) / p_),
        Px(std::int64_t(fields.extent(4)) / p_),
        feat(std::int64_t(fields.extent(1)) * patch_z_ * p_ * p_),
        p(p_),
        patch_z(patch_z_) {}
  std::int64_t tokens(std::int64_t batch) const { return batch * Pz * Py * Px; }
  // Token matrix entry k = (t, f) -> (b, c, z, y, x).
  KOKKOS_INLINE_FUNCTION void locate(std::int64_t k, std::int64_t& t, std::int64_t& f, std::int64_t& b,
                                     std::int64_t& c, std::int64_t& z, std::int64_t& y,
                                     std::int64_t& x) const {
    t = k / feat;
    f = k % feat;
    b = t / (Pz * Py * Px);
    const std::int64_t r = t % (Pz * Py * Px);
    const std::int64_t pz = r / (Py * Px), py = (r / Px) % Py, px = r % Px;
    c = f / (patch_z * p * p);
    const std::int64_t q = f % (patch_z * p * p);
    z = pz * patch_z + q / (p * p);
    y = py * p + (q / p) % p;
    x = px * p + q % p;
  }
};

// tokens [B * P, C * p^d] <- fields. patch_z: p in 3D, 1 in 2D.
template <class T, class TF>
void patchify(const FieldBatch<TF>& fields, int p, int patch_z, const Matrix<T>& tokens) {
  const PatchMap map(fields, p, patch_z);
  if (std::int64_t(tokens.extent(0)) != map.tokens(std::int64_t(fields.extent(0))) ||
      std::int64_t(tokens.extent(1)) != map.feat)
    throw Error("mantissa::surrogates::patchify: token matrix has the wrong shape (internal)");
  Kokkos::parallel_for(
      "mantissa::surrogates::patchify", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(tokens.size())),
      KOKKOS_LAMBDA(const std::int64_t k) {
        std::int64_t t, f, b, c, z, y, x;
        map.locate(k, t, f, b, c, z, y, x);
        tokens(t, f) = T(fields(b, c, z, y, x));
      });
}

// fields <- tokens (the inverse permutation).
template <class T, class TF>
void unpatchify(const Matrix<T>& tokens, int p, int patch_z, const FieldBatch<TF>& fields) {
  const PatchMap map(fields, p, patch_z);
  Kokkos::parallel_for(
      "mantissa::surrogates::unpatchify", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(tokens.size())),
      KOKKOS_LAMBDA(const std::int64_t k) {
        std::int64_t t, f, b, c, z, y, x;
        map.locate(k, t, f, b, c, z, y, x);
        fields(b, c, z, y, x) = TF(tokens(t, f));
      });
}

}  // namespace mantissa::surrogates
