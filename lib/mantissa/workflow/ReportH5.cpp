#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/ReportH5.hpp>
#include <mantissa/workflow/detail/H5.hpp>

#include <filesystem>

namespace mantissa::workflow {

struct ReportH5::Impl {
  detail::H5Handle handle;
};
struct ReportH5::File {
  std::string path;
  std::shared_ptr<Impl> root;
};

ReportH5::ReportH5(std::shared_ptr<File> file, std::shared_ptr<Impl> obj)
    : m_file(std::move(file)), m_obj(std::move(obj)) {}

ReportH5 ReportH5::create(const std::string& path) {
  auto f = std::make_shared<File>();
  f->path = path;
  f->root = std::make_shared<Impl>(Impl{detail::h5_create(path + ".tmp")});
  auto root = f->root;
  return ReportH5(std::move(f), std::move(root));
}

ReportH5 ReportH5::group(const std::string& name) const {
  return ReportH5(m_file, std::make_shared<Impl>(Impl{detail::h5_group(m_obj->handle.id(), name)}));
}

ReportH5 ReportH5::dataset(const std::string& name, const std::vector<std::uint64_t>& shape,
                           const std::vector<double>& data) const {
  detail::h5_write(m_obj->handle.id(), name, shape, data.data());
  detail::H5Handle ds(H5Dopen2(m_obj->handle.id(), name.c_str(), H5P_DEFAULT), H5Dclose);
  return ReportH5(m_file, std::make_shared<Impl>(Impl{std::move(ds)}));
}

void ReportH5::attr(const std::string& name, double v) const {
  detail::h5_attr(m_obj->handle.id(), name, v);
}
void ReportH5::attr(const std::string& name, std::int64_t v) const {
  detail::h5_attr(m_obj->handle.id(), name, v);
}
void ReportH5::attr(const std::string& name, const std::string& v) const {
  detail::h5_attr(m_obj->handle.id(), name, v);
}
void ReportH5::attr(const std::string& name, const std::vector<std::uint64_t>& shape,
                    const std::vector<double>& v) const {
  detail::h5_attr(m_obj->handle.id(), name, shape, v);
}

void ReportH5::commit() {
  MANTISSA_ASSERT(m_file && m_obj == m_file->root, "ReportH5::commit() on a group or dataset");
  m_obj.reset();
  m_file->root.reset();  // closes the file (groups and datasets still open keep it alive)
  std::error_code ec;
  std::filesystem::rename(m_file->path + ".tmp", m_file->path, ec);
  if (ec) throw Error("cannot rename '" + m_file->path + ".tmp' to '" + m_file->path + "': " + ec.message());
}

}  // namespace mantissa::workflow
