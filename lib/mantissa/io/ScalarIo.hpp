#pragma once
// How a scalar type is stored in mantissa's HDF5 files. Every dataset carries an attribute
// "mantissa_type" with the name below, so a reader can refuse a type mix-up with a clear
// message. 16-bit floating point types (bf16, fp16) have no portable HDF5 type that h5py and
// ParaView agree on, so they are stored as their bits in native uint16 datasets; the
// attribute says how to interpret them (postprocess/ converts with numpy views).
//
// A new type gets I/O by specializing ScalarIo (the low-precision types do so below).
#include <mantissa/core/LowPrecision.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace mantissa {
namespace io {

// Storage classes the HDF5 layer knows (file type == memory type, little endian).
enum class StorageKind : int { f64, f32, u8, u16, i32, i64, u64 };

std::size_t storage_size(StorageKind k);
std::string to_string(StorageKind k);

template <class T, class Enable = void>
struct ScalarIo;  // no I/O mapping for T: specialize ScalarIo<T> with kind and name

template <>
struct ScalarIo<double> {
  static constexpr StorageKind kind = StorageKind::f64;
  static const char* name() { return "fp64"; }
};
template <>
struct ScalarIo<float> {
  static constexpr StorageKind kind = StorageKind::f32;
  static const char* name() { return "fp32"; }
};
template <>
struct ScalarIo<std::uint8_t> {
  static constexpr StorageKind kind = StorageKind::u8;
  static const char* name() { return "uint8"; }
};
template <>
struct ScalarIo<std::uint16_t> {
  static constexpr StorageKind kind = StorageKind::u16;
  static const char* name() { return "uint16"; }
};
template <>
struct ScalarIo<std::int32_t> {
  static constexpr StorageKind kind = StorageKind::i32;
  static const char* name() { return "int32"; }
};
template <>
struct ScalarIo<std::int64_t> {
  static constexpr StorageKind kind = StorageKind::i64;
  static const char* name() { return "int64"; }
};
template <>
struct ScalarIo<std::uint64_t> {
  static constexpr StorageKind kind = StorageKind::u64;
  static const char* name() { return "uint64"; }
};

// bf16, fp16 (uint16 bits) and fp8_e4m3, fp8_e5m2 (uint8 bits), named by precision_traits.
template <class Format>
struct ScalarIo<LowPrecisionFloat<Format>> {
  using T = LowPrecisionFloat<Format>;
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "low-precision types are stored as 8 or 16 bits");
  static constexpr StorageKind kind = sizeof(T) == 2 ? StorageKind::u16 : StorageKind::u8;
  static const char* name() { return precision_traits<T>::name; }
};

// Whether T is one of the types a snapshot writes as is (others are converted to fp32 there,
// because visualization tools cannot read bf16/fp16 bits).
template <class T>
inline constexpr bool is_viewable_v = std::is_same_v<T, double> || std::is_same_v<T, float>;

}  // namespace io
}  // namespace mantissa
