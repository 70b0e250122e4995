# Driven by ctest (see CMakeLists.txt): install, configure the consumer, build it, run it.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
# A list cannot survive being passed through ARGN; the environment variable takes ":".
string(REPLACE "|" ":" _pp "${PREFIX_PATH}")
set(ENV{CMAKE_PREFIX_PATH} "${_pp}")
file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
run_step(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${CONSUMER_BUILD} -G ${GENERATOR}
         -DCMAKE_BUILD_TYPE=Release)
run_step(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
run_step(${MPIEXEC} -n 1 ${CONSUMER_BUILD}/consumer)
