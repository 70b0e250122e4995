# Test harness: one registration, several rank counts (Cabana test_harness.cmake np_1/2/4;
# 3 is there to catch power-of-two assumptions).
find_package(GTest REQUIRED)
set(MANTISSA_MPI_RANKS 1 2 3 4 CACHE STRING "Rank counts the MPI tests run at")
set(MANTISSA_MPIEXEC_EXTRA_FLAGS "" CACHE STRING "Extra flags for mpiexec (e.g. --oversubscribe)")
if(MPIEXEC_EXECUTABLE MATCHES "mpirun|mpiexec" AND NOT MANTISSA_MPIEXEC_EXTRA_FLAGS)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiver ERROR_QUIET)
  if(_mpiver MATCHES "Open MPI|OpenRTE")
    set(MANTISSA_MPIEXEC_EXTRA_FLAGS --oversubscribe --bind-to none)
  endif()
endif()

# mantissa_add_unit_test(NAME SOURCES ... LIBS ...): a GoogleTest executable run on one rank.
function(mantissa_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} mantissa_test_main)
  mantissa_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;${T_LABELS}"
    ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false;OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()

# mantissa_add_mpi_test(NAME SOURCES ... LIBS ... [RANKS 1 2 3 4]): one executable, one ctest
# entry per rank count (NAME_np1, NAME_np2, ...).
function(mantissa_add_mpi_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;RANKS;LABELS" ${ARGN})
  if(NOT T_RANKS)
    set(T_RANKS ${MANTISSA_MPI_RANKS})
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} mantissa_test_main)
  mantissa_set_warnings(${name})
  foreach(np ${T_RANKS})
    add_test(NAME ${name}_np${np}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MANTISSA_MPIEXEC_EXTRA_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    # TIMEOUT: a rank that leaves a collective early hangs the others; fail in minutes, not at the
    # end of CI's budget (the slowest of these runs in under 40 s here at 4 ranks on 2 cores).
    set_tests_properties(${name}_np${np} PROPERTIES LABELS "mpi;${T_LABELS}" PROCESSORS ${np} TIMEOUT 600
      ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
  endforeach()
endfunction()
