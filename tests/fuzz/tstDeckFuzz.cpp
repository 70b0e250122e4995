// The deck parser under mutation (a property test running the mutations a fuzzer would, in
// every build, for a bounded time): the repository's decks and hand-written seeds for every key
// kind, mutated by byte flips, insertions of YAML tokens, deletions, duplicated, swapped and cut
// lines, and random overrides. Properties in DeckFuzz.hpp (accepted or mantissa::Error, never
// anything else; the resolved deck reads back as itself). MANTISSA_FUZZ_SECONDS (default 8)
// bounds the time, MANTISSA_FUZZ_SEED reproduces a run (the seed is printed).
#include "DeckFuzz.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace fs = std::filesystem;

namespace {

std::vector<std::string> seeds() {
  std::vector<std::string> v = {
      "physics: seismic\nrun: {name: a, steps: 10}\nmesh: {dim: 2, n: [8, 8], spacing: [1.0]}\n",
      "mesh:\n  dim: 3\n  n: [4, 4, 4]\n  periodic: [true, false, true]\nmodel:\n  order: 6\n  tags: [a, b]\n"
      "  mask: [true]\n  sources:\n    - {position: [1.0, 2.0], f0: 3.0, taps: [{k: 1}, {k: 2}]}\n"
      "    - position: [0.5, 0.5, 0.5]\n      shot: 1\n",
      "mesh: {n: [16, 16]}\nmodel: {sources: [], precision: bf16, end: 1e3}\ncheckpoint: {every: 5, keep: "
      "3}\n",
      "mesh: {n: [2, 2]}\nrun: {end_time: 0.5, output_dir: \"out dir\", name: 'x'}\nlogging: {level: "
      "debug}\n",
  };
  const fs::path src(MANTISSA_SOURCE_DIR);
  for (const char* dir :
       {"inputs", "tests/regression/bad_decks", "tests/regression/campaign", "tests/fault"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(src / dir, ec)) {
      if (e.path().extension() != ".yaml") continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      v.push_back(ss.str());
    }
  }
  return v;
}

const std::vector<std::string> k_tokens = {":",
                                           " ",
                                           "\n",
                                           "[",
                                           "]",
                                           "{",
                                           "}",
                                           ",",
                                           "- ",
                                           "  ",
                                           "#",
                                           "&a ",
                                           "*a",
                                           "!!str ",
                                           "!!int ",
                                           "'",
                                           "\"",
                                           "|\n",
                                           ">\n",
                                           "~",
                                           "null",
                                           "nan",
                                           ".inf",
                                           "-.inf",
                                           "1e308",
                                           "1e309",
                                           "-1",
                                           "0",
                                           "9223372036854775807",
                                           "9223372036854775808",
                                           "-9223372036854775809",
                                           "0x10",
                                           "true",
                                           "yes",
                                           "[]",
                                           "{}",
                                           "mesh",
                                           "n",
                                           "dim",
                                           "model.sources[0]",
                                           "sources",
                                           "taps",
                                           "<<: *a",
                                           "\t",
                                           "\xff",
                                           std::string("\0", 1),
                                           "[[1]]",
                                           "? a\n"};

const std::vector<std::string> k_override_keys = {"mesh.n",
                                                  "mesh.dim",
                                                  "run.steps",
                                                  "run.end_time",
                                                  "model.order",
                                                  "model.sources[0].f0",
                                                  "model.sources[1].taps[0].k",
                                                  "model.sources[99].f0",
                                                  "model.tags",
                                                  "model.mask",
                                                  "mesh.periodic",
                                                  "model",
                                                  "model.sources",
                                                  "model.sources[x].f0",
                                                  "model.sources[-1].f0",
                                                  "model.sources[18446744073709551616].f0",
                                                  "nope.key",
                                                  "",
                                                  "mesh.n[0]",
                                                  "run"};

std::string mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t(0) : std::size_t(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 7) {
      case 0:  // flip a byte
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // insert a token
        s.insert(pick(s.size() + 1), k_tokens[pick(k_tokens.size())]);
        break;
      case 2: {  // delete a range
        if (s.empty()) break;
        const std::size_t a = pick(s.size());
        s.erase(a, 1 + pick(16));
        break;
      }
      case 3: {  // duplicate a line
        const std::size_t a = s.rfind('\n', pick(s.size() + 1));
        const std::size_t from = a == std::string::npos ? 0 : a + 1;
        const std::size_t to = s.find('\n', from);
        s.insert(from, s.substr(from, to == std::string::npos ? std::string::npos : to - from + 1));
        break;
      }
      case 4: {  // swap two lines
        std::vector<std::string> lines;
        std::istringstream in(s);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
        if (lines.size() >= 2) std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
        s.clear();
        for (const auto& l : lines) s += l + "\n";
        break;
      }
      case 5:  // cut
        s.resize(pick(s.size() + 1));
        break;
      default:  // a number or a word in place of a digit run
        for (std::size_t i = pick(s.size()); i < s.size(); ++i)
          if (std::isdigit(static_cast<unsigned char>(s[i]))) {
            s.replace(i, 1, k_tokens[pick(k_tokens.size())]);
            break;
          }
    }
  }
  return s;
}

std::vector<std::string> overrides(std::mt19937_64& rng) {
  std::vector<std::string> o;
  const int n = static_cast<int>(rng() % 3);
  for (int i = 0; i < n; ++i) {
    std::string v = k_tokens[rng() % k_tokens.size()];
    if (rng() % 2) v = "[" + std::to_string(rng() % 100) + ", " + v + "]";
    const std::string& key = k_override_keys[rng() % k_override_keys.size()];
    o.push_back(rng() % 10 == 0 ? key + v : key + "=" + v);
  }
  return o;
}

}  // namespace

TEST(DeckFuzz, MutatedDecksAreAcceptedOrRefusedCleanly) {
  const char* env_seed = std::getenv("MANTISSA_FUZZ_SEED");
  const char* env_secs = std::getenv("MANTISSA_FUZZ_SECONDS");
  const std::uint64_t seed =
      env_seed ? std::strtoull(env_seed, nullptr, 10)
               : static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const double seconds = env_secs ? std::atof(env_secs) : 8.0;
  std::cerr << "deck fuzz: seed " << seed << " (MANTISSA_FUZZ_SEED reproduces it), " << seconds << " s"
            << std::endl;
  std::mt19937_64 rng(seed);
  const auto schema = mantissa::fuzz::fuzz_schema();
  const auto corpus = seeds();
  ASSERT_GT(corpus.size(), 10u) << "the repository's decks were not found under " << MANTISSA_SOURCE_DIR;
  // The seeds as they are: the hand-written ones are accepted (they cover every key kind).
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(mantissa::fuzz::fuzz_one(schema, corpus[i], {})) << corpus[i];
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t runs = 0, accepted = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds ||
         runs < 200) {
    std::string text = corpus[rng() % corpus.size()];
    // Mutations compound: a few rounds on one input reach deeper than one edit.
    const int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; ++r) text = mutate(text, rng);
    accepted += mantissa::fuzz::fuzz_one(schema, text, overrides(rng)) ? 1 : 0;
    ++runs;
  }
  std::cout << "deck fuzz: " << runs << " mutated decks, " << accepted
            << " accepted, the rest refused cleanly\n";
  EXPECT_GT(accepted, 0u) << "no mutated deck was accepted: the mutations only test the refusal paths";
}
