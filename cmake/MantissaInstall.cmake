# An installable package: find_package(Mantissa) from an install re-finds the dependencies.
include(CMakePackageConfigHelpers)
install(EXPORT MantissaTargets NAMESPACE mantissa:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)
# Optional libraries linked as imported targets (surrogates/CMakeLists.txt): the exported targets
# name them, so the package config must find their packages too. Read off the link itself, so
# the config cannot disagree with what was built.
set(Mantissa_WITH_CUBLASLT OFF)
set(Mantissa_WITH_HIPBLASLT OFF)
set(Mantissa_WITH_ONEDNN OFF)
set(Mantissa_DNNL_HINT "")
if(TARGET mantissa_surrogates)
  get_target_property(_surrogate_links mantissa_surrogates LINK_LIBRARIES)
  if("mantissa::dnnl" IN_LIST _surrogate_links)
    set(Mantissa_WITH_ONEDNN ON)
    # A hint only: MantissaConfig.cmake searches CMAKE_PREFIX_PATH and the system first.
    get_filename_component(Mantissa_DNNL_HINT "${MANTISSA_DNNL_LIBRARY}" DIRECTORY)
  endif()
  if("CUDA::cublasLt" IN_LIST _surrogate_links)
    set(Mantissa_WITH_CUBLASLT ON)
  endif()
  if("roc::hipblaslt" IN_LIST _surrogate_links)
    set(Mantissa_WITH_HIPBLASLT ON)
  endif()
endif()
set(Mantissa_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/mantissa)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/MantissaConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa
  PATH_VARS Mantissa_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/MantissaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/MantissaConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Mantissa)

# What a user needs beside the executable, under share/mantissa: the example decks, the Slurm
# batch scripts, the postprocess scripts and the docs (docs/user-guide.md "Installed files").
install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${Mantissa_INSTALL_DATADIR}/inputs
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${Mantissa_INSTALL_DATADIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "*.svg")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${Mantissa_INSTALL_DATADIR})

# Postprocess scripts: `#!/usr/bin/env python3` in the tree (whatever python3 the user runs);
# installed with the interpreter this build was configured with (MANTISSA_PYTHON: Debian's
# /usr/bin/python3 with python3-numpy/h5py/matplotlib; Spack passes its own python, whose py-*
# run dependencies `spack load mantissa` puts on PYTHONPATH). Spack's sbang hook rewrites the
# line again if its prefix is too long for the kernel.
if(NOT MANTISSA_PYTHON)
  find_program(MANTISSA_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT MANTISSA_PYTHON)
    find_program(MANTISSA_PYTHON NAMES python3)
  endif()
endif()
set(_pp_out ${PROJECT_BINARY_DIR}/share/postprocess)
file(GLOB _pp_scripts CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/postprocess/*.py)
foreach(_script ${_pp_scripts})
  get_filename_component(_name ${_script} NAME)
  file(READ ${_script} _text)
  if(MANTISSA_PYTHON AND _text MATCHES "^#!")
    string(REGEX REPLACE "^#![^\n]*" "#!${MANTISSA_PYTHON}" _text "${_text}")
  endif()
  file(WRITE ${_pp_out}/${_name}.new "${_text}")
  configure_file(${_pp_out}/${_name}.new ${_pp_out}/${_name} COPYONLY)  # rewritten only on change
  if(_text MATCHES "^#!")
    install(PROGRAMS ${_pp_out}/${_name} DESTINATION ${Mantissa_INSTALL_DATADIR}/postprocess)
  else()
    install(FILES ${_pp_out}/${_name} DESTINATION ${Mantissa_INSTALL_DATADIR}/postprocess)
  endif()
endforeach()

# Slurm batch scripts: the installed copies run the installed executable unless MANTISSA is
# set (sbatch copies a script to its spool directory, so it cannot find bin/ beside itself).
file(GLOB _sbatch CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/scripts/slurm/*.sbatch ${PROJECT_SOURCE_DIR}/scripts/slurm/*.sh)
foreach(_script ${_sbatch})
  install(CODE "set(_mantissa_script \"${_script}\")
set(_mantissa_bindir \"${CMAKE_INSTALL_BINDIR}\")
set(_mantissa_dest \"${Mantissa_INSTALL_DATADIR}/slurm\")
include(\"${PROJECT_SOURCE_DIR}/cmake/MantissaInstallSlurm.cmake\")")
endforeach()
