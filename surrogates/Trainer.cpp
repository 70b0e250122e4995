#include <surrogates/Trainer.hpp>

#include <cmath>

namespace mantissa::surrogates {

namespace {
template <class T>
MPI_Datatype mpi_type() {
  return std::is_same<T, double>::value ? MPI_DOUBLE : MPI_FLOAT;
}

// Sum of squared differences (local) and, when write_grad, dout = factor * (out - target). A free
// function, not a private member: nvcc rejects device lambdas in private member functions.
template <class T>
double squared_error(const Matrix<T>& out, const Matrix<T>& targets, double factor, bool write_grad,
                     Matrix<T>& dout, const typename Trainer<T>::RowMask& counted) {
  if (out.extent(0) != targets.extent(0) || out.extent(1) != targets.extent(1))
    throw Error("surrogate training: targets are " + std::to_string(targets.extent(0)) + "x" +
                std::to_string(targets.extent(1)) + " but the model predicts " +
                std::to_string(out.extent(0)) + "x" + std::to_string(out.extent(1)));
  if (write_grad) ensure_shape(dout, "mantissa::surrogates::Trainer::dout", out.extent(0), out.extent(1));
  if (counted.extent(0) != 0 && counted.extent(0) != out.extent(0))
    throw Error("surrogate training: the row mask has " + std::to_string(counted.extent(0)) +
                " entries for " + std::to_string(out.extent(0)) + " tokens (internal)");
  auto d = dout;
  const T f = T(factor);
  const bool masked = counted.extent(0) != 0;
  const std::int64_t cols = out.extent(1);
  double s = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::surrogates::Trainer::mse", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(out.size())),
      KOKKOS_LAMBDA(const std::int64_t k, double& acc) {
        const bool in = !masked || counted(k / cols) != 0;
        const T e = in ? T(out.data()[k] - targets.data()[k]) : T(0);
        acc += double(e) * double(e);
        if (write_grad) d.data()[k] = f * e;
      },
      s);
  return s;
}

// Number of counted elements (rows counted times columns).
template <class T>
double counted_elements(const Matrix<T>& targets, const typename Trainer<T>::RowMask& counted) {
  if (counted.extent(0) == 0) return double(targets.size());
  std::int64_t rows = 0;
  Kokkos::parallel_reduce(
      "mantissa::surrogates::Trainer::counted_rows",
      Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(counted.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& acc) { acc += counted(r) != 0 ? 1 : 0; }, rows);
  return double(rows) * double(targets.extent(1));
}

}  // namespace

template <class T>
Trainer<T>::Trainer(Model<T>& model, const OptimizerConfig& opt, Precision compute, MPI_Comm comm,
                    const LossScaleConfig& scaling)
    : m_model(model), m_opt(opt, model.parameters()), m_ctx{compute}, m_comm(comm), m_scaling(scaling) {
  m_loss_scale = compute == Precision::fp16 ? scaling.initial : 1.0;
  // fp8 scales from the global batch's amax: every rank casts with the same scale, as one rank
  // holding the whole batch would (Transformer Engine reduces amax over the data-parallel group).
  m_ctx.fp8.comm = comm;
}

template <class T>
StepResult Trainer<T>::step(const TokenLayout& layout, const Matrix<T>& inputs, const Matrix<T>& targets,
                            const RowMask& counted_rows) {
  Kokkos::Profiling::pushRegion("mantissa::surrogates::Trainer::step");
  StepResult r;
  double count = counted_elements(targets, counted_rows);
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_DOUBLE, MPI_SUM, m_comm);
  m_model.zero_grad();
  m_ctx.fp8.counted_rows = counted_rows;
  m_model.forward(m_ctx, layout, inputs, m_out);
  add_skip(m_skip, inputs, m_out);
  // d(mean squared error)/d out = 2 (out - target) / count, times the loss scale.
  double sse = squared_error(m_out, targets, 2.0 / count * m_loss_scale, true, m_dout, counted_rows);
  m_model.backward(m_ctx, m_dout);
  m_ctx.fp8.counted_rows = RowMask();
  auto& params = m_model.parameters();
  int size = 1;
  MPI_Comm_size(m_comm, &size);
  MPI_Allreduce(MPI_IN_PLACE, &sse, 1, MPI_DOUBLE, MPI_SUM, m_comm);
  if (size > 1) {
    std::int64_t total = 0;
    for (const auto& p : params) total += p.size();
    m_reduce.resize(total);
    std::int64_t off = 0;
    for (const auto& p : params) {
      Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(m_reduce.data() + off,
                                                                                     p.size());
      Kokkos::deep_copy(h, p.grad);
      off += p.size();
    }
    MPI_Allreduce(MPI_IN_PLACE, m_reduce.data(), int(total), mpi_type<T>(), MPI_SUM, m_comm);
    off = 0;
    for (const auto& p : params) {
      Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(m_reduce.data() + off,
                                                                                     p.size());
      Kokkos::deep_copy(p.grad, h);
      off += p.size();
    }
  }
  r.loss = sse / count;
  r.loss_scale = m_loss_scale;
  if (m_loss_scale != 1.0) AdamW<T>::scale_grads(params, 1.0 / m_loss_scale);
  const double norm = m_opt.grad_norm(params);
  r.learning_rate = scheduled_learning_rate(m_opt.config(), m_opt.step_count());
  if (!std::isfinite(norm)) {
    // fp16 overflow (or a diverged run): skip the update; with loss scaling, back off.
    r.skipped = true;
    r.grad_norm = norm;
    if (m_ctx.compute == Precision::fp16) {
      m_loss_scale = std::max(1.0, m_loss_scale * 0.5);
      m_good_steps = 0;
    }
  } else {
    r.grad_norm = m_opt.step(params, norm);
    if (m_ctx.compute == Precision::fp16 && ++m_good_steps >= m_scaling.growth_interval) {
      m_loss_scale *= 2.0;
      m_good_steps = 0;
    }
  }
  Kokkos::Profiling::popRegion();
  return r;
}

template <class T>
double Trainer<T>::evaluate(const TokenLayout& layout, const Matrix<T>& inputs, const Matrix<T>& targets,
                            const RowMask& counted_rows) {
  double count = counted_elements(targets, counted_rows);
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_DOUBLE, MPI_SUM, m_comm);
  m_ctx.fp8.counted_rows = counted_rows;
  m_model.forward(m_ctx, layout, inputs, m_out);
  add_skip(m_skip, inputs, m_out);
  m_ctx.fp8.counted_rows = RowMask();
  double sse = squared_error(m_out, targets, 0.0, false, m_dout, counted_rows);
  MPI_Allreduce(MPI_IN_PLACE, &sse, 1, MPI_DOUBLE, MPI_SUM, m_comm);
  return sse / count;
}

template <class T>
void Trainer<T>::predict(const TokenLayout& layout, const Matrix<T>& inputs, Matrix<T>& out,
                         const RowMask& counted_rows) {
  m_ctx.fp8.counted_rows = counted_rows;
  m_model.forward(m_ctx, layout, inputs, out);
  add_skip(m_skip, inputs, out);
  m_ctx.fp8.counted_rows = RowMask();
}

template class Trainer<float>;
template class Trainer<double>;

}  // namespace mantissa::surrogates
