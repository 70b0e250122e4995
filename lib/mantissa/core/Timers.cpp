#include <mantissa/core/Error.hpp>
#include <mantissa/core/Json.hpp>
#include <mantissa/core/KokkosCompat.hpp>
#include <mantissa/core/Timers.hpp>

#include <fmt/format.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <limits>

namespace mantissa {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string region_label(const std::string& name) {
  return name.rfind("mantissa::", 0) == 0 ? name : "mantissa::" + name;
}

}  // namespace

Timers& Timers::global() {
  static Timers t;
  return t;
}

void Timers::start(const std::string& name) {
  MANTISSA_ASSERT(!name.empty() && name.find('/') == std::string::npos,
                  "timer name '" << name << "' must be non-empty and contain no '/'");
  if (m_fence && Kokkos::is_initialized()) mantissa::fence("mantissa::Timers::start");
  if (Kokkos::is_initialized()) Kokkos::Profiling::pushRegion(region_label(name));
  m_path = m_path.empty() ? name : m_path + "/" + name;
  if (m_entries.find(m_path) == m_entries.end()) {
    m_order.push_back(m_path);
    m_entries[m_path].path = m_path;
  }
  m_open.push_back({name, now()});
}

void Timers::stop(const std::string& name) {
  MANTISSA_ASSERT(!m_open.empty() && m_open.back().name == name,
                  "timer '" << name << "' stopped but the innermost open region is '"
                            << (m_open.empty() ? std::string("(none)") : m_open.back().name) << "'");
  if (m_fence && Kokkos::is_initialized()) mantissa::fence("mantissa::Timers::stop");
  const double dt = now() - m_open.back().start;
  if (Kokkos::is_initialized()) Kokkos::Profiling::popRegion();
  Entry& e = m_entries[m_path];
  e.min = e.count == 0 ? dt : std::min(e.min, dt);
  e.max = e.count == 0 ? dt : std::max(e.max, dt);
  e.total += dt;
  ++e.count;
  m_open.pop_back();
  const std::size_t slash = m_path.rfind('/');
  m_path = slash == std::string::npos ? "" : m_path.substr(0, slash);
}

void Timers::reset() {
  MANTISSA_ASSERT(m_open.empty(), "Timers::reset() with region '" << m_path << "' still open");
  m_order.clear();
  m_entries.clear();
}

std::vector<Timers::Entry> Timers::entries() const {
  std::vector<Entry> out;
  for (const auto& p : m_order) out.push_back(m_entries.at(p));
  return out;
}

std::vector<Timers::Row> Timers::summary(MPI_Comm comm) const {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // The union of region paths over ranks, in rank order: gather every rank's paths.
  std::string mine;
  for (const auto& p : m_order) mine += p + '\n';
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(size), displs(size, 0);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + lens[r - 1];
  std::string all(static_cast<std::size_t>(displs[size - 1] + lens[size - 1]), '\0');
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm);
  std::vector<std::string> paths;
  for (std::size_t pos = 0; pos < all.size();) {
    const std::size_t nl = all.find('\n', pos);
    std::string p = all.substr(pos, nl - pos);
    if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    pos = nl + 1;
  }
  const std::size_t n = paths.size();
  // Absent regions contribute nothing: +inf to min, -inf to max, 0 to sums.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> tmin(n, inf), tmax(n, -inf), tsum(n, 0.0), cmin(n, inf), cmax(n, -inf);
  std::vector<std::int64_t> count(n, 0), present(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = m_entries.find(paths[i]);
    if (it == m_entries.end() || it->second.count == 0) continue;
    tmin[i] = tmax[i] = tsum[i] = it->second.total;
    cmin[i] = it->second.min;
    cmax[i] = it->second.max;
    count[i] = it->second.count;
    present[i] = 1;
  }
  const int ni = static_cast<int>(n);
  MPI_Allreduce(MPI_IN_PLACE, tmin.data(), ni, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, cmin.data(), ni, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, tmax.data(), ni, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, cmax.data(), ni, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, tsum.data(), ni, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, count.data(), ni, MPI_INT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, present.data(), ni, MPI_INT64_T, MPI_SUM, comm);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < n; ++i) {
    if (present[i] == 0) continue;  // entered but never stopped anywhere
    Row r;
    r.path = paths[i];
    const std::size_t slash = r.path.rfind('/');
    r.name = slash == std::string::npos ? r.path : r.path.substr(slash + 1);
    r.depth = static_cast<int>(std::count(r.path.begin(), r.path.end(), '/'));
    r.ranks = static_cast<int>(present[i]);
    r.count = count[i];
    r.total_min = tmin[i];
    r.total_max = tmax[i];
    r.total_avg = tsum[i] / double(present[i]);
    r.call_min = cmin[i];
    r.call_max = cmax[i];
    rows.push_back(r);
  }
  return rows;
}

std::string Timers::table(const std::vector<Row>& rows) {
  std::size_t width = 6;
  for (const Row& r : rows) width = std::max(width, r.name.size() + 2 * static_cast<std::size_t>(r.depth));
  std::string out = fmt::format("{:<{}}  {:>8}  {:>11}  {:>11}  {:>11}  {:>9}\n", "region", width, "calls",
                                "min [s]", "avg [s]", "max [s]", "max/avg");
  for (const Row& r : rows) {
    const std::string name = std::string(2 * static_cast<std::size_t>(r.depth), ' ') + r.name;
    const double imbalance = r.total_avg > 0 ? r.total_max / r.total_avg : 1.0;
    out += fmt::format("{:<{}}  {:>8}  {:>11.4e}  {:>11.4e}  {:>11.4e}  {:>9.3f}\n", name, width, r.count,
                       r.total_min, r.total_avg, r.total_max, imbalance);
  }
  return out;
}

std::string Timers::json(const std::vector<Row>& rows, int ranks) const {
  json::Writer w;
  w.begin_object().field("ranks", ranks).field("fenced", m_fence).key("regions").begin_array();
  for (const Row& r : rows) {
    w.begin_object()
        .field("path", r.path)
        .field("name", r.name)
        .field("depth", r.depth)
        .field("ranks", r.ranks)
        .field("count", r.count)
        .field("total_min", r.total_min)
        .field("total_avg", r.total_avg)
        .field("total_max", r.total_max)
        .field("call_min", r.call_min)
        .field("call_max", r.call_max)
        .end_object();
  }
  w.end_array().end_object();
  return w.str();
}

ScopedTimer::ScopedTimer(const std::string& name, Timers& timers) : m_timers(timers), m_name(name) {
  m_timers.start(m_name);
}

ScopedTimer::~ScopedTimer() {
  m_timers.stop(m_name);
}

}  // namespace mantissa
