// Writes, per compute precision and for a 2D and a 3D model, everything the PyTorch oracle needs
// to rebuild and check one forward + backward of the surrogate: the configuration and weights
// (save_surrogate), the tile layout, the input fields, the targets, mantissa's outputs, its loss
// and parameter gradients.
//   usage: mantissa_surrogate_oracle_driver <output-directory>
#include <surrogates/Checkpoint.hpp>
#include <surrogates/Patches.hpp>

#include <hdf5.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <random>
#include <string>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

template <class V>
void write(hid_t g, const std::string& name, const std::vector<hsize_t>& dims, const V& view_host_data) {
  hid_t s = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t d = H5Dcreate2(g, name.c_str(), H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, view_host_data.data());
  H5Dclose(d);
  H5Sclose(s);
}

template <class T>
std::vector<double> to_host(const ms::FlatView<T>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.size());
}

template <class T>
void run(Precision p, bool shifted, const std::string& file, int dim = 2, bool positions = true) {
  ms::ModelConfig c;
  c.dim = dim;
  c.in_channels = 3;
  c.out_channels = 2;
  c.patch = 2;
  c.embed = 32;  // 16 channels per head: the width the AVX512-BF16 attention kernel takes
  c.heads = 2;
  c.layers = 2;
  c.mlp_hidden = 24;
  c.window = 2;
  c.shifted = shifted;
  c.position = shifted ? ms::PositionKind::learned : ms::PositionKind::sinusoidal;
  if (!positions) c.position = ms::PositionKind::none;
  c.global_patches = {8, 8, 1};
  if (dim == 3) {
    c.embed = 12;  // divisible by 2 * dim (sinusoidal encoding) and by the heads
    c.global_patches = {6, 6, 6};
  }
  ms::Model<T> model(c);
  // Two tiles at different global offsets: partial windows on every side. 2D: 5x3 patches;
  // 3D: 3x2x3 patches (x, y, z), z offsets differ too.
  const std::vector<std::array<std::int64_t, 3>> offsets =
      dim == 2 ? std::vector<std::array<std::int64_t, 3>>{{0, 0, 0}, {3, 4, 0}}
               : std::vector<std::array<std::int64_t, 3>>{{0, 0, 0}, {2, 3, 1}};
  const std::array<std::int64_t, 3> tile =
      dim == 2 ? std::array<std::int64_t, 3>{5, 3, 1} : std::array<std::int64_t, 3>{3, 2, 3};
  ms::TokenLayout layout(dim, tile, offsets, c.window);
  const std::int64_t B = 2, Z = tile[2] * c.patch_z(), H = tile[1] * c.patch, W = tile[0] * c.patch;
  ms::FieldBatch<double> fields("fields", B, c.in_channels, Z, H, W);
  ms::FieldBatch<double> target("target", B, c.out_channels, Z, H, W);
  auto hf = Kokkos::create_mirror_view(fields);
  auto ht = Kokkos::create_mirror_view(target);
  std::mt19937 gen(2026);
  std::normal_distribution<double> nd(0.0, 1.0);
  for (std::size_t i = 0; i < hf.size(); ++i) hf.data()[i] = nd(gen);
  for (std::size_t i = 0; i < ht.size(); ++i) ht.data()[i] = nd(gen);
  Kokkos::deep_copy(fields, hf);
  Kokkos::deep_copy(target, ht);
  auto tokens = ms::make_matrix<T>("tokens", layout.num_tokens(), c.in_features());
  auto ttok = ms::make_matrix<T>("target_tokens", layout.num_tokens(), c.out_features());
  ms::patchify(fields, c.patch, c.patch_z(), tokens);
  ms::patchify(target, c.patch, c.patch_z(), ttok);
  // One forward + backward of the mean squared error (the trainer's loss), no optimizer update.
  ms::Matrix<T> out;
  ms::Context ctx{p};
  model.zero_grad();
  model.forward(ctx, layout, tokens, out);
  const double count = double(ttok.size());
  auto dout = ms::make_matrix<T>("dout", out.extent(0), out.extent(1));
  double sse = 0.0;
  Kokkos::parallel_reduce(
      "oracle::mse", Kokkos::RangePolicy<ms::ExecSpace>(0, std::int64_t(out.size())),
      KOKKOS_LAMBDA(const std::int64_t k, double& acc) {
        const T e = out.data()[k] - ttok.data()[k];
        acc += double(e) * double(e);
        dout.data()[k] = T(2.0 / count) * e;
      },
      sse);
  model.backward(ctx, dout);
  Kokkos::fence();
  ms::FieldBatch<double> outf("out", B, c.out_channels, Z, H, W);
  ms::unpatchify(out, c.patch, c.patch_z(), outf);
  auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), outf);

  ms::save_surrogate<T>(file, {&model, nullptr, nullptr, nullptr}, true);
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "oracle", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  // [B, C, H, W] in 2D, [B, C, Z, H, W] in 3D.
  std::vector<hsize_t> fd{hsize_t(B), hsize_t(c.in_channels), hsize_t(H), hsize_t(W)};
  std::vector<hsize_t> od{hsize_t(B), hsize_t(c.out_channels), hsize_t(H), hsize_t(W)};
  if (dim == 3) {
    fd.insert(fd.begin() + 2, hsize_t(Z));
    od.insert(od.begin() + 2, hsize_t(Z));
  }
  write(g, "fields", fd, std::vector<double>(hf.data(), hf.data() + hf.size()));
  write(g, "target", od, std::vector<double>(ht.data(), ht.data() + ht.size()));
  write(g, "output", od, std::vector<double>(ho.data(), ho.data() + ho.size()));
  write(g, "loss", {1}, std::vector<double>{sse / count});
  std::vector<double> offs;
  for (const auto& o : offsets) {
    offs.insert(offs.end(), {double(o[0]), double(o[1])});
    if (dim == 3) offs.push_back(double(o[2]));
  }
  write(g, "tile_offsets", {hsize_t(B), hsize_t(dim)}, offs);
  hid_t gg = H5Gcreate2(g, "grads", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (const auto& prm : model.parameters()) {
    std::vector<hsize_t> dims(prm.shape.begin(), prm.shape.end());
    write(gg, prm.name, dims, to_host(prm.grad));
  }
  H5Gclose(gg);
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t t = H5Tcopy(H5T_C_S1);
  const std::string pname(mantissa::to_string(p));
  H5Tset_size(t, pname.size());
  hid_t a = H5Acreate2(g, "compute", t, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, pname.c_str());
  H5Aclose(a);
  H5Tclose(t);
  H5Sclose(s);
  H5Gclose(g);
  H5Fclose(f);
  std::printf("wrote %s (%dD, %s, %s windows, gemm path %s)\n", file.c_str(), dim, pname.c_str(),
              shifted ? "shifted" : "plain", std::string(ms::to_string(ms::gemm_path(p))).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    if (argc < 2) {
      std::fprintf(stderr, "usage: %s <output-directory>\n", argv[0]);
      rc = 2;
    } else {
      const std::string dir = argv[1];
      try {
        for (bool shifted : {false, true}) {
          const std::string tag = shifted ? "_shifted" : "_plain";
          run<double>(Precision::fp64, shifted, dir + "/fp64" + tag + ".h5");
          run<float>(Precision::fp32, shifted, dir + "/fp32" + tag + ".h5");
          run<float>(Precision::bf16, shifted, dir + "/bf16" + tag + ".h5");
          run<float>(Precision::fp16, shifted, dir + "/fp16" + tag + ".h5");
          const std::string tag3 = "_3d" + tag;
          run<double>(Precision::fp64, shifted, dir + "/fp64" + tag3 + ".h5", 3);
          run<float>(Precision::fp32, shifted, dir + "/fp32" + tag3 + ".h5", 3);
          run<float>(Precision::bf16, shifted, dir + "/bf16" + tag3 + ".h5", 3);
          run<float>(Precision::fp16, shifted, dir + "/fp16" + tag3 + ".h5", 3);
        }
        // surrogate.position: none (2D, shifted windows).
        run<double>(Precision::fp64, true, dir + "/fp64_nopos.h5", 2, false);
        run<float>(Precision::fp32, true, dir + "/fp32_nopos.h5", 2, false);
        run<float>(Precision::bf16, true, dir + "/bf16_nopos.h5", 2, false);
        run<float>(Precision::fp16, true, dir + "/fp16_nopos.h5", 2, false);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "oracle driver: %s\n", e.what());
        rc = 1;
      }
    }
  }
  MPI_Finalize();
  return rc;
}
