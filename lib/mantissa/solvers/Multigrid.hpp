#pragma once
// Geometric multigrid for the cell-centred 7-point (3D) / 5-point (2D) Poisson operator on a
// Decomposition, each level stored in its own precision (fp64, fp32, bf16, fp16; the 16-bit
// ones compute in fp32), chosen at run time. Used as the preconditioner of PoissonSolver.
//
// Hierarchy: coarse cell I covers fine cells 2I, 2I+1 on every axis (an odd axis gives the
// last coarse cell one child); coarse levels keep the fine level's process grid with the
// partition ceil(start / 2), so transfers never cross more than the two-layer halo. When a
// distributed level has at most agglomerate_cells cells, or the next one would leave a rank
// with fewer than two cells along an axis, it is gathered onto every rank and the levels
// below are solved redundantly (same bits on every rank, no messages). The coarsest level
// (at most 2-3 cells per axis for most sizes) is solved exactly by dense Cholesky.
//
// Rank-count invariance: smoothing (Jacobi, Chebyshev, red-black Gauss-Seidel coloured by
// the global index), residual and transfers are point-wise, and the gathered levels see the
// same data at every rank count, so one cycle gives the same bits at 1, 2, 3 or 4 ranks.
#include <mantissa/core/Error.hpp>
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/mesh/Field.hpp>
#include <mantissa/mesh/HaloExchange.hpp>
#include <mantissa/mesh/Location.hpp>
#include <mantissa/solvers/Options.hpp>
#include <mantissa/solvers/detail/PoissonKernels.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace mantissa::solvers {

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class Multigrid {
 public:
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  static constexpr int ghost_width = 2;

  template <class T>
  struct LevelData {
    Field<T, MemorySpace> x, x2, f, r;
    std::shared_ptr<HaloExchange<T, MemorySpace>> faces, full;
  };
  using AnyData = std::variant<LevelData<double>, LevelData<float>, LevelData<bf16>, LevelData<fp16>>;

  struct Level {
    Grid grid;
    const Decomposition* decomp = nullptr;
    std::unique_ptr<Decomposition> owned_decomp;
    bool serial = false;       // on MPI_COMM_SELF (or a one-rank job): no neighbours but itself
    bool gather_next = false;  // the next level is this one gathered onto every rank
    int depth = 0;             // times coarsened; a gathered copy keeps its source's depth
    std::array<double, 3> coef{1, 1, 1};
    double hmin2 = 1.0;  // true operator = L / hmin2
    detail::Placement place;
    std::array<int, 6> mirror{0, 0, 0, 0, 0, 0};  // per face: -1 Dirichlet, +1 Neumann, 0 none
    std::array<bool, 6> touches{};                // this rank owns cells next to the face
    std::array<bool, 3> odd{};                    // odd number of cells along the axis
    Precision precision = Precision::fp64;
    // a 16-bit level, or below one: carries the coarse scale (set_coarse_scale)
    bool scaled = false;
    AnyData data;
    // gathered levels: every rank's owned box of the level above, (offset, extent) x 3
    std::vector<std::array<std::int64_t, 6>> rank_boxes;
    // coarsest, direct: Cholesky factor (row major, lower) of the level matrix
    std::vector<double> cholesky;
  };

  Multigrid(const Decomposition& fine, const Boundary& bc, const MultigridOptions& options);

  int num_levels() const { return static_cast<int>(m_levels.size()); }
  const Level& level(int l) const { return *m_levels[std::size_t(l)]; }
  Level& level(int l) { return *m_levels[std::size_t(l)]; }
  const MultigridOptions& options() const { return m_options; }
  bool singular() const { return m_singular; }
  // Storage precision per level (finest first) as given, last entry repeated; entries count
  // grids, so a level gathered onto every rank is stored like the level it copies.
  void set_precisions(const std::vector<Precision>& per_level);
  std::vector<Precision> precisions() const;
  std::string describe() const;

  // z ~= L^-1 r on the finest level, one cycle from zero. r and z are fields of the fine
  // decomposition (any ghost width). `scale` multiplies r on its way in (and divides z on its
  // way out): pass 1 / max|r| so 16-bit levels see values near 1 (residual scaling).
  template <class K>
  void apply(const Field<K, MemorySpace>& r, Field<K, MemorySpace>& z, double scale);
  // The two halves of apply(): level 0's f = scale * r, and z = level 0's x / scale.
  template <class K>
  void load_rhs(const Field<K, MemorySpace>& r, double scale);
  template <class K>
  void store_solution(Field<K, MemorySpace>& z, double scale);
  // load_rhs with level 0's x set to the first red half-sweep from zero in the same pass
  // (detail::load_entry), where the cycle can start from there (entry_possible()): returns
  // whether it did, i.e. the entry_done to pass to cycle(). Otherwise plain load_rhs.
  template <class K>
  bool load_entry(const Field<K, MemorySpace>& r, double scale);

  // One cycle on level l with the level's own f and x (tests and benches drive it).
  // entry_done (level 0, zero_initial): level 0's x already holds the first red half-sweep
  // from zero (detail::update_r_entry wrote it with f); the cycle goes on from there.
  void cycle(int l, Cycle type, bool zero_initial, bool entry_done = false);
  // Whether a cycle can start from detail::update_r_entry: level 0 stored in fp64 or fp32,
  // red-black Gauss-Seidel pre-smoothing, and a coarser level to go to.
  bool entry_fusable() const;
  // Whether a cycle can start from level 0's x holding the first red half-sweep from zero:
  // red-black Gauss-Seidel pre-smoothing and a coarser level to go to (any storage).
  bool entry_possible() const;
  // The residual scale for 16-bit levels below a level that is not (so that they see values
  // near 1 while level 0 takes the residual unscaled): the restriction into the first such
  // level multiplies by it, the prolongation out of it divides. load_rhs resets it to 1.
  void set_coarse_scale(double s) { m_coarse_scale = s; }
  // ||f - L x|| on level l (owned, reduced over the level's ranks).
  double residual_norm(int l);

  // The pieces of a cycle; public for nvcc (lambdas in private members), not an interface.
  template <class T>
  // rows_mirror_x: the caller's kernel is a host row kernel that mirrors the x faces itself.
  void fill_ghosts(Level& lv, LevelData<T>& d, Field<T, MemorySpace>& fld, bool full, bool restriction,
                   bool rows_mirror_x = false);
  template <class T>
  void smooth(Level& lv, LevelData<T>& d, int sweeps, bool zero_initial, bool post, bool entry_done = false);
  void coarse_solve(Level& lv);
  void gather(Level& from, Level& to, bool from_residual);
  void scatter_add(Level& from, Level& to, bool add);

 private:
  MultigridOptions m_options;
  Boundary m_bc;
  bool m_singular = false;
  int m_dim = 3;
  double m_coarse_scale = 1.0;
  std::vector<std::unique_ptr<Level>> m_levels;

  void setup_level(Level& lv, const Decomposition& d, bool serial);
  void factor_coarsest(Level& lv);
};

extern template class Multigrid<Kokkos::DefaultExecutionSpace::memory_space>;

}  // namespace mantissa::solvers

#include <mantissa/solvers/Multigrid_impl.hpp>
