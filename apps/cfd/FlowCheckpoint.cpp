// Checkpoint and restart of FlowSolver through mantissa::io (FlowCheckpoint.hpp).
#include <cfd/FlowCheckpoint.hpp>

#include <mantissa/core/Error.hpp>
#include <mantissa/core/LowPrecision.hpp>
#include <mantissa/io/FieldRef.hpp>

#include <cmath>
#include <cstdio>

namespace mantissa::cfd {

namespace {

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

}  // namespace

template <class S, class C>
std::string write_checkpoint(const io::CheckpointWriter& writer, const FlowSolver<S, C>& s,
                             io::Attributes attrs) {
  attrs.set("physics", checkpoint_physics)
      .set("cfd_dt", s.dt())
      .set("cfd_viscosity", s.config().viscosity)
      .set("cfd_storage", std::string(to_string(precision_traits<S>::precision)));
  if (s.dim() == 3)
    return writer.write(s.step_index(), s.time(), attrs,
                        {io::field_ref("u", s.u()), io::field_ref("v", s.v()), io::field_ref("w", s.w()),
                         io::field_ref("phi_stage1", s.phi(0)), io::field_ref("phi_stage2", s.phi(1))});
  return writer.write(s.step_index(), s.time(), attrs,
                      {io::field_ref("u", s.u()), io::field_ref("v", s.v()),
                       io::field_ref("phi_stage1", s.phi(0)), io::field_ref("phi_stage2", s.phi(1))});
}

template <class S, class C>
void read_checkpoint(const std::string& file, FlowSolver<S, C>& s) {
  io::CheckpointReader reader(file, s.decomposition().comm());
  std::vector<std::string> fields{"u", "v", "phi_stage1", "phi_stage2"};
  if (s.dim() == 3) fields.insert(fields.begin() + 2, "w");
  reader.validate_against(s.decomposition().grid(), {fields, checkpoint_physics});
  const auto& a = reader.attributes();
  const std::string what = "cfd: checkpoint '" + file + "'";
  // dt and viscosity come from the same deck numbers and are stored bitwise: a restart with
  // other values would be another run, not a continuation.
  if (a.get_real("cfd_dt") != s.dt())
    throw Error(what + " was written with dt " + number(a.get_real("cfd_dt")) + " but this run's is " +
                number(s.dt()) +
                " (cfd.dt, cfd.cfl, mesh.spacing); restart with the deck of the run that wrote it");
  if (a.get_real("cfd_viscosity") != s.config().viscosity)
    throw Error(what + " was written with viscosity " + number(a.get_real("cfd_viscosity")) +
                " but this run's is " + number(s.config().viscosity) + " (cfd.viscosity)");
  // read_field refuses a stored type that differs from the field's (u, v are Storage); say
  // which key that is first
  const std::string stored = a.get_string("cfd_storage");
  if (stored != to_string(precision_traits<S>::precision))
    throw Error(what + " holds the velocity in " + stored + " but this solver stores it in " +
                std::string(to_string(precision_traits<S>::precision)) +
                " (campaign.variants[].storage); restart with the same storage precision");
  reader.read_field("u", s.u());
  reader.read_field("v", s.v());
  if (s.dim() == 3) reader.read_field("w", s.w());
  reader.read_field("phi_stage1", s.phi(0));
  reader.read_field("phi_stage2", s.phi(1));
  s.restore(reader.step(), reader.time());
}

template std::string write_checkpoint(const io::CheckpointWriter&, const FlowSolver<double, double>&,
                                      io::Attributes);
template std::string write_checkpoint(const io::CheckpointWriter&, const FlowSolver<float, float>&,
                                      io::Attributes);
template void read_checkpoint(const std::string&, FlowSolver<double, double>&);
template void read_checkpoint(const std::string&, FlowSolver<float, float>&);

}  // namespace mantissa::cfd
