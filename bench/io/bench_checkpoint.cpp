// Checkpoint write and read bandwidth for a state of `--gib` GiB (default 1) in fp64 fields,
// beside a plain sequential write (4 MiB write() calls + fsync, one process) and a plain read of
// the same size, measured in the same run on the same file system. Writes are durable (fsync)
// on both sides; before every read the file's pages are dropped from the page cache
// (posix_fadvise DONTNEED after fsync) so reads come from the disk on both sides too.
//
// Usage: mpirun -np 2 mantissa_bench_checkpoint [dir] [gib] [reps]
#include <mantissa/io/Checkpoint.hpp>

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace io = mantissa::io;
using clock_type = std::chrono::steady_clock;

double now() {
  return std::chrono::duration<double>(clock_type::now().time_since_epoch()).count();
}

void drop_cache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

double plain_write(const std::string& path, std::size_t bytes) {
  std::vector<char> buf(4 << 20, 7);
  const double t0 = now();
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(buf.size(), bytes - done);
    if (write(fd, buf.data(), n) != ssize_t(n)) std::abort();
    done += n;
  }
  fsync(fd);
  close(fd);
  return now() - t0;
}

double plain_read(const std::string& path, std::size_t bytes) {
  std::vector<char> buf(4 << 20);
  const double t0 = now();
  const int fd = open(path.c_str(), O_RDONLY);
  std::size_t done = 0;
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) done += std::size_t(n);
  close(fd);
  if (done != bytes) std::abort();
  return now() - t0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string dir = argc > 1 ? argv[1] : "bench-tmp";
    const double gib = argc > 2 ? std::atof(argv[2]) : 1.0;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
    const int num_fields = 4;
    // 4 fp64 fields on an n x n x n/2 grid holding `gib` GiB in all.
    const double points = gib * double(1ull << 30) / 8.0 / num_fields;
    std::int64_t n = 16;
    while (double(n) * double(n) * double(n / 2) < points) n += 16;  // at least `gib`
    mantissa::Grid grid;
    grid.dim = 3;
    grid.n = {n, n, n / 2};
    // Process grid from MANTISSA_BENCH_PGRID="px py pz" (default: MPI_Dims_create's choice).
    std::array<int, 3> pg{0, 0, 0};
    if (const char* e = std::getenv("MANTISSA_BENCH_PGRID"))
      std::sscanf(e, "%d %d %d", &pg[0], &pg[1], &pg[2]);
    mantissa::Decomposition decomp(MPI_COMM_WORLD, grid, pg);
    std::vector<mantissa::Field<double>> fields;
    std::vector<io::FieldRef> refs;
    for (int f = 0; f < num_fields; ++f) {
      fields.emplace_back("mantissa::bench::checkpoint::f" + std::to_string(f), decomp, 1);
      Kokkos::deep_copy(fields.back().view(), 1.0 + f);
    }
    for (int f = 0; f < num_fields; ++f) refs.push_back(io::field_ref("f" + std::to_string(f), fields[f]));
    const std::size_t bytes = std::size_t(grid.num_points()) * 8 * num_fields;
    if (rank == 0) {
      std::filesystem::create_directories(dir);
      std::printf(
          "mantissa checkpoint bandwidth: %d ranks, %d fp64 fields of %lldx%lldx%lld = %.3f GiB, dir %s\n",
          size, num_fields, static_cast<long long>(grid.n[0]), static_cast<long long>(grid.n[1]),
          static_cast<long long>(grid.n[2]), double(bytes) / double(1ull << 30), dir.c_str());
      std::printf("  process grid %dx%dx%d, transfer: %s (OMPI_MCA_fcoll=%s, OMPI_MCA_io=%s)\n",
                  decomp.dims()[0], decomp.dims()[1], decomp.dims()[2],
                  io::use_collective_transfer(io::IoTransfer::automatic) ? "collective" : "independent",
                  std::getenv("OMPI_MCA_fcoll") ? std::getenv("OMPI_MCA_fcoll") : "-",
                  std::getenv("OMPI_MCA_io") ? std::getenv("OMPI_MCA_io") : "-");
    }
    const std::string plain = dir + "/plain.bin";
    std::vector<double> tw, tr, pw, pr;
    io::CheckpointOptions opt;
    opt.prefix = "bench";
    io::CheckpointWriter writer(decomp, dir, 1, opt);
    for (int r = 0; r < reps; ++r) {
      // Plain write and read by one process while the other ranks wait (the peer).
      double t = 0;
      if (rank == 0) {
        t = plain_write(plain, bytes);
        pw.push_back(t);
        drop_cache(plain);
        pr.push_back(plain_read(plain, bytes));
        std::filesystem::remove(plain);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      const std::string path = writer.write(r, 0.0, {}, refs);
      MPI_Barrier(MPI_COMM_WORLD);
      tw.push_back(now() - t0);
      if (rank == 0) drop_cache(path);
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now();
      {
        io::CheckpointReader reader(path, MPI_COMM_WORLD);
        for (const auto& ref : refs) reader.read_field(ref);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      tr.push_back(now() - t0);
    }
    if (rank == 0) {
      const double gb = double(bytes) / 1e9;
      const double w = median(tw), r = median(tr), p = median(pw), q = median(pr);
      std::printf("  checkpoint write  %7.3f s  %7.2f GB/s  (%.0f%% of plain write; median of %d)\n", w,
                  gb / w, 100.0 * p / w, reps);
      std::printf("  plain write+fsync %7.3f s  %7.2f GB/s\n", p, gb / p);
      std::printf(
          "  checkpoint read   %7.3f s  %7.2f GB/s  (%.0f%% of plain read; includes checksum checks)\n", r,
          gb / r, 100.0 * q / r);
      std::printf("  plain read        %7.3f s  %7.2f GB/s\n", q, gb / q);
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().filename().string().rfind("bench-", 0) == 0) std::filesystem::remove(e.path());
    }
  }
  MPI_Finalize();
  return 0;
}
