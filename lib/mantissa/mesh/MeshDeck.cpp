#include <mantissa/core/Error.hpp>
#include <mantissa/mesh/MeshDeck.hpp>

#include <fmt/format.h>

#include <limits>
#include <vector>

namespace mantissa {

namespace {

// One value for every axis, or exactly one per axis.
template <class T>
std::array<T, 3> per_axis(const Deck& deck, const std::string& key, const std::vector<T>& values, int dim,
                          T fill) {
  if (values.size() != 1 && values.size() != static_cast<std::size_t>(dim)) {
    throw Error(
        fmt::format("{}: {}: got {} values for a {}D mesh; give one value for every axis or {} values",
                    deck.where(key), key, values.size(), dim, dim));
  }
  std::array<T, 3> out{fill, fill, fill};
  for (int a = 0; a < dim; ++a) out[a] = values.size() == 1 ? values[0] : values[a];
  return out;
}

}  // namespace

Grid grid_from_deck(const Deck& deck) {
  Grid g;
  g.dim = static_cast<int>(deck.get_int("mesh.dim"));
  const auto n = deck.get_ints("mesh.n");
  if (n.size() != static_cast<std::size_t>(g.dim)) {
    throw Error(
        fmt::format("{}: mesh.n: got {} entries for mesh.dim = {}; give one number of points per axis",
                    deck.where("mesh.n"), n.size(), g.dim));
  }
  for (int a = 0; a < g.dim; ++a) {
    if (n[a] < 2) {
      throw Error(fmt::format("{}: mesh.n: entry {} is {}; every axis needs at least 2 points",
                              deck.where("mesh.n"), a, n[a]));
    }
    g.n[a] = n[a];
  }
  g.n[2] = g.dim == 2 ? 1 : g.n[2];
  g.spacing = per_axis(deck, "mesh.spacing", deck.get_reals("mesh.spacing"), g.dim, 1.0);
  for (int a = 0; a < g.dim; ++a) {
    if (!(g.spacing[a] > 0.0)) {
      throw Error(fmt::format("{}: mesh.spacing: entry {} is {}; spacings must be positive",
                              deck.where("mesh.spacing"), a, g.spacing[a]));
    }
  }
  g.origin = per_axis(deck, "mesh.origin", deck.get_reals("mesh.origin"), g.dim, 0.0);
  g.periodic = per_axis(deck, "mesh.periodic", deck.get_bools("mesh.periodic"), g.dim, false);
  g.validate();
  return g;
}

std::array<int, 3> process_grid_from_deck(const Deck& deck) {
  const int dim = static_cast<int>(deck.get_int("mesh.dim"));
  const auto p = deck.get_ints("mesh.process_grid");
  std::array<int, 3> dims{0, 0, dim == 2 ? 1 : 0};
  for (std::size_t a = 0; a < p.size(); ++a) {
    if (p[a] < 0 || p[a] > std::numeric_limits<int>::max()) {
      throw Error(
          fmt::format("{}: mesh.process_grid: entry {} is {}; use 0 (automatic) or a positive rank count",
                      deck.where("mesh.process_grid"), a, p[a]));
    }
    if (a == 2 && dim == 2 && p[a] > 1) {
      throw Error(
          fmt::format("{}: mesh.process_grid: a 2D mesh cannot be split along z (entry 2 is {}); use 0 or 1",
                      deck.where("mesh.process_grid"), p[a]));
    }
    if (a < 2 || dim == 3) dims[a] = static_cast<int>(p[a]);
  }
  return dims;
}

}  // namespace mantissa
