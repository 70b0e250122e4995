#pragma once
// What a physics adds to the campaign's report (report.json, report.md and files of its own in
// the run directory), registered with the physics (Registry.hpp). The generic report (Report.cpp)
// writes what every physics has: fields compared against the reference, energy, speed, the
// surrogate; a section adds what only its physics knows (seismic: the shots, the receivers,
// receiver misfit and cross-correlation columns, gathers.h5). Every hook has a default that adds
// nothing. Rank 0 calls them while it writes the report.
#include <mantissa/core/Json.hpp>
#include <mantissa/workflow/Results.hpp>

#include <string>
#include <vector>

namespace mantissa::workflow {

class Campaign;

class ReportSection {
 public:
  virtual ~ReportSection() = default;

  // report.json: keys appended to the "campaign" object, then to the "outputs" object (files
  // this section writes, or null).
  virtual void campaign_json(json::Writer& /*j*/, const Campaign& /*c*/) const {}
  virtual void outputs_json(json::Writer& /*j*/, const Campaign& /*c*/) const {}

  // report.md: columns of the main table after "max error" (headers, then one row of cells per
  // variant, as many as headers); a paragraph after the context; a legend after the table.
  virtual std::vector<std::string> table_columns() const { return {}; }
  virtual std::vector<std::string> table_cells(const VariantResult& /*r*/) const { return {}; }
  virtual std::string md_intro(const Campaign& /*c*/) const { return ""; }
  virtual std::string md_legend() const { return ""; }

  // Files of its own in the run directory `dir` (rank 0, before report.md and report.json;
  // each written under a temporary name and renamed). Returns their names, for the end-of-run
  // message.
  virtual std::vector<std::string> write_files(const Campaign& /*c*/, const std::string& /*dir*/) const {
    return {};
  }
};

}  // namespace mantissa::workflow
