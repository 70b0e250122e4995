#include <mantissa/core/ExactSum.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace mantissa {

namespace {
int bit_length(std::uint64_t v) {
  int n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
}
}  // namespace

double ExactAccumulator::value() const {
  const std::int64_t nan = word[nan_slot], pinf = word[pinf_slot], ninf = word[ninf_slot];
  if (nan > 0 || (pinf > 0 && ninf > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (pinf > 0) return std::numeric_limits<double>::infinity();
  if (ninf > 0) return -std::numeric_limits<double>::infinity();

  ExactAccumulator a = *this;
  a.normalize();
  // Sign and magnitude: a negative total (the top limb's sign) is negated limb by limb and
  // normalised again, which leaves digits in [0, 2^32) and a non-negative top limb.
  const bool negative = a.word[num_limbs - 1] < 0;
  if (negative) {
    for (int i = 0; i < num_limbs; ++i) a.word[i] = -a.word[i];
    a.normalize();
  }
  // The top limb holds at most a few bits beyond 2^2112 (far beyond the double range); fold
  // it into the magnitude test below.
  int h = num_limbs - 1;
  while (h >= 0 && a.word[h] == 0) --h;
  if (h < 0) return 0.0;
  if (h == num_limbs - 1 || bit_length(std::uint64_t(a.word[h])) + digit_bits * h > 2098)
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  auto digit = [&](int i) { return i >= 0 ? std::uint64_t(a.word[i]) : std::uint64_t(0); };
  const int nb = bit_length(digit(h));      // 1..32
  const int msb = digit_bits * h + nb - 1;  // position of the leading bit
  if (msb <= 52) {
    // An integer multiple of 2^-1074 below 2^53: exact (subnormal or the smallest normals).
    const double r = std::ldexp(double((digit(1) << 32) | digit(0)), -1074);
    return negative ? -r : r;
  }
  // The 64 bits from the leading one down, and whether anything below them is non-zero.
  const std::uint64_t top = (digit(h) << (64 - nb)) | (digit(h - 1) << (32 - nb)) | (digit(h - 2) >> nb);
  bool sticky = (digit(h - 2) & ((std::uint64_t(1) << nb) - 1)) != 0;
  for (int i = h - 3; i >= 0 && !sticky; --i) sticky = digit(i) != 0;
  // Round the 64 bits to 53 (to nearest, ties to even).
  std::uint64_t keep = top >> 11;
  const std::uint64_t rest = top & 0x7ff, half = 0x400;
  if (rest > half || (rest == half && (sticky || (keep & 1)))) ++keep;
  int exponent = msb - 52 - 1074;  // of keep's lowest bit
  if (keep >> 53) {
    keep >>= 1;
    ++exponent;
  }
  const double r = std::ldexp(double(keep), exponent);  // exact, or +inf beyond the double range
  return negative ? -r : r;
}

void exact_allreduce(const ExactAccumulator* local, double* out, int count, MPI_Comm comm) {
  constexpr int n = ExactAccumulator::size;
  std::vector<std::int64_t> words(std::size_t(n) * std::size_t(count)), sums(words.size());
  for (int c = 0; c < count; ++c) {
    ExactAccumulator a = local[c];
    a.normalize();  // digits < 2^32: the sum over ranks cannot overflow below 2^31 ranks
    for (int i = 0; i < n; ++i) words[std::size_t(c) * n + std::size_t(i)] = a.word[i];
  }
  MPI_Allreduce(words.data(), sums.data(), n * count, MPI_INT64_T, MPI_SUM, comm);
  for (int c = 0; c < count; ++c) {
    ExactAccumulator a;
    for (int i = 0; i < n; ++i) a.word[i] = sums[std::size_t(c) * n + std::size_t(i)];
    out[c] = a.value();
  }
}

double exact_allreduce(const ExactAccumulator& local, MPI_Comm comm) {
  double r = 0.0;
  exact_allreduce(&local, &r, 1, comm);
  return r;
}

}  // namespace mantissa
