#pragma once
// Accuracy metrics of the campaign, as free functions so that each can be unit tested on
// hand-made inputs. Field metrics are collective over a communicator and work on host copies
// of the owned points (the campaign keeps reference snapshots in host memory, not on the
// device); their sums are exact (core/ExactSum.hpp), so a run and its resumed twin give
// identical bits at any rank count.
// Definitions are spelled out in docs/user-guide.md ("Metrics").
#include <mantissa/mesh/Field.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace mantissa::workflow {

// Host copy of a Field<double> with its ghost layers (only owned points are ever read).
struct HostField {
  Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace> view;
  std::array<int, 3> ghost{0, 0, 0};
  std::array<std::int64_t, 3> extent{0, 0, 0};
  std::array<std::int64_t, 3> offset{0, 0, 0};
};
HostField to_host(const Field<double>& f, const std::string& label);
// Copies a host field back into a device field of the same shape.
void from_host(const HostField& h, Field<double>& f);

struct FieldError {
  double rel_l2 = 0.0;   // ||test - ref||_2 / ||ref||_2 over owned points of all ranks
  double max_abs = 0.0;  // max |test - ref|
  double ref_l2 = 0.0;   // ||ref||_2 (for context)
  double ref_max = 0.0;  // max |ref|
};
// rel_l2 is 0 when both are zero and +inf when only ref is zero; a NaN anywhere makes rel_l2
// and max_abs NaN (never hidden). sample_stride > 1 uses every stride-th point per axis (the
// hybrid indicator's "sample of the domain").
FieldError field_error(MPI_Comm comm, const HostField& test, const HostField& ref, int sample_stride = 1);

// Receiver traces (the same on every rank; no communication).
double relative_l2(const std::vector<double>& test, const std::vector<double>& ref);
double max_abs_error(const std::vector<double>& test, const std::vector<double>& ref);

struct CrossCorrelation {
  double peak = 0.0;     // max over lags of the normalized cross-correlation, in [-1, 1]
  std::int64_t lag = 0;  // samples; > 0 means `test` arrives later than `ref`
  // worst_receiver_correlation only: the receiver with the smallest peak (-1: none counted)
  // and its reference trace's L2 norm over the largest receiver's
  std::int64_t receiver = -1;
  double signal = 0.0;
};
// Normalized cross-correlation c(l) = sum_t test[t + l] ref[t] / (||test|| ||ref||) over
// |l| <= max_lag. Two zero traces correlate perfectly (peak 1, lag 0); one zero trace gives 0.
CrossCorrelation cross_correlation(const std::vector<double>& test, const std::vector<double>& ref,
                                   std::int64_t max_lag);

// Over receivers (test[j], ref[j]: receiver j's traces): the smallest correlation peak (NaN if
// any is NaN) and the largest |lag| of any peak, among the receivers the wave reaches, i.e.
// whose reference trace has an L2 norm of at least min_signal times the largest receiver's.
// The others hold only the scheme's numerical precursor (1e-17 and smaller), which 16-bit
// storage rounds to exact zeros: their correlation says nothing about accuracy. Peak 1, lag 0
// when no receiver is left. receiver and signal name the receiver of the smallest peak: a weak
// one (a wave's first onset at the end of the run) can hold less signal than a surrogate's
// noise, and the report says so.
CrossCorrelation worst_receiver_correlation(const std::vector<std::vector<double>>& test,
                                            const std::vector<std::vector<double>>& ref, std::int64_t max_lag,
                                            double min_signal = 1e-6);

// (e - e0) / |e0|; 0 when both are 0, +-inf when only e0 is 0.
double energy_drift(double e0, double e);

// First time at which error > threshold (NaN counts as passing it); empty when never.
std::optional<double> threshold_crossing(const std::vector<double>& times, const std::vector<double>& errors,
                                         double threshold);

}  // namespace mantissa::workflow
