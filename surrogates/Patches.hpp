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

// tokens [B * P, C * p^d] <- fields. patch_z: p in 3D, 1 in 2D.
template <class T, class TF>
void patchify(const FieldBatch<TF>& fields, int p, int patch_z, const Matrix<T>& tokens) {
  const std::int64_t B = fields.extent(0), C = fields.extent(1);
  const std::int64_t Pz = fields.extent(2) / patch_z, Py = fields.extent(3) / p, Px = fields.extent(4) / p;
  const std::int64_t feat = C * patch_z * p * p;
  if (std::int64_t(tokens.extent(0)) != B * Pz * Py * Px || std::int64_t(tokens.extent(1)) != feat)
    throw Error("mantissa::surrogates::patchify: token matrix has the wrong shape (internal)");
  Kokkos::parallel_for(
      "mantissa::surrogates::patchify", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(tokens.size())),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t t = k / feat, f = k % feat;
        const std::int64_t b = t / (Pz * Py * Px), r = t % (Pz * Py * Px);
        const std::int64_t pz = r / (Py * Px), py = (r / Px) % Py, px = r % Px;
        const std::int64_t c = f / (patch_z * p * p), q = f % (patch_z * p * p);
        const std::int64_t dz = q / (p * p), dy = (q / p) % p, dx = q % p;
        tokens(t, f) = T(fields(b, c, pz * patch_z + dz, py * p + dy, px * p + dx));
      });
}

// fields <- tokens (the inverse permutation).
template <class T, class TF>
void unpatchify(const Matrix<T>& tokens, int p, int patch_z, const FieldBatch<TF>& fields) {
  const std::int64_t C = fields.extent(1);
  const std::int64_t Pz = fields.extent(2) / patch_z, Py = fields.extent(3) / p, Px = fields.extent(4) / p;
  const std::int64_t feat = C * patch_z * p * p;
  Kokkos::parallel_for(
      "mantissa::surrogates::unpatchify", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(tokens.size())),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t t = k / feat, f = k % feat;
        const std::int64_t b = t / (Pz * Py * Px), r = t % (Pz * Py * Px);
        const std::int64_t pz = r / (Py * Px), py = (r / Px) % Py, px = r % Px;
        const std::int64_t c = f / (patch_z * p * p), q = f % (patch_z * p * p);
        const std::int64_t dz = q / (p * p), dy = (q / p) % p, dx = q % p;
        fields(b, c, pz * patch_z + dz, py * p + dy, px * p + dx) = TF(tokens(t, f));
      });
}

}  // namespace mantissa::surrogates
