# Warnings for mantissa's own targets only (no global flags); dependencies are SYSTEM includes.
function(mantissa_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    # -Wfloat-conversion: an implicit double -> float (or float -> int) is exactly the silent
    # narrowing a precision tool must not do, so every narrowing in mantissa's code is an explicit
    # cast. (-Wconversion's integer checks are not enabled; they have not been audited.)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wfloat-conversion -Wno-unknown-pragmas>)
    # GCC 12/13 at -O2+ in C++20 report -Wrestrict inside libstdc++'s std::string operator+
    # (a false positive: GCC bug 105329), which would fail every file that concatenates strings.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
       AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 14 AND CMAKE_CXX_STANDARD GREATER_EQUAL 20)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
    endif()
    # The host's full instruction set (AVX-512, F16C, AVX-512 BF16 here): without it GCC emits
    # SSE2 only and the stencil and attention loops are arithmetic-bound (docs/performance.md).
    # FMA contraction stays off so that a point's arithmetic is the same in vector bodies and
    # scalar remainders, which keeps FP64 results bitwise identical at every rank count.
    if(Mantissa_ENABLE_NATIVE_ARCH AND NOT Kokkos_ENABLE_CUDA AND NOT Kokkos_ENABLE_HIP)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native -ffp-contract=off>)
    endif()
    if(Mantissa_ENABLE_WERROR AND NOT Kokkos_ENABLE_CUDA AND NOT Kokkos_ENABLE_HIP)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
    # ASan + UBSan on mantissa's own code (dependencies stay uninstrumented, which ASan
    # allows); every UBSan finding aborts (no recovery), so a test fails on it. The link option
    # is PUBLIC so that every executable linking a sanitized library gets the runtimes.
    # -fPIC: under ASan, GCC 12 instruments the GOT load of an extern thread_local (Kokkos 3.4's
    # SharedAllocationRecord::t_tracking_enabled) as "lea x@gottpoff(%rip); vmovq (%reg)", a
    # form ld 2.40 cannot relax to local-exec ("TLS transition from R_X86_64_GOTTPOFF to
    # R_X86_64_TPOFF32 failed" when linking the campaign tests). Position-independent code
    # reaches such variables through __tls_get_addr (general-dynamic), which ld relaxes.
    if(Mantissa_ENABLE_SANITIZERS)
      target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fPIC>)
      target_link_options(${target} PUBLIC -fsanitize=address,undefined)
    endif()
  endif()
endfunction()
