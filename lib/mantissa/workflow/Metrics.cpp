#include <mantissa/core/Error.hpp>
#include <mantissa/core/ExactSum.hpp>
#include <mantissa/workflow/Metrics.hpp>

#include <cmath>
#include <limits>

namespace mantissa::workflow {

HostField to_host(const Field<double>& f, const std::string& label) {
  HostField h;
  h.view = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label), f.view().extent(0), f.view().extent(1),
      f.view().extent(2));
  Kokkos::deep_copy(h.view, f.view());
  h.ghost = f.ghosts();
  h.extent = f.extent();
  h.offset = f.offset();
  return h;
}

void from_host(const HostField& h, Field<double>& f) {
  MANTISSA_ASSERT(h.view.extent(0) == f.view().extent(0) && h.view.extent(1) == f.view().extent(1) &&
                      h.view.extent(2) == f.view().extent(2),
                  "from_host: shape mismatch for '" << f.label() << "'");
  Kokkos::deep_copy(f.view(), h.view);
}

FieldError field_error(MPI_Comm comm, const HostField& test, const HostField& ref, int sample_stride) {
  MANTISSA_ASSERT(test.extent == ref.extent && test.ghost == ref.ghost,
                  "field_error: fields differ in shape");
  MANTISSA_ASSERT(sample_stride >= 1, "field_error: sample stride " << sample_stride);
  // Sample on the global lattice (global index divisible by the stride) so that the sample
  // does not depend on the rank count.
  // The sums are exact (core/ExactSum.hpp): the same bits at any rank count, so a run
  // resumed at another rank count reports the numbers of an uninterrupted one.
  ExactAccumulator local[2];    // sum diff^2, sum ref^2
  double lmax[2] = {0.0, 0.0};  // max |diff|, max |ref|
  bool nan = false;
  const auto& g = ref.ghost;
  for (std::int64_t k = 0; k < ref.extent[2]; ++k) {
    if ((ref.offset[2] + k) % sample_stride) continue;
    for (std::int64_t j = 0; j < ref.extent[1]; ++j) {
      if ((ref.offset[1] + j) % sample_stride) continue;
      for (std::int64_t i = 0; i < ref.extent[0]; ++i) {
        if ((ref.offset[0] + i) % sample_stride) continue;
        const double r = ref.view(k + g[2], j + g[1], i + g[0]);
        const double d = test.view(k + g[2], j + g[1], i + g[0]) - r;
        if (std::isnan(d)) nan = true;
        local[0].add(d * d);
        local[1].add(r * r);
        lmax[0] = std::fmax(lmax[0], std::fabs(d));
        lmax[1] = std::fmax(lmax[1], std::fabs(r));
      }
    }
  }
  double global[2], gmax[2];
  int nan_local = nan ? 1 : 0, nan_any = 0;
  exact_allreduce(local, global, 2, comm);
  MPI_Allreduce(lmax, gmax, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&nan_local, &nan_any, 1, MPI_INT, MPI_MAX, comm);
  FieldError e;
  e.ref_l2 = std::sqrt(global[1]);
  e.ref_max = gmax[1];
  if (nan_any) {
    e.rel_l2 = e.max_abs = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  e.max_abs = gmax[0];
  const double diff = std::sqrt(global[0]);
  if (diff == 0.0)
    e.rel_l2 = 0.0;
  else
    e.rel_l2 = e.ref_l2 > 0.0 ? diff / e.ref_l2 : std::numeric_limits<double>::infinity();
  return e;
}

namespace {
void check_sizes(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  MANTISSA_ASSERT(a.size() == b.size(),
                  what << ": traces of " << a.size() << " and " << b.size() << " samples");
}
}  // namespace

double relative_l2(const std::vector<double>& test, const std::vector<double>& ref) {
  check_sizes(test, ref, "relative_l2");
  double d = 0.0, r = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    d += (test[i] - ref[i]) * (test[i] - ref[i]);
    r += ref[i] * ref[i];
  }
  if (std::isnan(d)) return d;
  if (d == 0.0) return 0.0;
  return r > 0.0 ? std::sqrt(d / r) : std::numeric_limits<double>::infinity();
}

double max_abs_error(const std::vector<double>& test, const std::vector<double>& ref) {
  check_sizes(test, ref, "max_abs_error");
  double m = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(test[i] - ref[i]);
    if (std::isnan(d)) return d;
    m = std::fmax(m, d);
  }
  return m;
}

CrossCorrelation cross_correlation(const std::vector<double>& test, const std::vector<double>& ref,
                                   std::int64_t max_lag) {
  check_sizes(test, ref, "cross_correlation");
  MANTISSA_ASSERT(max_lag >= 0, "cross_correlation: negative max lag");
  double nt = 0.0, nr = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    nt += test[i] * test[i];
    nr += ref[i] * ref[i];
  }
  CrossCorrelation best;
  if (std::isnan(nt)) {
    best.peak = nt;
    return best;
  }
  if (nt == 0.0 && nr == 0.0) {
    best.peak = 1.0;
    return best;
  }
  if (nt == 0.0 || nr == 0.0) return best;
  if (test == ref) {  // identical traces: exactly 1 at lag 0, not 1 - 1 ulp from rounding
    best.peak = 1.0;
    return best;
  }
  const double norm = std::sqrt(nt * nr);
  const auto n = static_cast<std::int64_t>(ref.size());
  best.peak = -std::numeric_limits<double>::infinity();
  // Lag 0 first, then growing |lag|, so that ties keep the smallest shift.
  for (std::int64_t a = 0; a <= max_lag && a < n; ++a) {
    for (int sign : {1, -1}) {
      if (a == 0 && sign < 0) continue;
      const std::int64_t l = sign * a;
      double c = 0.0;
      for (std::int64_t t = 0; t < n; ++t) {
        const std::int64_t s = t + l;
        if (s >= 0 && s < n) c += test[static_cast<std::size_t>(s)] * ref[static_cast<std::size_t>(t)];
      }
      c /= norm;
      if (c > best.peak) {
        best.peak = c;
        best.lag = l;
      }
    }
  }
  return best;
}

CrossCorrelation worst_receiver_correlation(const std::vector<std::vector<double>>& test,
                                            const std::vector<std::vector<double>>& ref, std::int64_t max_lag,
                                            double min_signal) {
  MANTISSA_ASSERT(test.size() == ref.size(),
                  "worst_receiver_correlation: " << test.size() << " and " << ref.size() << " receivers");
  std::vector<double> norm(ref.size(), 0.0);
  double max_norm = 0.0;
  for (std::size_t j = 0; j < ref.size(); ++j) {
    double s2 = 0.0;
    for (double v : ref[j]) s2 += v * v;
    norm[j] = std::sqrt(s2);
    max_norm = std::fmax(max_norm, norm[j]);
  }
  CrossCorrelation worst;
  worst.peak = 1.0;
  for (std::size_t j = 0; j < ref.size(); ++j) {
    if (norm[j] < min_signal * max_norm) continue;
    const auto cc = cross_correlation(test[j], ref[j], max_lag);
    if (worst.receiver < 0 || (!std::isnan(worst.peak) && (cc.peak < worst.peak || std::isnan(cc.peak)))) {
      worst.peak = cc.peak;
      worst.receiver = std::int64_t(j);
      worst.signal = norm[j] / max_norm;
    }
    if (std::llabs(cc.lag) > std::llabs(worst.lag)) worst.lag = cc.lag;
  }
  return worst;
}

double energy_drift(double e0, double e) {
  if (e == e0) return 0.0;
  if (e0 == 0.0)
    return e > 0.0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  return (e - e0) / std::fabs(e0);
}

std::optional<double> threshold_crossing(const std::vector<double>& times, const std::vector<double>& errors,
                                         double threshold) {
  MANTISSA_ASSERT(times.size() == errors.size(), "threshold_crossing: sizes differ");
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (std::isnan(errors[i]) || errors[i] > threshold) return times[i];
  }
  return std::nullopt;
}

}  // namespace mantissa::workflow
