#pragma once
// Surrogate state in HDF5, under the group /surrogate of a (possibly shared) checkpoint file:
//   attributes  format_version, the ModelConfig fields, what else defines the model
//               (SurrogateState::defines: steps_per_prediction, scaling), master precision, optimizer step,
//               loss scale and its good-step counter, the generator state (text)
//   weights/<name>        every parameter in the master type, with its shape
//   adam_m/<name>, adam_v/<name>   AdamW moments (when a trainer is given)
//   fp8/<name>            amax history of every fp8 scaling state
//   normalization/{in_mean,in_std,out_mean,out_std}
//   attributes provenance_deck_hash, provenance_deck_file, provenance_samples,
//               provenance_initial_loss, provenance_final_loss: where the weights came from (the
//               campaign that trained them), shown by a campaign that loads them (training: file)
// Names are PyTorch module paths ("blocks.0.qkv.weight"), so tests/python loads them directly.
// A file whose configuration or tensor shapes differ from the deck's model is refused with a
// message that names the key or tensor and both sizes. Every tensor carries a checksum (attribute
// `checksum`: io's element hash summed over the stored values); a tensor that does not match it,
// or holds a NaN or infinity, is refused naming the tensor.
#include <surrogates/Dataset.hpp>
#include <surrogates/Trainer.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace mantissa::surrogates {

// Where a weights file came from. steps_trained is read back from the optimizer's step count.
struct Provenance {
  std::string deck_hash, deck_file;  // of the campaign that trained the weights
  std::int64_t samples = -1;         // training samples (states), -1: unknown
  std::int64_t steps_trained = -1;   // optimizer steps, -1: unknown
  double initial_loss = std::numeric_limits<double>::quiet_NaN();
  double final_loss = std::numeric_limits<double>::quiet_NaN();
};

template <class T>
struct SurrogateState {
  Model<T>* model = nullptr;
  Trainer<T>* trainer = nullptr;           // optional: optimizer and loss-scale state
  Normalization* normalization = nullptr;  // optional
  std::string* rng_state = nullptr;        // optional: text of the sampling generator
  // What defines the model beyond ModelConfig (surrogate.* key without the prefix, value), e.g.
  // steps_per_prediction: written as attributes; load refuses a file whose value differs or is
  // absent, naming the key.
  const std::vector<std::pair<std::string, std::int64_t>>* defines = nullptr;
  Provenance* provenance = nullptr;  // optional: written when given; filled (or reset) by load
};

// create: truncate/create the file; otherwise the group is added to an existing file (which must
// not have one yet). Call on one rank.
template <class T>
void save_surrogate(const std::string& file, const SurrogateState<T>& state, bool create = true);
// Reads into the given objects (same configuration required). Any rank may call it.
template <class T>
void load_surrogate(const std::string& file, const SurrogateState<T>& state);

// Checks a weights file without building a model (no Kokkos; `mantissa check`): the format, the
// configuration (`config`, its global_patches set for the run's grid) and the definition
// attributes, and every tensor finite and matching its checksum. Throws Error naming the file
// and what is wrong. Call on one rank.
void verify_surrogate_file(const std::string& file, const ModelConfig& config,
                           const std::vector<std::pair<std::string, std::int64_t>>& defines);

}  // namespace mantissa::surrogates
