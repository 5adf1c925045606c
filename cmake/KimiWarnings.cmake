# Warnings are errors for the project's own code; third-party headers come in as SYSTEM.
add_library(kimi_warnings INTERFACE)
target_compile_options(kimi_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror -Wno-missing-field-initializers>)
