# kimi_add_test(NAME SOURCES a_test.cc ... LIBS lib ... [LABELS l ...] [TIMEOUT s])
# The single helper that builds a GoogleTest binary and registers it with CTest.
include(GoogleTest)
function(kimi_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main kimi_warnings)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # One CTest entry per binary keeps the CTest run cheap; gtest prints each case.
  add_test(NAME ${name} COMMAND ${name} --gtest_brief=0)
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "unit;${T_LABELS}"
    ENVIRONMENT "KIMI_SOURCE_DIR=${PROJECT_SOURCE_DIR};KIMI_BUILD_DIR=${PROJECT_BINARY_DIR}")
endfunction()
