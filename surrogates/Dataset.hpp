#pragma once
// Training samples: tiles of input fields [C, nz, ny, nx] and target fields [C_out, nz, ny, nx]
// (the change of the state over K solver steps), all of the same extent, each with its global
// offset in cells. Fed in process, sample by sample, by a running solver (online training) or
// read from an HDF5 snapshot file (offline, read_hdf5). Normalisation is per channel (mean and
// standard deviation over the dataset), the model learns in normalised units.
#include <surrogates/ModelConfig.hpp>
#include <surrogates/TokenLayout.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::surrogates {

struct Normalization {
  std::vector<double> in_mean, in_std, out_mean, out_std;
  bool empty() const { return in_mean.empty(); }
};

class Dataset {
 public:
  Dataset() = default;
  // extent: cells of every tile along x, y, z (z = 1 in 2D).
  Dataset(int in_channels, int out_channels, std::array<std::int64_t, 3> extent);

  // input: in_channels * cells values, target: out_channels * cells, both [c][z][y][x].
  void add(std::vector<double> input, std::vector<double> target,
           std::array<std::int64_t, 3> offset = {0, 0, 0});
  std::int64_t size() const { return static_cast<std::int64_t>(m_inputs.size()); }
  std::int64_t cells() const { return m_extent[0] * m_extent[1] * m_extent[2]; }
  const std::array<std::int64_t, 3>& extent() const { return m_extent; }
  int in_channels() const { return m_cin; }
  int out_channels() const { return m_cout; }
  const std::vector<double>& input(std::int64_t i) const { return m_inputs.at(i); }
  const std::vector<double>& target(std::int64_t i) const { return m_targets.at(i); }
  // Global cell offset (x, y, z) of sample i's tile.
  const std::array<std::int64_t, 3>& offset(std::int64_t i) const { return m_offsets.at(i); }

  Normalization normalization() const;

  // Samples `indices` as normalised token matrices and their layout. Throws mantissa::Error when
  // the tile is not a whole number of patches.
  template <class T>
  void make_batch(const std::vector<std::int64_t>& indices, const Normalization& norm,
                  const ModelConfig& config, TokenLayout& layout, Matrix<T>& inputs,
                  Matrix<T>& targets) const;
  // The targets of make_batch alone (a pushforward chain's next sample needs no input tokens
  // and no layout): the same values as make_batch's `targets`.
  template <class T>
  void make_targets(const std::vector<std::int64_t>& indices, const Normalization& norm,
                    const ModelConfig& config, Matrix<T>& targets) const;

  // Offline data: datasets "inputs" [S, C, nz, ny, nx], "targets" [S, C_out, nz, ny, nx] (fp64)
  // and "offsets" [S, 3] (int64 x, y, z cells; optional on read, zeros when absent). read_hdf5
  // throws mantissa::Error naming the file and the dataset when one is missing or misshapen.
  static Dataset read_hdf5(const std::string& file);
  void write_hdf5(const std::string& file) const;

 private:
  void check_channels(const ModelConfig& config) const;
  int m_cin = 0, m_cout = 0;
  std::array<std::int64_t, 3> m_extent{1, 1, 1};
  std::vector<std::vector<double>> m_inputs, m_targets;
  std::vector<std::array<std::int64_t, 3>> m_offsets;
};

}  // namespace mantissa::surrogates
