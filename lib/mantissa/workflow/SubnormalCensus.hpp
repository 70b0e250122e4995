#pragma once
// How many values of a state are subnormal in the type they are stored in: the reason a
// low-precision variant can run slower than fp64 on x86 (every subnormal operand or result
// takes a microcode assist) and what flushing them to zero would change (FloatEnv.hpp).
//
// The campaign holds states as fp64 copies (PhysicsModel::state()); every fp32, bf16 and fp16
// value converts to fp64 exactly, so a value was subnormal in its storage type exactly when
// its fp64 image lies strictly between 0 and that type's smallest normal number: 2^-1022
// (fp64), 2^-126 (fp32 and bf16, which share fp32's exponent range), 2^-14 (fp16), 2^-6
// (fp8 e4m3), 2^-14 (fp8 e5m2). The test is done on the bit patterns, so it gives the same
// counts whether or not denormals-are-zero is in force on the thread that counts.
#include <mantissa/core/Precision.hpp>
#include <mantissa/mesh/Field.hpp>
#include <mantissa/workflow/PhysicsModel.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::workflow {

struct FieldCensus {
  std::string field;
  Precision storage = Precision::fp64;  // the type the values were stored in
  std::int64_t values = 0;              // owned points over all ranks
  std::int64_t subnormal = 0;           // of those, subnormal in `storage`
  std::int64_t zero = 0;                // exactly +-0
  double subnormal_share() const { return values > 0 ? double(subnormal) / double(values) : 0.0; }
};

// The smallest positive normal number of a storage precision.
double smallest_normal(Precision p);
// Whether an fp64 value (the exact image of a value stored in p) is subnormal in p. Host only.
bool is_subnormal_in(double v, Precision p);

// Collective over comm: the census of one field's owned points.
FieldCensus count_subnormals(const std::string& name, const Field<double>& field, Precision storage,
                             MPI_Comm comm);
// Collective: one entry per state field, in the state's order; storage[i] is the type field i
// is stored in (the physics' storage precision for its prognostic fields, the compute precision
// for auxiliary ones such as a CPML's memory variables). Throws if the sizes differ.
std::vector<FieldCensus> subnormal_census(const State& state, const std::vector<Precision>& storage,
                                          MPI_Comm comm);

}  // namespace mantissa::workflow
