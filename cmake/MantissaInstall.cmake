# An installable package: find_package(Mantissa) from an install re-finds the dependencies.
include(CMakePackageConfigHelpers)
install(EXPORT MantissaTargets NAMESPACE mantissa:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
# Optional libraries linked as imported targets (surrogates/CMakeLists.txt): the exported targets
# name them, so the package config must find their packages too. Read off the link itself, so
# the config cannot disagree with what was built.
set(Mantissa_WITH_CUBLASLT OFF)
set(Mantissa_WITH_HIPBLASLT OFF)
if(TARGET mantissa_surrogates)
  get_target_property(_surrogate_links mantissa_surrogates LINK_LIBRARIES)
  if("CUDA::cublasLt" IN_LIST _surrogate_links)
    set(Mantissa_WITH_CUBLASLT ON)
  endif()
  if("roc::hipblaslt" IN_LIST _surrogate_links)
    set(Mantissa_WITH_HIPBLASLT ON)
  endif()
endif()
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/MantissaConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/MantissaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
