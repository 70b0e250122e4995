#pragma once
// One training step: forward, MSE loss on normalised targets, backward, data-parallel gradient
// all-reduce over the communicator, loss-scale bookkeeping, clipping and AdamW.
//
// Data parallelism: each rank holds part of the global batch; the loss is the mean over the
// global batch (the element count is all-reduced), so the summed gradients equal those of one
// rank holding the whole batch, to rounding, and every rank takes the same optimizer step.
//
// fp16 uses dynamic loss scaling (Micikevicius et al., "Mixed Precision Training", ICLR 2018):
// the loss gradient is multiplied by S before backward; a step whose gradients are not finite
// is skipped and S halves; after `growth_interval` good steps S doubles.
#include <surrogates/AdamW.hpp>
#include <surrogates/Extrapolation.hpp>
#include <surrogates/Model.hpp>

#include <mpi.h>

namespace mantissa::surrogates {

struct LossScaleConfig {
  double initial = 65536.0;
  int growth_interval = 200;
};

struct StepResult {
  double loss = 0.0;       // global mean squared error (normalised units)
  double grad_norm = 0.0;  // before clipping
  double learning_rate = 0.0;
  double loss_scale = 1.0;
  bool skipped = false;  // non-finite gradients (fp16 overflow): no update
};

template <class T>
class Trainer {
 public:
  Trainer(Model<T>& model, const OptimizerConfig& opt, Precision compute, MPI_Comm comm,
          const LossScaleConfig& scaling = {});

  // counted_rows (optional, one entry per token): tokens whose error enters the loss and whose
  // values set fp8 scales; the others (a tile's halo, owned by a neighbour rank and cut at the
  // halo's outer edge) only give the counted tokens their context. Empty: every token counts.
  using RowMask = Kokkos::View<const std::uint8_t*, MemSpace>;
  StepResult step(const TokenLayout& layout, const Matrix<T>& inputs, const Matrix<T>& targets,
                  const RowMask& counted_rows = {});
  // Global mean squared error without touching gradients or optimizer state.
  double evaluate(const TokenLayout& layout, const Matrix<T>& inputs, const Matrix<T>& targets,
                  const RowMask& counted_rows = {});
  // The model's output for `inputs` at the training precision (no gradients; a pushforward step).
  void predict(const TokenLayout& layout, const Matrix<T>& inputs, Matrix<T>& out,
               const RowMask& counted_rows = {});

  // A fixed skip added to the model's output in step, evaluate and predict (Extrapolation.hpp);
  // empty (the default): the output is the model's alone.
  void set_skip(const LinearSkip& skip) { m_skip = skip; }
  const LinearSkip& skip() const { return m_skip; }

  Precision compute() const { return m_ctx.compute; }
  AdamW<T>& optimizer() { return m_opt; }
  double loss_scale() const { return m_loss_scale; }
  int good_steps() const { return m_good_steps; }
  void set_loss_scale(double s, int good) {
    m_loss_scale = s;
    m_good_steps = good;
  }

 private:
  Model<T>& m_model;
  AdamW<T> m_opt;
  Context m_ctx;
  MPI_Comm m_comm;
  LossScaleConfig m_scaling;
  double m_loss_scale = 1.0;
  int m_good_steps = 0;
  LinearSkip m_skip;
  Matrix<T> m_out, m_dout;
  std::vector<T> m_reduce;  // host staging for the gradient all-reduce
};

extern template class Trainer<float>;
extern template class Trainer<double>;

}  // namespace mantissa::surrogates
