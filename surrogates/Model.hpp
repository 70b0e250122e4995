#pragma once
// The vision-transformer surrogate (Dosovitskiy et al., "An Image is Worth 16x16 Words",
// ICLR 2021) over windows of patches: patch embedding + position encoding, L pre-norm blocks
//   h = x + proj(attn(qkv(ln1(x)))),   x' = h + fc2(gelu(fc1(ln2(h)))),
// and a linear head that un-embeds each token into its patch of outputs. There is no final
// layer norm: the targets (changes of a linear wave field) scale with the input amplitude, and a
// norm before the head would remove exactly that amplitude from every token; the pre-norm
// residual stream carries it to the head unchanged.
// Forward keeps what backward needs; backward accumulates parameter gradients.
#include <surrogates/Gelu.hpp>
#include <surrogates/LayerNorm.hpp>
#include <surrogates/Linear.hpp>
#include <surrogates/ModelConfig.hpp>
#include <surrogates/WindowAttention.hpp>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace mantissa::surrogates {

template <class T>
class Model {
 public:
  explicit Model(const ModelConfig& config);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return m_config; }
  // tokens: [N, in_features] -> out: [N, out_features]
  void forward(const Context& ctx, const TokenLayout& layout, const Matrix<T>& tokens, Matrix<T>& out);
  // Accumulates parameter gradients from dout [N, out_features] (after forward on the same layout).
  void backward(const Context& ctx, const Matrix<T>& dout);
  void zero_grad();

  std::vector<Parameter<T>>& parameters() { return m_params; }
  std::vector<std::pair<std::string, DelayedScaling*>>& scalings() { return m_scalings; }
  std::int64_t num_parameters() const;
  // Floating-point operations of one forward pass per token (GEMMs + attention at full windows);
  // training is about three times this.
  double forward_flops_per_token() const;

 private:
  struct Block {
    LayerNorm<T> ln1, ln2;
    Linear<T> qkv, proj, fc1, fc2;
    WindowAttention<T> attn;
    Gelu<T> gelu;
    bool shifted = false;
    Matrix<T> x_in, a1, q, att, pr, h, a2, f1, g1, f2, out;
    Matrix<T> d_pr_in, d_q, d_a1, d_x, d_h, d_a2, d_f1, d_g1, d_att;
    Matrix<std::uint16_t> a1_16, a2_16, g1_16;  // bf16 outputs of ln1, ln2, gelu (oneDNN bf16 path)
  };
  ModelConfig m_config;
  std::mt19937_64 m_gen;
  Linear<T> m_embed, m_head;
  PositionEncoding<T> m_pos;
  std::vector<std::unique_ptr<Block>> m_blocks;
  const TokenLayout* m_layout = nullptr;
  Matrix<T> m_x0, m_dx, m_dtok;
  std::vector<Parameter<T>> m_params;
  std::vector<std::pair<std::string, DelayedScaling*>> m_scalings;
};

extern template class Model<float>;
extern template class Model<double>;

}  // namespace mantissa::surrogates
