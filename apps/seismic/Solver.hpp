#pragma once
// The acoustic wave solver (issue 3): one template for every precision. Storage is the type
// the wavefields live in (fp64, fp32, bf16, fp16), Compute the type the stencil computes in
// (fp64, fp32; 16-bit storage computes in fp32). Same code and kernels for all of them.
//
// A step: exchange the halo of p^n, fill ghosts at free-surface / rigid sides by images,
// update the CPML memory variables (and exchange them), then update p^{n-1} in place to
// p^{n+1} (interior box and PML boxes by separate kernels), inject the sources, swap. Every
// point's new value depends only on its neighbours' values, so FP64 results do not depend on
// the number of ranks; sources and receivers use a fixed arithmetic order on every rank.
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/Field.hpp>
#include <mantissa/mesh/HaloExchange.hpp>
#include <seismic/Config.hpp>
#include <seismic/Wavelet.hpp>
#include <seismic/detail/Launch.hpp>
#include <seismic/stencil_kernels.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mantissa::seismic {

struct Diagnostics {
  double time = 0.0;
  int step = 0;
  // The scheme's discrete energy, conserved exactly (up to rounding) by leapfrog with rigid
  // walls: sum_w [ (p^{n+1} - p^n)^2 / (c dt)^2 - p^{n+1} L p^n ] dV, where w halves the weight
  // of boundary nodes of rigid sides (so that L is symmetric). Reduced with MPI: the last bits
  // depend on the rank count.
  double energy = 0.0;
  double max_abs = 0.0;  // max |p^n| over the grid (exact at any rank count)
  bool finite = true;    // no NaN or Inf in p^n
};

// Shot gather of the current shot: data[r][s] is receiver r at time s * sample_interval.
struct Traces {
  std::vector<std::array<double, 3>> positions;
  double sample_interval = 0.0;
  std::vector<std::vector<double>> data;
  int num_samples() const { return data.empty() ? 0 : static_cast<int>(data.front().size()); }
};

template <class Storage, class Compute>
class Solver {
 public:
  using storage_type = Storage;
  using compute_type = Compute;
  // The model coefficient (c dt)^2 is read every step: kept in the storage type when that is
  // fp64/fp32; 16-bit storage keeps it in fp32 (an 8-bit velocity would be a model error,
  // not a state-precision error).
  using model_type = std::conditional_t<(sizeof(Storage) >= 4), Storage, float>;
  using field_type = Field<Storage>;
  using memory_field_type = Field<Compute>;
  using model_field_type = Field<model_type>;
  // Row alignment of the solver's fields of value type T (Field's align_bytes) on a grid of
  // `dim` dimensions. 3D with fp64 or fp32 storage: every row starts on a 16-value boundary and
  // holds a multiple of 16 values, so the row kernels' vector loads and stores do not straddle
  // cache lines (128-byte starts for doubles, 64 for floats), and every field of the solver has
  // the same row length: the kernels index p, q, the model and the CPML fields with one offset.
  // The 3D fp64 step ran up to 18 % faster so (10-13 % at 256^3 with CPML; fp32 within the
  // noise to 17 %); 2D steps ran 5-10 % slower and 16-bit steps 0-10 % slower
  // (docs/performance.md), so they keep unpadded rows. Code that copies a solver's field copies
  // its points (copy_points), not its span.
  template <class T>
  static std::size_t row_align_bytes(int dim) {
    return dim == 3 && sizeof(Storage) >= 4 ? 16 * sizeof(T) : 0;
  }
  using execution_space = typename field_type::execution_space;

  // The decomposition must outlive the solver. Throws mantissa::Error for configurations
  // that cannot run (CFL, order, positions); warnings() has the doubtful ones.
  Solver(const Decomposition& decomp, const Config& config);

  // Zeroes the state and memory variables, selects the shot's sources, clears the traces and
  // records sample 0.
  void initialize(int shot);
  void step();
  void run(int nsteps);
  // The part of a step that does not shrink with the grid, timed alone: the halo exchanges of p
  // (and of the CPML memory variables) and the boundary fills of one step, median of `reps`
  // repetitions on this rank, seconds, fenced. For the report's warning when a step is too small
  // to tell precisions apart. The state is unchanged (exchanges and fills are idempotent).
  double fixed_step_seconds(int reps = 20);

  double time() const { return double(m_step) * m_dt; }
  int step_index() const { return m_step; }
  int shot() const { return m_shot; }
  double dt() const { return m_dt; }
  double min_velocity() const { return m_vmin; }
  double max_velocity() const { return m_vmax; }
  const Config& config() const { return m_config; }
  const Decomposition& decomposition() const { return m_decomp; }
  const std::vector<std::string>& warnings() const { return m_warnings; }

  const field_type& pressure() const { return m_p; }               // p^n
  const field_type& previous_pressure() const { return m_p_old; }  // p^{n-1}
  const Field<double>& velocity() const { return m_velocity; }
  Diagnostics diagnostics() const;
  const Traces& traces() const { return m_traces; }

  // Loads a wavefield pair (owned points are copied; ghosts are refreshed). The CPML memory
  // variables are kept: a state handed back by a surrogate has none.
  void set_state(const field_type& current, const field_type& previous);

  // Checkpoint hooks: every array a bitwise restart needs, with stable names, plus the step.
  // The memory fields are empty when no side has a PML.
  std::vector<std::pair<std::string, field_type*>> state_fields();
  std::vector<std::pair<std::string, memory_field_type*>> memory_fields();
  // After the fields were loaded: set the step (and shot) and the traces recorded so far, and
  // refresh the ghosts.
  void restore(int shot, int step, const Traces& traces);

 private:
  template <int R>
  void step_impl();
  template <int R>
  double energy_impl() const;
  void fill_boundaries(field_type& f) const;
  void record();

  struct SourceStencil {
    Kokkos::View<int* [3], typename field_type::memory_space> index;
    Kokkos::View<Compute*, typename field_type::memory_space> weight;
    Wavelet wavelet;
  };

  const Decomposition& m_decomp;
  Config m_config;
  Grid m_grid;
  int m_radius;
  double m_dt = 0.0, m_vmin = 0.0, m_vmax = 0.0;
  int m_step = 0;
  int m_shot = -1;
  std::vector<std::string> m_warnings;

  field_type m_p, m_p_old;
  model_field_type m_c2dt2;
  Field<double> m_velocity;
  bool m_has_pml = false;
  std::array<memory_field_type, 3> m_psi, m_zeta;
  // Storage other than the compute type on device back-ends: p in the compute type on
  // m_pml_read_boxes (the PML boxes grown by the radius), converted once per step for the CPML
  // kernels (decode_box). Host back-ends decode into a ring per thread instead (host::CpmlRing).
  memory_field_type m_p_compute;
  std::vector<detail::Box> m_pml_read_boxes;
  std::array<Kokkos::View<Compute*, typename field_type::memory_space>, 3> m_pml_a, m_pml_b;
  detail::Box m_owned, m_interior;
  // The PML slabs (m_pml_boxes, every one): the x slabs, whose rows continue the interior's
  // (m_pml_row_boxes: their p update runs in the interior's sweep on host back-ends), and the y
  // and z slabs (m_pml_update_boxes).
  std::vector<detail::Box> m_pml_boxes, m_pml_row_boxes, m_pml_update_boxes;
  // The x slabs' memory update runs with their p update (Solver's constructor says when).
  bool m_pml_rows_memory = false;
  // Where each axis's psi and zeta are +0 (outside its slab): the CPML kernels skip that work.
  CpmlSlabs m_pml_slabs;
  HaloExchange<Storage> m_halo;
  std::unique_ptr<HaloExchange<Compute>> m_memory_halo;

  std::vector<SourceStencil> m_sources;
  Kokkos::View<int* [3], typename field_type::memory_space> m_rec_index;
  Kokkos::View<double*, typename field_type::memory_space> m_rec_values;
  std::vector<double> m_rec_weight;
  std::vector<std::size_t> m_rec_first;  // receiver r uses entries [first[r], first[r + 1])
  Traces m_traces;
};

// Interpolation stencil of a physical position: global indices and Lagrange weights (zero
// weights dropped), `order` points per axis, shifted inwards near the edges.
struct PointStencil {
  std::vector<std::array<std::int64_t, 3>> index;
  std::vector<double> weight;
};
PointStencil point_stencil(const std::array<double, 3>& position, const Grid& grid, int order);

extern template class Solver<double, double>;
extern template class Solver<double, float>;
extern template class Solver<float, double>;
extern template class Solver<float, float>;
extern template class Solver<bf16, float>;
extern template class Solver<fp16, float>;

}  // namespace mantissa::seismic
