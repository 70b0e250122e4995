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
// Storage box [lo, hi) along x, y and z (3D).
inline Policy3 box3(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, std::int64_t k0,
                    std::int64_t k1) {
  using idx = Policy3::index_type;
  return Policy3({idx(k0), idx(j0), idx(i0)}, {idx(k1), idx(j1), idx(i1)});
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
  if (g.dim != 2 && g.dim != 3)
    throw Error("cfd: mesh.dim is " + std::to_string(g.dim) +
                "; the flow solver is 2D or 3D; use mesh.dim: 2 or 3");
  m_dim = g.dim;
  if (!(config.viscosity > 0.0))
    throw Error("cfd: cfd.viscosity is " + std::to_string(config.viscosity) + "; it must be positive");
  if (config.initial == InitialKind::beltrami) (void)Beltrami::on(g, config.amplitude, config.viscosity);
  const char* axis_name[3] = {"x", "y", "z"};
  for (int a = 0; a < m_dim; ++a) {
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
  bool inflow = false;
  for (int a = 0; a < m_dim; ++a)
    for (int s = 0; s < 2; ++s) {
      inflow = inflow || config.side[a][s] == Side::inflow;
      m_open = m_open || config.side[a][s] == Side::outflow;
    }
  if (inflow && !m_open)
    throw Error(
        "cfd: cfd.boundaries has an inflow side but no outflow side, so the inflow has nowhere to go (the "
        "pressure projection would have no solution); make the opposite side outflow");
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
  if (m_dim == 3) {
    m_w = field_type(base + "w", decomp, 1);
    m_wn = field_type(base + "w_n", decomp, 1);
    m_ww = field_type(base + "w_stage", decomp, 1);
  }
  m_halo = std::make_unique<HaloExchange<S>>(decomp, 1, m_dim, HaloPattern::full);
  m_halo_phi = std::make_unique<HaloExchange<double>>(decomp, 1, 1, HaloPattern::faces);
  solvers::Boundary bc = solvers::Boundary::all(solvers::BoundaryKind::neumann);
  for (int a = 0; a < m_dim; ++a)
    for (int s = 0; s < 2; ++s)
      if (config.side[a][s] == Side::periodic)
        bc.face[std::size_t(2 * a + s)] = solvers::BoundaryKind::periodic;
      else if (config.side[a][s] == Side::outflow)
        bc.face[std::size_t(2 * a + s)] = solvers::BoundaryKind::dirichlet;
  solvers::SolverOptions opt = config.solve;
  opt.multigrid.precisions = solver_level_precisions(config.solver);
  m_poisson = std::make_unique<solvers::PoissonSolver<Cell>>(decomp, bc, opt);
}

template <class S, class C>
void FlowSolver<S, C>::set_side(const typename field_type::view_type& view, int axis, bool high, bool normal,
                                double wall, std::int64_t first, std::int64_t last, std::int64_t across1,
                                std::int64_t across2) {
  const S w2 = S(2.0 * wall);
  using P2 = Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<2>>;
  using idx = typename P2::index_type;
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::boundary", P2({idx(0), idx(0)}, {idx(across2), idx(across1)}),
      KOKKOS_LAMBDA(const std::int64_t t2, const std::int64_t t1) {
        // the inside point and the ghost / wall point along `axis`; t1, t2 run along the other
        // two axes in increasing order (x, y, z without `axis`)
        const std::int64_t in = high ? last : first;
        const std::int64_t out = high ? last + 1 : first - 1;
        std::int64_t pi[3], po[3];
        const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
        pi[o1] = po[o1] = t1;
        pi[o2] = po[o2] = t2;
        pi[axis] = in;
        po[axis] = out;
        if (normal) {
          // the wall face itself: global face 0 (owned, never updated) or n (the high ghost)
          view(po[2], po[1], po[0]) = S(0);
          if (!high) view(pi[2], pi[1], pi[0]) = S(0);
        } else {
          view(po[2], po[1], po[0]) = S(w2 - view(pi[2], pi[1], pi[0]));
        }
      });
}

template <class S, class C>
template <class Loc>
void FlowSolver<S, C>::fill_boundary(field_type& f, bool predictor) const {
  constexpr int A = Loc::axis;
  const int g = 1;
  for (int a = 0; a < m_dim; ++a)
    for (int s = 0; s < 2; ++s) {
      const Side side = m_config.side[a][s];
      if (side == Side::periodic) continue;
      if (s == 0 ? !m_decomp.at_low_boundary(a) : !m_decomp.at_high_boundary(a)) continue;
      const bool normal = a == A;
      if (side == Side::inflow || side == Side::outflow) {
        // an outflow's normal face: the predictor's here; the state's in outflow_faces()
        if (!(normal && side == Side::outflow && !predictor)) open_side<Loc>(f, a, s == 1, side);
        continue;
      }
      // a lid slides along x on the y and z sides and along y on the x sides
      const int lid_component = a == 0 ? 1 : 0;
      const double wall = (!normal && side == Side::lid && lid_component == A) ? m_config.lid_velocity : 0.0;
      const std::int64_t e = m_decomp.extent()[std::size_t(a)];
      // storage extents of the other two axes (x, y, z without a); z has no ghosts in 2D
      const int o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
      const std::int64_t across1 = std::int64_t(f.view().extent(std::size_t(2 - o1)));
      const std::int64_t across2 = std::int64_t(f.view().extent(std::size_t(2 - o2)));
      set_side(f.view(), a, s == 1, normal, wall, g, g + e - 1, across1, across2);
    }
}

// An inflow or outflow side of `axis` for the component on Loc's faces (see Side). The outflow's
// normal face takes the zero-gradient predictor here; outflow_faces() sets the state's.
template <class S, class C>
template <class Loc>
void FlowSolver<S, C>::open_side(field_type& f, int axis, bool high, Side side) const {
  constexpr int A = Loc::axis;
  const Grid& gr = m_decomp.grid();
  const auto view = f.view();
  const std::int64_t g = 1, first = g, last = g + m_decomp.extent()[std::size_t(axis)] - 1;
  const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
  const std::int64_t across1 = std::int64_t(view.extent(std::size_t(2 - o1)));
  const std::int64_t across2 = std::int64_t(view.extent(std::size_t(2 - o2)));
  const bool normal = A == axis, inflow = side == Side::inflow;
  // the inflow profile: the bulk speed into the domain times 6 s (1 - s) per non-periodic cross axis
  double speed = inflow ? (high ? -m_config.inflow_velocity : m_config.inflow_velocity) : 0.0;
  bool shape[3] = {false, false, false};
  double lo[3] = {0, 0, 0}, len[3] = {1, 1, 1};
  const auto& off = m_decomp.offset();
  for (int b = 0; b < m_dim; ++b) {
    shape[b] = m_config.inflow_profile == InflowProfile::parabolic && b != axis && !gr.periodic[b];
    lo[b] = double(off[b]) - double(g);  // storage index -> global cell index
    len[b] = double(gr.n[b]);
    // the midpoint sum of 6 s (1 - s) over n cells is 1 + 1 / (2 n^2): divide it out, so the
    // discrete flux is the bulk speed times the side's area
    if (shape[b]) speed /= 1.0 + 0.5 / (len[b] * len[b]);
  }
  const int dim = m_dim;
  using P2 = Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<2>>;
  using idx = typename P2::index_type;
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::open_boundary", P2({idx(0), idx(0)}, {idx(across2), idx(across1)}),
      KOKKOS_LAMBDA(const std::int64_t t2, const std::int64_t t1) {
        std::int64_t pi[3], po[3];
        pi[o1] = po[o1] = t1;
        pi[o2] = po[o2] = t2;
        pi[axis] = high ? last : first;
        po[axis] = high ? last + 1 : first - 1;
        if (!normal) {
          // tangential: zero on an inflow face (ghost 0 - inside), zero normal derivative at an outflow
          view(po[2], po[1], po[0]) = inflow ? S(-C(view(pi[2], pi[1], pi[0]))) : view(pi[2], pi[1], pi[0]);
          return;
        }
        // the side's own face: global face 0 (owned, never updated) on the low side, n (the high
        // ghost) on the high side; on the low side the ghost beyond it gets the same value
        std::int64_t face[3] = {pi[0], pi[1], pi[2]}, beyond[3] = {po[0], po[1], po[2]};
        if (high) face[axis] = last + 1;
        if (inflow) {
          double q = speed;
          for (int b = 0; b < dim; ++b)
            if (shape[b]) {
              const double sb = (lo[b] + double(b == o1 ? t1 : t2) + 0.5) / len[b];
              q *= 6.0 * sb * (1.0 - sb);
            }
          view(face[2], face[1], face[0]) = S(q);
          if (!high) view(beyond[2], beyond[1], beyond[0]) = S(q);
        } else {
          // zero-gradient predictor: the face next to the side's face
          std::int64_t next[3] = {face[0], face[1], face[2]};
          next[axis] = high ? last : first + 1;
          const S q = view(next[2], next[1], next[0]);
          view(face[2], face[1], face[0]) = q;
          if (!high) view(beyond[2], beyond[1], beyond[0]) = q;
        }
      });
}

// The state's normal velocity on every outflow face: what makes the last cell divergence-free,
// from the owned faces and their halo (so a restored state gets the same bits).
template <class S, class C>
void FlowSolver<S, C>::outflow_faces(field_type& u, field_type& v, field_type& w) const {
  const std::int64_t g = 1;
  const auto& e = m_decomp.extent();
  const typename field_type::view_type comp[3] = {u.view(), v.view(), m_dim == 3 ? w.view() : u.view()};
  const int dim = m_dim;
  for (int a = 0; a < m_dim; ++a)
    for (int s = 0; s < 2; ++s) {
      if (m_config.side[a][s] != Side::outflow) continue;
      if (s == 0 ? !m_decomp.at_low_boundary(a) : !m_decomp.at_high_boundary(a)) continue;
      const bool high = s == 1;
      const auto n = comp[a], c1 = comp[a == 0 ? 1 : 0], c2 = comp[a == 2 ? 1 : 2];
      const int o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
      const C r1 = C(m_h[std::size_t(a)] / m_h[std::size_t(o1)]);
      const C r2 = C(dim == 3 ? m_h[std::size_t(a)] / m_h[std::size_t(o2)] : 0.0);
      const std::int64_t cell = high ? g + e[std::size_t(a)] - 1 : g;
      const std::int64_t e1 = e[std::size_t(o1)], e2 = dim == 3 ? e[std::size_t(o2)] : 1,
                         g2 = dim == 3 ? g : 0;
      // also the ghost row below the owned ones where it is a neighbour's (not a wall's): the
      // halo brings no value there (there is no neighbour beyond the side), the stencils of the
      // first owned row read it, and its inputs are all here, so it gets its owner's bits
      const Grid& gr = m_decomp.grid();
      const auto below = [&](int b) {
        return (gr.periodic[b] || !m_decomp.at_low_boundary(b)) ? std::int64_t(1) : std::int64_t(0);
      };
      const std::int64_t b1 = below(o1), b2 = dim == 3 ? below(o2) : 0;
      using P2 = Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<2>>;
      using idx = typename P2::index_type;
      Kokkos::parallel_for(
          "mantissa::cfd::FlowSolver::outflow_faces",
          P2({idx(g2 - b2), idx(g - b1)}, {idx(g2 + e2), idx(g + e1)}),
          KOKKOS_LAMBDA(const std::int64_t t2, const std::int64_t t1) {
            std::int64_t p[3], q1[3], q2[3];
            p[a] = cell;
            p[o1] = t1;
            p[o2] = t2;
            for (int b = 0; b < 3; ++b) q1[b] = q2[b] = p[b];
            q1[o1] = t1 + 1;  // the cell's high face across o1
            q2[o2] = t2 + 1;
            // sum over the cross axes b of (h_a / h_b) (c_b(high face) - c_b(low face))
            C flux = r1 * (C(c1(q1[2], q1[1], q1[0])) - C(c1(p[2], p[1], p[0])));
            if (dim == 3) flux += r2 * (C(c2(q2[2], q2[1], q2[0])) - C(c2(p[2], p[1], p[0])));
            std::int64_t lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
            hi[a] = cell + 1;
            if (high) {
              n(hi[2], hi[1], hi[0]) = S(C(n(lo[2], lo[1], lo[0])) - flux);
            } else {
              const S q = S(C(n(hi[2], hi[1], hi[0])) + flux);
              n(lo[2], lo[1], lo[0]) = q;
              lo[a] = cell - 1;
              n(lo[2], lo[1], lo[0]) = q;
            }
          });
    }
}

template <class S, class C>
void FlowSolver<S, C>::fill_velocity(field_type& u, field_type& v, field_type& w, bool predictor) const {
  // With an outflow side the state's outflow faces depend on the other components' boundary
  // values, and the halo carries them to the neighbours' corners: a second exchange and fill.
  const int passes = m_open ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    if (m_dim == 3) {
      m_halo->exchange({&u, &v, &w});
    } else {
      m_halo->exchange({&u, &v});
    }
    fill_boundary<FaceX>(u, predictor);
    fill_boundary<FaceY>(v, predictor);
    if (m_dim == 3) fill_boundary<FaceZ>(w, predictor);
    if (m_open && !predictor) outflow_faces(u, v, w);
  }
}

// w = alpha base + (1 - alpha) (u + dt F(u)) on the faces the update owns (not the wall faces).
template <class S, class C>
template <int A>
void FlowSolver<S, C>::momentum3(const field_type& base, field_type& stage, double alpha) {
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto u = m_u.view(), v = m_v.view(), w = m_w.view();
  const auto ua = velocity(A).view();
  const auto bv = base.view(), wv = stage.view();
  const C r[3] = {C(1.0 / m_h[0]), C(1.0 / m_h[1]), C(1.0 / m_h[2])};
  const C vis[3] = {C(m_config.viscosity / (m_h[0] * m_h[0])), C(m_config.viscosity / (m_h[1] * m_h[1])),
                    C(m_config.viscosity / (m_h[2] * m_h[2]))};
  const C a = C(alpha), b = C(1.0 - alpha), dt = C(m_dt);
  std::int64_t lo[3] = {g, g, g};
  lo[A] += m_skip_low[A];
  Kokkos::parallel_for(
      A == 0 ? "mantissa::cfd::FlowSolver::momentum_u"
             : (A == 1 ? "mantissa::cfd::FlowSolver::momentum_v" : "mantissa::cfd::FlowSolver::momentum_w"),
      detail::box3(lo[0], g + e[0], lo[1], g + e[1], lo[2], g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        const C f = kernels::rhs3<A, C>(u, v, w, int(k), int(j), int(i), r, vis);
        wv(k, j, i) = S(a * C(bv(k, j, i)) + b * (C(ua(k, j, i)) + dt * f));
      });
}

template <class S, class C>
void FlowSolver<S, C>::momentum(double alpha) {
  if (m_dim == 3) {
    momentum3<0>(alpha == 0.0 ? m_u : m_un, m_wu, alpha);
    momentum3<1>(alpha == 0.0 ? m_v : m_vn, m_wv, alpha);
    momentum3<2>(alpha == 0.0 ? m_w : m_wn, m_ww, alpha);
    return;
  }
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
double FlowSolver<S, C>::divergence_rhs(const field_type& uf, const field_type& vf, const field_type& wf) {
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto u = uf.view(), v = vf.view();
  const auto rhs = m_rhs.view();
  if (m_dim == 3) {
    const auto w = wf.view();
    const C r[3] = {C(1.0 / m_h[0]), C(1.0 / m_h[1]), C(1.0 / m_h[2])};
    double sum3 = 0.0;
    Kokkos::parallel_reduce(
        "mantissa::cfd::FlowSolver::divergence", detail::box3(g, g + e[0], g, g + e[1], g, g + e[2]),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
          const double d = double(kernels::divergence3<C>(u, v, w, int(k), int(j), int(i), r));
          rhs(k, j, i) = -d;
          acc += d * d;
        },
        sum3);
    return std::sqrt(detail::allreduce_sum(sum3, m_decomp.comm()) * m_h[0] * m_h[1] * m_h[2]);
  }
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
  project_into(m_phi[std::size_t(stage)], stage);
}

template <class S, class C>
void FlowSolver<S, C>::project_into(Field<double>& phi, int stage) {
  fill_velocity(m_wu, m_wv, m_ww, true);
  m_solves.divergence_before = divergence_rhs(m_wu, m_wv, m_ww);
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
  if (m_dim == 3) {
    correct3(phi);
    fill_velocity(m_wu, m_wv, m_ww);
    return;
  }
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
  fill_velocity(m_wu, m_wv, m_ww);
}

// w -= grad phi on the faces the update owns (3D).
template <class S, class C>
void FlowSolver<S, C>::correct3(const Field<double>& phi) {
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto p = phi.view();
  const auto wu = m_wu.view(), wv = m_wv.view(), ww = m_ww.view();
  const C rx = C(1.0 / m_h[0]), ry = C(1.0 / m_h[1]), rz = C(1.0 / m_h[2]);
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::correct_u",
      detail::box3(g + m_skip_low[0], g + e[0], g, g + e[1], g, g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        wu(k, j, i) = S(C(wu(k, j, i)) - C(p(k, j, i) - p(k, j, i - 1)) * rx);
      });
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::correct_v",
      detail::box3(g, g + e[0], g + m_skip_low[1], g + e[1], g, g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        wv(k, j, i) = S(C(wv(k, j, i)) - C(p(k, j, i) - p(k, j - 1, i)) * ry);
      });
  Kokkos::parallel_for(
      "mantissa::cfd::FlowSolver::correct_w",
      detail::box3(g, g + e[0], g, g + e[1], g + m_skip_low[2], g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
        ww(k, j, i) = S(C(ww(k, j, i)) - C(p(k, j, i) - p(k - 1, j, i)) * rz);
      });
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
  if (m_dim == 3) {
    auto hw = Kokkos::create_mirror_view(m_w.view());
    Kokkos::deep_copy(hw, S(0));
    const auto tg = m_config.initial == InitialKind::taylor_green ? TaylorGreen3D::on(g, m_config.amplitude)
                                                                  : TaylorGreen3D{};
    const auto ab = m_config.initial == InitialKind::beltrami
                        ? Beltrami::on(g, m_config.amplitude, m_config.viscosity)
                        : Beltrami{};
    for (std::int64_t k = 0; k < e[2]; ++k)
      for (std::int64_t j = 0; j < e[1]; ++j)
        for (std::int64_t i = 0; i < e[0]; ++i) {
          const double xf = g.origin[0] + double(off[0] + i) * m_h[0];
          const double yf = g.origin[1] + double(off[1] + j) * m_h[1];
          const double zf = g.origin[2] + double(off[2] + k) * m_h[2];
          const double xc = xf + 0.5 * m_h[0], yc = yf + 0.5 * m_h[1], zc = zf + 0.5 * m_h[2];
          if (m_config.initial == InitialKind::taylor_green) {
            hu(k + 1, j + 1, i + 1) = S(tg.u(xf, yc, zc));
            hv(k + 1, j + 1, i + 1) = S(tg.v(xc, yf, zc));
            hw(k + 1, j + 1, i + 1) = S(tg.w(xc, yc, zf));
          } else if (m_config.initial == InitialKind::beltrami) {
            hu(k + 1, j + 1, i + 1) = S(ab.u(xf, yc, zc, 0.0));
            hv(k + 1, j + 1, i + 1) = S(ab.v(xc, yf, zc, 0.0));
            hw(k + 1, j + 1, i + 1) = S(ab.w(xc, yc, zf, 0.0));
          }
        }
    Kokkos::deep_copy(m_w.view(), hw);
  } else if (m_config.initial == InitialKind::taylor_green) {
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
  fill_velocity(m_u, m_v, m_w);
  // Project the initial field unless it is discretely divergence-free already (the square
  // Taylor-Green vortex is, to rounding: a solve of a rounding-level right-hand side to a
  // relative tolerance would only stall; so are the 3D vortex and the ABC flow, whose
  // components are constant along their own axis or cancel face by face).
  const double div = divergence_rhs(m_u, m_v, m_w);
  if (div > 1e-12 * divergence_scale()) {
    Kokkos::deep_copy(m_wu.view(), m_u.view());
    Kokkos::deep_copy(m_wv.view(), m_v.view());
    if (m_dim == 3) Kokkos::deep_copy(m_ww.view(), m_w.view());
    project(0);
    std::swap(m_u, m_wu);
    std::swap(m_v, m_wv);
    std::swap(m_w, m_ww);
    Kokkos::deep_copy(m_phi[0].view(), 0.0);
    m_solves = StepSolves{};
  }
}

// The divergence L2 norm of a velocity of the deck's scale varying on the grid's finest spacing
// over the whole domain: U / h_min sqrt(|domain|).
template <class S, class C>
double FlowSolver<S, C>::divergence_scale() const {
  const Grid& g = m_decomp.grid();
  double area = double(g.n[0]) * m_h[0] * double(g.n[1]) * m_h[1];
  double hmin = std::min(m_h[0], m_h[1]);
  if (m_dim == 3) {
    area *= double(g.n[2]) * m_h[2];
    hmin = std::min(hmin, m_h[2]);
  }
  return velocity_scale(m_config) / hmin * std::sqrt(area);
}

template <class S, class C>
Projection FlowSolver<S, C>::project_velocity() {
  if (m_phi_extra.view().size() == 0)
    m_phi_extra = Field<double>("mantissa::cfd::FlowSolver::phi_projection", m_decomp, 1);
  m_solves.iterations = 0;
  m_solves.max_residual = 0.0;
  Projection out;
  fill_velocity(m_u, m_v, m_w);
  out.divergence_before = divergence_rhs(m_u, m_v, m_w);
  out.divergence_after = out.divergence_before;
  // As initialize(): a field divergence-free to rounding already is left alone (a solve of a
  // rounding-level right-hand side to a relative tolerance would only stall).
  if (out.divergence_before > 1e-12 * divergence_scale()) {
    Kokkos::deep_copy(m_wu.view(), m_u.view());
    Kokkos::deep_copy(m_wv.view(), m_v.view());
    if (m_dim == 3) Kokkos::deep_copy(m_ww.view(), m_w.view());
    Kokkos::deep_copy(m_phi_extra.view(), 0.0);
    project_into(m_phi_extra, 0);
    std::swap(m_u, m_wu);
    std::swap(m_v, m_wv);
    std::swap(m_w, m_ww);
    out.divergence_after = divergence_rhs(m_u, m_v, m_w);
    out.projected = true;
  }
  out.iterations = m_solves.iterations;
  out.residual = m_solves.max_residual;
  return out;
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
  std::swap(m_wn, m_w);
  std::swap(m_u, m_wu);
  std::swap(m_v, m_wv);
  std::swap(m_w, m_ww);
  // stage 2: u^{n+1} = P(1/2 u^n + 1/2 (u1 + dt F(u1)))
  momentum(0.5);
  project(1);
  std::swap(m_u, m_wu);
  std::swap(m_v, m_wv);
  std::swap(m_w, m_ww);
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
  fill_velocity(m_u, m_v, m_w);
}

template <class S, class C>
FlowDiagnostics FlowSolver<S, C>::diagnostics() const {
  if (m_dim == 3) return diagnostics3();
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
FlowDiagnostics FlowSolver<S, C>::diagnostics3() const {
  FlowDiagnostics d;
  const auto& e = m_decomp.extent();
  const std::int64_t g = 1;
  const auto u = m_u.view(), v = m_v.view(), w = m_w.view();
  const double r[3] = {1.0 / m_h[0], 1.0 / m_h[1], 1.0 / m_h[2]};
  const MPI_Comm comm = m_decomp.comm();
  const auto owned = detail::box3(g, g + e[0], g, g + e[1], g, g + e[2]);
  double ke = 0.0, ens = 0.0, div2 = 0.0, divmax = 0.0, umax = 0.0, vmax = 0.0, wmax = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::kinetic_energy", owned,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double a = double(u(k, j, i)), b = double(v(k, j, i)), c = double(w(k, j, i));
        acc += a * a + b * b + c * c;
      },
      ke);
  const typename field_type::view_type comps[3] = {u, v, w};
  double* maxes[3] = {&umax, &vmax, &wmax};
  for (int a = 0; a < 3; ++a) {
    const auto f = comps[a];
    Kokkos::parallel_reduce(
        "mantissa::cfd::FlowSolver::max_velocity", owned,
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
          const double q = math::fabs(double(f(k, j, i)));
          acc = q > acc ? q : acc;
        },
        Kokkos::Max<double>(*maxes[a]));
  }
  // |omega|^2 on the edges inside the domain: component a on the a edges, which lie on the
  // faces of the other two axes (the wall edges are left out as the 2D corners are)
  const std::int64_t sx = m_skip_low[0], sy = m_skip_low[1], sz = m_skip_low[2];
  double part = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::enstrophy_x", detail::box3(g, g + e[0], g + sy, g + e[1], g + sz, g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = kernels::vorticity3<0, double>(u, v, w, int(k), int(j), int(i), r);
        acc += q * q;
      },
      part);
  ens += part;
  part = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::enstrophy_y", detail::box3(g + sx, g + e[0], g, g + e[1], g + sz, g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = kernels::vorticity3<1, double>(u, v, w, int(k), int(j), int(i), r);
        acc += q * q;
      },
      part);
  ens += part;
  part = 0.0;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::enstrophy_z", detail::box3(g + sx, g + e[0], g + sy, g + e[1], g, g + e[2]),
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = kernels::vorticity3<2, double>(u, v, w, int(k), int(j), int(i), r);
        acc += q * q;
      },
      part);
  ens += part;
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::divergence_norm", owned,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = kernels::divergence3<double>(u, v, w, int(k), int(j), int(i), r);
        acc += q * q;
      },
      div2);
  Kokkos::parallel_reduce(
      "mantissa::cfd::FlowSolver::divergence_max", owned,
      KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i, double& acc) {
        const double q = math::fabs(kernels::divergence3<double>(u, v, w, int(k), int(j), int(i), r));
        acc = q > acc ? q : acc;
      },
      Kokkos::Max<double>(divmax));
  double sums[3] = {ke, ens, div2};
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
  double maxs[4] = {umax, vmax, wmax, divmax};
  MPI_Allreduce(MPI_IN_PLACE, maxs, 4, MPI_DOUBLE, MPI_MAX, comm);
  const double dv = m_h[0] * m_h[1] * m_h[2];
  d.kinetic_energy = 0.5 * sums[0] * dv;
  d.enstrophy = 0.5 * sums[1] * dv;
  d.divergence = std::sqrt(sums[2] * dv);
  d.max_divergence = maxs[3];
  d.cfl = m_dt * (maxs[0] * r[0] + maxs[1] * r[1] + maxs[2] * r[2] +
                  2.0 * m_config.viscosity * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]));
  d.finite = std::isfinite(d.kinetic_energy) && std::isfinite(d.enstrophy) && std::isfinite(d.divergence);
  return d;
}

template <class S, class C>
std::vector<double> FlowSolver<S, C>::sample(int axis,
                                             const std::vector<std::array<double, 3>>& points) const {
  const Grid& gr = m_decomp.grid();
  const int dim = m_dim;
  const auto& f = velocity(axis);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.view());
  const auto& off = m_decomp.offset();
  const auto& e = m_decomp.extent();
  const std::int64_t gz = dim == 3 ? 1 : 0;  // the z ghost layer
  // the component's lattice: along its own axis the faces 0..n (n only at a wall), across
  // it the cell centres 0..n-1
  std::array<double, 3> shift{0.5, 0.5, 0.5};
  std::array<std::int64_t, 3> top{gr.n[0] - 1, gr.n[1] - 1, gr.n[2] - 1};
  shift[std::size_t(axis)] = 0.0;
  if (!gr.periodic[axis]) top[std::size_t(axis)] = gr.n[axis];
  const int corners = 1 << dim;  // 4 in 2D (the corners' order and weights as before), 8 in 3D
  const std::size_t nc = std::size_t(corners);
  std::vector<double> part(points.size() * nc, 0.0), weight(points.size() * nc, 0.0);
  for (std::size_t p = 0; p < points.size(); ++p) {
    std::array<std::int64_t, 3> i0{};
    std::array<double, 3> t{};
    for (int a = 0; a < dim; ++a) {
      double q = (points[p][std::size_t(a)] - gr.origin[a]) / m_h[std::size_t(a)] - shift[std::size_t(a)];
      q = std::min(std::max(q, 0.0), double(top[std::size_t(a)]));
      i0[std::size_t(a)] = std::min<std::int64_t>(std::int64_t(std::floor(q)), top[std::size_t(a)] - 1);
      i0[std::size_t(a)] = std::max<std::int64_t>(i0[std::size_t(a)], 0);  // one cell along the axis
      t[std::size_t(a)] = q - double(i0[std::size_t(a)]);
    }
    for (int c = 0; c < corners; ++c) {
      const std::int64_t gi = i0[0] + (c & 1), gj = i0[1] + ((c >> 1) & 1), gk = i0[2] + ((c >> 2) & 1);
      double wgt = ((c & 1) ? t[0] : 1.0 - t[0]) * (((c >> 1) & 1) ? t[1] : 1.0 - t[1]);
      if (dim == 3) wgt *= ((c >> 2) & 1) ? t[2] : 1.0 - t[2];
      weight[p * nc + std::size_t(c)] = wgt;
      auto holds = [&](int a, std::int64_t gidx) {
        if (gidx >= off[a] && gidx < off[a] + e[a]) return true;
        // the high wall face of the normal axis sits in the last rank's ghost layer
        return a == axis && gidx == gr.n[a] && !gr.periodic[a] && m_decomp.at_high_boundary(a);
      };
      if (holds(0, gi) && holds(1, gj) && (dim == 2 || holds(2, gk)))
        part[p * nc + std::size_t(c)] =
            double(host(dim == 3 ? gk - off[2] + gz : 0, gj - off[1] + 1, gi - off[0] + 1));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, part.data(), static_cast<int>(part.size()), MPI_DOUBLE, MPI_SUM,
                m_decomp.comm());
  std::vector<double> out(points.size(), 0.0);
  for (std::size_t p = 0; p < points.size(); ++p)
    for (std::size_t c = 0; c < nc; ++c) out[p] += weight[p * nc + c] * part[p * nc + c];
  return out;
}

}  // namespace mantissa::cfd
