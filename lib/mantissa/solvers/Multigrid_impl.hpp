#pragma once
// Out-of-line bodies of Multigrid (included by Multigrid.hpp).
#include <mantissa/core/Log.hpp>

#include <algorithm>
#include <sstream>

namespace mantissa::solvers {

namespace detail {

template <class T>
inline double to_double(T v) {
  return static_cast<double>(v);
}
template <class T>
inline T from_double(double v) {
  return T(v);
}

template <class T, class M>
Placement placement_of(const Field<T, M>& f) {
  Placement p;
  for (int a = 0; a < 3; ++a) {
    p.ghost[a] = f.ghost(a);
    p.offset[a] = f.offset()[a];
    p.extent[a] = f.extent()[a];
  }
  return p;
}

template <class T>
struct precision_of;
template <>
struct precision_of<double> {
  static constexpr Precision value = Precision::fp64;
};
template <>
struct precision_of<float> {
  static constexpr Precision value = Precision::fp32;
};
template <>
struct precision_of<bf16> {
  static constexpr Precision value = Precision::bf16;
};
template <>
struct precision_of<fp16> {
  static constexpr Precision value = Precision::fp16;
};

}  // namespace detail

// The level's operator with its boundary rows (see detail::Stencil).
template <class C, class Level>
detail::Stencil<C> level_stencil(const Level& lv, int dim) {
  auto s = detail::make_stencil<C>(lv.coef, dim);
  for (int a = 0; a < dim; ++a) {
    const auto ua = std::size_t(a);
    s.shift[a] = lv.place.offset[ua] - lv.place.ghost[ua];
    s.last[a] = lv.grid.n[ua] - 1;
    s.lo[a] = C(lv.coef[ua] * double(lv.mirror[2 * ua]));
    s.hi[a] = C(lv.coef[ua] * double(lv.mirror[2 * ua + 1]));
  }
  s.mlo = lv.touches[0] ? C(lv.mirror[0]) : C(0);
  s.mhi = lv.touches[1] ? C(lv.mirror[1]) : C(0);
  return s;
}

template <class M>
Multigrid<M>::Multigrid(const Decomposition& fine, const Boundary& bc, const MultigridOptions& options)
    : m_options(options), m_bc(bc) {
  const Grid& g0 = fine.grid();
  m_dim = g0.dim;
  m_singular = bc.singular(m_dim);
  for (int a = 0; a < m_dim; ++a) {
    const bool lo = bc.face[std::size_t(2 * a)] == BoundaryKind::periodic;
    const bool hi = bc.face[std::size_t(2 * a + 1)] == BoundaryKind::periodic;
    if (lo != hi || lo != g0.periodic[std::size_t(a)])
      throw Error("multigrid: axis " + std::to_string(a) + " is " +
                  (g0.periodic[std::size_t(a)] ? "" : "not ") +
                  "periodic in the grid but its boundaries are " + to_string(bc.face[std::size_t(2 * a)]) +
                  " and " + to_string(bc.face[std::size_t(2 * a + 1)]) +
                  "; periodic must be set on both faces and in the grid");
  }
  if (options.pre_sweeps < 0 || options.post_sweeps < 0 || options.pre_sweeps + options.post_sweeps < 1)
    throw Error("multigrid: need at least one smoothing sweep (pre_sweeps + post_sweeps >= 1)");
  if (options.smoother == Smoother::chebyshev && (options.pre_sweeps < 1 || options.post_sweeps < 1))
    throw Error("multigrid: the Chebyshev smoother needs a degree >= 1 before and after");
  if (options.precisions.empty()) throw Error("multigrid: the list of level precisions is empty");

  int size = 1;
  MPI_Comm_size(fine.comm(), &size);
  {
    auto lv = std::make_unique<Level>();
    setup_level(*lv, fine, size == 1);
    m_levels.push_back(std::move(lv));
  }
  for (;;) {
    Level& cur = *m_levels.back();
    const Grid& g = cur.grid;
    bool can_coarsen = true;
    for (int a = 0; a < m_dim; ++a)
      if (g.n[std::size_t(a)] < 3 || (g.periodic[std::size_t(a)] && g.n[std::size_t(a)] % 2 != 0))
        can_coarsen = false;
    if (!can_coarsen) break;
    Grid cg = g;
    for (int a = 0; a < m_dim; ++a) {
      cg.n[std::size_t(a)] = (g.n[std::size_t(a)] + 1) / 2;
      cg.spacing[std::size_t(a)] = 2.0 * g.spacing[std::size_t(a)];
    }
    auto nx = std::make_unique<Level>();
    if (!cur.serial) {
      std::array<std::vector<std::int64_t>, 3> cs;
      bool parts_ok = true;
      for (int a = 0; a < 3; ++a) {
        cs[std::size_t(a)] = cur.decomp->starts(a);
        if (a >= m_dim) continue;
        for (auto& s : cs[std::size_t(a)]) s = (s + 1) / 2;
        for (std::size_t p = 0; p + 1 < cs[std::size_t(a)].size(); ++p)
          if (cs[std::size_t(a)][p + 1] - cs[std::size_t(a)][p] < ghost_width) parts_ok = false;
      }
      if (g.num_points() <= m_options.agglomerate_cells || !parts_ok) {
        // gather this level onto every rank; coarsening continues there
        cur.gather_next = true;
        const MPI_Comm comm = cur.decomp->comm();
        int n = 1;
        MPI_Comm_size(comm, &n);
        cur.rank_boxes.resize(std::size_t(n));
        for (int r = 0; r < n; ++r) {
          std::array<int, 3> c{};
          MPI_Cart_coords(comm, r, 3, c.data());
          const auto o = cur.decomp->offset_of(c), e = cur.decomp->extent_of(c);
          cur.rank_boxes[std::size_t(r)] = {o[0], o[1], o[2], e[0], e[1], e[2]};
        }
        nx->owned_decomp = std::make_unique<Decomposition>(MPI_COMM_SELF, g);
        setup_level(*nx, *nx->owned_decomp, true);
        nx->depth = cur.depth;
        m_levels.push_back(std::move(nx));
        continue;
      }
      nx->owned_decomp = std::make_unique<Decomposition>(cur.decomp->comm(), cg, cur.decomp->dims(), cs);
      setup_level(*nx, *nx->owned_decomp, false);
    } else {
      nx->owned_decomp = std::make_unique<Decomposition>(MPI_COMM_SELF, cg);
      setup_level(*nx, *nx->owned_decomp, true);
    }
    nx->depth = cur.depth + 1;
    m_levels.push_back(std::move(nx));
  }
  Level& last = *m_levels.back();
  if (last.serial && last.grid.num_points() <= m_options.direct_cells) factor_coarsest(last);
  set_precisions(m_options.precisions);
}

template <class M>
void Multigrid<M>::setup_level(Level& lv, const Decomposition& d, bool serial) {
  lv.decomp = &d;
  lv.grid = d.grid();
  lv.serial = serial;
  double hmin = lv.grid.spacing[0];
  for (int a = 1; a < m_dim; ++a) hmin = std::min(hmin, lv.grid.spacing[std::size_t(a)]);
  lv.hmin2 = hmin * hmin;
  for (int a = 0; a < 3; ++a) {
    const auto ua = std::size_t(a);
    lv.coef[ua] = a < m_dim ? (hmin / lv.grid.spacing[ua]) * (hmin / lv.grid.spacing[ua]) : 0.0;
    lv.place.ghost[ua] = a < m_dim ? ghost_width : 0;
    lv.place.offset[ua] = d.offset()[ua];
    lv.place.extent[ua] = d.extent()[ua];
    lv.odd[ua] = a < m_dim && lv.grid.n[ua] % 2 != 0;
    for (int side = 0; side < 2; ++side) {
      const auto f = std::size_t(2 * a + side);
      lv.touches[f] = a < m_dim && (side == 0 ? d.at_low_boundary(a) : d.at_high_boundary(a));
      lv.mirror[f] =
          (a >= m_dim || lv.grid.periodic[ua]) ? 0 : (m_bc.face[f] == BoundaryKind::dirichlet ? -1 : 1);
    }
  }
}

template <class M>
void Multigrid<M>::set_precisions(const std::vector<Precision>& per_level) {
  if (per_level.empty()) throw Error("multigrid: the list of level precisions is empty");
  for (std::size_t l = 0; l < m_levels.size(); ++l) {
    Level& lv = *m_levels[l];
    const Precision p = per_level[std::min(std::size_t(lv.depth), per_level.size() - 1)];
    if (p != Precision::fp64 && p != Precision::fp32 && p != Precision::bf16 && p != Precision::fp16)
      throw Error("multigrid: level storage " + std::string(mantissa::to_string(p)) +
                  " is not supported; use fp64, fp32, bf16 or fp16");
    if (p == lv.precision && std::visit([](auto& d) { return d.x.view().size() > 0; }, lv.data)) continue;
    lv.precision = p;
    auto make = [&](auto tag) {
      using T = decltype(tag);
      LevelData<T> d;
      d.x = Field<T, M>("mantissa::solvers::Multigrid::x", *lv.decomp, ghost_width, detail::row_align_bytes);
      d.x2 =
          Field<T, M>("mantissa::solvers::Multigrid::x2", *lv.decomp, ghost_width, detail::row_align_bytes);
      d.f = Field<T, M>("mantissa::solvers::Multigrid::f", *lv.decomp, ghost_width, detail::row_align_bytes);
      d.r = Field<T, M>("mantissa::solvers::Multigrid::r", *lv.decomp, ghost_width, detail::row_align_bytes);
      d.faces = std::make_shared<HaloExchange<T, M>>(*lv.decomp, ghost_width, 1, HaloPattern::faces);
      d.full = std::make_shared<HaloExchange<T, M>>(*lv.decomp, ghost_width, 1, HaloPattern::full);
      lv.data = std::move(d);
    };
    switch (p) {
      case Precision::fp64:
        make(double{});
        break;
      case Precision::fp32:
        make(float{});
        break;
      case Precision::bf16:
        make(bf16{});
        break;
      default:
        make(fp16{});
        break;
    }
  }
  bool below16 = false;
  for (auto& lv : m_levels) {
    below16 = below16 || lv->precision == Precision::bf16 || lv->precision == Precision::fp16;
    lv->scaled = below16;
  }
}

template <class M>
bool Multigrid<M>::entry_fusable() const {
  const Level& l0 = *m_levels.front();
  return (l0.precision == Precision::fp64 || l0.precision == Precision::fp32) && entry_possible();
}

template <class M>
bool Multigrid<M>::entry_possible() const {
  return m_options.smoother == Smoother::rbgs && m_options.pre_sweeps >= 1 && m_levels.size() > 1 &&
         !m_levels.front()->gather_next;
}

template <class M>
std::vector<Precision> Multigrid<M>::precisions() const {
  std::vector<Precision> p;
  for (auto& lv : m_levels) p.push_back(lv->precision);
  return p;
}

template <class M>
std::string Multigrid<M>::describe() const {
  std::ostringstream os;
  for (std::size_t l = 0; l < m_levels.size(); ++l) {
    const Level& lv = *m_levels[l];
    if (l) os << (m_levels[l - 1]->gather_next ? " => " : " > ");
    os << lv.grid.n[0] << "x" << lv.grid.n[1];
    if (m_dim == 3) os << "x" << lv.grid.n[2];
    os << " " << mantissa::to_string(lv.precision);
  }
  os << (m_levels.back()->cholesky.empty() ? " (coarsest: sweeps)" : " (coarsest: Cholesky)");
  return os.str();
}

template <class M>
template <class T>
void Multigrid<M>::fill_ghosts(Level& lv, LevelData<T>& d, Field<T, M>& fld, bool full, bool restriction,
                               bool rows_mirror_x) {
  (full ? d.full : d.faces)->exchange({&fld});
  const execution_space space;
  // host row kernels of the 7-point operations mirror the x faces themselves (Stencil::mlo)
  const bool skip_x = rows_mirror_x && detail::host::is_host<execution_space>();
  for (int a = skip_x ? 1 : 0; a < m_dim; ++a)
    for (int side = 0; side < 2; ++side) {
      const auto f = std::size_t(2 * a + side);
      if (lv.mirror[f] == 0 || !lv.touches[f]) continue;
      // Only the restriction over an odd axis reads a second layer outside a physical face (the
      // high side's missing child 2I + 1 and its neighbour 2I + 2, both zero); the stencils and
      // the prolongation read one, so the other fills write one layer (half the face work).
      const bool odd_high = restriction && side == 1 && lv.odd[std::size_t(a)];
      const int sign = odd_high ? 0 : lv.mirror[f];
      const std::int64_t first = lv.place.ghost[std::size_t(a)];
      const std::int64_t last = first + lv.place.extent[std::size_t(a)] - 1;
      detail::mirror_face(space, fld.view(), a, side == 1, odd_high ? ghost_width : 1, first, last, sign);
    }
}

template <class M>
template <class T>
void Multigrid<M>::smooth(Level& lv, LevelData<T>& d, int sweeps, bool zero_initial, bool post,
                          bool entry_done) {
  using C = detail::compute_t<T>;
  const execution_space space;
  const auto s = level_stencil<C>(lv, m_dim);
  switch (m_options.smoother) {
    case Smoother::jacobi: {
      const double w = m_options.jacobi_weight > 0 ? m_options.jacobi_weight : (m_dim == 3 ? 6.0 / 7.0 : 0.8);
      for (int it = 0; it < sweeps; ++it) {
        const bool zero = zero_initial && it == 0;
        if (!zero) fill_ghosts(lv, d, d.x, false, false);
        detail::jacobi(space, lv.place, s, C(w), d.x.view(), d.x2.view(), d.f.view(), zero);
        std::swap(d.x, d.x2);
      }
      break;
    }
    case Smoother::chebyshev: {
      // D^-1 L has its spectrum in (0, 2] (Gershgorin); the smoother targets the upper part,
      // [2/6, 2] in 3D and [2/4, 2] in 2D: the modes with a frequency above pi/2 on one axis.
      const double hi = 2.0, lo = m_dim == 3 ? 2.0 / 6.0 : 0.5;
      const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
      double rho = 1.0 / sigma;
      for (int it = 0; it < sweeps; ++it) {
        const bool zero = zero_initial && it == 0;
        if (!zero) fill_ghosts(lv, d, d.x, false, false);
        double a = 0.0, b = 1.0 / theta;
        if (it > 0) {
          const double rn = 1.0 / (2.0 * sigma - rho);
          a = rn * rho;
          b = 2.0 * rn / delta;
          rho = rn;
        }
        detail::chebyshev_step(space, lv.place, s, C(a), C(b), d.x.view(), d.x2.view(), d.f.view(),
                               d.r.view(), zero);
        std::swap(d.x, d.x2);
      }
      break;
    }
    case Smoother::rbgs: {
      // entry_done: x holds the first red half-sweep from zero already (pre-smoothing, first = 0)
      if (zero_initial && !entry_done) Kokkos::deep_copy(d.x.view(), T(0.0f));
      const int first = (post && m_options.symmetric) ? 1 : 0;
      if constexpr (detail::host::is_host<execution_space>()) {
        // on a level whose faces are all physical, the passes in one sweep over the planes
        // (x and f move about once instead of once a pass; the same bits)
        bool physical = m_dim == 3;
        for (int f = 0; f < 2 * m_dim; ++f)
          physical = physical && lv.mirror[std::size_t(f)] != 0 && lv.touches[std::size_t(f)];
        std::vector<int> colours;
        for (int it = 0; it < sweeps; ++it) {
          if (it > 0 || !entry_done) colours.push_back(first);
          colours.push_back(1 - first);
        }
        if (physical && colours.size() > 1) {
          fill_ghosts(lv, d, d.x, false, false, true);
          detail::rbgs_passes(space, lv.place, s, d.x.view(), d.f.view(), colours.data(), int(colours.size()),
                              lv.mirror);
          break;
        }
      }
      for (int it = 0; it < sweeps; ++it) {
        if (it > 0 || !entry_done) {
          fill_ghosts(lv, d, d.x, false, false, true);
          detail::rbgs(space, lv.place, s, d.x.view(), d.f.view(), first);
        }
        fill_ghosts(lv, d, d.x, false, false, true);
        detail::rbgs(space, lv.place, s, d.x.view(), d.f.view(), 1 - first);
      }
      break;
    }
  }
}

template <class M>
void Multigrid<M>::cycle(int l, Cycle type, bool zero_initial, bool entry_done) {
  Level& lv = *m_levels[std::size_t(l)];
  if (l + 1 == num_levels()) {
    if (!zero_initial && lv.cholesky.empty()) {
      // sweeps continue from the current x
    }
    coarse_solve(lv);
    return;
  }
  Level& nx = *m_levels[std::size_t(l + 1)];
  if (lv.gather_next) {
    gather(lv, nx, !zero_initial);
    cycle(l + 1, type, true);
    scatter_add(nx, lv, !zero_initial);
    return;
  }
  const execution_space space;
  std::visit(
      [&](auto& d) {
        using T = typename std::decay_t<decltype(d.x)>::value_type;
        using C = detail::compute_t<T>;
        smooth(lv, d, m_options.pre_sweeps, zero_initial, false, entry_done && zero_initial);
        if (m_options.pre_sweeps == 0 && zero_initial) Kokkos::deep_copy(d.x.view(), T(0.0f));
        fill_ghosts(lv, d, d.x, false, false, true);
        detail::residual(space, lv.place, level_stencil<C>(lv, m_dim), d.x.view(), d.f.view(), d.r.view());
        fill_ghosts(lv, d, d.r, true, true);
      },
      lv.data);
  // the first 16-bit level below a wider one takes the coarse scale here and gives it back below
  const double cs = (nx.scaled && !lv.scaled) ? m_coarse_scale : 1.0;
  std::visit(
      [&](auto& df, auto& dc) {
        detail::restrict_full_weighting(space, lv.place, nx.place, m_dim, nx.hmin2 / lv.hmin2 * cs,
                                        df.r.view(), dc.f.view());
      },
      lv.data, nx.data);
  cycle(l + 1, type, true);
  if (type == Cycle::f) cycle(l + 1, Cycle::v, false);
  std::visit([&](auto& dc) { fill_ghosts(nx, dc, dc.x, true, false); }, nx.data);
  std::visit(
      [&](auto& df, auto& dc) {
        detail::prolong_add(space, lv.place, nx.place, m_dim, dc.x.view(), df.x.view(), 1.0 / cs);
      },
      lv.data, nx.data);
  std::visit([&](auto& d) { smooth(lv, d, m_options.post_sweeps, false, true); }, lv.data);
}

template <class M>
void Multigrid<M>::coarse_solve(Level& lv) {
  std::visit(
      [&](auto& d) {
        using T = typename std::decay_t<decltype(d.x)>::value_type;
        if (!lv.cholesky.empty()) {
          auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.f.view());
          auto xh = Kokkos::create_mirror_view(d.x.view());
          const std::int64_t nx = lv.grid.n[0], ny = lv.grid.n[1], nz = lv.grid.n[2];
          const std::int64_t n = nx * ny * nz;
          const auto& g = lv.place.ghost;
          std::vector<double> b(static_cast<std::size_t>(n));
          for (std::int64_t k = 0; k < nz; ++k)
            for (std::int64_t j = 0; j < ny; ++j)
              for (std::int64_t i = 0; i < nx; ++i)
                b[std::size_t((k * ny + j) * nx + i)] = detail::to_double(fh(k + g[2], j + g[1], i + g[0]));
          const auto& Lc = lv.cholesky;
          for (std::int64_t r = 0; r < n; ++r) {  // L y = b
            double s = b[std::size_t(r)];
            for (std::int64_t c = 0; c < r; ++c) s -= Lc[std::size_t(r * n + c)] * b[std::size_t(c)];
            b[std::size_t(r)] = s / Lc[std::size_t(r * n + r)];
          }
          for (std::int64_t r = n - 1; r >= 0; --r) {  // L^T x = y
            double s = b[std::size_t(r)];
            for (std::int64_t c = r + 1; c < n; ++c) s -= Lc[std::size_t(c * n + r)] * b[std::size_t(c)];
            b[std::size_t(r)] = s / Lc[std::size_t(r * n + r)];
          }
          Kokkos::deep_copy(xh, T(0.0f));
          for (std::int64_t k = 0; k < nz; ++k)
            for (std::int64_t j = 0; j < ny; ++j)
              for (std::int64_t i = 0; i < nx; ++i)
                xh(k + g[2], j + g[1], i + g[0]) =
                    detail::from_double<T>(b[std::size_t((k * ny + j) * nx + i)]);
          Kokkos::deep_copy(d.x.view(), xh);
          return;
        }
        // Many symmetric sweeps (red-black pairs in both orders), from zero. A singular level
        // has the mean of f removed first, so the sweeps do not drift along the constant.
        if (m_singular) {
          const execution_space space;
          const double sum = detail::sum_owned(space, lv.place, d.f.view());
          double total = sum;
          MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, lv.decomp->comm());
          detail::add_constant(space, lv.place, d.f.view(), -total / double(lv.grid.num_points()));
        }
        const int each = std::max(1, m_options.coarse_sweeps / 2);
        const Smoother keep = m_options.smoother;
        m_options.smoother = Smoother::rbgs;
        smooth(lv, d, each, true, false);
        smooth(lv, d, each, false, true);
        m_options.smoother = keep;
      },
      lv.data);
}

template <class M>
void Multigrid<M>::factor_coarsest(Level& lv) {
  const std::int64_t nx = lv.grid.n[0], ny = lv.grid.n[1], nz = lv.grid.n[2];
  const std::int64_t n = nx * ny * nz;
  std::vector<double> A(static_cast<std::size_t>(n * n), 0.0);
  const double diag = 2.0 * (lv.coef[0] + lv.coef[1] + lv.coef[2]);
  const std::int64_t nn[3] = {nx, ny, nz};
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i) {
        const std::int64_t c[3] = {i, j, k};
        const std::int64_t row = (k * ny + j) * nx + i;
        A[std::size_t(row * n + row)] += diag;
        for (int a = 0; a < m_dim; ++a)
          for (int side = 0; side < 2; ++side) {
            std::int64_t q[3] = {c[0], c[1], c[2]};
            q[a] += side ? 1 : -1;
            const double ca = lv.coef[std::size_t(a)];
            if (q[a] < 0 || q[a] >= nn[a]) {
              if (lv.grid.periodic[std::size_t(a)]) {
                q[a] = (q[a] + nn[a]) % nn[a];
              } else {
                // ghost = mirror * interior: -c * (mirror * x_row)
                A[std::size_t(row * n + row)] -= ca * double(lv.mirror[std::size_t(2 * a + side)]);
                continue;
              }
            }
            const std::int64_t col = (q[2] * ny + q[1]) * nx + q[0];
            A[std::size_t(row * n + col)] -= ca;
          }
      }
  if (m_singular) {
    // L + (D / N) 1 1^T: SPD, and for a right-hand side of zero mean its solution is the
    // zero-mean solution of L x = f.
    const double alpha = diag / double(n);
    for (auto& v : A) v += alpha;
  }
  for (std::int64_t c = 0; c < n; ++c) {
    double s = A[std::size_t(c * n + c)];
    for (std::int64_t p = 0; p < c; ++p) s -= A[std::size_t(c * n + p)] * A[std::size_t(c * n + p)];
    if (!(s > 0.0))
      throw Error("multigrid: the coarsest level's matrix is not positive definite (pivot " +
                  std::to_string(s) + "); this is a bug in the boundary set-up");
    const double d = std::sqrt(s);
    A[std::size_t(c * n + c)] = d;
    for (std::int64_t r = c + 1; r < n; ++r) {
      double t = A[std::size_t(r * n + c)];
      for (std::int64_t p = 0; p < c; ++p) t -= A[std::size_t(r * n + p)] * A[std::size_t(c * n + p)];
      A[std::size_t(r * n + c)] = t / d;
    }
  }
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = r + 1; c < n; ++c) A[std::size_t(r * n + c)] = 0.0;
  lv.cholesky = std::move(A);
}

template <class M>
void Multigrid<M>::gather(Level& from, Level& to, bool from_residual) {
  std::vector<double> local;
  std::visit(
      [&](auto& d) {
        using T = typename std::decay_t<decltype(d.x)>::value_type;
        using C = detail::compute_t<T>;
        if (from_residual) {
          fill_ghosts(from, d, d.x, false, false, true);
          detail::residual(execution_space(), from.place, level_stencil<C>(from, m_dim), d.x.view(),
                           d.f.view(), d.r.view());
        }
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), (from_residual ? d.r : d.f).view());
        const auto& g = from.place.ghost;
        const auto& e = from.place.extent;
        local.reserve(std::size_t(e[0] * e[1] * e[2]));
        for (std::int64_t k = 0; k < e[2]; ++k)
          for (std::int64_t j = 0; j < e[1]; ++j)
            for (std::int64_t i = 0; i < e[0]; ++i)
              local.push_back(detail::to_double(h(k + g[2], j + g[1], i + g[0])));
      },
      from.data);
  const MPI_Comm comm = from.decomp->comm();
  const int n = static_cast<int>(from.rank_boxes.size());
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  int total = 0;
  for (int r = 0; r < n; ++r) {
    const auto& b = from.rank_boxes[std::size_t(r)];
    counts[std::size_t(r)] = int(b[3] * b[4] * b[5]);
    displs[std::size_t(r)] = total;
    total += counts[std::size_t(r)];
  }
  std::vector<double> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(local.data(), int(local.size()), MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, comm);
  std::visit(
      [&](auto& d) {
        using T = typename std::decay_t<decltype(d.x)>::value_type;
        auto h = Kokkos::create_mirror_view(d.f.view());
        const auto& g = to.place.ghost;
        for (int r = 0; r < n; ++r) {
          const auto& b = from.rank_boxes[std::size_t(r)];
          std::size_t p = std::size_t(displs[std::size_t(r)]);
          for (std::int64_t k = 0; k < b[5]; ++k)
            for (std::int64_t j = 0; j < b[4]; ++j)
              for (std::int64_t i = 0; i < b[3]; ++i)
                h(b[2] + k + g[2], b[1] + j + g[1], b[0] + i + g[0]) = detail::from_double<T>(all[p++]);
        }
        Kokkos::deep_copy(d.f.view(), h);
      },
      to.data);
}

template <class M>
void Multigrid<M>::scatter_add(Level& from, Level& to, bool add) {
  std::visit(
      [&](auto& ds, auto& dd) {
        using TD = typename std::decay_t<decltype(dd.x)>::value_type;
        auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ds.x.view());
        auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dd.x.view());
        const auto& gs = from.place.ghost;
        const auto& gd = to.place.ghost;
        const auto& o = to.place.offset;
        const auto& e = to.place.extent;
        for (std::int64_t k = 0; k < e[2]; ++k)
          for (std::int64_t j = 0; j < e[1]; ++j)
            for (std::int64_t i = 0; i < e[0]; ++i) {
              const double v = detail::to_double(hs(o[2] + k + gs[2], o[1] + j + gs[1], o[0] + i + gs[0]));
              auto& t = hd(k + gd[2], j + gd[1], i + gd[0]);
              t = detail::from_double<TD>(add ? detail::to_double(t) + v : v);
            }
        Kokkos::deep_copy(dd.x.view(), hd);
      },
      from.data, to.data);
}

template <class M>
double Multigrid<M>::residual_norm(int l) {
  Level& lv = *m_levels[std::size_t(l)];
  double sum = 0.0;
  std::visit(
      [&](auto& d) {
        using T = typename std::decay_t<decltype(d.x)>::value_type;
        using C = detail::compute_t<T>;
        const execution_space space;
        fill_ghosts(lv, d, d.x, false, false, true);
        detail::residual(space, lv.place, level_stencil<C>(lv, m_dim), d.x.view(), d.f.view(), d.r.view());
        sum = detail::sum_squares_owned(space, lv.place, d.r.view());
      },
      lv.data);
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, lv.decomp->comm());
  return std::sqrt(sum);
}

template <class M>
template <class K>
void Multigrid<M>::load_rhs(const Field<K, M>& r, double scale) {
  Level& l0 = *m_levels.front();
  m_coarse_scale = 1.0;
  const auto pr = detail::placement_of(r);
  std::visit([&](auto& d) { detail::convert(execution_space(), pr, r.view(), l0.place, d.f.view(), scale); },
             l0.data);
}

template <class M>
template <class K>
bool Multigrid<M>::load_entry(const Field<K, M>& r, double scale) {
  if (!entry_possible()) {
    load_rhs(r, scale);
    return false;
  }
  Level& l0 = *m_levels.front();
  m_coarse_scale = 1.0;
  const auto pr = detail::placement_of(r);
  std::visit(
      [&](auto& d) {
        using T = typename std::decay_t<decltype(d.x)>::value_type;
        detail::load_entry(execution_space(), pr, r.view(), scale, l0.place,
                           level_stencil<detail::compute_t<T>>(l0, m_dim), d.f.view(), d.x.view());
      },
      l0.data);
  return true;
}

template <class M>
template <class K>
void Multigrid<M>::store_solution(Field<K, M>& z, double scale) {
  Level& l0 = *m_levels.front();
  const auto pz = detail::placement_of(z);
  std::visit(
      [&](auto& d) { detail::convert(execution_space(), l0.place, d.x.view(), pz, z.view(), 1.0 / scale); },
      l0.data);
}

template <class M>
template <class K>
void Multigrid<M>::apply(const Field<K, M>& r, Field<K, M>& z, double scale) {
  cycle(0, m_options.cycle, true, load_entry(r, scale));
  store_solution(z, scale);
}

}  // namespace mantissa::solvers
