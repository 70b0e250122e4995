#pragma once
// Helpers shared by the io tests: a scratch directory per test run, analytically known field
// values (bit patterns from a hash of the global index, so a bitwise round trip checks every
// bit, including signs, subnormals and -0.0), and bitwise comparison.
#include <mantissa/io/Checksum.hpp>
#include <mantissa/mesh/Field.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <string>

namespace iotest {

// A fresh directory for this test run (unique across concurrently running rank counts),
// removed by the destructor. Collective.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }

 private:
  std::string m_path;
};

int world_rank();
int world_size();
// Names of the regular files in dir (sorted).
std::vector<std::string> list_dir(const std::string& dir);

// Known bits of the element at global linear index `g` of field `field`: a hash, with the
// exponent kept below all-ones so the value is finite (NaN payloads are not what is tested).
template <class T>
T known_value(std::uint64_t g, int field) {
  std::uint64_t h = mantissa::io::mix64(g * 31u + std::uint64_t(field));
  T out;
  if constexpr (sizeof(T) == 8) {
    if (((h >> 52) & 0x7ffu) == 0x7ffu) h ^= (1ull << 62);
    std::memcpy(static_cast<void*>(&out), &h, 8);
  } else if constexpr (sizeof(T) == 4) {
    std::uint32_t b = std::uint32_t(h);
    if (((b >> 23) & 0xffu) == 0xffu) b ^= (1u << 30);
    std::memcpy(static_cast<void*>(&out), &b, 4);
  } else if constexpr (sizeof(T) == 2) {
    std::uint16_t b = std::uint16_t(h);
    std::memcpy(static_cast<void*>(&out), &b, 2);
  } else {
    std::uint8_t b = std::uint8_t(h);
    std::memcpy(static_cast<void*>(&out), &b, 1);
  }
  return out;
}

inline std::uint64_t global_index(const mantissa::Grid& grid, std::int64_t x, std::int64_t y,
                                  std::int64_t z) {
  return std::uint64_t((z * grid.n[1] + y) * grid.n[0] + x);
}

// Fills owned points with known_value and ghosts with `ghost_bits` (a sentinel).
template <class T>
void fill_known(mantissa::Field<T>& f, const mantissa::Grid& grid, int field,
                unsigned char ghost_byte = 0xAB) {
  auto h = Kokkos::create_mirror_view(f.view());
  std::memset(static_cast<void*>(h.data()), ghost_byte, h.size() * sizeof(T));
  const auto g = f.ghosts();
  const auto e = f.extent();
  const auto o = f.offset();
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t i = 0; i < e[0]; ++i)
        h(k + g[2], j + g[1], i + g[0]) =
            known_value<T>(global_index(grid, o[0] + i, o[1] + j, o[2] + k), field);
  Kokkos::deep_copy(f.view(), h);
}

// Number of owned points whose bits differ from known_value, and ghosts whose bytes are not
// ghost_byte (a read must not touch ghosts).
template <class T>
std::int64_t count_mismatches(const mantissa::Field<T>& f, const mantissa::Grid& grid, int field,
                              unsigned char ghost_byte = 0xAB) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.view());
  const auto g = f.ghosts();
  const auto e = f.extent();
  const auto o = f.offset();
  std::int64_t bad = 0;
  for (std::int64_t k = 0; k < std::int64_t(h.extent(0)); ++k)
    for (std::int64_t j = 0; j < std::int64_t(h.extent(1)); ++j)
      for (std::int64_t i = 0; i < std::int64_t(h.extent(2)); ++i) {
        const bool owned =
            k >= g[2] && k < g[2] + e[2] && j >= g[1] && j < g[1] + e[1] && i >= g[0] && i < g[0] + e[0];
        const T v = h(k, j, i);
        if (owned) {
          const T want =
              known_value<T>(global_index(grid, o[0] + i - g[0], o[1] + j - g[1], o[2] + k - g[2]), field);
          if (std::memcmp(&v, &want, sizeof(T)) != 0) ++bad;
        } else {
          unsigned char bytes[sizeof(T)];
          std::memcpy(bytes, &v, sizeof(T));
          for (auto b : bytes)
            if (b != ghost_byte) {
              ++bad;
              break;
            }
        }
      }
  return bad;
}

// Sum over ranks.
std::int64_t sum_all(std::int64_t v);

}  // namespace iotest
