#include "tstIoCommon.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace iotest {

namespace fs = std::filesystem;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

ScratchDir::ScratchDir(const std::string& name) {
  long id = long(getpid());
  MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  m_path = (fs::current_path() /
            ("io-scratch-np" + std::to_string(world_size()) + "-" + std::to_string(id) + "-" + name))
               .string();
  if (world_rank() == 0) {
    fs::remove_all(m_path);
    fs::create_directories(m_path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

ScratchDir::~ScratchDir() {
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::int64_t sum_all(std::int64_t v) {
  std::int64_t s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

}  // namespace iotest
