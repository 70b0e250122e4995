# Warnings for mantissa's own targets only (no global flags); dependencies are SYSTEM includes.
function(mantissa_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unknown-pragmas>)
    if(Mantissa_ENABLE_WERROR AND NOT Kokkos_ENABLE_CUDA AND NOT Kokkos_ENABLE_HIP)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
endfunction()
