// Surrogate checkpoints: resuming from a file continues training exactly as if uninterrupted
// (weights, AdamW moments and step, fp8 amax histories all restored), and files that do not fit
// the deck are refused with a message naming the key or tensor and both sizes.
#include <surrogates/Checkpoint.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

namespace ms = mantissa::surrogates;
using mantissa::Precision;

namespace {

ms::ModelConfig config(int embed = 16) {
  ms::ModelConfig c;
  c.patch = 2;
  c.embed = embed;
  c.heads = 2;
  c.layers = 2;
  c.mlp_hidden = 24;
  c.window = 2;
  c.shifted = true;
  c.position = ms::PositionKind::learned;
  c.global_patches = {4, 4, 1};
  return c;
}

struct Data {
  ms::Dataset ds{3, 2, {8, 8, 1}};
  ms::Normalization norm;
  Data() {
    std::mt19937 gen(8);
    std::normal_distribution<double> nd(0.0, 1.0);
    for (int s = 0; s < 6; ++s) {
      std::vector<double> in(3 * 64), out(2 * 64);
      for (auto& v : in) v = nd(gen);
      for (auto& v : out) v = nd(gen);
      ds.add(in, out);
    }
    norm = ds.normalization();
  }
  void step(ms::Trainer<float>& t, const ms::ModelConfig& c, int k) {
    ms::TokenLayout l;
    ms::Matrix<float> in, out;
    ds.make_batch({k % 6, (k + 1) % 6}, norm, c, l, in, out);
    t.step(l, in, out);
  }
};

std::vector<float> weights(ms::Model<float>& m) {
  std::vector<float> w;
  for (auto& p : m.parameters()) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.value);
    w.insert(w.end(), h.data(), h.data() + h.size());
  }
  return w;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const mantissa::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(SurrogateCheckpoint, ResumeIsExactInFp8AndFp32) {
  for (Precision p : {Precision::fp32, Precision::fp8_e4m3}) {
    const std::string file = "surrogate_resume_" + std::string(mantissa::to_string(p)) + ".h5";
    Data data;
    const auto c = config();
    ms::OptimizerConfig oc;
    oc.warmup_steps = 2;
    ms::Model<float> a(c);
    ms::Trainer<float> ta(a, oc, p, MPI_COMM_SELF);
    for (int k = 0; k < 3; ++k) data.step(ta, c, k);
    std::string rng = "12345 67890";
    ms::save_surrogate<float>(file, {&a, &ta, &data.norm, &rng});
    for (int k = 3; k < 6; ++k) data.step(ta, c, k);

    ms::ModelConfig c2 = c;
    c2.seed = 99;  // different initial weights: everything must come from the file
    ms::Model<float> b(c2);
    ms::Trainer<float> tb(b, oc, p, MPI_COMM_SELF);
    ms::Normalization norm;
    std::string rng2;
    ms::load_surrogate<float>(file, {&b, &tb, &norm, &rng2});
    EXPECT_EQ(rng2, rng);
    EXPECT_EQ(norm.out_std, data.norm.out_std);
    EXPECT_EQ(tb.optimizer().step_count(), 3);
    for (int k = 3; k < 6; ++k) data.step(tb, c, k);
    EXPECT_EQ(weights(a), weights(b)) << mantissa::to_string(p);
    std::remove(file.c_str());
  }
}

TEST(SurrogateCheckpoint, MismatchedConfigurationIsRefused) {
  const std::string file = "surrogate_mismatch.h5";
  ms::Model<float> a(config(16));
  ms::save_surrogate<float>(file, {&a, nullptr, nullptr, nullptr});
  ms::Model<float> b(config(32));
  const auto msg = error_of([&] { ms::load_surrogate<float>(file, {&b, nullptr, nullptr, nullptr}); });
  EXPECT_NE(msg.find("surrogate.embed is 16 in the file but 32 in the deck"), std::string::npos) << msg;
  // Weights only: resuming training from it is refused, inference loading is fine.
  ms::Model<float> c(config(16));
  ms::Trainer<float> t(c, {}, Precision::fp32, MPI_COMM_SELF);
  const auto msg2 = error_of([&] { ms::load_surrogate<float>(file, {&c, &t, nullptr, nullptr}); });
  EXPECT_NE(msg2.find("no optimizer state"), std::string::npos) << msg2;
  EXPECT_EQ(error_of([&] { ms::load_surrogate<float>(file, {&c, nullptr, nullptr, nullptr}); }), "no error");
  std::remove(file.c_str());
}

TEST(SurrogateCheckpoint, WrongTensorShapeIsRefused) {
  const std::string file = "surrogate_shape.h5";
  ms::Model<float> a(config(16));
  ms::save_surrogate<float>(file, {&a, nullptr, nullptr, nullptr});
  {
    // Replace one tensor by one of another shape, as a foreign or damaged file would have it.
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "/surrogate/weights/blocks.1.fc1.weight", H5P_DEFAULT);
    hsize_t dims[2] = {7, 16};
    std::vector<float> zeros(7 * 16, 0.0f);
    hid_t s = H5Screate_simple(2, dims, nullptr);
    hid_t d = H5Dcreate2(f, "/surrogate/weights/blocks.1.fc1.weight", H5T_NATIVE_FLOAT, s, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
  }
  ms::Model<float> b(config(16));
  const auto msg = error_of([&] { ms::load_surrogate<float>(file, {&b, nullptr, nullptr, nullptr}); });
  EXPECT_NE(
      msg.find("tensor 'weights/blocks.1.fc1.weight' has shape [7, 16] in the file but the deck's model "
               "expects [24, 16]"),
      std::string::npos)
      << msg;
  std::remove(file.c_str());
  const auto missing = error_of([&] {
    ms::load_surrogate<float>("no_such_file.h5", {&b, nullptr, nullptr, nullptr});
  });
  EXPECT_NE(missing.find("cannot open 'no_such_file.h5'"), std::string::npos) << missing;
}

// Provenance (campaign.surrogate.training: file shows it): what the training campaign recorded
// comes back from the file, the step count from the optimizer; a file written without it (or
// without a trainer) reads back as unknown, not as the reader's previous values.
TEST(SurrogateCheckpoint, ProvenanceRoundTrips) {
  const std::string file = "surrogate_provenance.h5";
  Data data;
  const auto c = config();
  ms::Model<float> a(c);
  ms::Trainer<float> ta(a, {}, Precision::fp32, MPI_COMM_SELF);
  for (int k = 0; k < 4; ++k) data.step(ta, c, k);
  ms::Provenance pv;
  pv.deck_hash = "0123abcd";
  pv.deck_file = "inputs/quickstart.yaml";
  pv.samples = 41;
  pv.initial_loss = 1.25;
  pv.final_loss = 0.0123;
  ms::save_surrogate<float>(file, {&a, &ta, &data.norm, nullptr, nullptr, &pv});
  ms::Model<float> b(c);
  ms::Provenance got;
  got.samples = 7;  // replaced by the file's
  ms::load_surrogate<float>(file, {&b, nullptr, nullptr, nullptr, nullptr, &got});
  EXPECT_EQ(got.deck_hash, pv.deck_hash);
  EXPECT_EQ(got.deck_file, pv.deck_file);
  EXPECT_EQ(got.samples, 41);
  EXPECT_EQ(got.steps_trained, 4);
  EXPECT_EQ(got.initial_loss, 1.25);
  EXPECT_EQ(got.final_loss, 0.0123);
  std::remove(file.c_str());
  ms::save_surrogate<float>(file, {&a, nullptr, nullptr, nullptr});
  ms::load_surrogate<float>(file, {&b, nullptr, nullptr, nullptr, nullptr, &got});
  EXPECT_TRUE(got.deck_hash.empty());
  EXPECT_EQ(got.samples, -1);
  EXPECT_EQ(got.steps_trained, -1);
  EXPECT_TRUE(std::isnan(got.final_loss));
  std::remove(file.c_str());
}
