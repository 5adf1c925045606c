# KIMI_HIP=ON: kimi_gpu and kimi_gpu_peak built from the same .cu files with hipcc, included by
# engine/gpu/CMakeLists.txt with _kimi_gpu_sources set; sets _kimi_gpu_component.
#
# Each .cu is compiled to an object by a custom command (hipcc -x hip, header dependencies
# through a depfile) and the objects form ordinary static libraries, so the tests and
# benchmarks stay plain C++ compiled by the project's compiler. CMake's own HIP language is
# not used: Debian 12's CMake 3.25 accepts only a bare clang as CMAKE_HIP_COMPILER, and the
# point of this build is that the sources go through hipcc and gpu_runtime.h as they are.
if(NOT KIMI_HIPCC)
  message(FATAL_ERROR "KIMI_HIP=ON needs hipcc on PATH (Debian: apt-get install hipcc)")
endif()
set(KIMI_HIP_ARCH "gfx90a" CACHE STRING "AMD targets of the HIP build (--offload-arch), ;-separated")
find_library(KIMI_AMDHIP64 amdhip64 REQUIRED)
message(STATUS "KIMI_HIP: building engine/gpu with ${KIMI_HIPCC} for ${KIMI_HIP_ARCH}")

set(_kimi_hip_flags -std=c++20 -x hip -fPIC -O3 -DNDEBUG -Wall -Wextra -Werror)
foreach(arch IN LISTS KIMI_HIP_ARCH)
  list(APPEND _kimi_hip_flags --offload-arch=${arch})
endforeach()

# kimi_hip_objects(<out-var> <source>...): one object per .cu under the build folder.
function(kimi_hip_objects out_var)
  set(objects)
  foreach(src IN LISTS ARGN)
    get_filename_component(name ${src} NAME)
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/hip/${name}.o)
    add_custom_command(OUTPUT ${obj}
      COMMAND ${KIMI_HIPCC} ${_kimi_hip_flags} -I${PROJECT_SOURCE_DIR}/engine
        -I${PROJECT_SOURCE_DIR}/engine/include -MD -MF ${obj}.d -c ${CMAKE_CURRENT_SOURCE_DIR}/${src} -o ${obj}
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${src}
      DEPFILE ${obj}.d
      COMMENT "hipcc ${src}"
      VERBATIM)
    list(APPEND objects ${obj})
  endforeach()
  set(${out_var} ${objects} PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/hip)
kimi_hip_objects(_kimi_gpu_objects ${_kimi_gpu_sources})
add_library(kimi_gpu STATIC ${_kimi_gpu_objects})
set_target_properties(kimi_gpu PROPERTIES LINKER_LANGUAGE CXX)
target_link_libraries(kimi_gpu PUBLIC kimi_core kimi_io ${KIMI_AMDHIP64})

kimi_hip_objects(_kimi_peak_objects peak_matmul.cu)
add_library(kimi_gpu_peak STATIC ${_kimi_peak_objects})
set_target_properties(kimi_gpu_peak PROPERTIES LINKER_LANGUAGE CXX)
target_link_libraries(kimi_gpu_peak PUBLIC kimi_gpu)

set(_kimi_gpu_component hip)
