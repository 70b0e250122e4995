#pragma once
// Keeping the ranks of collective I/O in step when some of them fail (internal): the lowest
// failing rank's error is thrown on every rank, as a FileError when it was one.
#include <mantissa/io/FileError.hpp>

#include <mpi.h>

#include <string>

namespace mantissa {
namespace io {
namespace detail {

class CollectiveError {
 public:
  void set(const FileError& e) {
    m_message = e.what();
    m_path = e.path();
    m_problem = int(e.problem()) + 1;
  }
  void set(const std::string& message) {
    m_message = message;
    m_problem = 0;
  }
  bool empty() const { return m_message.empty(); }
  // Collective: throws (on every rank) the lowest failing rank's error; returns when none failed.
  void raise(MPI_Comm comm) const;

 private:
  std::string m_message, m_path;
  int m_problem = 0;  // FileProblem + 1, 0 for a plain mantissa::Error
};

// Rank root's string on every rank.
std::string broadcast_string(MPI_Comm comm, const std::string& s, int root = 0);

}  // namespace detail
}  // namespace io
}  // namespace mantissa
