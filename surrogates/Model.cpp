#include <surrogates/Model.hpp>

namespace mantissa::surrogates {

template <class T>
Model<T>::Model(const ModelConfig& config) : m_config(config), m_gen(config.seed) {
  m_config.validate();
  const auto& c = m_config;
  m_embed = Linear<T>("embed", c.in_features(), c.embed);
  m_embed.initialize(m_gen);
  m_pos = PositionEncoding<T>(c.position, c.dim, c.embed, c.global_patches);
  m_pos.initialize(m_gen);
  for (int l = 0; l < c.layers; ++l) {
    auto b = std::make_unique<Block>();
    const std::string p = "blocks." + std::to_string(l) + ".";
    b->ln1 = LayerNorm<T>(p + "ln1", c.embed, c.layer_norm_eps);
    b->qkv = Linear<T>(p + "qkv", c.embed, 3 * c.embed);
    b->attn = WindowAttention<T>(c.embed, c.heads);
    b->proj = Linear<T>(p + "proj", c.embed, c.embed);
    b->ln2 = LayerNorm<T>(p + "ln2", c.embed, c.layer_norm_eps);
    b->fc1 = Linear<T>(p + "fc1", c.embed, c.mlp_hidden);
    b->fc2 = Linear<T>(p + "fc2", c.mlp_hidden, c.embed);
    b->shifted = c.shifted && (l % 2 == 1);
    b->qkv.initialize(m_gen);
    b->proj.initialize(m_gen);
    b->fc1.initialize(m_gen);
    b->fc2.initialize(m_gen);
    m_blocks.push_back(std::move(b));
  }
  m_head = Linear<T>("head", c.embed, c.out_features());
  m_head.initialize(m_gen);

  m_embed.parameters(m_params);
  m_embed.scalings(m_scalings);
  m_pos.parameters(m_params);
  for (auto& b : m_blocks) {
    b->ln1.parameters(m_params);
    b->qkv.parameters(m_params);
    b->proj.parameters(m_params);
    b->ln2.parameters(m_params);
    b->fc1.parameters(m_params);
    b->fc2.parameters(m_params);
    for (auto* lin : {&b->qkv, &b->proj, &b->fc1, &b->fc2}) lin->scalings(m_scalings);
  }
  m_head.parameters(m_params);
  m_head.scalings(m_scalings);
}

template <class T>
void Model<T>::forward(const Context& ctx, const TokenLayout& layout, const Matrix<T>& tokens,
                       Matrix<T>& out) {
  Kokkos::Profiling::pushRegion("mantissa::surrogates::Model::forward");
  if (std::int64_t(tokens.extent(1)) != m_config.in_features() ||
      std::int64_t(tokens.extent(0)) != layout.num_tokens())
    throw Error("surrogate model: input tokens are " + std::to_string(tokens.extent(0)) + "x" +
                std::to_string(tokens.extent(1)) + ", the layout and configuration expect " +
                std::to_string(layout.num_tokens()) + "x" + std::to_string(m_config.in_features()));
  m_layout = &layout;
  m_embed.forward(ctx, tokens, m_x0);
  m_pos.forward(layout, m_x0);
  Matrix<T> x = m_x0;
  // On the oneDNN bf16 path the layer norms and GELU write their outputs as bf16 directly: their
  // only consumers are bf16 GEMMs (the backward needs their inputs), so a separate rounding pass and
  // an fp32 copy are saved. Same values as rounding the fp32 outputs.
  const bool bf16_inputs = Linear<T>::takes_bf16_input(ctx.compute);
  for (auto& bp : m_blocks) {
    Block& b = *bp;
    b.x_in = x;
    if (bf16_inputs) {
      b.ln1.forward_bf16(x, b.a1_16);
      b.qkv.forward_bf16_input(ctx, b.a1_16, Matrix<T>(), b.q);
    } else {
      b.ln1.forward(x, b.a1);
      b.qkv.forward(ctx, b.a1, b.q);
    }
    b.attn.forward(ctx.compute, layout.windows(b.shifted), b.q, b.att);
    // Residuals folded into the projections' outputs: h = x + proj(att), out = h + fc2(g1).
    b.proj.forward_residual(ctx, b.att, x, b.h);
    if (bf16_inputs) {
      b.ln2.forward_bf16(b.h, b.a2_16);
      b.fc1.forward_bf16_input(ctx, b.a2_16, Matrix<T>(), b.f1);
      b.gelu.forward_bf16(b.f1, b.g1_16);
      b.fc2.forward_bf16_input(ctx, b.g1_16, b.h, b.out);
    } else {
      b.ln2.forward(b.h, b.a2);
      b.fc1.forward(ctx, b.a2, b.f1);
      b.gelu.forward(b.f1, b.g1);
      b.fc2.forward_residual(ctx, b.g1, b.h, b.out);
    }
    x = b.out;
  }
  m_head.forward(ctx, x, out);
  Kokkos::Profiling::popRegion();
}

template <class T>
void Model<T>::backward(const Context& ctx, const Matrix<T>& dout) {
  Kokkos::Profiling::pushRegion("mantissa::surrogates::Model::backward");
  if (m_layout == nullptr) throw Error("surrogate model: backward called before forward");
  m_head.backward(ctx, dout, m_dx);
  Matrix<T> dx = m_dx;
  for (auto it = m_blocks.rbegin(); it != m_blocks.rend(); ++it) {
    Block& b = **it;
    // x' = h + fc2(gelu(fc1(ln2(h))))
    b.fc2.backward(ctx, dx, b.d_g1);
    b.gelu.backward(b.d_g1, b.d_f1);
    b.fc1.backward(ctx, b.d_f1, b.d_a2);
    b.ln2.backward(b.d_a2, b.d_h);
    add_into(b.d_h, dx);
    // h = x + proj(attn(qkv(ln1(x))))
    b.proj.backward(ctx, b.d_h, b.d_att);
    b.attn.backward(b.d_att, b.d_q);
    b.qkv.backward(ctx, b.d_q, b.d_a1);
    b.ln1.backward(b.d_a1, b.d_x);
    add_into(b.d_x, b.d_h);
    dx = b.d_x;
  }
  m_pos.backward(*m_layout, dx);
  m_embed.backward(ctx, dx, m_dtok, false);
  Kokkos::Profiling::popRegion();
}

template <class T>
void Model<T>::zero_grad() {
  for (auto& p : m_params) Kokkos::deep_copy(p.grad, T(0));
}

template <class T>
std::int64_t Model<T>::num_parameters() const {
  std::int64_t n = 0;
  for (const auto& p : m_params) n += p.size();
  return n;
}

template <class T>
double Model<T>::forward_flops_per_token() const {
  const auto& c = m_config;
  const double D = c.embed, w = std::pow(double(c.window), c.dim);
  const double linear = 2.0 * (double(c.in_features()) * D +
                               c.layers * (4.0 * D * D + 2.0 * D * c.mlp_hidden) + D * c.out_features());
  const double attention = c.layers * 4.0 * w * D;  // QK^T and PV
  return linear + attention;
}

template class Model<float>;
template class Model<double>;

}  // namespace mantissa::surrogates
