#pragma once
// Incompressible Navier-Stokes on a 2D or 3D staggered (MAC) grid (issue 14):
//
//   du/dt + (u . grad) u = -grad p + nu lap u,   div u = 0.
//
// Time integration: Heun's second-order strong-stability-preserving Runge-Kutta (SSP-RK2,
// Shu and Osher 1988) applied to the projected equation du/dt = P F(u), F the advection and
// diffusion of flow_kernels.hpp, P the discrete Leray projection:
//
//   u1      = P (u^n + dt F(u^n))
//   u^{n+1} = P (1/2 u^n + 1/2 (u1 + dt F(u1)))
//
// P w = w - grad phi with -lap phi = -div w (lib/mantissa/solvers' PoissonSolver<Cell>, zero
// normal derivative at walls, periodic where the mesh is), so div u = 0 up to the solver's
// relative tolerance after each stage. Since u^n and u1 are divergence-free, the projected
// stages are exactly RK2 on P F: the velocity is second order in time, with no splitting error
// (no pressure boundary layer); the pressure itself is not needed by the velocity update and is
// recovered as p ~ 2 phi_2 / dt. Both stages keep their own phi as the next solve's initial guess.
//
// Boundaries (Config::side): periodic through the halo exchange (the Decomposition's periodic
// neighbours); walls and the lid by ghost values that depend on where the field lives (its
// Location tag): the normal component (Face<a> on a side of axis a) is zero on the wall face,
// the tangential one takes the ghost 2 w - u_inside so the average on the wall is the wall's
// velocity w (0, or the lid's).
//
// 3D (mesh.dim 3) is the same scheme with the third component w on the low z faces
// (Face<z>), the 7-point Laplacian, the advective fluxes on the cell edges (flow_kernels.hpp),
// a third pair of sides and the 7-point pressure Poisson solve; the 2D path is untouched (its
// kernels, sums and bits are those of the 2D-only solver).
//
// Storage is the velocity's precision, Compute the momentum arithmetic; phi and the Poisson
// solve's outer iteration are always fp64, the multigrid inside in Config::solver.
#include <cfd/Config.hpp>

#include <mantissa/mesh/Decomposition.hpp>
#include <mantissa/mesh/Field.hpp>
#include <mantissa/mesh/HaloExchange.hpp>
#include <mantissa/mesh/Location.hpp>
#include <mantissa/solvers/PoissonSolver.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mantissa::cfd {

// Largest stable time step of the scheme for velocity scale `speed` along every axis:
// 1 / (sum_a U / h_a + 2 nu sum_a 1 / h_a^2), sums over the grid's dim axes. The viscous part is
// SSP-RK2's real-axis limit (|lambda dt| <= 2 for the 5- or 7-point Laplacian's largest
// eigenvalue 4 nu sum 1/h^2); the
// advective part is the unit Courant number of centred differences. Throws nothing.
double stable_dt(const Grid& grid, double viscosity, double speed);
// The velocity scale the deck's dt is checked against: the lid speed and the initial field's
// largest component.
double velocity_scale(const Config& config);
// The time step the solver uses: config.dt when it is positive and stable, cfl x stable_dt
// when it is 0; throws mantissa::Error naming cfd.dt, its value, the limit and the remedy when
// the deck's dt is above the limit.
double choose_dt(const Grid& grid, const Config& config);

// The analytic 2D Taylor-Green vortex on the periodic box [o, o + L]^2 (k = 2 pi / L per axis):
//   u = U sin(kx x) cos(ky y) e^{-nu (kx^2 + ky^2) t},
//   v = -U (kx / ky) cos(kx x) sin(ky y) e^{-nu (kx^2 + ky^2) t}.
struct TaylorGreen {
  double amplitude = 1.0, viscosity = 0.01;
  std::array<double, 2> k{1.0, 1.0}, origin{0.0, 0.0};
  static TaylorGreen on(const Grid& grid, double amplitude, double viscosity);
  double decay(double t) const;
  double u(double x, double y, double t) const;
  double v(double x, double y, double t) const;
};

// The 3D Taylor-Green vortex (Brachet et al. 1983; the initial field of the Re 1600 benchmark
// of the International Workshops on High-Order CFD Methods) on the periodic box [o, o + L]^3:
//   u = U sin(kx x) cos(ky y) cos(kz z), v = -U (kx / ky) cos(kx x) sin(ky y) cos(kz z), w = 0.
// Not a solution for t > 0 (it transitions to turbulence): an initial field only.
struct TaylorGreen3D {
  double amplitude = 1.0;
  std::array<double, 3> k{1.0, 1.0, 1.0}, origin{0.0, 0.0, 0.0};
  static TaylorGreen3D on(const Grid& grid, double amplitude);
  double u(double x, double y, double z) const;
  double v(double x, double y, double z) const;
  double w(double x, double y, double z) const { return 0.0 * x * y * z; }
};

// The Arnold-Beltrami-Childress flow with A = B = C = U on the periodic cube [o, o + L]^3
// (k = 2 pi / L, the same L on every axis):
//   u = U (sin k z + cos k y) e^{-nu k^2 t}, v = U (sin k x + cos k z) e^{-nu k^2 t},
//   w = U (sin k y + cos k x) e^{-nu k^2 t}.
// curl u = k u, so (u . grad) u = grad |u|^2 / 2 - u x curl u is a gradient the pressure takes
// up: an exact, fully 3D solution of the Navier-Stokes equations with every advective term
// non-zero, the 3D solver's analytic check (tests/unit/cfd/tstFlow3d.cpp).
struct Beltrami {
  double amplitude = 1.0, viscosity = 0.01, k = 1.0;
  std::array<double, 3> origin{0.0, 0.0, 0.0};
  // throws mantissa::Error unless the grid is a 3D cube
  static Beltrami on(const Grid& grid, double amplitude, double viscosity);
  double decay(double t) const;
  double u(double x, double y, double z, double t) const;
  double v(double x, double y, double z, double t) const;
  double w(double x, double y, double z, double t) const;
};

// Global scalars of the flow state (collective).
struct FlowDiagnostics {
  // dA is the cell area in 2D and the cell volume dV in 3D
  double kinetic_energy = 0.0;  // 1/2 sum (u^2 + v^2 (+ w^2)) dA over the faces
  double enstrophy = 0.0;       // 1/2 sum |omega|^2 dA over the interior corners (3D: edges)
  double divergence = 0.0;      // L2 norm of div u over the cells: sqrt(sum (div u)^2 dA)
  double max_divergence = 0.0;  // max |div u| over the cells
  double cfl = 0.0;             // dt (sum_a max|u_a|/h_a + 2 nu sum_a 1/h_a^2); <= 1 is stable
  bool finite = true;
};

// The last step's pressure solves (both stages together).
struct StepSolves {
  int iterations = 0;              // multigrid cycles of both stages
  double max_residual = 0.0;       // largest final relative residual
  double divergence_before = 0.0;  // L2 norm of div w of the last stage before its projection
  int unconverged = 0;             // solves that missed the tolerance (all steps so far)
  int fallbacks = 0;               // inner-precision fallbacks (all steps so far)
};

// One projection of a velocity written from outside (FlowSolver::project_velocity).
struct Projection {
  double divergence_before = 0.0;  // L2 norm of div u with the walls' boundary values imposed
  double divergence_after = 0.0;   // the same after the projection
  int iterations = 0;              // multigrid cycles of its pressure solve
  double residual = 0.0;           // its final relative residual
  bool projected = false;          // false: divergence-free to rounding already, left alone
};

template <class Storage, class Compute = Storage>
class FlowSolver {
 public:
  using storage_type = Storage;
  using compute_type = Compute;
  using field_type = Field<Storage>;
  using execution_space = Kokkos::DefaultExecutionSpace;

  FlowSolver(const Decomposition& decomp, const Config& config);

  // Step 0, time 0: the configured initial field, projected once (so any initial field starts
  // discretely divergence-free), phi zero.
  void initialize();
  void run(int steps);
  void step();

  std::int64_t step_index() const { return m_step; }
  double time() const { return m_time; }
  double dt() const { return m_dt; }
  const Config& config() const { return m_config; }
  const Decomposition& decomposition() const { return m_decomp; }

  int dim() const { return m_dim; }
  // The velocity components (ghosts current) and the stage potentials (ghosts not current);
  // w() is an empty field in 2D.
  const field_type& u() const { return m_u; }
  const field_type& v() const { return m_v; }
  const field_type& w() const { return m_w; }
  field_type& u() { return m_u; }
  field_type& v() { return m_v; }
  field_type& w() { return m_w; }
  // Component along axis a (0, 1, 2).
  const field_type& velocity(int a) const { return a == 0 ? m_u : (a == 1 ? m_v : m_w); }
  const Field<double>& phi(int stage) const { return m_phi[std::size_t(stage)]; }
  Field<double>& phi(int stage) { return m_phi[std::size_t(stage)]; }
  // After u(), v() or phi() were written from outside (a restored state): halo and boundary
  // values of the velocity, and the step and time.
  void restore(std::int64_t step, double time);
  // The step's projection P applied to the velocity as it is (written from outside, e.g. a
  // surrogate's prediction; restore() first): the walls' boundary values (a wall face's normal
  // component is 0), then -lap phi = -div u solved from phi = 0 into a potential of its own (the
  // stage potentials, the next step's initial guesses, are left alone), u -= grad phi. Collective.
  // last_solves() then holds this solve. Step and time are unchanged.
  Projection project_velocity();

  FlowDiagnostics diagnostics() const;
  const StepSolves& last_solves() const { return m_solves; }
  // The velocity component along `axis` at physical points (bilinear, 3D trilinear, in the
  // component's own lattice, clamped to it), the same vector on every rank (collective).
  std::vector<double> sample(int axis, const std::vector<std::array<double, 3>>& points) const;

  // Kernels; public only because nvcc rejects extended lambdas in private members.
  template <class Loc>
  void fill_boundary(field_type& f, bool predictor = false) const;
  // Halo and boundary values of the velocity; predictor: the stage before its projection (an
  // outflow face extrapolated with zero gradient, not made divergence-free).
  void fill_velocity(field_type& u, field_type& v, field_type& w, bool predictor = false) const;
  template <class Loc>
  void open_side(field_type& f, int axis, bool high, Side side) const;
  void outflow_faces(field_type& u, field_type& v, field_type& w) const;
  void momentum(double alpha);
  template <int A>
  void momentum3(const field_type& base, field_type& stage, double alpha);
  void project(int stage);
  void project_into(Field<double>& phi, int stage);
  double divergence_scale() const;
  double divergence_rhs(const field_type& u, const field_type& v, const field_type& w);
  void correct3(const Field<double>& phi);
  FlowDiagnostics diagnostics3() const;
  // Ghost / wall values along `axis` for t1, t2 over the storage ranges [0, across1), [0, across2)
  // of the other two axes (in 2D the second is the single z plane).
  static void set_side(const typename field_type::view_type& view, int axis, bool high, bool normal,
                       double wall, std::int64_t first, std::int64_t last, std::int64_t across1,
                       std::int64_t across2);

 private:
  const Decomposition& m_decomp;
  Config m_config;
  double m_dt = 0.0;
  std::int64_t m_step = 0;
  double m_time = 0.0;
  int m_dim = 2;
  std::array<double, 3> m_h{1.0, 1.0, 1.0};
  // u, v (, w): the state; un, vn (, wn): u^n during a step; wu, wv (, ww): the stage being
  // built. The w fields are allocated in 3D only.
  field_type m_u, m_v, m_un, m_vn, m_wu, m_wv;
  field_type m_w, m_wn, m_ww;
  std::array<Field<double>, 2> m_phi;
  Field<double> m_phi_extra;  // project_velocity()'s potential, allocated on its first call
  Field<double> m_rhs;
  std::unique_ptr<HaloExchange<Storage>> m_halo;     // u, v (, w), with corners
  std::unique_ptr<HaloExchange<double>> m_halo_phi;  // phi
  std::unique_ptr<solvers::PoissonSolver<Cell>> m_poisson;
  StepSolves m_solves;
  // whether this rank's low face along axis a is a wall face the update leaves alone
  std::array<std::int64_t, 3> m_skip_low{0, 0, 0};
  bool m_open = false;  // an outflow side (its faces are set by continuity; two halo passes)
};

extern template class FlowSolver<double, double>;
extern template class FlowSolver<float, float>;

}  // namespace mantissa::cfd
