#pragma once
// Out-of-line bodies of FlowSolver (included by the Solver_*.cpp instantiation files only).
#include <cfd/Solver.hpp>
#include <cfd/flow_kernels.hpp>

#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Log.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace mantissa::cfd {

namespace detail {

using Policy3 = Kokkos::MDRangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::Rank<3>>;

// Storage box [lo, hi) along x and y (k is the single plane 0).
inline Policy3 box(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
  using idx = Policy3::index_type;
  return Policy3({idx(0), idx(j0), idx(i0)}, {idx(1), idx(j1), idx(i1)});
}

inline double allreduce_sum(double v, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, comm);
  return v;
}
inline double allreduce_max(double v, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, comm);
  return v;
}

}  // namespace detail

template <class S, class C>
FlowSolver<S, C>::FlowSolver(const Decomposition& decomp, const Config& config)
    : m_decomp(decomp), m_config(config) {
  const Grid& g = decomp.grid();
  if (g.dim != 2)
    throw Error("cfd: mesh.dim is " + std::to_string(g.dim) +
                "; the flow solver is 2D only for now; use mesh.dim: 2");
  if (!(config.viscosity > 0.0))
    throw Error("cfd: cfd.viscosity is " + std::to_string(config.viscosity) + "; it must be positive");
  const char* axis_name[2] = {"x", "y"};
  for (int a = 0; a < 2; ++a) {
    const bool p0 = config.side[a][0] == Side::periodic, p1 = config.side[a][1] == Side::periodic;
    if (p0 != p1)
      throw Error(std::string("cfd: cfd.boundaries.") + axis_name[a] + "_low and " + axis_name[a] +
                  "_high: one side is periodic and the other is not; make both periodic or neither");
    if (p0 != g.periodic[a])
      throw Error(std::string("cfd: cfd.boundaries.") + axis_name[a] + "_low/_high are " +
                  (p0 ? "periodic" : "walls") + " but mesh.periodic along " + axis_name[a] + " is " +
                  (g.periodic[a] ? "true" : "false") + "; make them agree");
    m_h[std::size_t(a)] = g.spacing[a];
    m_skip_low[std::size_t(a)] = (!p0 && decomp.at_low_boundary(a)) ? 1 : 0;
  }
  m_dt = choose_dt(g, config);
  const std::string base = "mantissa::cfd::FlowSolver::";
  m_u = field_type(base + "u", decomp, 1);
  m_v = field_type(base + "v", decomp, 1);
  m_un = field_type(base + "u_n", decomp, 1);
  m_vn = field_type(base + "v_n", decomp, 1);
  m_wu = field_type(base + "u_stage", decomp, 1);
  m_wv = field_type(base + "v_stage", decomp, 1);
  m_phi[0] = Field<double>(base + "phi_stage1", decomp, 1);
  m_phi[1] = Field<double>(base + "phi_stage2", decomp, 1);
  m_rhs = Field<double>(base + "rhs", decomp, 1);
  m_halo = std::make_unique<HaloExchange<S>>(decomp, 1, 2, HaloPattern::full);
  m_halo_phi = std::make_unique<HaloExchange<double>>(decomp, 1, 1, HaloPattern::faces);
  solvers::Boundary bc = solvers::Boundary::all(solvers::BoundaryKind::neumann);
  for (int a = 0; a < 2; ++a)
    for (int s = 0; s < 2; ++s)
      if (config.side[a][s] == Side::periodic)
        bc.face[std::size_t(2 * a + s)] = solvers::BoundaryKind::periodic;
  solvers::SolverOptions opt = config.solve;
  opt.multigrid.precisions = solver_level_precisions(config.solver);
  m_poisson = std::make_unique<solvers::PoissonSolver<Cell>>(decomp, bc, opt);
}

template <class S, class C>
void FlowSolver<S, C>::set_side(const typename field_type::view_type& view, int axis, bool high, bool normal,
                                double wall, std::int64_t first, std::int64_t last, std::int64_t across) {
  const S w2 = S(2.0 * wall);
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::boundary", Kokkos::RangePolicy<execution_space>(0, across),
      KOKKOS_LAMBDA(const std::int64_t t) {
        // the inside point and the ghost / wall point along `axis`, t across it
        const std::int64_t in = high ? last : first;
        const std::int64_t out = high ? last + 1 : first - 1;
        const std::int64_t ji = axis == 0 ? t : in, ii = axis == 0 ? in : t;
        const std::int64_t jo = axis == 0 ? t : out, io = axis == 0 ? out : t;
        if (normal) {
          // the wall face itself: global face 0 (owned, never updated) or n (the high ghost)
          view(0, jo, io) = S(0);
          if (!high) view(0, ji, ii) = S(0);
        } else {
          view(0, jo, io) = S(w2 - view(0, ji, ii));
        }
      });
}

template <class S, class C>
template <class Loc>
void FlowSolver<S, C>::fill_boundary(field_type& f) const {
  constexpr int A = Loc::axis;
  const int g = 1;
  for (int a = 0; a < 2; ++a)
    for (int s = 0; s < 2; ++s) {
      const Side side = m_config.side[a][s];
      if (side == Side::periodic) continue;
      if (s == 0 ? !m_decomp.at_low_boundary(a) : !m_decomp.at_high_boundary(a)) continue;
      const bool normal = a == A;
      // a lid slides along x on the y sides and along y on the x sides
      const int lid_component = a == 0 ? 1 : 0;
      const double wall = (!normal && side == Side::lid && lid_component == A) ? m_config.lid_velocity : 0.0;
      const std::int64_t e = m_decomp.extent()[std::size_t(a)];
      const std::int64_t across = m_decomp.extent()[std::size_t(1 - a)] + 2 * g;
      set_side(f.view(), a, s == 1, normal, wall, g, g + e - 1, across);
    }
}

template <class S, class C>
void FlowSolver<S, C>::fill_velocity(field_type& u, field_type& v) const {
  m_halo->exchange({&u, &v});
  fill_boundary<FaceX>(u);
  fill_boundary<FaceY>(v);
}

// w = alpha base + (1 - alpha) (u + dt F(u)) on the faces the update owns (not the wall faces).
template <class S, class C>
void FlowSolver<S, C>::momentum(double alpha) {
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto u = m_u.view(), v = m_v.view();
  const auto bu = (alpha == 0.0 ? m_u : m_un).view(), bv = (alpha == 0.0 ? m_v : m_vn).view();
  const auto wu = m_wu.view(), wv = m_wv.view();
  const C rx = C(1.0 / m_h[0]), ry = C(1.0 / m_h[1]);
  const C vx = C(m_config.viscosity / (m_h[0] * m_h[0])), vy = C(m_config.viscosity / (m_h[1] * m_h[1]));
  const C a = C(alpha), b = C(1.0 - alpha), dt = C(m_dt);
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::momentum_u", detail::box(g + m_skip_low[0], g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i) {
        const C f = kernels::rhs_u<C>(u, v, int(j), int(i), rx, ry, vx, vy);
        wu(0, j, i) = S(a * C(bu(0, j, i)) + b * (C(u(0, j, i)) + dt * f));
      });
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::momentum_v", detail::box(g, g + e[0], g + m_skip_low[1], g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i) {
        const C f = kernels::rhs_v<C>(u, v, int(j), int(i), rx, ry, vx, vy);
        wv(0, j, i) = S(a * C(bv(0, j, i)) + b * (C(v(0, j, i)) + dt * f));
      });
}

// rhs = -div(u, v) on the owned cells (ghosts of u, v current); returns the L2 norm of div.
template <class S, class C>
double FlowSolver<S, C>::divergence_rhs(const field_type& uf, const field_type& vf) {
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto u = uf.view(), v = vf.view();
  const auto rhs = m_rhs.view();
  const C rx = C(1.0 / m_h[0]), ry = C(1.0 / m_h[1]);
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::divergence", detail::box(g, g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double d = double(kernels::divergence<C>(u, v, int(j), int(i), rx, ry));
        rhs(0, j, i) = -d;
        acc += d * d;
      },
      sum);
  return std::sqrt(detail::allreduce_sum(sum, m_decomp.comm()) * m_h[0] * m_h[1]);
}

// P w: solve -lap phi = -div w, w -= grad phi, boundary values of w.
template <class S, class C>
void FlowSolver<S, C>::project(int stage) {
  fill_velocity(m_wu, m_wv);
  m_solves.divergence_before = divergence_rhs(m_wu, m_wv);
  auto& phi = m_phi[std::size_t(stage)];
  const auto st = m_poisson->solve(m_rhs, phi);
  m_solves.iterations += st.iterations;
  m_solves.max_residual = std::max(m_solves.max_residual, st.relative_residual);
  m_solves.fallbacks += static_cast<int>(st.fallbacks.size());
  if (!st.converged) {
    if (m_solves.unconverged == 0 && !m_config.quiet)
      log::warn(
          "cfd: step {} stage {}: the pressure solve stopped at relative residual {:.3e} after {} cycles "
          "(tolerance {:.1e}); later misses are counted, not logged",
          m_step + 1, stage + 1, st.relative_residual, st.iterations, m_config.solve.tolerance);
    ++m_solves.unconverged;
  }
  m_halo_phi->exchange({&phi});
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto p = phi.view();
  const auto wu = m_wu.view(), wv = m_wv.view();
  const C rx = C(1.0 / m_h[0]), ry = C(1.0 / m_h[1]);
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::correct_u", detail::box(g + m_skip_low[0], g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i) {
        wu(0, j, i) = S(C(wu(0, j, i)) - C(p(0, j, i) - p(0, j, i - 1)) * rx);
      });
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::correct_v", detail::box(g, g + e[0], g + m_skip_low[1], g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i) {
        wv(0, j, i) = S(C(wv(0, j, i)) - C(p(0, j, i) - p(0, j - 1, i)) * ry);
      });
  fill_velocity(m_wu, m_wv);
}

template <class S, class C>
void FlowSolver<S, C>::initialize() {
  const Grid& g = m_decomp.grid();
  const auto& off = m_decomp.offset();
  const auto& e = m_decomp.extent();
  auto hu = Kokkos::create_mirror_view(m_u.view());
  auto hv = Kokkos::create_mirror_view(m_v.view());
  Kokkos::deep_copy(hu, S(0));
  Kokkos::deep_copy(hv, S(0));
  if (m_config.initial == InitialKind::taylor_green) {
    const auto tg = TaylorGreen::on(g, m_config.amplitude, m_config.viscosity);
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i) {
        const double xf = g.origin[0] + double(off[0] + i) * m_h[0];
        const double yf = g.origin[1] + double(off[1] + j) * m_h[1];
        const double xc = xf + 0.5 * m_h[0], yc = yf + 0.5 * m_h[1];
        hu(0, j + 1, i + 1) = S(tg.u(xf, yc, 0.0));
        hv(0, j + 1, i + 1) = S(tg.v(xc, yf, 0.0));
      }
  }
  Kokkos::deep_copy(m_u.view(), hu);
  Kokkos::deep_copy(m_v.view(), hv);
  Kokkos::deep_copy(m_phi[0].view(), 0.0);
  Kokkos::deep_copy(m_phi[1].view(), 0.0);
  m_step = 0;
  m_time = 0.0;
  m_solves = StepSolves{};
  fill_velocity(m_u, m_v);
  // Project the initial field unless it is discretely divergence-free already (the square
  // Taylor-Green vortex is, to rounding: a solve of a rounding-level right-hand side to a
  // relative tolerance would only stall).
  const double div = divergence_rhs(m_u, m_v);
  const double area = double(g.n[0]) * m_h[0] * double(g.n[1]) * m_h[1];
  const double scale = velocity_scale(m_config) / std::min(m_h[0], m_h[1]) * std::sqrt(area);
  if (div > 1e-12 * scale) {
    Kokkos::deep_copy(m_wu.view(), m_u.view());
    Kokkos::deep_copy(m_wv.view(), m_v.view());
    project(0);
    std::swap(m_u, m_wu);
    std::swap(m_v, m_wv);
    Kokkos::deep_copy(m_phi[0].view(), 0.0);
    m_solves = StepSolves{};
  }
}

template <class S, class C>
void FlowSolver<S, C>::step() {
  Kokkos::Profiling::pushRegion("mantissa::cfd::FlowSolver::step");
  m_solves.iterations = 0;
  m_solves.max_residual = 0.0;
  // stage 1: u1 = P(u^n + dt F(u^n)); afterwards un holds u^n and u holds u1
  momentum(0.0);
  project(0);
  std::swap(m_un, m_u);
  std::swap(m_vn, m_v);
  std::swap(m_u, m_wu);
  std::swap(m_v, m_wv);
  // stage 2: u^{n+1} = P(1/2 u^n + 1/2 (u1 + dt F(u1)))
  momentum(0.5);
  project(1);
  std::swap(m_u, m_wu);
  std::swap(m_v, m_wv);
  ++m_step;
  m_time = double(m_step) * m_dt;
  Kokkos::Profiling::popRegion();
}

template <class S, class C>
void FlowSolver<S, C>::run(int steps) {
  for (int s = 0; s < steps; ++s) step();
}

template <class S, class C>
void FlowSolver<S, C>::restore(std::int64_t step, double time) {
  m_step = step;
  m_time = time;
  fill_velocity(m_u, m_v);
}

template <class S, class C>
FlowDiagnostics FlowSolver<S, C>::diagnostics() const {
  FlowDiagnostics d;
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto u = m_u.view(), v = m_v.view();
  const double rx = 1.0 / m_h[0], ry = 1.0 / m_h[1];
  const MPI_Comm comm = m_decomp.comm();
  double ke = 0.0, ens = 0.0, div2 = 0.0, divmax = 0.0, umax = 0.0, vmax = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::kinetic_energy", detail::box(g, g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double a = double(u(0, j, i)), b = double(v(0, j, i));
        acc += a * a + b * b;
      },
      ke);
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::max_u", detail::box(g, g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double a = math::fabs(double(u(0, j, i)));
        acc = a > acc ? a : acc;
      },
      Kokkos::Max<double>(umax));
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::max_v", detail::box(g, g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double b = math::fabs(double(v(0, j, i)));
        acc = b > acc ? b : acc;
      },
      Kokkos::Max<double>(vmax));
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::enstrophy",
      detail::box(g + m_skip_low[0], g + e[0], g + m_skip_low[1], g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double w = kernels::vorticity<double>(u, v, int(j), int(i), rx, ry);
        acc += w * w;
      },
      ens);
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::divergence_norm", detail::box(g, g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = kernels::divergence<double>(u, v, int(j), int(i), rx, ry);
        acc += q * q;
      },
      div2);
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::divergence_max", detail::box(g, g + e[0], g, g + e[1]),
      KOKKOS_LAMBDA(const std::int64_t, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = math::fabs(kernels::divergence<double>(u, v, int(j), int(i), rx, ry));
        acc = q > acc ? q : acc;
      },
      Kokkos::Max<double>(divmax));
  double sums[3] = {ke, ens, div2};
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
  double maxs[3] = {umax, vmax, divmax};
  MPI_Allreduce(MPI_IN_PLACE, maxs, 3, MPI_DOUBLE, MPI_MAX, comm);
  const double da = m_h[0] * m_h[1];
  d.kinetic_energy = 0.5 * sums[0] * da;
  d.enstrophy = 0.5 * sums[1] * da;
  d.divergence = std::sqrt(sums[2] * da);
  d.max_divergence = maxs[2];
  d.cfl = m_dt * (maxs[0] * rx + maxs[1] * ry + 2.0 * m_config.viscosity * (rx * rx + ry * ry));
  d.finite = std::isfinite(d.kinetic_energy) && std::isfinite(d.enstrophy) && std::isfinite(d.divergence);
  return d;
}

template <class S, class C>
std::vector<double> FlowSolver<S, C>::sample(int axis,
                                             const std::vector<std::array<double, 3>>& points) const {
  const Grid& gr = m_decomp.grid();
  const auto& f = axis == 0 ? m_u : m_v;
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.view());
  const auto& off = m_decomp.offset();
  const auto& e = m_decomp.extent();
  // the component's lattice: along its own axis the faces 0..n (n only at a wall), across
  // it the cell centres 0..n-1
  std::array<double, 2> shift{0.5, 0.5};
  std::array<std::int64_t, 2> top{gr.n[0] - 1, gr.n[1] - 1};
  shift[std::size_t(axis)] = 0.0;
  if (!gr.periodic[axis]) top[std::size_t(axis)] = gr.n[axis];
  std::vector<double> part(points.size() * 4, 0.0), weight(points.size() * 4, 0.0);
  for (std::size_t p = 0; p < points.size(); ++p) {
    std::array<std::int64_t, 2> i0{};
    std::array<double, 2> t{};
    for (int a = 0; a < 2; ++a) {
      double q = (points[p][std::size_t(a)] - gr.origin[a]) / m_h[std::size_t(a)] - shift[std::size_t(a)];
      q = std::min(std::max(q, 0.0), double(top[std::size_t(a)]));
      i0[std::size_t(a)] = std::min<std::int64_t>(std::int64_t(std::floor(q)), top[std::size_t(a)] - 1);
      t[std::size_t(a)] = q - double(i0[std::size_t(a)]);
    }
    for (int c = 0; c < 4; ++c) {
      const std::int64_t gi = i0[0] + (c & 1), gj = i0[1] + (c >> 1);
      weight[p * 4 + std::size_t(c)] = ((c & 1) ? t[0] : 1.0 - t[0]) * ((c >> 1) ? t[1] : 1.0 - t[1]);
      auto holds = [&](int a, std::int64_t gidx) {
        if (gidx >= off[a] && gidx < off[a] + e[a]) return true;
        // the high wall face of the normal axis sits in the last rank's ghost layer
        return a == axis && gidx == gr.n[a] && !gr.periodic[a] && m_decomp.at_high_boundary(a);
      };
      if (holds(0, gi) && holds(1, gj))
        part[p * 4 + std::size_t(c)] = double(host(0, gj - off[1] + 1, gi - off[0] + 1));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, part.data(), static_cast<int>(part.size()), MPI_DOUBLE, MPI_SUM,
                m_decomp.comm());
  std::vector<double> out(points.size(), 0.0);
  for (std::size_t p = 0; p < points.size(); ++p)
    for (int c = 0; c < 4; ++c) out[p] += weight[p * 4 + std::size_t(c)] * part[p * 4 + std::size_t(c)];
  return out;
}

}  // namespace mantissa::cfd
