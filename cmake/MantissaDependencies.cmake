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

# HDF5's FindHDF5 gives variables, not a target on every CMake: wrap them in one.
if(NOT TARGET mantissa_hdf5)
  add_library(mantissa_hdf5 INTERFACE)
  target_include_directories(mantissa_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_link_libraries(mantissa_hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
  target_compile_definitions(mantissa_hdf5 INTERFACE ${HDF5_DEFINITIONS} ${HDF5_C_DEFINITIONS})
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
