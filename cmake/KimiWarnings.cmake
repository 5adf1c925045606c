# Warnings are errors for the project's own code; third-party headers come in as SYSTEM.
add_library(kimi_warnings INTERFACE)
target_compile_options(kimi_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror -Wno-missing-field-initializers>)

# GCC 12 reports a false -Wrestrict inside libstdc++'s operator+(const char*, std::string&&)
# (GCC bug 105651, fixed in GCC 13); under -Werror it would reject every "literal" + string.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(kimi_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()

# The kernels silence GCC-only warning groups (-Wmaybe-uninitialized around AVX-512
# intrinsics) with `#pragma GCC diagnostic`; clang (`make fuzz`) does not know those groups.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(kimi_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-unknown-warning-option>)
endif()
