#pragma once
// The precisions mantissa knows, by role (DESIGN.md "Precision"). Names are what decks use.
#include <string>
#include <string_view>
#include <vector>

namespace mantissa {

enum class Precision { fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 };

std::string_view to_string(Precision p);
// Parses a deck value; throws mantissa::Error naming the value and the valid choices.
Precision parse_precision(std::string_view text, std::string_view where = {});
int size_in_bytes(Precision p);
const std::vector<Precision>& all_precisions();

}  // namespace mantissa
