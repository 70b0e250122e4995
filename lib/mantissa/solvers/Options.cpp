#include <mantissa/core/Error.hpp>
#include <mantissa/solvers/Options.hpp>

namespace mantissa::solvers {

namespace {
std::string prefix(std::string_view where) {
  return where.empty() ? std::string() : std::string(where) + ": ";
}
}  // namespace

Cycle parse_cycle(std::string_view text, std::string_view where) {
  if (text == "v" || text == "V") return Cycle::v;
  if (text == "f" || text == "F") return Cycle::f;
  throw Error(prefix(where) + "unknown multigrid cycle '" + std::string(text) + "'; expected v or f");
}

Outer parse_outer(std::string_view text, std::string_view where) {
  if (text == "cg") return Outer::cg;
  if (text == "refinement") return Outer::refinement;
  throw Error(prefix(where) + "unknown outer iteration '" + std::string(text) +
              "'; expected cg (fp64 CG around the mixed multigrid) or refinement (iterative refinement)");
}

Smoother parse_smoother(std::string_view text, std::string_view where) {
  if (text == "jacobi") return Smoother::jacobi;
  if (text == "chebyshev") return Smoother::chebyshev;
  if (text == "rbgs" || text == "red_black_gauss_seidel") return Smoother::rbgs;
  throw Error(prefix(where) + "unknown smoother '" + std::string(text) +
              "'; expected jacobi, chebyshev or rbgs (red-black Gauss-Seidel)");
}

BoundaryKind parse_boundary_kind(std::string_view text, std::string_view where) {
  if (text == "dirichlet") return BoundaryKind::dirichlet;
  if (text == "neumann") return BoundaryKind::neumann;
  if (text == "periodic") return BoundaryKind::periodic;
  throw Error(prefix(where) + "unknown boundary '" + std::string(text) +
              "'; expected dirichlet, neumann or periodic");
}

std::vector<Precision> parse_level_precisions(std::string_view text, std::string_view where) {
  auto one = [&](std::string_view t) {
    const Precision p = parse_precision(t, where);
    if (p != Precision::fp64 && p != Precision::fp32 && p != Precision::bf16 && p != Precision::fp16)
      throw Error(prefix(where) + "multigrid storage '" + std::string(t) +
                  "' is not supported; use fp64, fp32, bf16 or fp16 (fp8 is for the surrogate)");
    return p;
  };
  if (text == "progressive_bf16") return {Precision::fp32, Precision::bf16};
  if (text == "progressive_fp16") return {Precision::fp32, Precision::fp16};
  std::vector<Precision> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.size() - start : comma - start);
    if (item.empty())
      throw Error(prefix(where) + "empty entry in the level precision list '" + std::string(text) +
                  "'; write e.g. fp32,bf16 or progressive_bf16");
    out.push_back(one(item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string to_string(Cycle c) {
  return c == Cycle::v ? "v" : "f";
}
std::string to_string(Outer o) {
  return o == Outer::cg ? "cg" : "refinement";
}
std::string to_string(Smoother s) {
  switch (s) {
    case Smoother::jacobi:
      return "jacobi";
    case Smoother::chebyshev:
      return "chebyshev";
    case Smoother::rbgs:
      return "rbgs";
  }
  return "unknown";
}
std::string to_string(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::dirichlet:
      return "dirichlet";
    case BoundaryKind::neumann:
      return "neumann";
    case BoundaryKind::periodic:
      return "periodic";
  }
  return "unknown";
}
std::string level_precisions_string(const std::vector<Precision>& p) {
  std::string s;
  for (std::size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::string(mantissa::to_string(p[i]));
  return s;
}

}  // namespace mantissa::solvers
