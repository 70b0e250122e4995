// What a subnormal operand costs this CPU (issue 11: why keeping subnormals cost the campaign's
// fp32 variant 5-15% on the AMD machine of docs/performance.md, where the issue measured 3-6x).
//
// Times, in one run on one thread, the same fp32 loops on data whose values are normal and on
// the same data scaled into the subnormal range, each with the subnormal mode kept (IEEE) and
// flushed (FTZ+DAZ, core/FloatEnv), and prints ns per element and the slowdown of subnormal
// against normal data in each mode. Loops (L1-resident 4096-element arrays swept many times, so
// memory plays no part; compiled with the project's flags, vectorised):
// - axpy: o <- a x + y, with a = 0.5 (subnormal inputs and subnormal results);
// - stencil: the 1D 9-point leapfrog of the seismic kernel's x pass, q <- 2 p - q + m L p;
// - 5% subnormal: the stencil on normal data whose last 5% are subnormal (the campaign's census
//   found 3-9% of the fp32 values subnormal, in the region ahead of the front);
// - fp64 stencil on values in fp64's subnormal range, the peer (same operations, other width).
// Normal and subnormal data are timed in alternation, pair by pair, in this thread's CPU time
// (a shared machine: the two samples of a pair see the same interference); printed: the best
// sample of each and the median [range] of the per-pair slowdowns.
//
// Usage: bench_core_subnormals [sweeps=500] [pairs=21]
#include <mantissa/core/FloatEnv.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <random>
#include <vector>

namespace {

constexpr int n = 4096, R = 4;

template <class T>
struct Data {
  std::vector<T> x, y, p, q, o, m;
};

// Values in [0.5, 1) x scale with random signs; the last `fraction` of each array (all of it when
// 1) times `tiny`: one contiguous run, as the wave's tail ahead of the front is a region.
template <class T>
Data<T> make_data(T scale, T tiny, double fraction, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.0), pick(0.0, 1.0);
  Data<T> d;
  auto fill = [&](std::vector<T>& v, int len) {
    v.resize(std::size_t(len));
    const int first_tiny = int(std::lround((1.0 - fraction) * len));
    for (int i = 0; i < len; ++i) {
      const double s = pick(rng) < 0.5 ? -1.0 : 1.0;
      v[std::size_t(i)] = T(s * u(rng)) * scale * (i >= first_tiny ? tiny : T(1));
    }
  };
  fill(d.x, n);
  fill(d.y, n);
  fill(d.p, n + 2 * R);
  fill(d.q, n);
  d.o.assign(std::size_t(n), T(0));
  d.m.assign(std::size_t(n), T(0.1));
  return d;
}

// Out of place, so that every sweep sees the same operands.
template <class T>
void axpy(Data<T>& d) {
  T* __restrict o = d.o.data();
  const T* __restrict y = d.y.data();
  const T* __restrict x = d.x.data();
  const T a = T(0.5);
  for (int i = 0; i < n; ++i) o[i] = a * x[i] + y[i];
}

// The seismic x pass (Fornberg's 8th-order weights on a unit grid) and the leapfrog,
// o <- 2 p - q + m L p, out of place so that every sweep sees the same operands (subnormal
// inputs give subnormal results).
template <class T>
void stencil(Data<T>& d) {
  const T c[R + 1] = {T(-205.0 / 72.0), T(8.0 / 5.0), T(-1.0 / 5.0), T(8.0 / 315.0), T(-1.0 / 560.0)};
  const T* __restrict p = d.p.data() + R;
  const T* __restrict q = d.q.data();
  T* __restrict o = d.o.data();
  const T* __restrict m = d.m.data();
  for (int i = 0; i < n; ++i) {
    T l = c[0] * p[i];
    for (int s = 1; s <= R; ++s) l = l + c[s] * (p[i - s] + p[i + s]);
    o[i] = T(2) * p[i] - q[i] + m[i] * l;
  }
}

// This thread's CPU time: on a shared machine it leaves out the time other processes ran.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// One sample: `sweeps` sweeps of f over d, ns per element in this thread's CPU time.
template <class T, class F>
double sample_ns(Data<T>& d, F f, int sweeps) {
  const double t0 = thread_seconds();
  for (int s = 0; s < sweeps; ++s) f(d);
  return 1e9 * (thread_seconds() - t0) / (double(sweeps) * n);
}

// Normal and subnormal data timed in alternation, pair by pair (the machine is shared: a pair's
// two samples see the same interference), after one untimed pair: the best of each, and the
// median and range of the per-pair slowdown subnormal / normal.
struct Pairs {
  double normal = 1e30, sub = 1e30, median = 0.0, lo = 0.0, hi = 0.0;
};
// Both data sets are copied into the same arrays before their samples (untimed), so that the
// two run at the same addresses: otherwise the arrays' relative placement (4 KiB aliasing between
// loads and stores) changes the speed by more than the subnormals do.
template <class T>
void load(Data<T>& work, const Data<T>& from) {
  std::copy(from.x.begin(), from.x.end(), work.x.begin());
  std::copy(from.y.begin(), from.y.end(), work.y.begin());
  std::copy(from.p.begin(), from.p.end(), work.p.begin());
  std::copy(from.q.begin(), from.q.end(), work.q.begin());
}

template <class T, class F>
Pairs time_pairs(const Data<T>& normal, const Data<T>& sub, F f, int sweeps, int pairs, T& sink) {
  Pairs p;
  std::vector<double> ratio;
  Data<T> work = normal;
  for (int r = 0; r <= pairs; ++r) {
    load(work, normal);
    const double a = sample_ns(work, f, sweeps);
    sink += work.o[0];
    load(work, sub);
    const double b = sample_ns(work, f, sweeps);
    sink += work.o[0];
    if (r == 0) continue;
    p.normal = std::min(p.normal, a);
    p.sub = std::min(p.sub, b);
    ratio.push_back(b / a);
  }
  std::sort(ratio.begin(), ratio.end());
  p.median = ratio[ratio.size() / 2];
  p.lo = ratio.front();
  p.hi = ratio.back();
  return p;
}

// Share of the values of v that are subnormal.
template <class T>
double subnormal_share(const std::vector<T>& v) {
  long c = 0;
  for (const T e : v) c += std::fpclassify(e) == FP_SUBNORMAL;
  return double(c) / double(v.size());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mantissa;
  const int sweeps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 500;
  const int pairs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 21;
  float sink = 0.0f;
  double sink64 = 0.0;
  // fp32: normal values ~1e-3, subnormal ones ~1e-3 x 1e-36 = 1e-39 (fp32's smallest normal is
  // 1.18e-38); fp64: ~1e-3 x 1e-306 = 1e-309 (smallest normal 2.2e-308).
  const auto n32 = make_data<float>(1e-3f, 1.0f, 0.0, 1), s32 = make_data<float>(1e-3f, 1e-36f, 1.0, 1),
             sp32 = make_data<float>(1e-3f, 1e-36f, 0.05, 1);
  const auto n64 = make_data<double>(1e-3, 1.0, 0.0, 1), s64 = make_data<double>(1e-3, 1e-306, 1.0, 1);
  struct Case {
    const char* name;
    double share;
    Pairs mode[2];  // keep, flush
  };
  Case cases[4] = {{"fp32 axpy", subnormal_share(s32.x), {}},
                   {"fp32 stencil", subnormal_share(s32.p), {}},
                   {"fp32 stencil, 5% subn.", subnormal_share(sp32.p), {}},
                   {"fp64 stencil", subnormal_share(s64.p), {}}};
  ThreadFloatEnv seen[2];
  for (int m = 0; m < 2; ++m) {
    set_this_thread_float_env(m == 0 ? SubnormalMode::keep : SubnormalMode::flush);
    seen[m] = this_thread_float_env();
    cases[0].mode[m] = time_pairs(n32, s32, axpy<float>, sweeps, pairs, sink);
    cases[1].mode[m] = time_pairs(n32, s32, stencil<float>, sweeps, pairs, sink);
    cases[2].mode[m] = time_pairs(n32, sp32, stencil<float>, sweeps, pairs, sink);
    cases[3].mode[m] = time_pairs(n64, s64, stencil<double>, sweeps, pairs, sink64);
  }
  set_this_thread_float_env(SubnormalMode::keep);
  std::printf(
      "subnormal cost, 1 thread, %d-element L1-resident arrays, %d pairs of samples of %d sweeps, thread CPU "
      "time; MXCSR read back: keep FTZ %d DAZ %d, flush FTZ %d DAZ %d\n",
      n, pairs, sweeps, int(seen[0].flush_to_zero), int(seen[0].denormals_are_zero),
      int(seen[1].flush_to_zero), int(seen[1].denormals_are_zero));
  std::printf("%-30s %-46s %-46s\n", "", "subnormals kept (IEEE)", "flushed (FTZ+DAZ)");
  std::printf("%-30s %-46s %-46s\n", "loop (subnormal share)",
              "normal / subnormal best, slowdown median [range]",
              "normal / subnormal best, slowdown median [range]");
  for (const auto& c : cases) {
    char label[64];
    std::snprintf(label, sizeof label, "%s (%.0f%%)", c.name, 100.0 * c.share);
    std::printf("%-30s", label);
    for (const auto& p : c.mode)
      std::printf(" %6.3f / %6.3f ns, %5.2fx [%4.2f-%5.2f]     ", p.normal, p.sub, p.median, p.lo, p.hi);
    std::printf("\n");
  }
  std::printf("(checksums %g %g)\n", double(sink), sink64);
  return 0;
}
