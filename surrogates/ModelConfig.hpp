#pragma once
// Shape of the transformer: what the deck's surrogate.* keys set.
#include <surrogates/PositionEncoding.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace mantissa::surrogates {

struct ModelConfig {
  int dim = 2;           // 2 or 3
  int in_channels = 3;   // seismic: p^n, p^{n-1}, velocity
  int out_channels = 2;  // seismic: change of p^n and p^{n-1} over K steps
  int patch = 4;         // p: a patch is p^dim cells
  int embed = 64;        // D
  int heads = 4;
  int layers = 2;
  int mlp_hidden = 256;
  int window = 4;        // w: attention windows of w^dim patches
  bool shifted = false;  // odd blocks use windows shifted by w/2
  PositionKind position = PositionKind::sinusoidal;
  std::array<std::int64_t, 3> global_patches{1, 1, 1};  // global grid in patches (learned table)
  double layer_norm_eps = 1e-5;
  std::uint64_t seed = 20261129;

  int patch_z() const { return dim == 3 ? patch : 1; }
  int patch_cells() const { return patch * patch * patch_z(); }
  int in_features() const { return in_channels * patch_cells(); }
  int out_features() const { return out_channels * patch_cells(); }
  // Throws mantissa::Error naming the surrogate.* key and the remedy.
  void validate() const;
  // Patches of halo a rank needs around its subdomain so that every owned token sees exactly the
  // windows it sees on one rank: a window cut by the halo's outer edge corrupts at most w-1
  // patches inwards per block with a new partition, and plain windows never change.
  int halo_patches() const { return shifted ? layers * (window - 1) : window - 1; }
  std::string describe() const;
};

}  // namespace mantissa::surrogates
