#include <mantissa/io/detail/Collective.hpp>

namespace mantissa {
namespace io {
namespace detail {

std::string broadcast_string(MPI_Comm comm, const std::string& s, int root) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int len = int(s.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  std::string out = rank == root ? s : std::string(std::size_t(len), '\0');
  if (len > 0) MPI_Bcast(out.data(), len, MPI_CHAR, root, comm);
  return out;
}

void CollectiveError::raise(MPI_Comm comm) const {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = empty() ? size : rank, lowest = size;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest == size) return;
  int problem = m_problem;
  MPI_Bcast(&problem, 1, MPI_INT, lowest, comm);
  const std::string msg = broadcast_string(comm, m_message, lowest);
  const std::string path = broadcast_string(comm, m_path, lowest);
  if (problem > 0) throw FileError(FileProblem(problem - 1), path, msg);
  throw Error(msg);
}

}  // namespace detail
}  // namespace io
}  // namespace mantissa
