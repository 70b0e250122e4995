#pragma once
// Configuration of the incompressible flow solver (issue 14). Filled from the deck's `cfd:` and
// `mesh:` sections by config_from_deck (CfdDeck.hpp), or directly in tests.
//
// The mesh's n are cells of width spacing: the domain along axis a is
// [origin_a, origin_a + n_a h_a]. Pressure lives at cell centres (Cell), the velocity component
// along axis a on the low faces of the cells along a (Face<a>): the MAC grid of Harlow and
// Welch (1965). 2D (u, v) or 3D (u, v, w on the low z faces).
#include <mantissa/core/Precision.hpp>
#include <mantissa/solvers/Options.hpp>

#include <array>
#include <string>
#include <vector>

namespace mantissa::cfd {

// What one side of the domain is.
//  - periodic: both sides of the axis, and the mesh axis must be periodic;
//  - wall: no slip, no penetration (velocity zero on the side);
//  - lid: a wall that slides along its first tangential axis (x for the y and z sides, y for
//    the x sides) at Config::lid_velocity: the driven cavity's lid;
//  - inflow: the normal velocity into the domain is prescribed (Config::inflow_velocity, the bulk
//    speed, with Config::inflow_profile across the side), the tangential velocity is zero;
//  - outflow: the pressure is zero on the side (Dirichlet for the projection's potential), the
//    tangential velocity has zero normal derivative, and the normal velocity is what makes the
//    last cell divergence-free (the predictor before a projection extrapolates it with zero
//    gradient; the projection then corrects it). An inflow side needs an outflow side.
enum class Side { periodic, wall, lid, inflow, outflow };
// The normal velocity across an inflow side: uniform, or parabolic 6 s (1 - s) per cross axis that
// is not periodic (s the position across the domain in [0, 1]; the fully developed laminar profile
// between plates in 2D, its product in a 3D duct), scaled so that its discrete flux (the midpoint
// sum over the side's cells) is inflow_velocity times the side's area.
enum class InflowProfile { uniform, parabolic };

// taylor_green: the 2D vortex (TaylorGreen) in 2D, Brachet's 3D vortex (TaylorGreen3D) in 3D;
// beltrami: the exact 3D ABC flow (Beltrami), 3D cubes only.
enum class InitialKind { rest, taylor_green, beltrami };

struct Config {
  double viscosity = 0.01;  // kinematic viscosity nu (Re = U L / nu)
  double dt = 0.0;          // time step; 0 chooses cfl x the largest stable dt (stable_dt)
  double cfl = 0.5;         // fraction of the largest stable dt when dt == 0
  // side[axis][0 = low, 1 = high]; the first mesh.dim axes are used.
  std::array<std::array<Side, 2>, 3> side{
      {{Side::wall, Side::wall}, {Side::wall, Side::wall}, {Side::wall, Side::wall}}};
  double lid_velocity = 1.0;
  double inflow_velocity = 1.0;  // bulk (mean) speed into the domain through every inflow side
  InflowProfile inflow_profile = InflowProfile::uniform;
  InitialKind initial = InitialKind::rest;
  double amplitude = 1.0;  // taylor_green, beltrami: velocity amplitude U0
  // The pressure Poisson solve: tolerance, cycle, smoother; the multigrid's storage precision
  // comes from `solver` below, not from solve.multigrid.precisions.
  solvers::SolverOptions solve;
  Precision storage = Precision::fp64;        // velocity storage
  Precision compute = Precision::fp64;        // arithmetic of the momentum update
  Precision solver = Precision::fp64;         // inner precision of the pressure solve (role "solver")
  std::vector<std::array<double, 3>> probes;  // velocity probes (physical coordinates)
  int probe_every = 1;
  bool quiet = false;
};

// The multigrid level precisions for a solver precision: fp64 and fp32 on every level, bf16
// and fp16 "progressive" (fp32 finest, 16-bit below; 16-bit on the finest level stalls).
std::vector<Precision> solver_level_precisions(Precision solver);

std::string to_string(Side s);

}  // namespace mantissa::cfd
