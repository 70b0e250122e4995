# Warnings for mantissa's own targets only (no global flags); dependencies are SYSTEM includes.
function(mantissa_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unknown-pragmas>)
    # GCC 12/13 at -O2+ in C++20 report -Wrestrict inside libstdc++'s std::string operator+
    # (a false positive: GCC bug 105329), which would fail every file that concatenates strings.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
       AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 14 AND CMAKE_CXX_STANDARD GREATER_EQUAL 20)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
    endif()
    if(Mantissa_ENABLE_WERROR AND NOT Kokkos_ENABLE_CUDA AND NOT Kokkos_ENABLE_HIP)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
endfunction()
