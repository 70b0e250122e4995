#include <surrogates/ModelConfig.hpp>

#include <sstream>

namespace mantissa::surrogates {

namespace {
void require(bool ok, const std::string& key, long long value, const std::string& remedy) {
  if (!ok) throw Error("surrogate." + key + " = " + std::to_string(value) + ": " + remedy);
}
}  // namespace

void ModelConfig::validate() const {
  require(dim == 2 || dim == 3, "dim", dim, "must be 2 or 3 (the mesh dimension)");
  require(in_channels >= 1, "in_channels", in_channels, "must be at least 1");
  require(out_channels >= 1, "out_channels", out_channels, "must be at least 1");
  require(patch >= 1 && patch <= 64, "patch", patch, "must be in 1..64");
  require(heads >= 1, "heads", heads, "must be at least 1");
  require(embed >= 1 && embed % heads == 0, "embed", embed,
          "must be a positive multiple of surrogate.heads (" + std::to_string(heads) + ")");
  require(position != PositionKind::sinusoidal || embed % (2 * dim) == 0, "embed", embed,
          "must be divisible by 2*dim for the sinusoidal position encoding");
  require(layers >= 1, "layers", layers, "must be at least 1");
  require(mlp_hidden >= 1, "mlp_hidden", mlp_hidden, "must be at least 1");
  require(window >= 1, "window", window, "must be at least 1");
  require(!shifted || window >= 2, "window", window, "must be at least 2 with shifted windows");
  for (int a = 0; a < dim; ++a)
    require(global_patches[a] >= 1, "global_patches", global_patches[a],
            "every axis needs at least one patch");
}

std::string ModelConfig::describe() const {
  std::ostringstream os;
  os << "ViT " << dim << "D: " << in_channels << " -> " << out_channels << " channels, patch " << patch << "^"
     << dim << ", D=" << embed << ", heads=" << heads << ", layers=" << layers << ", mlp=" << mlp_hidden
     << ", window " << window << "^" << dim << (shifted ? " (shifted)" : "") << ", "
     << (position == PositionKind::sinusoidal ? "sinusoidal"
         : position == PositionKind::learned  ? "learned"
                                              : "no")
     << " positions";
  return os.str();
}

}  // namespace mantissa::surrogates
