#pragma once
// Out-of-line bodies of Solver (STYLE #2); included only by the Solver_<precision>.cpp files
// that instantiate it.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <seismic/Solver.hpp>
#include <seismic/VelocityModel.hpp>
#include <seismic/detail/SolverKernels.hpp>
#include <seismic/stencil_kernels.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

namespace mantissa::seismic {

namespace detail {

inline double allreduce(double v, MPI_Op op, MPI_Comm comm) {
  double r = v;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, op, comm);
  return r;
}

}  // namespace detail

template <class Storage, class Compute>
Solver<Storage, Compute>::Solver(const Decomposition& decomp, const Config& config)
    : m_decomp(decomp),
      m_config(config),
      m_grid(decomp.grid()),
      m_radius(config.order / 2),
      m_halo(decomp, std::max(1, config.order / 2), 1) {
  Kokkos::Profiling::pushRegion("mantissa::seismic::Solver::Solver");
  const int g = m_radius;
  const int dim = m_grid.dim;
  if (config.order != 2 && config.order != 4 && config.order != 6 && config.order != 8)
    throw Error("seismic.order = " + std::to_string(config.order) + " is not supported; use 2, 4, 6 or 8");
  for (int a = 0; a < dim; ++a) {
    for (int side = 0; side < 2; ++side)
      if (config.boundary[a][side] != Boundary::pml && decomp.extent()[a] < g + 1)
        throw Error("seismic: a rank owns " + std::to_string(decomp.extent()[a]) + " points along axis " +
                    std::to_string(a) + ", fewer than the " + std::to_string(g + 1) +
                    " an image boundary needs; use fewer ranks along that axis");
  }
  // Velocity model at the owned points (host), its range over the whole grid.
  VelocityModel model(config.velocity, m_grid, decomp.comm());
  m_p = field_type("mantissa::seismic::Solver::p", decomp, g, row_align_bytes<Storage>(m_grid.dim));
  m_p_old = field_type("mantissa::seismic::Solver::p_old", decomp, g, row_align_bytes<Storage>(m_grid.dim));
  m_velocity =
      Field<double>("mantissa::seismic::Solver::velocity", decomp, g, row_align_bytes<double>(m_grid.dim));
  m_c2dt2 = model_field_type("mantissa::seismic::Solver::c2dt2", decomp, g,
                             row_align_bytes<model_type>(m_grid.dim));
  const auto& off = decomp.offset();
  const auto& ext = decomp.extent();
  const auto ghosts = m_p.ghosts();
  auto vel_host = Kokkos::create_mirror_view(m_velocity.view());
  double vmin = 1e300, vmax = -1e300;
  for (std::int64_t k = 0; k < ext[2]; ++k)
    for (std::int64_t j = 0; j < ext[1]; ++j)
      for (std::int64_t i = 0; i < ext[0]; ++i) {
        const double v = model.at(off[0] + i, off[1] + j, off[2] + k);
        vel_host(k + ghosts[2], j + ghosts[1], i + ghosts[0]) = v;
        vmin = std::min(vmin, v);
        vmax = std::max(vmax, v);
      }
  m_vmin = detail::allreduce(vmin, MPI_MIN, decomp.comm());
  m_vmax = detail::allreduce(vmax, MPI_MAX, decomp.comm());
  m_warnings = check_config(config, m_grid, m_vmin, m_vmax);
  m_dt = effective_dt(config, m_grid, m_vmax);
  if (!config.quiet && decomp.rank() == 0)
    for (const auto& w : m_warnings) std::cerr << "warning: " << w << "\n";
  auto c2_host = Kokkos::create_mirror_view(m_c2dt2.view());
  for (std::size_t k = 0; k < c2_host.extent(0); ++k)
    for (std::size_t j = 0; j < c2_host.extent(1); ++j)
      for (std::size_t i = 0; i < c2_host.extent(2); ++i) {
        const double cdt = vel_host(k, j, i) * m_dt;
        c2_host(k, j, i) = model_type(cdt * cdt);
      }
  Kokkos::deep_copy(m_velocity.view(), vel_host);
  Kokkos::deep_copy(m_c2dt2.view(), c2_host);

  // Boxes in storage coordinates: owned, interior (outside every PML), PML slabs.
  std::array<std::int64_t, 3> ilo{0, 0, 0}, ihi{1, 1, 1};
  for (int a = 0; a < 3; ++a) {
    ilo[a] = 0;
    ihi[a] = m_grid.n[a];
    if (a >= dim) continue;
    if (config.boundary[a][0] == Boundary::pml) ilo[a] = config.pml_cells, m_has_pml = true;
    if (config.boundary[a][1] == Boundary::pml) ihi[a] = m_grid.n[a] - config.pml_cells, m_has_pml = true;
  }
  detail::Box rem;
  for (int a = 0; a < 3; ++a) {
    m_owned.lo[a] = ghosts[a];
    m_owned.hi[a] = ghosts[a] + int(ext[a]);
    rem.lo[a] = int(off[a]);
    rem.hi[a] = int(off[a] + ext[a]);
  }
  auto to_storage = [&](detail::Box b) {
    for (int a = 0; a < 3; ++a) {
      b.lo[a] += ghosts[a] - int(off[a]);
      b.hi[a] += ghosts[a] - int(off[a]);
    }
    return b;
  };
  for (int a = 2; a >= 0; --a) {
    detail::Box low = rem, high = rem;
    low.hi[a] = std::min<int>(rem.hi[a], int(ilo[a]));
    high.lo[a] = std::max<int>(rem.lo[a], int(ihi[a]));
    for (const auto& b : {low, high})
      if (!b.empty()) (a == 0 ? m_pml_row_boxes : m_pml_update_boxes).push_back(to_storage(b));
    rem.lo[a] = std::max<int>(rem.lo[a], int(ilo[a]));
    rem.hi[a] = std::min<int>(rem.hi[a], int(ihi[a]));
  }
  m_interior = rem.empty() ? detail::Box{} : to_storage(rem);
  m_pml_boxes = m_pml_update_boxes;
  m_pml_boxes.insert(m_pml_boxes.end(), m_pml_row_boxes.begin(), m_pml_row_boxes.end());

  if (m_has_pml) {
    double f = config.pml_frequency;
    if (!(f > 0.0))
      for (const auto& shot : config.shots)
        for (const auto& s : shot.sources) f = std::max(f, s.frequency);
    const char* names[3] = {"x", "y", "z"};
    for (int a = 0; a < dim; ++a) {
      m_psi[a] = memory_field_type(std::string("mantissa::seismic::Solver::psi_") + names[a], decomp, g,
                                   row_align_bytes<Compute>(m_grid.dim));
      m_zeta[a] = memory_field_type(std::string("mantissa::seismic::Solver::zeta_") + names[a], decomp, g,
                                    row_align_bytes<Compute>(m_grid.dim));
      const std::size_t len = static_cast<std::size_t>(ext[a] + 2 * ghosts[a]);
      m_pml_a[a] = Kokkos::View<Compute*, typename field_type::memory_space>(
          std::string("mantissa::seismic::Solver::pml_a_") + names[a], len);
      m_pml_b[a] = Kokkos::View<Compute*, typename field_type::memory_space>(
          std::string("mantissa::seismic::Solver::pml_b_") + names[a], len);
      auto ah = Kokkos::create_mirror_view(m_pml_a[a]);
      auto bh = Kokkos::create_mirror_view(m_pml_b[a]);
      const double thickness = config.pml_cells * m_grid.spacing[a];
      for (std::size_t s = 0; s < len; ++s) {
        const std::int64_t gi = off[a] + std::int64_t(s) - ghosts[a];
        double x = 0.0;
        if (config.boundary[a][0] == Boundary::pml && gi < config.pml_cells)
          x = double(config.pml_cells - gi) / config.pml_cells;
        if (config.boundary[a][1] == Boundary::pml && gi > m_grid.n[a] - 1 - config.pml_cells)
          x = double(gi - (m_grid.n[a] - 1 - config.pml_cells)) / config.pml_cells;
        x = std::min(x, 1.0);
        const auto c = cpml_coefficients(x, thickness, m_vmax, config.pml_reflection, f, m_dt);
        ah(s) = Compute(c.a);
        bh(s) = Compute(c.b);
      }
      // The owned indices where axis a's memory variables stay +0 (CpmlSlabs), from the
      // profile itself, so the kernels skip exactly where the full update would store +0.
      find_inactive_run(ah.data(), bh.data(), m_owned.lo[a], m_owned.hi[a], a, m_pml_slabs);
      Kokkos::deep_copy(m_pml_a[a], ah);
      Kokkos::deep_copy(m_pml_b[a], bh);
    }
    for (int a = dim; a < 3; ++a) {
      m_pml_a[a] =
          Kokkos::View<Compute*, typename field_type::memory_space>("mantissa::seismic::Solver::pml_a", 1);
      m_pml_b[a] =
          Kokkos::View<Compute*, typename field_type::memory_space>("mantissa::seismic::Solver::pml_b", 1);
    }
    // The x slabs' memory update can run in the interior's sweep, after the psi halo exchange,
    // when no other rank reads their psi this step and their p update reads psi only on their own
    // rows: the psi_x they read beside them (R along x) is the domain's ghost or stays +0, and
    // they have no psi_y or psi_z to update (CpmlSlabs).
    m_pml_rows_memory = true;
    for (const auto& b : m_pml_row_boxes) {
      for (int s = 1; s <= g; ++s)
        for (const int x : {b.lo[0] - s, b.hi[0] - 1 + s}) {
          const bool domain_ghost = (x < m_owned.lo[0] && decomp.at_low_boundary(0)) ||
                                    (x >= m_owned.hi[0] && decomp.at_high_boundary(0));
          const bool owned_zero = x >= m_owned.lo[0] && x < m_owned.hi[0] && !m_pml_slabs.memory(0, x);
          if (!domain_ghost && !owned_zero) m_pml_rows_memory = false;
        }
      for (int a = 1; a < dim; ++a)
        for (int s = b.lo[a]; s < b.hi[a]; ++s)
          if (m_pml_slabs.memory(a, s)) m_pml_rows_memory = false;
    }
    m_memory_halo = std::make_unique<HaloExchange<Compute>>(decomp, g, dim);
    // Host back-ends decode the rows they read themselves (host::CpmlRing).
    if constexpr (!std::is_same<Storage, Compute>::value && !detail::is_host_space<execution_space>()) {
      m_p_compute = memory_field_type("mantissa::seismic::Solver::p_compute", decomp, g,
                                      row_align_bytes<Compute>(m_grid.dim));
      for (auto b : m_pml_boxes) {  // every point the CPML kernels read: R along each axis
        for (int a = 0; a < dim; ++a) {
          b.lo[a] -= g;
          b.hi[a] += g;
        }
        m_pml_read_boxes.push_back(b);
      }
    }
  }

  // Receivers: interpolation stencils in a fixed order; each entry is read by its owner.
  m_traces.positions = config.receivers;
  m_traces.sample_interval = m_dt * config.record_every;
  m_rec_first.push_back(0);
  std::vector<std::array<int, 3>> local;
  for (const auto& r : config.receivers) {
    const auto st = point_stencil(r, m_grid, config.order);
    for (std::size_t e = 0; e < st.index.size(); ++e) {
      std::array<int, 3> l{-1, -1, -1};
      bool owned = true;
      for (int a = 0; a < 3; ++a)
        owned = owned && st.index[e][a] >= off[a] && st.index[e][a] < off[a] + ext[a];
      if (owned)
        for (int a = 0; a < 3; ++a) l[a] = int(st.index[e][a] - off[a]) + ghosts[a];
      local.push_back(l);
      m_rec_weight.push_back(st.weight[e]);
    }
    m_rec_first.push_back(m_rec_weight.size());
  }
  m_rec_index = decltype(m_rec_index)("mantissa::seismic::Solver::receiver_index", local.size());
  m_rec_values = decltype(m_rec_values)("mantissa::seismic::Solver::receiver_values", local.size());
  auto rh = Kokkos::create_mirror_view(m_rec_index);
  for (std::size_t e = 0; e < local.size(); ++e)
    for (int a = 0; a < 3; ++a) rh(e, a) = local[e][a];
  Kokkos::deep_copy(m_rec_index, rh);
  Kokkos::Profiling::popRegion();
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::initialize(int shot) {
  if (shot < 0 || shot >= static_cast<int>(m_config.shots.size()))
    throw Error("seismic: shot " + std::to_string(shot) + " does not exist; the deck has " +
                std::to_string(m_config.shots.size()) + " shots (seismic.shots)");
  Kokkos::Profiling::pushRegion("mantissa::seismic::Solver::initialize");
  m_shot = shot;
  m_step = 0;
  Kokkos::deep_copy(m_p.view(), Storage(0.0f));
  Kokkos::deep_copy(m_p_old.view(), Storage(0.0f));
  for (int a = 0; a < 3; ++a) {
    if (m_psi[a].view().data()) Kokkos::deep_copy(m_psi[a].view(), Compute(0));
    if (m_zeta[a].view().data()) Kokkos::deep_copy(m_zeta[a].view(), Compute(0));
  }
  m_sources.clear();
  const auto& off = m_decomp.offset();
  const auto& ext = m_decomp.extent();
  const auto ghosts = m_p.ghosts();
  double volume = 1.0;
  for (int a = 0; a < m_grid.dim; ++a) volume *= m_grid.spacing[a];
  for (const auto& src : m_config.shots[shot].sources) {
    const auto st = point_stencil(src.position, m_grid, m_config.order);
    std::vector<std::array<int, 3>> idx;
    std::vector<double> w;
    for (std::size_t e = 0; e < st.index.size(); ++e) {
      bool owned = true;
      for (int a = 0; a < 3; ++a)
        owned = owned && st.index[e][a] >= off[a] && st.index[e][a] < off[a] + ext[a];
      if (!owned) continue;
      idx.push_back({int(st.index[e][0] - off[0]) + ghosts[0], int(st.index[e][1] - off[1]) + ghosts[1],
                     int(st.index[e][2] - off[2]) + ghosts[2]});
      w.push_back(st.weight[e] / volume);  // the discrete delta: weight per cell volume
    }
    SourceStencil s{decltype(SourceStencil::index)("mantissa::seismic::Solver::source_index", idx.size()),
                    decltype(SourceStencil::weight)("mantissa::seismic::Solver::source_weight", idx.size()),
                    Wavelet(src)};
    auto ih = Kokkos::create_mirror_view(s.index);
    auto wh = Kokkos::create_mirror_view(s.weight);
    for (std::size_t e = 0; e < idx.size(); ++e) {
      for (int a = 0; a < 3; ++a) ih(e, a) = idx[e][a];
      wh(e) = Compute(w[e]);
    }
    Kokkos::deep_copy(s.index, ih);
    Kokkos::deep_copy(s.weight, wh);
    m_sources.push_back(std::move(s));
  }
  m_traces.data.assign(m_config.receivers.size(), {});
  record();
  Kokkos::Profiling::popRegion();
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::fill_boundaries(field_type& f) const {
  const int g = m_radius;
  for (int a = 0; a < m_grid.dim; ++a)
    for (int side = 0; side < 2; ++side) {
      const Boundary b = m_config.boundary[a][side];
      if (b == Boundary::pml) continue;
      if (side == 0 ? !m_decomp.at_low_boundary(a) : !m_decomp.at_high_boundary(a)) continue;
      const int plane = side == 0 ? m_owned.lo[a] : m_owned.hi[a] - 1;
      detail::mirror_fill<Storage, Compute>(execution_space(), f.view(), m_owned, a, plane,
                                            side == 0 ? -1 : 1, g, b == Boundary::free_surface);
    }
}

template <class Storage, class Compute>
template <int R>
void Solver<Storage, Compute>::step_impl() {
  const execution_space space;
  const double spacing[3] = {m_grid.spacing[0], m_grid.spacing[1], m_grid.spacing[2]};
  const auto w = make_stencil_weights<Compute, R>(m_grid.dim, spacing);
  m_halo.exchange(space, {&m_p});
  fill_boundaries(m_p);
  // The CPML kernels read p as pc: p itself, or on device back-ends its compute-type copy when the
  // storage is not the compute type (the same values; converted once instead of at each of their
  // reads). Host back-ends decode the rows a thread's block reads into a ring of its own
  // (host::CpmlRing), which stays in cache, instead of writing a copy to memory and reading it back.
  const auto cpml_step = [&](const auto& pc) {
    for (const auto& box : m_pml_update_boxes)
      detail::pml_memory_update<R>(space, box, pc, m_psi, m_pml_a, m_pml_b, m_pml_slabs, w);
    if (!m_pml_rows_memory)
      for (const auto& box : m_pml_row_boxes)
        detail::pml_memory_update<R>(space, box, pc, m_psi, m_pml_a, m_pml_b, m_pml_slabs, w);
    std::vector<memory_field_type*> mem;
    mem.reserve(std::size_t(m_grid.dim));
    for (int a = 0; a < m_grid.dim; ++a) mem.push_back(&m_psi[a]);
    m_memory_halo->exchange(space, mem);
    detail::interior_and_pml_rows_update<R>(space, m_interior, m_pml_row_boxes, m_p.view(), pc,
                                            m_p_old.view(), m_c2dt2.view(), m_psi, m_zeta, m_pml_a, m_pml_b,
                                            m_pml_slabs, w, m_pml_rows_memory);
    for (const auto& box : m_pml_update_boxes)
      detail::pml_update<R>(space, box, pc, m_p_old.view(), m_c2dt2.view(), m_psi, m_zeta, m_pml_a, m_pml_b,
                            m_pml_slabs, w);
  };
  if (!m_has_pml) {
    detail::interior_update<R>(space, m_interior, m_p.view(), m_p_old.view(), m_c2dt2.view(), w);
  } else if constexpr (std::is_same<Storage, Compute>::value || detail::is_host_space<execution_space>()) {
    cpml_step(m_p.view());
  } else {
    for (const auto& box : m_pml_read_boxes) detail::decode_box(space, box, m_p.view(), m_p_compute.view());
    cpml_step(m_p_compute.view());
  }
  const double t = time();
  for (const auto& s : m_sources)
    detail::inject<Compute>(space, m_p_old.view(), m_c2dt2.view(), s.index, s.weight, Compute(s.wavelet(t)));
  // Free-surface planes stay exactly zero even when a source touches them.
  for (int a = 0; a < m_grid.dim; ++a)
    for (int side = 0; side < 2; ++side) {
      if (m_config.boundary[a][side] != Boundary::free_surface) continue;
      if (side == 0 ? !m_decomp.at_low_boundary(a) : !m_decomp.at_high_boundary(a)) continue;
      detail::zero_plane(space, m_p_old.view(), m_owned, a, side == 0 ? m_owned.lo[a] : m_owned.hi[a] - 1);
    }
  std::swap(m_p, m_p_old);
  ++m_step;
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::step() {
  if (m_shot < 0) throw Error("seismic: Solver::step called before initialize(shot)");
  Kokkos::Profiling::pushRegion("mantissa::seismic::Solver::step");
  switch (m_radius) {
    case 1:
      step_impl<1>();
      break;
    case 2:
      step_impl<2>();
      break;
    case 3:
      step_impl<3>();
      break;
    default:
      step_impl<4>();
      break;
  }
  if (m_step % m_config.record_every == 0) record();
  Kokkos::Profiling::popRegion();
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::run(int nsteps) {
  for (int s = 0; s < nsteps; ++s) step();
}

template <class Storage, class Compute>
double Solver<Storage, Compute>::fixed_step_seconds(int reps) {
  const execution_space space;
  std::vector<double> t;
  reps = std::max(reps, 1);
  for (int r = 0; r < reps + 2; ++r) {  // two untimed: buffers and first touch
    space.fence();
    const auto t0 = std::chrono::steady_clock::now();
    m_halo.exchange(space, {&m_p});
    fill_boundaries(m_p);
    if (m_has_pml) {
      std::vector<memory_field_type*> mem;
      mem.reserve(std::size_t(m_grid.dim));
      for (int a = 0; a < m_grid.dim; ++a) mem.push_back(&m_psi[a]);
      m_memory_halo->exchange(space, mem);
    }
    space.fence();
    if (r >= 2) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::record() {
  if (m_rec_weight.empty()) return;
  Kokkos::Profiling::pushRegion("mantissa::seismic::Solver::record");
  detail::gather_points<Compute>(execution_space(), m_p.view(), m_rec_index, m_rec_values);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_rec_values);
  std::vector<double> values(host.data(), host.data() + host.extent(0));
  // Each entry is non-zero on its owner only, so the sum is exact and rank-count independent.
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                m_decomp.comm());
  for (std::size_t r = 0; r + 1 < m_rec_first.size(); ++r) {
    double v = 0.0;
    for (std::size_t e = m_rec_first[r]; e < m_rec_first[r + 1]; ++e) v += m_rec_weight[e] * values[e];
    m_traces.data[r].push_back(v);
  }
  Kokkos::Profiling::popRegion();
}

template <class Storage, class Compute>
template <int R>
double Solver<Storage, Compute>::energy_impl() const {
  const double spacing[3] = {m_grid.spacing[0], m_grid.spacing[1], m_grid.spacing[2]};
  const auto w = make_stencil_weights<double, R>(m_grid.dim, spacing);
  detail::EnergyWeights ew{};
  for (int a = 0; a < 3; ++a) {
    ew.first[a] = m_owned.lo[a] - int(m_decomp.offset()[a]);  // storage index of global 0
    ew.last[a] = ew.first[a] + int(m_grid.n[a]) - 1;          // storage index of global n-1
    ew.rigid_lo[a] = a < m_grid.dim && m_config.boundary[a][0] == Boundary::rigid;
    ew.rigid_hi[a] = a < m_grid.dim && m_config.boundary[a][1] == Boundary::rigid;
  }
  double volume = 1.0;
  for (int a = 0; a < m_grid.dim; ++a) volume *= m_grid.spacing[a];
  // Exact over points and ranks (core/ExactSum.hpp): the same bits at any rank count.
  const auto local =
      detail::energy<R>(execution_space(), m_owned, m_p.view(), m_p_old.view(), m_c2dt2.view(), w, ew);
  return exact_allreduce(local, m_decomp.comm()) * volume;
}

template <class Storage, class Compute>
Diagnostics Solver<Storage, Compute>::diagnostics() const {
  Kokkos::Profiling::pushRegion("mantissa::seismic::Solver::diagnostics");
  Diagnostics d;
  d.time = time();
  d.step = m_step;
  switch (m_radius) {
    case 1:
      d.energy = energy_impl<1>();
      break;
    case 2:
      d.energy = energy_impl<2>();
      break;
    case 3:
      d.energy = energy_impl<3>();
      break;
    default:
      d.energy = energy_impl<4>();
      break;
  }
  const auto mx = detail::max_abs_and_nonfinite(execution_space(), m_owned, m_p.view());
  d.max_abs = detail::allreduce(mx.first, MPI_MAX, m_decomp.comm());
  d.finite = detail::allreduce(mx.second, MPI_SUM, m_decomp.comm()) == 0.0;
  Kokkos::Profiling::popRegion();
  return d;
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::set_state(const field_type& current, const field_type& previous) {
  if (current.extent() != m_p.extent() || current.ghosts() != m_p.ghosts() ||
      previous.extent() != m_p.extent() || previous.ghosts() != m_p.ghosts())
    throw Error(
        "seismic: set_state got fields of another shape than the solver's; build them on the same "
        "decomposition with ghost width " +
        std::to_string(m_radius));
  copy_points(current, m_p);
  copy_points(previous, m_p_old);
  if (m_shot < 0) m_shot = 0;
  m_halo.exchange({&m_p});
  m_halo.exchange({&m_p_old});
  fill_boundaries(m_p);
  fill_boundaries(m_p_old);
}

template <class Storage, class Compute>
std::vector<std::pair<std::string, typename Solver<Storage, Compute>::field_type*>>
Solver<Storage, Compute>::state_fields() {
  return {{"p", &m_p}, {"p_old", &m_p_old}};
}

template <class Storage, class Compute>
std::vector<std::pair<std::string, typename Solver<Storage, Compute>::memory_field_type*>>
Solver<Storage, Compute>::memory_fields() {
  std::vector<std::pair<std::string, memory_field_type*>> out;
  if (!m_has_pml) return out;
  const char* names[3] = {"x", "y", "z"};
  for (int a = 0; a < m_grid.dim; ++a) {
    out.push_back({std::string("psi_") + names[a], &m_psi[a]});
    out.push_back({std::string("zeta_") + names[a], &m_zeta[a]});
  }
  return out;
}

template <class Storage, class Compute>
void Solver<Storage, Compute>::restore(int shot, int step, const Traces& traces) {
  if (shot < 0 || shot >= static_cast<int>(m_config.shots.size()))
    throw Error("seismic: restore to shot " + std::to_string(shot) + ", but the deck has " +
                std::to_string(m_config.shots.size()) + " shots");
  // initialize() rebuilds the shot's source stencils but zeroes the fields: copy them aside.
  field_type p_copy("mantissa::seismic::Solver::restore::p", m_decomp, m_radius,
                    row_align_bytes<Storage>(m_grid.dim));
  field_type p_old_copy("mantissa::seismic::Solver::restore::p_old", m_decomp, m_radius,
                        row_align_bytes<Storage>(m_grid.dim));
  Kokkos::deep_copy(p_copy.view(), m_p.view());
  Kokkos::deep_copy(p_old_copy.view(), m_p_old.view());
  std::array<memory_field_type, 3> psi_copy, zeta_copy;
  for (int a = 0; a < 3; ++a) {
    if (!m_psi[a].view().data()) continue;
    psi_copy[a] = memory_field_type("mantissa::seismic::Solver::restore::psi", m_decomp, m_radius,
                                    row_align_bytes<Compute>(m_grid.dim));
    zeta_copy[a] = memory_field_type("mantissa::seismic::Solver::restore::zeta", m_decomp, m_radius,
                                     row_align_bytes<Compute>(m_grid.dim));
    Kokkos::deep_copy(psi_copy[a].view(), m_psi[a].view());
    Kokkos::deep_copy(zeta_copy[a].view(), m_zeta[a].view());
  }
  initialize(shot);
  Kokkos::deep_copy(m_p.view(), p_copy.view());
  Kokkos::deep_copy(m_p_old.view(), p_old_copy.view());
  for (int a = 0; a < 3; ++a) {
    if (!m_psi[a].view().data()) continue;
    Kokkos::deep_copy(m_psi[a].view(), psi_copy[a].view());
    Kokkos::deep_copy(m_zeta[a].view(), zeta_copy[a].view());
  }
  m_step = step;
  m_traces.data = traces.data;
  m_halo.exchange({&m_p});
  m_halo.exchange({&m_p_old});
  fill_boundaries(m_p);
  fill_boundaries(m_p_old);
}

}  // namespace mantissa::seismic
