// The GPU energy meter (NVML / AMD SMI loaded at run time): what it says when no library is
// there, and what it measures through a fake NVML built beside this test (fake_nvml.cpp).
#include <mantissa/workflow/Machine.hpp>
#include <mantissa/workflow/detail/GpuEnergy.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

namespace mwd = mantissa::workflow::detail;

namespace {
using set_fn = void (*)(int, int, int, unsigned long long);
const std::string fake = MANTISSA_FAKE_NVML;
const std::string no_nvml = "/nonexistent/libnvidia-ml.so.1", no_amd = "/nonexistent/libamd_smi.so";

// The fake's state setter (the same library instance GpuEnergy then opens).
set_fn fake_set() {
  static void* h = dlopen(fake.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(h, nullptr) << dlerror();
  return h ? reinterpret_cast<set_fn>(dlsym(h, "mantissa_fake_nvml_set")) : nullptr;
}
bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}
}  // namespace

TEST(GpuEnergy, NoLibraryIsNotMeasuredWithTheReason) {
  mwd::GpuEnergy g(no_nvml, no_amd);
  EXPECT_FALSE(g.available());
  EXPECT_EQ(g.joules(), -1.0);
  EXPECT_EQ(g.source().rfind("not measured: ", 0), 0u) << g.source();
  EXPECT_TRUE(contains(g.source(), no_nvml + " not loadable")) << g.source();
  EXPECT_TRUE(contains(g.source(), no_amd + " not loadable")) << g.source();
}

TEST(GpuEnergy, FakeNvmlIsMeasuredAndSummedOverGpus) {
  auto set = fake_set();
  ASSERT_NE(set, nullptr);
  set(0, 2, 0, 1000);  // GPU 0 at 1 J, GPU 1 at 2 J since "driver load"
  mwd::GpuEnergy g(fake, no_amd);
  ASSERT_TRUE(g.available()) << g.source();
  EXPECT_TRUE(contains(g.source(), "nvmlDeviceGetTotalEnergyConsumption")) << g.source();
  EXPECT_TRUE(contains(g.source(), "2 GPU(s)")) << g.source();
  EXPECT_TRUE(contains(g.source(), "Fake H200, Fake H200 (second)")) << g.source();
  EXPECT_DOUBLE_EQ(g.joules(), 0.0);
  set(0, 2, 0, 4000);  // now 4 J and 8 J: 3 J + 6 J since the meter started
  EXPECT_DOUBLE_EQ(g.joules(), 9.0);
  set(0, 2, 3, 5000);  // the counter stops answering: no number rather than a wrong one
  EXPECT_EQ(g.joules(), -1.0);
}

TEST(GpuEnergy, FakeNvmlFailuresSayWhy) {
  auto set = fake_set();
  ASSERT_NE(set, nullptr);
  set(9, 1, 0, 1000);
  {
    mwd::GpuEnergy g(fake, no_amd);
    EXPECT_FALSE(g.available());
    EXPECT_TRUE(contains(g.source(), "NVML init failed (Driver Not Loaded)")) << g.source();
  }
  set(0, 1, 3, 1000);
  {
    mwd::GpuEnergy g(fake, no_amd);
    EXPECT_FALSE(g.available());
    EXPECT_TRUE(contains(g.source(), "GPU 0 has no energy counter (Not Supported")) << g.source();
  }
  set(0, 0, 0, 1000);
  {
    mwd::GpuEnergy g(fake, no_amd);
    EXPECT_FALSE(g.available());
    EXPECT_TRUE(contains(g.source(), "NVML sees no GPU")) << g.source();
  }
}

// A library that loads but is not NVML (here: the C library) is declined, not called.
TEST(GpuEnergy, WrongLibraryIsDeclined) {
  mwd::GpuEnergy g("libc.so.6", no_amd);
  EXPECT_FALSE(g.available());
  EXPECT_TRUE(contains(g.source(), "lacks the NVML entry points")) << g.source();
}

// The campaign's meter: with neither RAPL nor a GPU meter it says "not measured" and why (the
// GPU part included); with one of them its source names what it reads.
TEST(GpuEnergy, EnergyMeterNamesTheGpuMeter) {
  mantissa::workflow::EnergyMeter m(MPI_COMM_WORLD);
  const std::string s = m.source();
  const bool gpu = mwd::gpu_energy().available();
  if (!m.available()) {
    EXPECT_EQ(s.rfind("not measured", 0), 0u) << s;
    EXPECT_TRUE(contains(s, "GPU not measured: ")) << s;
    EXPECT_FALSE(gpu);
  } else {
    EXPECT_TRUE(gpu ? contains(s, "GPU(s) of the node") : contains(s, "RAPL")) << s;
    m.start();
    EXPECT_GE(m.joules(), 0.0);
  }
}
