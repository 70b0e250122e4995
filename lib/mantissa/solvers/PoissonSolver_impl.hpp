#pragma once
// Out-of-line bodies of PoissonSolver (included by PoissonSolver.hpp).
#include <mantissa/core/Log.hpp>

#include <chrono>
#include <cmath>

namespace mantissa::solvers {

template <class L, class M>
PoissonSolver<L, M>::PoissonSolver(const Decomposition& decomp, const Boundary& bc,
                                   const SolverOptions& options)
    : m_decomp(&decomp), m_bc(bc), m_options(options) {
  if (!(options.tolerance > 0.0 && options.tolerance < 1.0))
    throw Error("poisson solver: tolerance " + std::to_string(options.tolerance) + " must be in (0, 1)");
  if (options.max_iterations < 1) throw Error("poisson solver: max_iterations must be at least 1");
  if (!(options.inner_tolerance > 0.0 && options.inner_tolerance < 1.0))
    throw Error("poisson solver: inner_tolerance " + std::to_string(options.inner_tolerance) +
                " must be in (0, 1)");
  m_dim = decomp.grid().dim;
  m_mg = std::make_unique<Multigrid<M>>(decomp, bc, options.multigrid);
  for (int a = 0; a < 3; ++a) {
    m_place.ghost[std::size_t(a)] = a < m_dim ? 1 : 0;
    m_place.offset[std::size_t(a)] = decomp.offset()[std::size_t(a)];
    m_place.extent[std::size_t(a)] = decomp.extent()[std::size_t(a)];
  }
  if (options.krylov_storage != Precision::fp64 && options.krylov_storage != Precision::fp32)
    throw Error("poisson solver: krylov_storage " + std::string(to_string(options.krylov_storage)) +
                " is not supported; choose fp64 or fp32 (16-bit search directions lose the CG's "
                "conjugacy)");
  m_krylov32 = options.krylov_storage == Precision::fp32;
  allocate(m_w64);
  if (!all_fp64()) allocate(m_w32);
}

template <class L, class M>
template <class K>
void PoissonSolver<L, M>::allocate(Work<K>& w) {
  if (w.b.view().size() > 0) return;
  const std::string base = "mantissa::solvers::PoissonSolver::";
  w.b = Field<K, M>(base + "b", *m_decomp, 1, detail::row_align_bytes);
  w.x = Field<K, M>(base + "x", *m_decomp, 1, detail::row_align_bytes);
  w.r = Field<K, M>(base + "r", *m_decomp, 1, detail::row_align_bytes);
  w.p = Field<K, M>(base + "p", *m_decomp, 1, detail::row_align_bytes);
  w.ap = Field<K, M>(base + "ap", *m_decomp, 1, detail::row_align_bytes);
  w.z = Field<K, M>(base + "z", *m_decomp, 1, detail::row_align_bytes);
  w.halo = std::make_shared<HaloExchange<K, M>>(*m_decomp, 1, 1, HaloPattern::faces);
}

template <class L, class M>
bool PoissonSolver<L, M>::all_fp64() const {
  for (auto p : m_mg->precisions())
    if (p != Precision::fp64) return false;
  return true;
}

template <class L, class M>
void PoissonSolver<L, M>::set_precisions(const std::vector<Precision>& p) {
  m_mg->set_precisions(p);
  m_krylov32 = m_options.krylov_storage == Precision::fp32;
  if (!all_fp64()) allocate(m_w32);
}

template <class L, class M>
template <class K>
void PoissonSolver<L, M>::fill(Work<K>& w, Field<K, M>& f) {
  w.halo->exchange({&f});
  const auto& lv = m_mg->level(0);
  const execution_space space;
  for (int a = 0; a < m_dim; ++a)
    for (int side = 0; side < 2; ++side) {
      const auto fc = std::size_t(2 * a + side);
      if (lv.mirror[fc] == 0 || !lv.touches[fc]) continue;
      const std::int64_t first = m_place.ghost[std::size_t(a)];
      detail::mirror_face(space, f.view(), a, side == 1, 1, first, first + m_place.extent[std::size_t(a)] - 1,
                          lv.mirror[fc]);
    }
}

template <class L, class M>
template <class K>
int PoissonSolver<L, M>::pcg(Work<K>& w, double target, int max_iterations, bool zero_initial, bool& healthy,
                             double history_scale, SolveStats& stats, int stall_window, std::string* stall,
                             const detail::NormMax* residual) {
  const execution_space space;
  const MPI_Comm comm = m_decomp->comm();
  const auto s = detail::make_stencil<K>(m_mg->level(0).coef, m_dim);
  const bool singular = m_mg->singular();
  const double ncells = double(m_decomp->grid().num_points());
  auto allreduce_nm = [&](detail::NormMax nm) {
    double sums[2] = {nm.sum2, nm.sum};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, &nm.max, 1, MPI_DOUBLE, MPI_MAX, comm);
    nm.sum2 = sums[0];
    nm.sum = sums[1];
    return nm;
  };
  healthy = true;
  detail::NormMax nm;
  if (zero_initial) {
    Kokkos::deep_copy(w.x.view(), K(0));
    Kokkos::deep_copy(w.r.view(), w.b.view());
    nm = allreduce_nm(detail::shift_norms(space, m_place, w.r.view(), 0.0));
  } else if (residual) {
    // sum2 and max as reduced over the ranks; a singular problem's sum2 is recomputed below
    nm = *residual;
  } else {
    fill(w, w.x);
    nm = allreduce_nm(detail::residual_norms(space, m_place, s, w.x.view(), w.b.view(), w.r.view()));
  }
  if (singular) nm = allreduce_nm(detail::shift_norms(space, m_place, w.r.view(), nm.sum / ncells));
  double rn = std::sqrt(nm.sum2);
  if (!std::isfinite(rn)) {
    healthy = false;
    return 0;
  }
  if (rn <= target) return 0;
  // z = M^-1 r stays in the multigrid's level-0 solution; the dots and the new direction read
  // it there (detail::precond_dots_from / update_p_from), z is never stored.
  // With a level 0 in fp64 or fp32 and red-black smoothing, each r update also loads level 0
  // (detail::update_r_entry: f = r unscaled and the first red half-sweep from zero), so the
  // cycle starts from there; 16-bit levels below get 1 / max|r| where they begin. A 16-bit
  // level 0 needs 1 / max|r| first, so it is loaded after the r update, in one pass with the
  // same half-sweep (Multigrid::load_entry).
  const bool fused = std::is_same<K, double>::value && m_mg->entry_fusable();
  // Compressed Krylov vectors (SolverOptions::krylov_storage fp32, mixed multigrid only): p in
  // m_w32.p, A p recomputed from it where it is read (detail::stencil_dot, update_r_compressed,
  // precond_dots_compressed); x, r and all arithmetic stay fp64.
  const bool compressed = std::is_same<K, double>::value && krylov_compressed();
  auto& p32 = m_w32.p;
  // A 16-bit level 0 is loaded in the r update too, with a predicted scale: a power of two that
  // puts the predicted max|r| in [1/4, 1/2), the prediction being the last max times the last
  // ratio of maxima (the CG's residual falls at a steady rate). The pass returns the true max;
  // where max|f0| is outside (1/16, 1], the entry is loaded again with 1 / max|r| (load_entry),
  // as it always was before. Within it f0 keeps fp16's relative precision down to 2^-14 / 16 of
  // its max against 2^-14 with the exact scale: below that cells hold subnormals, whose
  // absolute error (2^-25) is what a normal value at that size has.
  const Precision p0 = m_mg->precisions().front();
  const bool predicted = std::is_same<K, double>::value && !compressed && m_mg->entry_possible() &&
                         (p0 == Precision::bf16 || p0 == Precision::fp16);
  double entry_scale = 0.0;  // > 0: level 0 holds the entry of scale entry_scale r
  double max_before = 0.0, max_last = 0.0;
  bool entry_loaded = false;
  double zscale = 1.0;
  // beta: the flexible (Polak-Ribiere) form -alpha (z, Ap) / (z_old, r_old) where a level is
  // bf16, whose 8-bit significand makes the multigrid measurably nonlinear (broadband 256^3,
  // V(2,2): 12 iterations flexible, 22 standard); the standard form (z, r) / (z_old, r_old)
  // otherwise, the same iterations for fp64, fp32 and fp16 levels at 128^3 and 256^3, V(1,1)
  // and V(2,2), and it spares the dots' pass the read of Ap (docs/performance.md, 2026-12-07).
  bool flexible = false;
  for (const Precision lp : m_mg->precisions()) flexible = flexible || lp == Precision::bf16;
  auto precondition = [&](double rmax, double& zr, double& zap, double& m) {
    const double scale = rmax > 0 ? 1.0 / rmax : 1.0;
    if (entry_scale > 0.0) {
      zscale = 1.0 / entry_scale;
      m_mg->cycle(0, m_mg->options().cycle, true, true);
    } else if (entry_loaded) {
      zscale = 1.0;
      m_mg->set_coarse_scale(scale);
      m_mg->cycle(0, m_mg->options().cycle, true, true);
    } else {
      zscale = 1.0 / scale;
      m_mg->cycle(0, m_mg->options().cycle, true, m_mg->load_entry(w.r, scale));
    }
    entry_loaded = false;
    entry_scale = 0.0;
    auto& l0 = m_mg->level(0);
    detail::Sums<5> d = std::visit(
        [&](auto& ld) {
          if (compressed && flexible)
            return detail::precond_dots_compressed(space, m_place, l0.place, ld.x.view(), zscale, w.r.view(),
                                                   s, p32.view());
          return detail::precond_dots_from(space, m_place, l0.place, ld.x.view(), zscale, w.r.view(),
                                           w.ap.view(), singular, flexible);
        },
        l0.data);
    MPI_Allreduce(MPI_IN_PLACE, d.v, 5, MPI_DOUBLE, MPI_SUM, comm);
    m = singular ? d.v[2] / ncells : 0.0;
    zr = d.v[0] - m * d.v[3];
    zap = d.v[1] - m * d.v[4];
  };
  // x += alpha p of each step is deferred to the next direction update, which reads p anyway
  // (one pass over p less per iteration); every return after a step flushes it first.
  // On one rank with every face physical (no halo exchange between them), A p and (p, Ap) of
  // the next step are computed in the direction update's sweep (detail::update_p_apply; with
  // the compressed p, (p, Ap) alone: A p is recomputed from p in the r update).
  double pending = 0.0;
  bool fold = false;
  if constexpr (detail::host::is_host<execution_space>()) {
    fold = m_dim == 3;
    for (int f = 0; f < 2 * m_dim; ++f)
      fold = fold && m_mg->level(0).mirror[std::size_t(f)] != 0 && m_mg->level(0).touches[std::size_t(f)];
  }
  double pap_folded = 0.0;
  bool pap_ready = false;
  auto direction = [&](double m, double beta) {
    auto& l0 = m_mg->level(0);
    std::visit(
        [&](auto& ld) {
          if constexpr (detail::host::is_host<execution_space>()) {
            if (fold && compressed) {  // p in fp32, A p not stored
              pap_folded = detail::update_p_apply(space, m_place, l0.place, ld.x.view(), zscale, m, beta,
                                                  p32.view(), pending, w.x.view(), s,
                                                  std::decay_t<decltype(w.ap.view())>(), l0.mirror);
              pap_ready = true;
              return;
            }
            if (fold) {
              pap_folded = detail::update_p_apply(space, m_place, l0.place, ld.x.view(), zscale, m, beta,
                                                  w.p.view(), pending, w.x.view(), s, w.ap.view(), l0.mirror);
              pap_ready = true;
              return;
            }
          }
          if (compressed)
            detail::update_p_from(space, m_place, l0.place, ld.x.view(), zscale, m, beta, p32.view(), pending,
                                  w.x.view());
          else
            detail::update_p_from(space, m_place, l0.place, ld.x.view(), zscale, m, beta, w.p.view(), pending,
                                  w.x.view());
        },
        l0.data);
    pending = 0.0;
  };
  auto flush = [&](int it) {
    if (pending != 0.0 && compressed)
      detail::add_direction_compressed(space, m_place, pending, w.x.view(), p32.view());
    else if (pending != 0.0)
      detail::add_direction(space, m_place, pending, w.x.view(), w.p.view());
    pending = 0.0;
    return it;
  };
  auto broken = [&](double zr) {
    if (std::isfinite(zr) && zr > 0.0) return false;
    if (stall)
      *stall =
          "the preconditioned residual is " + std::string(std::isfinite(zr) ? "not positive" : "not finite");
    healthy = false;
    return true;
  };
  std::vector<double> norms{rn};
  double zr = 0, zap = 0, m = 0;
  if (compressed)
    Kokkos::deep_copy(p32.view(), 0.0f);  // the first (z, Ap) reads L p: 0 (and beta 0 * p finite)
  else
    Kokkos::deep_copy(w.ap.view(), K(0));
  max_last = nm.max;
  precondition(nm.max, zr, zap, m);
  if (broken(zr)) return 0;
  direction(m, 0.0);
  double rz = zr;
  for (int it = 1; it <= max_iterations; ++it) {
    double pap = 0.0;
    if (pap_ready) {
      pap = pap_folded;
      pap_ready = false;
    } else if (compressed) {
      fill(m_w32, p32);
      pap = detail::stencil_dot(space, m_place, s, p32.view());
    } else {
      fill(w, w.p);
      pap = detail::apply_dot(space, m_place, s, w.p.view(), w.ap.view());
    }
    MPI_Allreduce(MPI_IN_PLACE, &pap, 1, MPI_DOUBLE, MPI_SUM, comm);
    const double alpha = rz / pap;
    if (compressed) {
      auto& l0 = m_mg->level(0);
      std::visit(
          [&](auto& ld) {
            using T = typename std::decay_t<decltype(ld.x)>::value_type;
            if constexpr (std::is_same<T, double>::value || std::is_same<T, float>::value) {
              nm = allreduce_nm(detail::update_r_compressed(
                  space, m_place, alpha, w.r.view(), s, p32.view(), fused, l0.place,
                  level_stencil<detail::compute_t<T>>(l0, m_dim), ld.f.view(), ld.x.view()));
              entry_loaded = fused;
            } else {
              nm = allreduce_nm(detail::update_r_compressed(space, m_place, alpha, w.r.view(), s, p32.view(),
                                                            false, m_place, s, w.ap.view(), w.z.view()));
            }
          },
          l0.data);
    } else if (fused) {
      auto& l0 = m_mg->level(0);
      std::visit(
          [&](auto& ld) {
            using T = typename std::decay_t<decltype(ld.x)>::value_type;
            if constexpr (std::is_same<T, double>::value || std::is_same<T, float>::value) {
              nm = allreduce_nm(detail::update_r_entry(
                  space, m_place, alpha, w.r.view(), w.ap.view(), l0.place,
                  level_stencil<detail::compute_t<T>>(l0, m_dim), ld.f.view(), ld.x.view(), 1.0));
              entry_loaded = true;
            } else {
              nm = allreduce_nm(detail::update_r(space, m_place, alpha, w.r.view(), w.ap.view()));
            }
          },
          l0.data);
    } else if (predicted && max_before > 0.0 && max_last > 0.0) {
      const double guess = max_last * std::min(1.0, max_last / max_before);
      const double scale = std::ldexp(1.0, -2 - std::ilogb(guess));  // guess * scale in [1/4, 1/2)
      auto& l0 = m_mg->level(0);
      std::visit(
          [&](auto& ld) {
            using T = typename std::decay_t<decltype(ld.x)>::value_type;
            nm = allreduce_nm(detail::update_r_entry(space, m_place, alpha, w.r.view(), w.ap.view(), l0.place,
                                                     level_stencil<detail::compute_t<T>>(l0, m_dim),
                                                     ld.f.view(), ld.x.view(), scale));
          },
          l0.data);
      const double top = nm.max * scale;
      if (top <= 1.0 && top > 0.0625) {
        entry_scale = scale;
        m_mg->set_coarse_scale(1.0);
      }
    } else {
      nm = allreduce_nm(detail::update_r(space, m_place, alpha, w.r.view(), w.ap.view()));
    }
    pending = alpha;
    max_before = max_last;
    max_last = nm.max;
    rn = std::sqrt(nm.sum2);
    stats.history.push_back(rn * history_scale);
    norms.push_back(rn);
    if (!std::isfinite(rn) || !std::isfinite(alpha)) {
      healthy = false;
      if (stall) *stall = "the CG residual is not finite";
      return flush(it);
    }
    if (rn <= target || it == max_iterations) return flush(it);
    if (stall_window > 0 && it >= stall_window &&
        rn > m_options.stall_factor * norms[std::size_t(it - stall_window)]) {
      if (stall) {
        char buf[200];
        std::snprintf(buf, sizeof(buf), "CG iterations %d-%d reduced the residual only from %.3e to %.3e",
                      it - stall_window, it, norms[std::size_t(it - stall_window)] * history_scale,
                      rn * history_scale);
        *stall = buf;
      }
      return flush(it);
    }
    precondition(nm.max, zr, zap, m);
    if (broken(zr)) return flush(it);
    const double beta = flexible ? -alpha * zap / rz : zr / rz;
    rz = zr;
    direction(m, beta);
  }
  return flush(max_iterations);
}

template <class L, class M>
detail::NormMax PoissonSolver<L, M>::true_residual() {
  const execution_space space;
  fill(m_w64, m_w64.x);
  const auto s = detail::make_stencil<double>(m_mg->level(0).coef, m_dim);
  auto nm = detail::residual_norms(space, m_place, s, m_w64.x.view(), m_w64.b.view(), m_w64.r.view());
  double sums[2] = {nm.sum2, nm.sum};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, m_decomp->comm());
  MPI_Allreduce(MPI_IN_PLACE, &nm.max, 1, MPI_DOUBLE, MPI_MAX, m_decomp->comm());
  nm.sum2 = sums[0];
  nm.sum = sums[1];
  if (m_mg->singular()) {
    // the residual of the projected problem: b and L x both have zero mean in exact arithmetic
    const double n = double(m_decomp->grid().num_points());
    nm.sum2 = std::max(0.0, nm.sum2 - nm.sum * nm.sum / n);
  }
  return nm;
}

template <class L, class M>
bool PoissonSolver<L, M>::raise_precision(const std::string& reason, int iteration, SolveStats& stats) {
  if (!m_options.fallback) return false;
  if (krylov_compressed()) {
    // the compressed Krylov vectors go first: the cheapest change, and the multigrid's storage
    // is kept for the next stall if there is one
    const std::string levels = level_precisions_string(m_mg->precisions());
    m_krylov32 = false;
    stats.fallbacks.push_back({iteration, levels + " (krylov fp32)", levels + " (krylov fp64)", reason});
    log::warn("poisson solver: {}; CG vectors raised from fp32 to fp64 storage (fallback {} of this solve)",
              reason, stats.fallbacks.size());
    return true;
  }
  auto p = m_mg->precisions();
  const std::string from = level_precisions_string(p);
  bool any16 = false;
  for (auto q : p) any16 = any16 || q == Precision::bf16 || q == Precision::fp16;
  for (auto& q : p) {
    if (any16) {
      if (q == Precision::bf16 || q == Precision::fp16) q = Precision::fp32;
    } else {
      q = Precision::fp64;
    }
  }
  const std::string to = level_precisions_string(p);
  if (to == from) return false;
  m_mg->set_precisions(p);  // not set_precisions(): that restores the Krylov storage
  if (!all_fp64()) allocate(m_w32);
  stats.fallbacks.push_back({iteration, from, to, reason});
  log::warn("poisson solver: {}; multigrid storage raised from {} to {} (fallback {} of this solve)", reason,
            from, to, stats.fallbacks.size());
  return true;
}

template <class L, class M>
SolveStats PoissonSolver<L, M>::solve(const Field<double, M>& b, Field<double, M>& x) {
  const auto t0 = std::chrono::steady_clock::now();
  if (b.extent() != m_decomp->extent() || x.extent() != m_decomp->extent() ||
      b.offset() != m_decomp->offset() || x.offset() != m_decomp->offset())
    throw Error("poisson solver: the fields '" + b.label() + "' and '" + x.label() +
                "' do not live on the solver's decomposition; build the solver on the fields' decomposition");
  const execution_space space;
  SolveStats stats;
  const MPI_Comm comm = m_decomp->comm();
  const auto& lv0 = m_mg->level(0);
  const auto pb = detail::placement_of(b), px = detail::placement_of(x);
  // L-space: the level operator is L = hmin^2 * (-lap_h), so L x = hmin^2 b.
  detail::convert(space, pb, b.view(), m_place, m_w64.b.view(), lv0.hmin2);
  detail::convert(space, px, x.view(), m_place, m_w64.x.view(), 1.0);
  const double ncells = double(m_decomp->grid().num_points());
  double bnorm = 0.0;
  {
    auto nm = detail::shift_norms(space, m_place, m_w64.b.view(), 0.0);
    double sums[2] = {nm.sum2, nm.sum};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
    bnorm = std::sqrt(sums[0]);
    if (m_mg->singular()) {
      auto nm2 = detail::shift_norms(space, m_place, m_w64.b.view(), sums[1] / ncells);
      double s2 = nm2.sum2;
      MPI_Allreduce(MPI_IN_PLACE, &s2, 1, MPI_DOUBLE, MPI_SUM, comm);
      bnorm = std::sqrt(s2);
    }
  }
  if (bnorm == 0.0) {
    Kokkos::deep_copy(x.view(), 0.0);
    stats.converged = true;
    stats.precisions = level_precisions_string(m_mg->precisions());
    return stats;
  }
  const double target = m_options.tolerance * bnorm;
  // m_w64.r holds the true residual of the current x from each rel() to the next change of x:
  // the CG restarts and refinement steps start from it instead of computing it again.
  detail::NormMax truth;
  auto rel = [&]() {
    truth = true_residual();
    return std::sqrt(truth.sum2) / bnorm;
  };
  stats.initial_residual = rel();
  double current = stats.initial_residual;
  int used = 0;
  int stalls_in_a_row = 0;
  while (current > m_options.tolerance && used < m_options.max_iterations) {
    bool healthy = true;
    if (all_fp64() || m_options.outer == Outer::cg) {
      // fp64 CG with the multigrid in its storage; a mixed one is watched for stalls
      const bool watch = !all_fp64();
      std::string stall;
      const int its = pcg(m_w64, target, m_options.max_iterations - used, false, healthy, 1.0 / bnorm, stats,
                          watch ? m_options.stall_window : 0, watch ? &stall : nullptr, &truth);
      used += its;
      const double before = current;
      current = rel();
      if (watch && !stall.empty() && current > m_options.tolerance) {
        if (raise_precision(stall, used, stats)) continue;
        if (!healthy) break;
      }
      if (!healthy || its == 0 || current > before * m_options.stall_factor) {
        if (++stalls_in_a_row >= 3 || its == 0 || !healthy) break;
      } else {
        stalls_in_a_row = 0;
      }
      continue;
    }
    // one refinement step: fp64 residual -> fp32 CG with the mixed multigrid -> fp64 update
    const detail::NormMax nm = truth;
    if (m_mg->singular()) detail::shift_norms(space, m_place, m_w64.r.view(), nm.sum / ncells);
    const double rmax = nm.max > 0 ? nm.max : 1.0;
    detail::convert(space, m_place, m_w64.r.view(), m_place, m_w32.b.view(), 1.0 / rmax);
    const double rnorm = std::sqrt(nm.sum2);
    const double inner = std::max(m_options.inner_tolerance, 0.5 * target / rnorm);
    const double inner_target = inner * rnorm / rmax;
    const int its = pcg(m_w32, inner_target, m_options.max_iterations - used, true, healthy, rmax / bnorm,
                        stats, 0, nullptr);
    used += its;
    ++stats.refinement_steps;
    if (healthy) detail::add_scaled(space, m_place, m_w64.x.view(), m_place, m_w32.x.view(), rmax);
    const double before = current;
    current = rel();
    if (!healthy) {
      if (!raise_precision("the inner solve produced a non-finite residual", used, stats)) break;
    } else if (current > before * m_options.stall_factor && current > m_options.tolerance) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "refinement step %d reduced the fp64 residual only from %.3e to %.3e",
                    stats.refinement_steps, before, current);
      if (!raise_precision(buf, used, stats)) {
        if (++stalls_in_a_row >= 3) break;
      }
    } else {
      stalls_in_a_row = 0;
    }
  }
  stats.iterations = used;
  stats.relative_residual = current;
  stats.converged = current <= m_options.tolerance;
  stats.precisions = level_precisions_string(m_mg->precisions());
  stats.krylov_storage = krylov_compressed() ? "fp32" : "fp64";
  if (m_mg->singular()) {
    auto nm = detail::shift_norms(space, m_place, m_w64.x.view(), 0.0);
    double s1 = nm.sum;
    MPI_Allreduce(MPI_IN_PLACE, &s1, 1, MPI_DOUBLE, MPI_SUM, comm);
    detail::shift_norms(space, m_place, m_w64.x.view(), s1 / ncells);
  }
  detail::convert(space, m_place, m_w64.x.view(), px, x.view(), 1.0);
  fence(space, "mantissa::solvers::PoissonSolver::solve");
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace mantissa::solvers
