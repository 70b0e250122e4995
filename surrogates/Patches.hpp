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

// Where the cells of a token live in the batch of fields: the one index map shared by patchify
// and its inverse. Work is one token per iteration: its origin is found with a few divisions and
// its features are walked in order (c, dz, dy, dx), so the inner loop is a run of p contiguous
// cells along x. An index map per feature (ten 64-bit divisions per value) took a fifth of a
// training step's time, docs/performance.md.
struct PatchMap {
  std::int64_t Pz, Py, Px, feat, C, sx, sy, sz, sc, sb;
  int p, patch_z;
  template <class TF>
  PatchMap(const FieldBatch<TF>& fields, int p_, int patch_z_)
      : Pz(std::int64_t(fields.extent(2)) / patch_z_),
        Py(std::int64_t(fields.extent(3)) / p_),
        Px(std::int64_t(fields.extent(4)) / p_),
        feat(std::int64_t(fields.extent(1)) * patch_z_ * p_ * p_),
        C(std::int64_t(fields.extent(1))),
        sx(std::int64_t(fields.stride(4))),
        sy(std::int64_t(fields.stride(3))),
        sz(std::int64_t(fields.stride(2))),
        sc(std::int64_t(fields.stride(1))),
        sb(std::int64_t(fields.stride(0))),
        p(p_),
        patch_z(patch_z_) {}
  std::int64_t tokens(std::int64_t batch) const { return batch * Pz * Py * Px; }
  // Offset in the fields' storage of token t's first cell (channel 0, dz = dy = dx = 0).
  KOKKOS_INLINE_FUNCTION std::int64_t origin(std::int64_t t) const {
    const std::int64_t b = t / (Pz * Py * Px), r = t % (Pz * Py * Px);
    const std::int64_t pz = r / (Py * Px), py = (r / Px) % Py, px = r % Px;
    return b * sb + pz * patch_z * sz + py * p * sy + px * p * sx;
  }
  // f(feature, offset in the fields) for every feature of the token at `o`, in feature order.
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_features(std::int64_t o, const F& f) const {
    std::int64_t k = 0;
    for (std::int64_t c = 0; c < C; ++c)
      for (int dz = 0; dz < patch_z; ++dz)
        for (int dy = 0; dy < p; ++dy) {
          const std::int64_t row = o + c * sc + dz * sz + dy * sy;
          for (int dx = 0; dx < p; ++dx) f(k++, row + dx * sx);
        }
  }
};

// tokens [B * P, C * p^d] <- fields. patch_z: p in 3D, 1 in 2D.
template <class T, class TF>
void patchify(const FieldBatch<TF>& fields, int p, int patch_z, const Matrix<T>& tokens) {
  const PatchMap map(fields, p, patch_z);
  if (std::int64_t(tokens.extent(0)) != map.tokens(std::int64_t(fields.extent(0))) ||
      std::int64_t(tokens.extent(1)) != map.feat)
    throw Error("mantissa::surrogates::patchify: token matrix has the wrong shape (internal)");
  const TF* const src = fields.data();
  Kokkos::parallel_for(
      "mantissa::surrogates::patchify", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(tokens.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t t) {
        T* const row = &tokens(t, 0);
        map.for_features(map.origin(t), [&](std::int64_t f, std::int64_t o) { row[f] = T(src[o]); });
      });
}

// fields <- tokens (the inverse permutation).
template <class T, class TF>
void unpatchify(const Matrix<T>& tokens, int p, int patch_z, const FieldBatch<TF>& fields) {
  const PatchMap map(fields, p, patch_z);
  if (std::int64_t(tokens.extent(0)) != map.tokens(std::int64_t(fields.extent(0))) ||
      std::int64_t(tokens.extent(1)) != map.feat)
    throw Error("mantissa::surrogates::unpatchify: token matrix has the wrong shape (internal)");
  TF* const dst = fields.data();
  Kokkos::parallel_for(
      "mantissa::surrogates::unpatchify", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(tokens.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const T* const row = &tokens(t, 0);
        map.for_features(map.origin(t), [&](std::int64_t f, std::int64_t o) { dst[o] = TF(row[f]); });
      });
}

}  // namespace mantissa::surrogates
