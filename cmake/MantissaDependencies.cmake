# Finds every dependency once, for all targets. Kokkos from 3.4.01 to 5.x (Kokkos_ROOT).
find_package(Kokkos 3.4.1 REQUIRED)
find_package(KokkosKernels REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
set(HDF5_PREFER_PARALLEL ON)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "mantissa needs a parallel (MPI) HDF5; found a serial one at ${HDF5_INCLUDE_DIRS}. "
                      "On Debian install libhdf5-openmpi-dev; with Spack use hdf5+mpi.")
endif()
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)

# One name for HDF5 in our targets. It links FindHDF5's imported target HDF5::HDF5 (CMake 3.19+,
# whether HDF5 was found through its compiler wrapper or its own CMake package), so the exported
# package names HDF5::HDF5, which MantissaConfig.cmake re-finds, instead of library file paths.
if(NOT TARGET mantissa_hdf5)
  if(NOT TARGET HDF5::HDF5)
    message(FATAL_ERROR "FindHDF5 made no HDF5::HDF5 target (CMake ${CMAKE_VERSION}); mantissa needs CMake 3.20+")
  endif()
  add_library(mantissa_hdf5 INTERFACE)
  target_link_libraries(mantissa_hdf5 INTERFACE HDF5::HDF5)
  install(TARGETS mantissa_hdf5 EXPORT MantissaTargets)
endif()

# Kokkos' headers are SYSTEM so that its warnings do not become our errors.
foreach(_t Kokkos::kokkos Kokkos::kokkoscore Kokkos::kokkoskernels)
  if(TARGET ${_t})
    get_target_property(_inc ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(_inc)
      set_target_properties(${_t} PROPERTIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_inc}")
    endif()
  endif()
endforeach()
