# Driven by ctest (see CMakeLists.txt): install, check the install, configure the consumer,
# build it, run it.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
# A list cannot survive being passed through ARGN; the environment variable takes ":".
string(REPLACE "|" ":" _pp "${PREFIX_PATH}")
set(ENV{CMAKE_PREFIX_PATH} "${_pp}")
file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})

# The exported targets re-find their dependencies: no library file paths (libhdf5.so,
# libdnnl.so, ...) in the link interfaces, only targets.
file(GLOB _targets ${PREFIX}/lib*/cmake/Mantissa/MantissaTargets*.cmake)
foreach(_f ${_targets})
  file(STRINGS ${_f} _links REGEX "INTERFACE_LINK_LIBRARIES")
  foreach(_l ${_links})
    if(_l MATCHES "/[^;\"]*\\.(so|a|dylib)")
      message(FATAL_ERROR "${_f} names a library file instead of a target: ${CMAKE_MATCH_0}\n${_l}")
    endif()
  endforeach()
endforeach()
message(STATUS "exported link interfaces name targets only (${_targets})")

# share/mantissa: decks, batch scripts pointing at the installed executable, postprocess
# scripts with a working interpreter line, docs, licence.
set(_share ${PREFIX}/share/mantissa)
foreach(_f inputs/quickstart.yaml slurm/campaign.sbatch slurm/campaign-gpu.sbatch postprocess/plot_report.py
           postprocess/compare.py postprocess/mantissa_report.py docs/user-guide.md docs/deck.md LICENSE README.md)
  if(NOT EXISTS ${_share}/${_f})
    message(FATAL_ERROR "the install lacks share/mantissa/${_f}")
  endif()
endforeach()
file(READ ${_share}/slurm/campaign.sbatch _sbatch)
if(NOT _sbatch MATCHES "MANTISSA=\"\\\${MANTISSA:-${PREFIX}/bin/mantissa}\"")
  message(FATAL_ERROR "the installed campaign.sbatch does not default to ${PREFIX}/bin/mantissa")
endif()
file(STRINGS ${_share}/postprocess/plot_report.py _shebang LIMIT_COUNT 1)
if(PYTHON AND NOT _shebang STREQUAL "#!${PYTHON}")
  message(FATAL_ERROR "installed plot_report.py starts with '${_shebang}', not #!${PYTHON}")
endif()
# Run as a user would: the scripts by their interpreter line, the executable on an installed deck.
run_step(${_share}/postprocess/plot_report.py --help)
run_step(${_share}/postprocess/compare.py --help)
run_step(${PREFIX}/bin/mantissa check ${_share}/inputs/quickstart.yaml)
if(NOT step_output MATCHES ": ok")
  message(FATAL_ERROR "installed mantissa check of the installed quickstart deck did not say ok")
endif()

run_step(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${CONSUMER_BUILD} -G ${GENERATOR}
         -DCMAKE_BUILD_TYPE=Release)
run_step(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
run_step(${MPIEXEC} -n 1 ${CONSUMER_BUILD}/consumer)
if(NOT step_output MATCHES "consumer: ok")
  message(FATAL_ERROR "the consumer did not report ok")
endif()
