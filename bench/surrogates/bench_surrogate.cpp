// Surrogate speed: training step time and inference throughput (patches/s, GFLOP/s) per
// precision for a stated model, the identical PyTorch model on the same threads measured in the
// same run (bench_surrogate_torch.py), and the BLAS / oneDNN GEMM peak measured here too.
//   usage: bench_surrogate [n=128] [reps=3]      threads: OMP_NUM_THREADS
#include <surrogates/Dataset.hpp>
#include <surrogates/Patches.hpp>
#include <surrogates/Trainer.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

namespace ms = mantissa::surrogates;
using mantissa::Precision;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// GEMM peak: square products large enough to reach the library's steady state.
double blas_gflops(int n, int reps) {
  auto A = ms::make_matrix<float>("bench::A", n, n), B = ms::make_matrix<float>("bench::B", n, n),
       C = ms::make_matrix<float>("bench::C", n, n);
  Kokkos::deep_copy(A, 0.5f);
  Kokkos::deep_copy(B, 0.25f);
  ms::gemm<float>('N', 'T', 1.0f, A, B, 0.0f, C);
  const auto t0 = Clock::now();
  for (int r = 0; r < reps; ++r) ms::gemm<float>('N', 'T', 1.0f, A, B, 0.0f, C);
  return 2.0 * n * double(n) * n * reps / seconds_since(t0) / 1e9;
}
double onednn_gflops(int n, int reps) {
  if (!ms::onednn_available()) return 0.0;
  ms::Matrix<std::uint16_t> A("bench::A16", n, n), B("bench::B16", n, n);
  auto C = ms::make_matrix<float>("bench::C", n, n);
  Kokkos::deep_copy(A, std::uint16_t(0x3f00));
  Kokkos::deep_copy(B, std::uint16_t(0x3e80));
  ms::gemm_onednn_bf16('N', 'T', 1.0f, A, B, 0.0f, C);
  const auto t0 = Clock::now();
  for (int r = 0; r < reps; ++r) ms::gemm_onednn_bf16('N', 'T', 1.0f, A, B, 0.0f, C);
  return 2.0 * n * double(n) * n * reps / seconds_since(t0) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const int n = argc > 1 ? std::atoi(argv[1]) : 128;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    const int threads = Kokkos::DefaultExecutionSpace::concurrency();
    ms::ModelConfig c;
    c.dim = 2;
    c.in_channels = 3;
    c.out_channels = 2;
    c.patch = 4;
    c.embed = 256;
    c.heads = 8;
    c.layers = 6;
    c.mlp_hidden = 1024;
    c.window = 8;
    c.position = ms::PositionKind::learned;
    c.global_patches = {n / c.patch, n / c.patch, 1};
    const int batch = 2;
    std::printf(
        "surrogate bench: %s\n  grid %dx%d, %lld tokens per sample, training batch %d, %d threads (%s)\n",
        c.describe().c_str(), n, n, (long long)(c.global_patches[0] * c.global_patches[1]), batch, threads,
        Kokkos::DefaultExecutionSpace::name());
    ms::Dataset ds(3, 2, {n, n, 1});
    std::mt19937 gen(1);
    std::normal_distribution<double> nd(0.0, 1.0);
    for (int s = 0; s < batch; ++s) {
      std::vector<double> in(3 * n * n), out(2 * n * n);
      for (auto& v : in) v = nd(gen);
      for (auto& v : out) v = nd(gen);
      ds.add(in, out);
    }
    const auto norm = ds.normalization();
    const double blas = blas_gflops(1024, 5), dnnl = onednn_gflops(1024, 5);
    std::printf("  GEMM peak (1024^3): BLAS sgemm %.1f GFLOP/s, oneDNN bf16 %.1f GFLOP/s\n", blas, dnnl);

    std::map<std::string, double> train_s, infer_s, gemm_frac;
    for (Precision p :
         {Precision::fp64, Precision::fp32, Precision::bf16, Precision::fp16, Precision::fp8_e4m3}) {
      auto run = [&](auto tag) {
        using T = decltype(tag);
        ms::Model<T> model(c);
        ms::OptimizerConfig oc;
        ms::Trainer<T> trainer(model, oc, p, MPI_COMM_SELF);
        ms::TokenLayout layout, l1;
        ms::Matrix<T> in, out, in1, out1, pred;
        ds.make_batch({0, 1}, norm, c, layout, in, out);
        ds.make_batch({0}, norm, c, l1, in1, out1);
        trainer.step(layout, in, out);
        Kokkos::fence();
        auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) trainer.step(layout, in, out);
        Kokkos::fence();
        train_s[std::string(mantissa::to_string(p))] = seconds_since(t0) / reps;
        model.forward(ms::Context{p}, l1, in1, pred);
        Kokkos::fence();
        ms::reset_gemm_counters();
        t0 = Clock::now();
        for (int r = 0; r < reps; ++r) model.forward(ms::Context{p}, l1, in1, pred);
        Kokkos::fence();
        const double t = seconds_since(t0) / reps;
        infer_s[std::string(mantissa::to_string(p))] = t;
        const auto path = ms::gemm_path(p);
        const auto cnt = ms::gemm_counter(path);
        std::printf(
            "  %-9s train step %8.3f s   inference %8.4f s = %9.0f patches/s, %6.1f GFLOP/s (GEMM path %s, "
            "%lld calls)\n",
            std::string(mantissa::to_string(p)).c_str(), train_s[std::string(mantissa::to_string(p))], t,
            double(l1.num_tokens()) / t, model.forward_flops_per_token() * l1.num_tokens() / t / 1e9,
            std::string(ms::to_string(path)).c_str(), (long long)(cnt.calls / reps));
      };
      if (p == Precision::fp64)
        run(double{});
      else
        run(float{});
    }
    // GEMM share of the inference time in fp32: time the same GEMM shapes alone.
    {
      const std::int64_t N = c.global_patches[0] * c.global_patches[1];
      auto X = ms::make_matrix<float>("bench::X", N, 1024),
           W = ms::make_matrix<float>("bench::W", 1024, 1024),
           Y = ms::make_matrix<float>("bench::Y", N, 1024);
      Kokkos::deep_copy(X, 0.1f);
      Kokkos::deep_copy(W, 0.1f);
      ms::gemm<float>('N', 'T', 1.0f, X, W, 0.0f, Y);
      const auto t0 = Clock::now();
      for (int r = 0; r < 5; ++r) ms::gemm<float>('N', 'T', 1.0f, X, W, 0.0f, Y);
      const double g = 2.0 * N * 1024.0 * 1024.0 * 5 / seconds_since(t0) / 1e9;
      std::printf("  model-shaped GEMM (%lld x 1024 x 1024, fp32): %.1f GFLOP/s = %.0f%% of BLAS peak\n",
                  (long long)N, g, 100.0 * g / blas);
    }
    // The PyTorch peer, same model, same threads, same run.
    char cmd[2048];
    std::snprintf(
        cmd, sizeof(cmd),
        "%s %s '{\"threads\": %d, \"embed\": %d, \"heads\": %d, \"layers\": %d, \"window\": %d, \"patch\": "
        "%d, \"n\": %d, \"batch\": %d, \"mlp_hidden\": %d, \"in_channels\": 3, \"out_channels\": 2, "
        "\"reps\": %d}'",
        MANTISSA_BENCH_PYTHON, MANTISSA_BENCH_TORCH_SCRIPT, threads, c.embed, c.heads, c.layers, c.window,
        c.patch, n, batch, c.mlp_hidden, reps);
    std::FILE* pipe = popen(cmd, "r");
    char line[4096] = {0};
    std::string json;
    while (pipe && std::fgets(line, sizeof(line), pipe)) json += line;
    if (pipe) pclose(pipe);
    auto field = [&](const std::string& key) {
      const auto k = json.find("\"" + key + "\"");
      return k == std::string::npos ? -1.0 : std::atof(json.c_str() + json.find(':', k) + 1);
    };
    std::printf("  PyTorch (python3-torch, same model, %d threads):\n", threads);
    for (const char* p : {"fp32", "bf16"}) {
      const double tt = field(std::string(p) + "_train_s"), ti = field(std::string(p) + "_infer_s");
      std::printf(
          "  %-9s train step %8.3f s   inference %8.4f s   mantissa/PyTorch speed: train %.2fx, inference "
          "%.2fx\n",
          p, tt, ti, tt / train_s[p], ti / infer_s[p]);
    }
    std::printf("  mantissa bf16 vs own fp32: train %.2fx, inference %.2fx\n",
                train_s["fp32"] / train_s["bf16"], infer_s["fp32"] / infer_s["bf16"]);
  }
  MPI_Finalize();
  return 0;
}
