#pragma once
// Rank-count independent dataset checksums. Each element contributes a 64-bit hash of
// (global linear index, element bits); contributions are summed modulo 2^64. The sum is
// commutative, so any split of a dataset over ranks (and any order of the partial sums in
// MPI_Allreduce) gives the same value, and the index enters the hash, so swapped elements
// are detected. The mixer is the SplitMix64 finalizer (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014), a bijection with full avalanche.
#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace mantissa {
namespace io {

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Hash of one element; `bits` is the element's storage zero-extended to 64 bits.
KOKKOS_INLINE_FUNCTION std::uint64_t element_hash(std::uint64_t global_index, std::uint64_t bits) {
  return mix64(mix64(global_index) ^ bits);
}

// Partial checksum of a row-major block of a row-major global array, on the host.
//  data:        the block, contiguous, row major, elements of elem_size bytes (1, 2, 4 or 8)
//  block_dims:  extent of the block per dimension, slowest first (as in HDF5)
//  block_start: global index of the block's first element per dimension
//  global_dims: extent of the whole array per dimension
// Up to 3 dimensions; unused trailing dimensions are passed as extent 1, start 0.
std::uint64_t partial_checksum(const void* data, std::size_t elem_size,
                               const std::array<std::int64_t, 3>& block_dims,
                               const std::array<std::int64_t, 3>& block_start,
                               const std::array<std::int64_t, 3>& global_dims);

}  // namespace io
}  // namespace mantissa
