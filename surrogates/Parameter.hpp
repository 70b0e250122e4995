#pragma once
// A trainable tensor seen by the optimizer, the checkpoint and the gradient all-reduce: a name
// (the same as the PyTorch module path, so weights map one to one onto the oracle's model),
// its shape, and flat views of its value and gradient (the layer owns the storage).
#include <surrogates/Tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa::surrogates {

template <class T>
using FlatView = Kokkos::View<T*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T>
struct Parameter {
  std::string name;
  std::vector<std::int64_t> shape;
  FlatView<T> value;
  FlatView<T> grad;
  std::int64_t size() const { return static_cast<std::int64_t>(value.extent(0)); }
};

template <class T>
Parameter<T> make_parameter(const std::string& name, const Matrix<T>& value, const Matrix<T>& grad) {
  return {name,
          {static_cast<std::int64_t>(value.extent(0)), static_cast<std::int64_t>(value.extent(1))},
          FlatView<T>(value.data(), value.size()),
          FlatView<T>(grad.data(), grad.size())};
}
template <class T>
Parameter<T> make_parameter(const std::string& name, const Vector<T>& value, const Vector<T>& grad) {
  return {name,
          {static_cast<std::int64_t>(value.extent(0))},
          FlatView<T>(value.data(), value.size()),
          FlatView<T>(grad.data(), grad.size())};
}

}  // namespace mantissa::surrogates
