#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/SubnormalCensus.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>

namespace mantissa::workflow {

namespace {
// Type punning through a union, as core's conversions do (host and device compilers alike).
KOKKOS_INLINE_FUNCTION std::uint64_t bits_of(double x) {
  union {
    double d;
    std::uint64_t u;
  } c{};
  c.d = x;
  return c.u;
}
// Bits of |smallest normal| as an fp64: magnitudes of non-negative doubles order like their
// bit patterns, so "0 < |v| < smallest normal" is an integer comparison that DAZ cannot alter.
std::uint64_t smallest_normal_bits(Precision p) {
  return bits_of(smallest_normal(p));
}
constexpr std::uint64_t magnitude_mask = ~(std::uint64_t(1) << 63);
}  // namespace

double smallest_normal(Precision p) {
  switch (p) {
    case Precision::fp64:
      return std::ldexp(1.0, -1022);
    case Precision::fp32:
    case Precision::bf16:
      return std::ldexp(1.0, -126);
    case Precision::fp16:
      return std::ldexp(1.0, -14);
    case Precision::fp8_e4m3:
      return std::ldexp(1.0, -6);
    case Precision::fp8_e5m2:
      return std::ldexp(1.0, -14);
  }
  return std::ldexp(1.0, -1022);
}

bool is_subnormal_in(double v, Precision p) {
  const std::uint64_t m = bits_of(v) & magnitude_mask;
  return m != 0 && m < smallest_normal_bits(p);
}

FieldCensus count_subnormals(const std::string& name, const Field<double>& field, Precision storage,
                             MPI_Comm comm) {
  FieldCensus c;
  c.field = name;
  c.storage = storage;
  const auto v = field.view();
  const std::uint64_t limit = smallest_normal_bits(storage), mask = magnitude_mask;
  std::int64_t local[3] = {0, 0, 0};
  if (v.data() != nullptr) {
    const auto policy = field.owned_policy();
    Kokkos::parallel_reduce(
        "mantissa::workflow::SubnormalCensus::subnormal", policy,
        KOKKOS_LAMBDA(const int k, const int j, const int i, std::int64_t& acc) {
          const std::uint64_t m = bits_of(v(k, j, i)) & mask;
          acc += (m != 0 && m < limit) ? 1 : 0;
        },
        local[0]);
    Kokkos::parallel_reduce(
        "mantissa::workflow::SubnormalCensus::zero", policy,
        KOKKOS_LAMBDA(const int k, const int j, const int i, std::int64_t& acc) {
          acc += (bits_of(v(k, j, i)) & mask) == 0 ? 1 : 0;
        },
        local[1]);
    local[2] = field.extent()[0] * field.extent()[1] * field.extent()[2];
  }
  std::int64_t global[3] = {0, 0, 0};
  MPI_Allreduce(local, global, 3, MPI_INT64_T, MPI_SUM, comm);
  c.subnormal = global[0];
  c.zero = global[1];
  c.values = global[2];
  return c;
}

std::vector<FieldCensus> subnormal_census(const State& state, const std::vector<Precision>& storage,
                                          MPI_Comm comm) {
  if (storage.size() != state.size())
    throw Error("subnormal_census: " + std::to_string(state.size()) + " state fields but " +
                std::to_string(storage.size()) + " storage precisions; give one per field");
  std::vector<FieldCensus> out;
  out.reserve(state.size());
  for (std::size_t f = 0; f < state.size(); ++f)
    out.push_back(count_subnormals(state[f].name, state[f].field, storage[f], comm));
  return out;
}

}  // namespace mantissa::workflow
