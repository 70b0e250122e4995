# An installable package: find_package(Mantissa) from an install re-finds the dependencies.
include(CMakePackageConfigHelpers)
install(EXPORT MantissaTargets NAMESPACE mantissa:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/MantissaConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/MantissaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
