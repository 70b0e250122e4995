#pragma once
// Halo exchange plan (Cabana Cabana_Halo.hpp: built once, applied many times). Buffers and
// index boxes are computed at construction; exchange() packs every field for every neighbour
// on the device, fences, sends with MPI (device pointers when GPU-aware MPI is requested,
// host mirrors otherwise), and unpacks on the device.
//
// Pattern::faces exchanges across the 4 (2D) or 6 (3D) faces: enough for axis-aligned
// stencils. Pattern::full also exchanges edges and corners (8 / 26 neighbours) for stencils
// with diagonal terms; neighbours talk directly, so no second pass is needed.
//
// GPU-aware MPI: with the CMake option Mantissa_ENABLE_GPU_AWARE_MPI=ON (which defines
// MANTISSA_ENABLE_GPU_AWARE_MPI on mantissa::mesh) device buffers go to MPI directly by
// default; otherwise they are staged through host mirrors. For host memory spaces the two are
// the same (the mirrors alias the buffers).
#include <mantissa/core/Error.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/mesh/Field.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <limits>
#include <string>
#include <vector>

namespace mantissa {

enum class HaloPattern { faces, full };

// The build's default for handing device pointers to MPI.
inline constexpr bool gpu_aware_mpi_default() {
#if defined(MANTISSA_ENABLE_GPU_AWARE_MPI)
  return true;
#else
  return false;
#endif
}

template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class HaloExchange {
 public:
  using field_type = Field<T, MemorySpace>;
  using execution_space = typename MemorySpace::execution_space;
  using buffer_type = Kokkos::View<T*, MemorySpace>;

  // num_fields: how many fields one exchange() moves (they must share the decomposition and
  // ghost width). gpu_aware: hand device pointers to MPI (default: the build option).
  HaloExchange(const Decomposition& decomp, int ghost_width, int num_fields,
               HaloPattern pattern = HaloPattern::faces, bool gpu_aware = gpu_aware_mpi_default())
      : m_comm(decomp.comm()), m_ghost_width(ghost_width), m_num_fields(num_fields), m_gpu_aware(gpu_aware) {
    const int dim = decomp.grid().dim;
    if (ghost_width < 0 || ghost_width > 4)
      throw Error("halo exchange: ghost width " + std::to_string(ghost_width) +
                  " is outside 0..4 (the widths Field supports)");
    if (num_fields < 1)
      throw Error("halo exchange: a plan needs at least one field, got " + std::to_string(num_fields));
    const std::array<int, 3> g{ghost_width, ghost_width, dim == 3 ? ghost_width : 0};
    m_ghost = g;
    m_extent = decomp.extent();
    const auto& e = decomp.extent();
    // Checked against every rank's share (the partition is known everywhere), so all ranks refuse
    // together: a check of this rank's extent alone threw on one rank and left the others waiting
    // in their first exchange.
    for (int a = 0; a < dim; ++a) {
      const auto s = decomp.starts(a);
      for (std::size_t p = 0; p + 1 < s.size(); ++p) {
        const std::int64_t owned = s[p + 1] - s[p];
        if (owned < ghost_width)
          throw Error("halo exchange: " + std::to_string(s.size() - 1) + " ranks along axis " +
                      std::to_string(a) + " leave rank row " + std::to_string(p) + " with " +
                      std::to_string(owned) + " of the grid's " + std::to_string(s.back()) +
                      " points, fewer than the ghost width " + std::to_string(ghost_width) +
                      "; use fewer ranks along that axis or a larger grid");
      }
    }
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const std::array<int, 3> d{dx, dy, dz};
          const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
          if (nonzero == 0 || (dim == 2 && dz != 0)) continue;
          if (pattern == HaloPattern::faces && nonzero != 1) continue;
          const int nb = decomp.neighbor(dx, dy, dz);
          if (nb == MPI_PROC_NULL) continue;
          Neighbor n;
          n.rank = nb;
          n.send_tag = (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1);
          n.recv_tag = (1 - dz) * 9 + (1 - dy) * 3 + (1 - dx);  // the sender's direction is -d
          for (int a = 0; a < 3; ++a) {
            // storage coordinates along axis a; owned = [g, g+e)
            const std::int64_t lo = g[a], hi = g[a] + e[a];
            if (d[a] == 0) {
              n.send_lo[a] = n.recv_lo[a] = lo;
              n.send_hi[a] = n.recv_hi[a] = hi;
            } else if (d[a] < 0) {
              n.send_lo[a] = lo;
              n.send_hi[a] = lo + g[a];
              n.recv_lo[a] = lo - g[a];
              n.recv_hi[a] = lo;
            } else {
              n.send_lo[a] = hi - g[a];
              n.send_hi[a] = hi;
              n.recv_lo[a] = hi;
              n.recv_hi[a] = hi + g[a];
            }
          }
          std::int64_t count = 1;
          for (int a = 0; a < 3; ++a) count *= (n.send_hi[a] - n.send_lo[a]);
          n.count = count;
          // Messages are counted in bytes as an int (MPI-3 counts).
          if (count * num_fields * std::int64_t(sizeof(T)) > std::int64_t(std::numeric_limits<int>::max()))
            throw Error("halo exchange: one message would be " +
                        std::to_string(count * num_fields * std::int64_t(sizeof(T))) +
                        " bytes, more than MPI's int count; use more ranks or fewer fields per plan");
          n.send = buffer_type(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::mesh::HaloExchange::send"),
              count * num_fields);
          n.recv = buffer_type(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::mesh::HaloExchange::recv"),
              count * num_fields);
          n.send_host = Kokkos::create_mirror_view(n.send);
          n.recv_host = Kokkos::create_mirror_view(n.recv);
          m_neighbors.push_back(n);
        }
  }

  int num_neighbors() const { return static_cast<int>(m_neighbors.size()); }
  int ghost_width() const { return m_ghost_width; }
  int num_fields() const { return m_num_fields; }
  bool gpu_aware() const { return m_gpu_aware; }
  // Bytes sent by this rank per exchange (for bandwidth numbers).
  std::size_t bytes_per_exchange() const {
    std::size_t b = 0;
    for (const auto& n : m_neighbors) b += n.count * m_num_fields * sizeof(T);
    return b;
  }

  void exchange(const std::vector<field_type*>& fields) const { exchange(execution_space(), fields); }

  void exchange(const execution_space& space, const std::vector<field_type*>& fields) const {
    if (static_cast<int>(fields.size()) != m_num_fields)
      throw Error("halo exchange: plan built for " + std::to_string(m_num_fields) + " fields, called with " +
                  std::to_string(fields.size()));
    for (std::size_t f = 0; f < fields.size(); ++f) check_field(fields[f], f);
    Kokkos::Profiling::pushRegion("mantissa::mesh::HaloExchange::exchange");
    for (auto& n : m_neighbors) {
      for (int f = 0; f < m_num_fields; ++f)
        pack(space, fields[f]->view(), n.send, f * n.count, n.send_lo, n.send_hi);
    }
    fence(space, "mantissa::mesh::HaloExchange::pack");
    std::vector<MPI_Request> req(2 * m_neighbors.size());
    for (std::size_t i = 0; i < m_neighbors.size(); ++i) {
      auto& n = m_neighbors[i];
      if (!m_gpu_aware) Kokkos::deep_copy(n.send_host, n.send);
      T* rbuf = m_gpu_aware ? n.recv.data() : n.recv_host.data();
      T* sbuf = m_gpu_aware ? n.send.data() : n.send_host.data();
      const int bytes = static_cast<int>(n.count * m_num_fields * sizeof(T));
      MPI_Irecv(rbuf, bytes, MPI_BYTE, n.rank, n.recv_tag, m_comm, &req[2 * i]);
      MPI_Isend(sbuf, bytes, MPI_BYTE, n.rank, n.send_tag, m_comm, &req[2 * i + 1]);
    }
    MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
    for (auto& n : m_neighbors) {
      if (!m_gpu_aware) Kokkos::deep_copy(n.recv, n.recv_host);
      for (int f = 0; f < m_num_fields; ++f)
        unpack(space, fields[f]->view(), n.recv, f * n.count, n.recv_lo, n.recv_hi);
    }
    fence(space, "mantissa::mesh::HaloExchange::unpack");
    Kokkos::Profiling::popRegion();
  }

 private:
  using view_type = typename field_type::view_type;
  using box = std::array<std::int64_t, 3>;
  struct Neighbor {
    int rank = MPI_PROC_NULL, send_tag = 0, recv_tag = 0;
    std::int64_t count = 0;
    box send_lo{}, send_hi{}, recv_lo{}, recv_hi{};
    buffer_type send, recv;
    typename buffer_type::HostMirror send_host, recv_host;
  };

  // A field must have the plan's owned extent and ghost widths: the pack/unpack boxes were
  // computed for them, and a mismatch would read or write outside the field.
  void check_field(const field_type* f, std::size_t index) const {
    const std::string which = "halo exchange: field " + std::to_string(index);
    if (!f) throw Error(which + " is a null pointer");
    auto txt = [](const auto& a) {
      return std::to_string(a[0]) + "x" + std::to_string(a[1]) + "x" + std::to_string(a[2]);
    };
    if (f->extent() != m_extent)
      throw Error(which + " ('" + f->label() + "') owns " + txt(f->extent()) +
                  " points but the plan was built for " + txt(m_extent) +
                  "; build the plan on the field's decomposition");
    if (f->ghosts() != m_ghost)
      throw Error(which + " ('" + f->label() + "') has ghost widths " + txt(f->ghosts()) +
                  " but the plan was built for " + txt(m_ghost) + "; use one plan per ghost width");
    const auto& v = f->view();
    if (std::int64_t(v.extent(0)) != m_extent[2] + 2 * m_ghost[2] ||
        std::int64_t(v.extent(1)) != m_extent[1] + 2 * m_ghost[1] ||
        std::int64_t(v.extent(2)) < m_extent[0] + 2 * m_ghost[0])  // rows may be padded (Field)
      throw Error(which + " ('" + f->label() +
                  "') has no storage of the expected size (a default-constructed Field?)");
  }

  static Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<3>> policy(const execution_space& space,
                                                                        const box& lo, const box& hi) {
    using idx = typename Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<3>>::index_type;
    return Kokkos::MDRangePolicy<execution_space, Kokkos::Rank<3>>(
        space, {idx(lo[2]), idx(lo[1]), idx(lo[0])}, {idx(hi[2]), idx(hi[1]), idx(hi[0])});
  }

  // Public only because nvcc rejects an extended __host__ __device__ lambda (KOKKOS_LAMBDA)
  // inside a private or protected member function; not part of the interface.
 public:
  static void pack(const execution_space& space, const view_type& v, const buffer_type& buf,
                   std::int64_t base, const box& lo, const box& hi) {
    const std::int64_t nx = hi[0] - lo[0], ny = hi[1] - lo[1];
    const std::int64_t x0 = lo[0], y0 = lo[1], z0 = lo[2];
    Kokkos::parallel_for(
        "mantissa::mesh::HaloExchange::pack", policy(space, lo, hi),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
          buf(base + ((k - z0) * ny + (j - y0)) * nx + (i - x0)) = v(k, j, i);
        });
  }
  static void unpack(const execution_space& space, const view_type& v, const buffer_type& buf,
                     std::int64_t base, const box& lo, const box& hi) {
    const std::int64_t nx = hi[0] - lo[0], ny = hi[1] - lo[1];
    const std::int64_t x0 = lo[0], y0 = lo[1], z0 = lo[2];
    Kokkos::parallel_for(
        "mantissa::mesh::HaloExchange::unpack", policy(space, lo, hi),
        KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t j, const std::int64_t i) {
          v(k, j, i) = buf(base + ((k - z0) * ny + (j - y0)) * nx + (i - x0));
        });
  }

 private:
  MPI_Comm m_comm;
  std::array<int, 3> m_ghost{0, 0, 0};
  std::array<std::int64_t, 3> m_extent{0, 0, 0};
  int m_ghost_width;
  int m_num_fields;
  bool m_gpu_aware;
  mutable std::vector<Neighbor> m_neighbors;
};

}  // namespace mantissa
