#include <mantissa/core/Error.hpp>
#include <mantissa/workflow/PrecisionSet.hpp>

#include <algorithm>

namespace mantissa::workflow {

PrecisionSet::PrecisionSet(std::initializer_list<std::pair<std::string, Precision>> roles) {
  for (const auto& r : roles) set(r.first, r.second);
}

bool PrecisionSet::has(const std::string& role) const {
  return std::any_of(m_roles.begin(), m_roles.end(), [&](const auto& r) { return r.first == role; });
}

Precision PrecisionSet::get(const std::string& role) const {
  for (const auto& r : m_roles)
    if (r.first == role) return r.second;
  throw Error("precision set '" + describe() + "' has no role '" + role + "'");
}

Precision PrecisionSet::get(const std::string& role, Precision fallback) const {
  for (const auto& r : m_roles)
    if (r.first == role) return r.second;
  return fallback;
}

void PrecisionSet::set(const std::string& role, Precision p) {
  for (auto& r : m_roles)
    if (r.first == role) {
      r.second = p;
      return;
    }
  m_roles.emplace_back(role, p);
}

std::string PrecisionSet::describe() const {
  std::string s;
  for (const auto& r : m_roles)
    s += (s.empty() ? "" : ", ") + r.first + " " + std::string(to_string(r.second));
  return s.empty() ? "(no roles)" : s;
}

bool PrecisionSet::operator==(const PrecisionSet& o) const {
  if (m_roles.size() != o.m_roles.size()) return false;
  for (const auto& r : m_roles)
    if (!o.has(r.first) || o.get(r.first) != r.second) return false;
  return true;
}

bool PrecisionTable::allows(const PrecisionSet& p) const {
  return std::any_of(combinations.begin(), combinations.end(), [&](const PrecisionSet& c) { return c == p; });
}

std::vector<Precision> PrecisionTable::choices(const std::string& role) const {
  std::vector<Precision> out;
  for (const Precision p : all_precisions())
    for (const auto& c : combinations)
      if (c.has(role) && c.get(role) == p) {
        out.push_back(p);
        break;
      }
  return out;
}

PrecisionSet PrecisionTable::complete(const PrecisionSet& given, const std::string& where) const {
  for (const auto& r : given.roles())
    if (std::find(roles.begin(), roles.end(), r.first) == roles.end())
      throw Error(where + ": this physics has no precision role '" + r.first + "'; its combinations are " +
                  describe());
  for (const auto& c : combinations) {
    bool agrees = true;
    for (const auto& r : given.roles()) agrees = agrees && c.get(r.first) == r.second;
    if (agrees) {
      PrecisionSet out = given;
      for (const auto& role : roles)
        if (!out.has(role)) out.set(role, c.get(role));
      return out;
    }
  }
  throw Error(where + ": " + given.describe() + " is not a combination this physics has; use one of " +
              describe());
}

PrecisionSet PrecisionTable::uniform(Precision p, const std::string& where) const {
  PrecisionSet s;
  for (const auto& role : roles) s.set(role, p);
  if (!allows(s))
    throw Error(where + ": " + s.describe() + " is not a combination this physics has; use one of " +
                describe());
  return s;
}

std::string PrecisionTable::describe() const {
  std::string head, body;
  for (const auto& r : roles) head += (head.empty() ? "" : "/") + r;
  for (const auto& c : combinations) {
    std::string one;
    for (const auto& r : roles) one += (one.empty() ? "" : "/") + std::string(to_string(c.get(r)));
    body += (body.empty() ? "" : ", ") + one;
  }
  return head + ": " + body;
}

}  // namespace mantissa::workflow
