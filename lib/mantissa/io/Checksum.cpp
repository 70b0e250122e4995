#include <mantissa/core/Error.hpp>
#include <mantissa/io/Checksum.hpp>

#include <cstring>

namespace mantissa {
namespace io {

namespace {
template <class Bits>
std::uint64_t checksum_typed(const unsigned char* p, const std::array<std::int64_t, 3>& bd,
                             const std::array<std::int64_t, 3>& bs, const std::array<std::int64_t, 3>& gd) {
  std::uint64_t sum = 0;
  const std::int64_t rows = bd[0] * bd[1];
  auto row_sum = [=](const std::int64_t r, std::uint64_t& acc) {
    const std::int64_t k = r / bd[1], j = r % bd[1];
    const std::uint64_t row_base = std::uint64_t(((bs[0] + k) * gd[1] + (bs[1] + j)) * gd[2] + bs[2]);
    const unsigned char* row = p + r * bd[2] * std::int64_t(sizeof(Bits));
    for (std::int64_t i = 0; i < bd[2]; ++i) {
      Bits b;  // memcpy, not a cast: the buffer holds objects of the element type
      std::memcpy(&b, row + i * std::int64_t(sizeof(Bits)), sizeof(Bits));
      acc += element_hash(row_base + std::uint64_t(i), std::uint64_t(b));
    }
  };
  // Files are also read before Kokkos starts (or after it ends): then on this thread.
  if (!Kokkos::is_initialized()) {
    for (std::int64_t r = 0; r < rows; ++r) row_sum(r, sum);
    return sum;
  }
  // Host threads: the data lives on the host here (it was just copied for HDF5).
  Kokkos::parallel_reduce("mantissa::io::partial_checksum",
                          Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, rows), row_sum, sum);
  return sum;
}
}  // namespace

std::uint64_t partial_checksum(const void* data, std::size_t elem_size,
                               const std::array<std::int64_t, 3>& block_dims,
                               const std::array<std::int64_t, 3>& block_start,
                               const std::array<std::int64_t, 3>& global_dims) {
  if (block_dims[0] * block_dims[1] * block_dims[2] == 0) return 0;
  // Element bits are read through unsigned integers of the element's size (no value
  // conversion: -0.0 and NaN payloads count as their bits).
  switch (elem_size) {
    case 1:
      return checksum_typed<std::uint8_t>(static_cast<const unsigned char*>(data), block_dims, block_start,
                                          global_dims);
    case 2:
      return checksum_typed<std::uint16_t>(static_cast<const unsigned char*>(data), block_dims, block_start,
                                           global_dims);
    case 4:
      return checksum_typed<std::uint32_t>(static_cast<const unsigned char*>(data), block_dims, block_start,
                                           global_dims);
    case 8:
      return checksum_typed<std::uint64_t>(static_cast<const unsigned char*>(data), block_dims, block_start,
                                           global_dims);
    default:
      break;
  }
  MANTISSA_ASSERT(false, "partial_checksum: unsupported element size " << elem_size);
  return 0;
}

}  // namespace io
}  // namespace mantissa
