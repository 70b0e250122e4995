#pragma once
// A type-erased view of a distributed Field for the I/O layer, so that one checkpoint can hold
// fields of different scalar types (fp64 state next to bf16 state) and the HDF5 code is
// compiled once, not per type. The only templated part is the copy between the field's
// owned points (device memory, with ghosts) and a contiguous host buffer in (z, y, x) order.
#include <mantissa/core/Error.hpp>
#include <mantissa/io/ScalarIo.hpp>
#include <mantissa/mesh/Field.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mantissa {
namespace io {

struct FieldRef {
  std::string name;
  StorageKind kind = StorageKind::f64;
  std::string type_name;
  std::size_t elem_size = 0;
  std::array<std::int64_t, 3> offset{0, 0, 0};  // first owned point, global (x, y, z)
  std::array<std::int64_t, 3> extent{0, 0, 0};  // owned points (x, y, z)
  // Copy the owned points into / out of a contiguous host buffer of extent[0]*extent[1]*
  // extent[2] elements in (z, y, x) order.
  std::function<void(void*)> to_host;
  std::function<void(const void*)> from_host;

  std::int64_t num_owned() const { return extent[0] * extent[1] * extent[2]; }
};

namespace detail {
template <class T, class M>
auto owned_subview(const Field<T, M>& f) {
  const auto g = f.ghosts();
  const auto e = f.extent();
  using P = Kokkos::pair<std::int64_t, std::int64_t>;
  return Kokkos::subview(f.view(), P(g[2], g[2] + e[2]), P(g[1], g[1] + e[1]), P(g[0], g[0] + e[0]));
}

// Copies between the owned region (strided, in M) and a contiguous host array. Host-accessible
// fields copy directly; device fields go through a contiguous device temporary first, since
// Kokkos cannot deep_copy a strided view across memory spaces.
template <class T, class M>
void owned_to_host(const Field<T, M>& f, T* dst) {
  const auto e = f.extent();
  Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
      dst, std::size_t(e[2]), std::size_t(e[1]), std::size_t(e[0]));
  auto sub = owned_subview(f);
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, M>::accessible) {
    Kokkos::deep_copy(host, sub);
  } else {
    Kokkos::View<T***, Kokkos::LayoutRight, M> tmp(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::io::FieldRef::staging"), std::size_t(e[2]),
        std::size_t(e[1]), std::size_t(e[0]));
    Kokkos::deep_copy(tmp, sub);
    Kokkos::deep_copy(host, tmp);
  }
}

template <class T, class M>
void host_to_owned(const Field<T, M>& f, const T* src) {
  const auto e = f.extent();
  Kokkos::View<const T***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      host(src, std::size_t(e[2]), std::size_t(e[1]), std::size_t(e[0]));
  auto sub = owned_subview(f);
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, M>::accessible) {
    Kokkos::deep_copy(sub, host);
  } else {
    Kokkos::View<T***, Kokkos::LayoutRight, M> tmp(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "mantissa::io::FieldRef::staging"), std::size_t(e[2]),
        std::size_t(e[1]), std::size_t(e[0]));
    Kokkos::deep_copy(tmp, host);
    Kokkos::deep_copy(sub, tmp);
  }
}
}  // namespace detail

// Reference to a field for checkpoints: stored bitwise in its own type. The field's view is
// shared (Kokkos views are reference counted), so a reader may fill it through this reference.
template <class T, class M>
FieldRef field_ref(const std::string& name, const Field<T, M>& f) {
  FieldRef r;
  r.name = name;
  r.kind = ScalarIo<T>::kind;
  r.type_name = ScalarIo<T>::name();
  r.elem_size = sizeof(T);
  static_assert(sizeof(T) <= 8, "mantissa::io: element types wider than 8 bytes are not supported");
  r.offset = f.offset();
  r.extent = f.extent();
  r.to_host = [f](void* dst) { detail::owned_to_host(f, static_cast<T*>(dst)); };
  r.from_host = [f](const void* src) { detail::host_to_owned(f, static_cast<const T*>(src)); };
  return r;
}

// Reference to a field for snapshots (visualization): fp64 and fp32 as they are, other types
// converted to fp32 on the host so ParaView and VisIt can read them. Write only.
template <class T, class M>
FieldRef snapshot_ref(const std::string& name, const Field<T, M>& f) {
  if constexpr (is_viewable_v<T>) {
    FieldRef r = field_ref(name, f);
    r.from_host = nullptr;
    return r;
  } else {
    FieldRef r;
    r.name = name;
    r.kind = StorageKind::f32;
    r.type_name = ScalarIo<float>::name();
    r.elem_size = sizeof(float);
    r.offset = f.offset();
    r.extent = f.extent();
    r.to_host = [f](void* dst) {
      std::vector<T> tmp(std::size_t(f.extent()[0] * f.extent()[1] * f.extent()[2]));
      detail::owned_to_host(f, tmp.data());
      float* out = static_cast<float*>(dst);
      for (std::size_t i = 0; i < tmp.size(); ++i) out[i] = static_cast<float>(tmp[i]);
    };
    return r;
  }
}

}  // namespace io
}  // namespace mantissa
