#include <cfd/CfdDeck.hpp>

#include <cfd/Solver.hpp>
#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/MeshDeck.hpp>
#include <mantissa/solvers/Options.hpp>

#include <limits>
#include <string>

namespace mantissa::cfd {

namespace {
constexpr double rmax = std::numeric_limits<double>::max();
const char* side_keys[3][2] = {{"x_low", "x_high"}, {"y_low", "y_high"}, {"z_low", "z_high"}};

Side parse_side(const std::string& text, const std::string& key) {
  if (text == "periodic") return Side::periodic;
  if (text == "wall") return Side::wall;
  if (text == "lid") return Side::lid;
  if (text == "inflow") return Side::inflow;
  if (text == "outflow") return Side::outflow;
  throw Error(key + " = '" + text + "': use wall, lid, periodic, inflow or outflow");
}
}  // namespace

void register_schema(Schema& s) {
  s.section("cfd",
            "Incompressible Navier-Stokes, 2D or 3D (mesh.dim), on a staggered (MAC) grid: SSP-RK2 with a "
            "pressure projection "
            "through the multigrid Poisson solver each stage. mesh.n counts cells of width mesh.spacing; the "
            "campaign's `solver` role is the multigrid's precision.");
  s.physics_section("cfd");
  s.real("cfd.viscosity", "kinematic viscosity nu (Reynolds number U L / nu)", 0.01, 1e-12, rmax);
  s.real("cfd.dt", "time step; 0 chooses cfl x the largest stable dt (a larger dt is refused)", 0.0, 0.0,
         rmax);
  s.real("cfd.cfl", "fraction of the largest stable dt, 1 / (sum U/h + 2 nu sum 1/h^2), used when dt is 0",
         0.5, 1e-6, 1.0);
  s.section(
      "cfd.boundaries",
      "Per side: wall (no slip), lid (a wall sliding at lid_velocity: along x on the y and z sides, along "
      "y on the x sides), periodic (both sides of the axis, with mesh.periodic true on it), inflow (the "
      "normal velocity into the domain is cfd.inflow's, no tangential velocity) or outflow (zero pressure, "
      "zero normal derivative of the tangential velocity, the normal velocity from continuity); an inflow "
      "side needs an outflow side.");
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side)
      s.choice(std::string("cfd.boundaries.") + side_keys[a][side],
               a == 2 ? "boundary condition of this side (3D meshes only; ignored in 2D)"
                      : "boundary condition of this side",
               {"wall", "lid", "periodic", "inflow", "outflow"}, std::string("wall"));
  s.real("cfd.lid_velocity", "speed of every lid side", 1.0, -rmax, rmax);
  s.section("cfd.inflow", "The velocity through every inflow side (cfd.boundaries).");
  s.real("cfd.inflow.velocity", "bulk (mean) speed into the domain", 1.0, -rmax, rmax);
  s.choice("cfd.inflow.profile",
           "uniform, or parabolic: 6 s (1 - s) across each cross axis that is not periodic (s in [0, 1] "
           "across the domain; the fully developed laminar profile of a 2D channel), the same mean",
           {"uniform", "parabolic"}, std::string("uniform"));
  s.section("cfd.initial", "The velocity at time 0 (projected once to be discretely divergence-free).");
  s.choice(
      "cfd.initial.kind",
      "rest (zero); taylor_green: in 2D u = U sin(kx x) cos(ky y), v = -U kx/ky cos(kx x) sin(ky y), in 3D "
      "(Brachet's vortex) u = U sin(kx x) cos(ky y) cos(kz z), v = -U kx/ky cos(kx x) sin(ky y) cos(kz z), "
      "w = 0, k = 2 pi / domain length (needs periodic sides); beltrami: the exact ABC flow "
      "u = U (sin kz + cos ky), v = U (sin kx + cos kz), w = U (sin ky + cos kx) (3D periodic cube only)",
      {"rest", "taylor_green", "beltrami"}, std::string("rest"));
  s.real("cfd.initial.amplitude", "taylor_green, beltrami: the velocity amplitude U", 1.0, -rmax, rmax);
  s.section(
      "cfd.solver",
      "The pressure Poisson solve (lib/mantissa/solvers): multigrid-preconditioned CG in fp64, the "
      "multigrid's levels stored in the campaign's solver role (fp64, fp32, or 16-bit on coarse levels).");
  s.real("cfd.solver.tolerance", "relative residual of every pressure solve", 1e-10, 1e-15, 0.1);
  s.integer("cfd.solver.max_iterations", "multigrid cycles per solve at most", 200, 1, 100000);
  s.choice("cfd.solver.cycle", "multigrid cycle", {"v", "f"}, std::string("v"));
  s.choice("cfd.solver.smoother", "multigrid smoother", {"rbgs", "jacobi", "chebyshev"}, std::string("rbgs"));
  s.integer(
      "cfd.solver.sweeps",
      "smoothing sweeps before and after each coarse-grid correction (1: V(1,1), 2: V(2,2); chebyshev: the "
      "polynomial degree); more sweeps "
      "cost more per cycle and take fewer cycles, which pays most with a solver role below fp64 "
      "(docs/performance.md)",
      1, 1, 8);
  s.choice(
      "cfd.solver.outer",
      "how a solver role below fp64 reaches the fp64 tolerance: cg (fp64 CG around the mixed multigrid) or "
      "refinement (iterative refinement around an fp32 CG; slower, kept for comparison)",
      {"cg", "refinement"}, std::string("cg"));
  s.real("cfd.solver.inner_tolerance", "outer: refinement: relative tolerance of each inner (fp32) solve",
         1e-5, 1e-12, 0.5);
  s.choice("cfd.solver.krylov_storage",
           "outer: cg with a solver role below fp64: storage of the CG's search direction; fp32 stores it in "
           "fp32 (x, r and all arithmetic stay fp64, the residual still reaches the fp64 tolerance; a stall "
           "falls back to fp64, logged and counted); an fp64 solver role always keeps fp64",
           {"fp64", "fp32"}, std::string("fp64"));
  s.record_list("cfd.probes", "velocity probes: the x velocity u (the primary field) at each position");
  s.real_list("cfd.probes[].position",
              "position (x, y) in 2D, (x, y, z) in 3D, in mesh units, bilinear (trilinear) in u's lattice",
              std::nullopt, 2, 3);
  s.integer("cfd.probe_every", "probes sample every k steps", 1, 1, 1000000);
}

Config config_from_deck(const Deck& d) {
  Config c;
  const Grid g = grid_from_deck(d);
  c.viscosity = d.get_real("cfd.viscosity");
  c.dt = d.get_real("cfd.dt");
  c.cfl = d.get_real("cfd.cfl");
  c.lid_velocity = d.get_real("cfd.lid_velocity");
  c.inflow_velocity = d.get_real("cfd.inflow.velocity");
  c.inflow_profile =
      d.get_string("cfd.inflow.profile") == "parabolic" ? InflowProfile::parabolic : InflowProfile::uniform;
  for (int a = 0; a < 3; ++a) {
    for (int side = 0; side < 2; ++side) {
      const std::string key = std::string("cfd.boundaries.") + side_keys[a][side];
      c.side[a][side] = parse_side(d.get_string(key), key);
    }
    if (a >= g.dim) {
      // the z sides of a 2D mesh are not used; keep the solver's default (walls) whatever they say
      c.side[a] = {Side::wall, Side::wall};
      continue;
    }
    const bool p0 = c.side[a][0] == Side::periodic, p1 = c.side[a][1] == Side::periodic;
    const std::string k0 = std::string("cfd.boundaries.") + side_keys[a][0];
    const std::string k1 = std::string("cfd.boundaries.") + side_keys[a][1];
    if (p0 != p1)
      throw Error(d.where(p0 ? k1 : k0) + ": " + k0 + " and " + k1 +
                  ": a periodic axis is periodic on both sides; make both periodic or neither");
    if (p0 != g.periodic[a])
      throw Error(d.where(k0) + ": " + k0 + "/" + side_keys[a][1] + " are " +
                  (p0 ? "periodic" : "not periodic") + " but mesh.periodic along " +
                  (a == 0   ? "x"
                   : a == 1 ? "y"
                            : "z") +
                  " is " + (g.periodic[a] ? "true" : "false") + "; make them agree");
  }
  const std::string init = d.get_string("cfd.initial.kind");
  c.initial = init == "taylor_green" ? InitialKind::taylor_green
              : init == "beltrami"   ? InitialKind::beltrami
                                     : InitialKind::rest;
  c.amplitude = d.get_real("cfd.initial.amplitude");
  const bool all_periodic = g.periodic[0] && g.periodic[1] && (g.dim == 2 || g.periodic[2]);
  if (c.initial != InitialKind::rest && !all_periodic)
    throw Error(d.where("cfd.initial.kind") + ": cfd.initial.kind = " + init +
                " needs a periodic box; set mesh.periodic: [true] and every cfd.boundaries side to periodic");
  if (c.initial == InitialKind::beltrami) {
    try {
      (void)Beltrami::on(g, c.amplitude, c.viscosity);
    } catch (const Error& e) {
      throw Error(d.where("cfd.initial.kind") + ": " + e.what());
    }
  }
  c.solve.tolerance = d.get_real("cfd.solver.tolerance");
  c.solve.max_iterations = static_cast<int>(d.get_int("cfd.solver.max_iterations"));
  c.solve.multigrid.cycle = solvers::parse_cycle(d.get_string("cfd.solver.cycle"), "cfd.solver.cycle");
  c.solve.multigrid.smoother =
      solvers::parse_smoother(d.get_string("cfd.solver.smoother"), "cfd.solver.smoother");
  c.solve.multigrid.pre_sweeps = c.solve.multigrid.post_sweeps =
      static_cast<int>(d.get_int("cfd.solver.sweeps"));
  c.solve.outer = solvers::parse_outer(d.get_string("cfd.solver.outer"), "cfd.solver.outer");
  c.solve.inner_tolerance = d.get_real("cfd.solver.inner_tolerance");
  c.solve.krylov_storage =
      parse_precision(d.get_string("cfd.solver.krylov_storage"), "cfd.solver.krylov_storage");
  for (std::size_t i = 0; i < d.count("cfd.probes"); ++i) {
    const std::string key = "cfd.probes[" + std::to_string(i) + "].position";
    const auto p = d.get_reals(key);
    if (p.size() != std::size_t(g.dim))
      throw Error(d.where(key) + ": " + key + " has " + std::to_string(p.size()) +
                  " coordinates but the mesh is " + std::to_string(g.dim) + "D; give " +
                  (g.dim == 3 ? "(x, y, z)" : "(x, y)"));
    c.probes.push_back({p[0], p[1], p.size() > 2 ? p[2] : 0.0});
  }
  c.probe_every = static_cast<int>(d.get_int("cfd.probe_every"));
  return c;
}

}  // namespace mantissa::cfd
