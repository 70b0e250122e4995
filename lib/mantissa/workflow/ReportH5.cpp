#include <mantissa/core/Error.hpp>
#include <mantissa/io/DurableFile.hpp>
#include <mantissa/io/H5File.hpp>
#include <mantissa/workflow/ReportH5.hpp>

namespace mantissa::workflow {

// The file and its root group: io's handle layer (a failure names the file and the cause), under
// a temporary name until commit() (io::PendingFile: fsync, rename, fsync of the directory).
struct ReportH5::File {
  explicit File(const std::string& path) : out(path), file(io::H5File::create(out)) {}
  io::PendingFile out;
  io::H5File file;
};
// A group (`own`, or the file's root) or a dataset `dataset` in the group of `parent`.
struct ReportH5::Impl {
  io::H5Group own;
  const io::H5Group* group = nullptr;
  std::string dataset;
  std::shared_ptr<Impl> parent;  // keeps the group a dataset lies in open
};

ReportH5::ReportH5(std::shared_ptr<File> file, std::shared_ptr<Impl> obj)
    : m_file(std::move(file)), m_obj(std::move(obj)) {}

ReportH5 ReportH5::create(const std::string& path) {
  auto f = std::make_shared<File>(path);
  auto root = std::make_shared<Impl>();
  root->group = &f->file;
  return ReportH5(std::move(f), std::move(root));
}

ReportH5 ReportH5::group(const std::string& name) const {
  MANTISSA_ASSERT(m_obj->dataset.empty(), "ReportH5::group() on a dataset");
  auto g = std::make_shared<Impl>();
  g->own = m_obj->group->create_group(name);
  g->group = &g->own;
  return ReportH5(m_file, std::move(g));
}

ReportH5 ReportH5::dataset(const std::string& name, const std::vector<std::uint64_t>& shape,
                           const std::vector<double>& data) const {
  MANTISSA_ASSERT(m_obj->dataset.empty(), "ReportH5::dataset() on a dataset");
  m_obj->group->write<double>(name, std::vector<std::int64_t>(shape.begin(), shape.end()), data.data());
  auto d = std::make_shared<Impl>();
  d->group = m_obj->group;
  d->dataset = name;
  d->parent = m_obj;
  return ReportH5(m_file, std::move(d));
}

void ReportH5::attr(const std::string& name, double v) const {
  m_obj->group->set_on(m_obj->dataset, name, io::AttributeValue(v));
}
void ReportH5::attr(const std::string& name, std::int64_t v) const {
  m_obj->group->set_on(m_obj->dataset, name, io::AttributeValue(v));
}
void ReportH5::attr(const std::string& name, const std::string& v) const {
  m_obj->group->set_on(m_obj->dataset, name, io::AttributeValue(v));
}
void ReportH5::attr(const std::string& name, const std::vector<std::uint64_t>& shape,
                    const std::vector<double>& v) const {
  m_obj->group->set_array_on(m_obj->dataset, name, std::vector<std::int64_t>(shape.begin(), shape.end()), v);
}

void ReportH5::commit() {
  MANTISSA_ASSERT(m_file && m_obj && m_obj->group == &m_file->file,
                  "ReportH5::commit() on a group or dataset");
  m_obj.reset();
  m_file->file.close();  // throws naming the file when the data could not be written
  m_file->out.commit();
}

}  // namespace mantissa::workflow
