#pragma once
// A small serial HDF5 writer for the report's files (report.h5's neighbours that a physics'
// report section writes, e.g. gathers.h5) over io's handle layer (io/H5File.hpp): groups, datasets of
// doubles, attributes; the file is written under PATH.tmp and renamed over PATH by commit(). Rank 0 only. It
// keeps HDF5 out of the adapters' headers until lib/mantissa/io's handle layer takes its place.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mantissa::workflow {

class ReportH5 {
 public:
  // Creates PATH.tmp (truncating); throws mantissa::Error naming the file.
  static ReportH5 create(const std::string& path);

  ReportH5 group(const std::string& name) const;
  // A dataset of doubles with the given shape (row major); the returned object takes the
  // dataset's attributes.
  ReportH5 dataset(const std::string& name, const std::vector<std::uint64_t>& shape,
                   const std::vector<double>& data) const;

  void attr(const std::string& name, double v) const;
  void attr(const std::string& name, std::int64_t v) const;
  void attr(const std::string& name, const std::string& v) const;
  // An array attribute of doubles with the given shape, e.g. coordinates (n x dim).
  void attr(const std::string& name, const std::vector<std::uint64_t>& shape,
            const std::vector<double>& v) const;

  // The root object only: closes the file and renames PATH.tmp to PATH.
  void commit();

 private:
  struct Impl;
  struct File;
  ReportH5(std::shared_ptr<File> file, std::shared_ptr<Impl> obj);
  std::shared_ptr<File> m_file;
  std::shared_ptr<Impl> m_obj;
};

}  // namespace mantissa::workflow
