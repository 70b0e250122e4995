#include <mantissa/core/Error.hpp>
#include <mantissa/core/Precision.hpp>

namespace mantissa {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::fp64:
      return "fp64";
    case Precision::fp32:
      return "fp32";
    case Precision::bf16:
      return "bf16";
    case Precision::fp16:
      return "fp16";
    case Precision::fp8_e4m3:
      return "fp8_e4m3";
    case Precision::fp8_e5m2:
      return "fp8_e5m2";
  }
  return "unknown";
}

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> all{Precision::fp64, Precision::fp32,     Precision::bf16,
                                          Precision::fp16, Precision::fp8_e4m3, Precision::fp8_e5m2};
  return all;
}

Precision parse_precision(std::string_view text, std::string_view where) {
  for (auto p : all_precisions()) {
    if (text == to_string(p)) return p;
  }
  if (text == "fp8") return Precision::fp8_e4m3;
  std::string msg = std::string(where.empty() ? "" : std::string(where) + ": ") + "unknown precision '" +
                    std::string(text) +
                    "'; expected one of fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 (fp8 means fp8_e4m3)";
  throw Error(msg);
}

int size_in_bytes(Precision p) {
  switch (p) {
    case Precision::fp64:
      return 8;
    case Precision::fp32:
      return 4;
    case Precision::bf16:
    case Precision::fp16:
      return 2;
    case Precision::fp8_e4m3:
    case Precision::fp8_e5m2:
      return 1;
  }
  return 0;
}

}  // namespace mantissa
