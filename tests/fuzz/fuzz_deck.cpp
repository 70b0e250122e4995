// libFuzzer entry point for the deck parser (clang: -fsanitize=fuzzer,address,undefined). Not
// built by CMake yet: compile it with clang++ against lib/mantissa/core's deck sources, yaml-cpp
// and fmt; the property test tstDeckFuzz.cpp runs the same checks in every build. The input is a deck's text;
// a line "--set key=value" at its start becomes an override, so the fuzzer also explores the override syntax.
#include "DeckFuzz.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mantissa::Schema schema = mantissa::fuzz::fuzz_schema();
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  while (text.rfind("--set ", 0) == 0) {
    const auto nl = text.find('\n');
    overrides.push_back(text.substr(6, nl == std::string::npos ? std::string::npos : nl - 6));
    text = nl == std::string::npos ? std::string() : text.substr(nl + 1);
  }
  mantissa::fuzz::fuzz_one(schema, text, overrides);
  return 0;
}
