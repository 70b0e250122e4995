// Preflight of the carried prefix (scripts/device/run.sh): every dependency mantissa links,
// used once, at 1 and 2 ranks, before the long builds start. Rank 0 writes an HDF5 file with
// parallel HDF5 (every rank writes its own element), reads it back and checks it; yaml-cpp
// parses a snippet, fmt formats the result. Exit code 0 only if everything held.
#include <fmt/format.h>
#include <hdf5.h>
#include <mpi.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CLI::App app{"preflight"};
  std::string file = "preflight.h5";
  app.add_option("file", file);
  CLI11_PARSE(app, argc, argv);
  const YAML::Node deck = YAML::Load("mesh: {n: [4, 3]}\nname: preflight\n");
  const int n = deck["mesh"]["n"][0].as<int>() * deck["mesh"]["n"][1].as<int>();

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hsize_t dims = hsize_t(size);
  hid_t space = H5Screate_simple(1, &dims, nullptr);
  hid_t d = H5Dcreate2(f, "ranks", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t off = hsize_t(rank), one = 1;
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &off, nullptr, &one, nullptr);
  hid_t mem = H5Screate_simple(1, &one, nullptr);
  const int v = rank * n;
  herr_t w = H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &v);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  H5Pclose(fapl);
  MPI_Barrier(MPI_COMM_WORLD);
  int ok = w >= 0 ? 1 : 0;
  if (rank == 0) {
    std::vector<int> back(std::size_t(size), -1);
    hid_t g = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t e = g >= 0 ? H5Dopen2(g, "ranks", H5P_DEFAULT) : -1;
    if (e < 0 || H5Dread(e, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()) < 0) ok = 0;
    for (int r = 0; r < size; ++r) ok = ok && back[std::size_t(r)] == r * n;
    if (e >= 0) H5Dclose(e);
    if (g >= 0) H5Fclose(g);
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    char mpiv[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(mpiv, &len);
    std::printf(
        "%s",
        fmt::format("preflight {}: {} ranks, HDF5 {}.{}.{} (parallel) read back {}, yaml-cpp n={}, {}\n",
                    ok ? "passed" : "FAILED", size, maj, min, rel, ok ? "intact" : "WRONG", n,
                    std::string(mpiv, std::size_t(len)).substr(0, 40))
            .c_str());
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
