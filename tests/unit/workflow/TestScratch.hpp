#pragma once
// What the campaign tests share besides the models (TestModels.hpp): the rank, a scratch
// directory with the same path on every rank, and the small periodic 2D grid they run on.
#include <mantissa/mesh/Grid.hpp>

#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace mantissa::workflow::test {

inline int rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A fresh scratch directory (and no leftover `.previous` beside it), the same path on every
// rank: TMPDIR/mantissa-<prefix>-<pid of rank 0>-<name>. Collective.
inline std::string scratch(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  long pid = static_cast<long>(getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string path =
      (fs::temp_directory_path() / ("mantissa-" + prefix + "-" + std::to_string(pid) + "-" + name)).string();
  if (rank_of_world() == 0) {
    fs::remove_all(path);
    fs::remove_all(path + ".previous");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// 32 x 24, periodic in both directions: what TestWave runs on.
inline Grid periodic_grid() {
  Grid g;
  g.dim = 2;
  g.n = {32, 24, 1};
  g.periodic = {true, true, false};
  return g;
}

}  // namespace mantissa::workflow::test
