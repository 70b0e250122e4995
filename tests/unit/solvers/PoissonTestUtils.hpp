#pragma once
// Manufactured Poisson problems shared by the unit and MPI solver tests: u is known, b is
// -lap u (analytic), and the discrete solution must approach u at second order.
#include <mantissa/solvers/PoissonSolver.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <functional>
#include <vector>

namespace mantissa_test {

using mantissa::Decomposition;
using mantissa::Field;
using mantissa::Grid;
using namespace mantissa::solvers;

constexpr double pi = 3.14159265358979323846;

struct Manufactured {
  int dim = 3;
  std::array<std::int64_t, 3> n{16, 16, 16};
  Boundary bc = Boundary::all(BoundaryKind::dirichlet);
  // u(x, y, z) and -lap u(x, y, z) on [0, 1]^dim
  std::function<double(double, double, double)> u, rhs;
};

// sin(pi x) sin(pi y) [sin(pi z)]: zero on every face (Dirichlet).
inline Manufactured dirichlet_sines(int dim, std::array<std::int64_t, 3> n) {
  Manufactured m;
  m.dim = dim;
  m.n = n;
  const double d = dim;
  m.u = [dim](double x, double y, double z) {
    return std::sin(pi * x) * std::sin(pi * y) * (dim == 3 ? std::sin(pi * z) : 1.0);
  };
  m.rhs = [dim, d](double x, double y, double z) {
    return d * pi * pi * std::sin(pi * x) * std::sin(pi * y) * (dim == 3 ? std::sin(pi * z) : 1.0);
  };
  return m;
}

// cos(pi x) cos(2 pi y) [cos(pi z)]: zero normal derivative on every face, zero mean (Neumann).
inline Manufactured neumann_cosines(int dim, std::array<std::int64_t, 3> n) {
  Manufactured m;
  m.dim = dim;
  m.n = n;
  m.bc = Boundary::all(BoundaryKind::neumann);
  m.u = [dim](double x, double y, double z) {
    return std::cos(pi * x) * std::cos(2 * pi * y) * (dim == 3 ? std::cos(pi * z) : 1.0);
  };
  const double k2 = pi * pi * (1 + 4 + (dim == 3 ? 1 : 0));
  m.rhs = [dim, k2](double x, double y, double z) {
    return k2 * std::cos(pi * x) * std::cos(2 * pi * y) * (dim == 3 ? std::cos(pi * z) : 1.0);
  };
  return m;
}

// sin(2 pi x) cos(2 pi y) [sin(2 pi z)] on a periodic box.
inline Manufactured periodic_waves(int dim, std::array<std::int64_t, 3> n) {
  Manufactured m;
  m.dim = dim;
  m.n = n;
  m.bc = Boundary::all(BoundaryKind::periodic);
  m.u = [dim](double x, double y, double z) {
    return std::sin(2 * pi * x) * std::cos(2 * pi * y) * (dim == 3 ? std::sin(2 * pi * z) : 1.0);
  };
  const double k2 = 4 * pi * pi * dim;
  m.rhs = [dim, k2](double x, double y, double z) {
    return k2 * std::sin(2 * pi * x) * std::cos(2 * pi * y) * (dim == 3 ? std::sin(2 * pi * z) : 1.0);
  };
  return m;
}

inline Grid grid_of(const Manufactured& m) {
  Grid g;
  g.dim = m.dim;
  g.n = {m.n[0], m.n[1], m.dim == 3 ? m.n[2] : 1};
  for (int a = 0; a < 3; ++a) g.spacing[std::size_t(a)] = 1.0 / double(g.n[std::size_t(a)]);
  for (int a = 0; a < m.dim; ++a)
    g.periodic[std::size_t(a)] = m.bc.face[std::size_t(2 * a)] == BoundaryKind::periodic;
  return g;
}

struct Outcome {
  SolveStats stats;
  double max_error = 0.0;     // max |x - u| over the grid (x shifted by the mean of u if singular)
  std::vector<double> owned;  // this rank's solution, owned cells in (z, y, x) order
  std::array<std::int64_t, 3> offset{}, extent{};
};

inline Outcome solve_manufactured(const Manufactured& m, const SolverOptions& opt, MPI_Comm comm) {
  const Grid g = grid_of(m);
  Decomposition decomp(comm, g);
  Field<double> b("b", decomp, 1), x("x", decomp, 1);
  auto bh = Kokkos::create_mirror_view(b.view());
  const auto o = decomp.offset(), e = decomp.extent();
  const int gz = m.dim == 3 ? 1 : 0;
  auto centre = [&](int a, std::int64_t i) { return (double(i) + 0.5) * g.spacing[std::size_t(a)]; };
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i)
        bh(k + gz, j + 1, i + 1) =
            m.rhs(centre(0, o[0] + i), centre(1, o[1] + j), m.dim == 3 ? centre(2, o[2] + k) : 0.0);
  Kokkos::deep_copy(b.view(), bh);
  Kokkos::deep_copy(x.view(), 0.0);
  PoissonSolver<> solver(decomp, m.bc, opt);
  Outcome out;
  out.stats = solver.solve(b, x);
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.view());
  // singular problems: compare after removing the discrete mean of u (x has zero mean)
  double umean = 0.0;
  if (m.bc.singular(m.dim)) {
    double s = 0.0;
    for (std::int64_t k = 0; k < e[2]; ++k)
      for (std::int64_t j = 0; j < e[1]; ++j)
        for (std::int64_t i = 0; i < e[0]; ++i)
          s += m.u(centre(0, o[0] + i), centre(1, o[1] + j), m.dim == 3 ? centre(2, o[2] + k) : 0.0);
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, comm);
    umean = s / double(g.num_points());
  }
  double err = 0.0;
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i) {
        const double v = xh(k + gz, j + 1, i + 1);
        out.owned.push_back(v);
        const double u =
            m.u(centre(0, o[0] + i), centre(1, o[1] + j), m.dim == 3 ? centre(2, o[2] + k) : 0.0) - umean;
        err = std::max(err, std::abs(v - u));
      }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, comm);
  out.max_error = err;
  out.offset = o;
  out.extent = e;
  return out;
}

inline SolverOptions options_with(const std::string& precisions, Smoother s = Smoother::rbgs,
                                  Cycle c = Cycle::v) {
  SolverOptions o;
  o.multigrid.precisions = parse_level_precisions(precisions);
  o.multigrid.smoother = s;
  o.multigrid.cycle = c;
  if (s == Smoother::jacobi || s == Smoother::chebyshev) {
    o.multigrid.pre_sweeps = 2;
    o.multigrid.post_sweeps = 2;
  }
  return o;
}

}  // namespace mantissa_test
