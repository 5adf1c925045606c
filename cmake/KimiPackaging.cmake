# Install rules and the Debian packages (CPack DEB), built by `make package`:
#   kimi-appliance  the daemon, kimictl, kimi-audit-verify, the systemd unit, the default
#                   configuration (a conffile), man pages, the web console (admin-ui/), the
#                   policy schema, default and examples (policies/)
#   kimi-engine     the engine's command-line tool and worker
#   kimi-engine-cuda / kimi-engine-hip  only when KIMI_CUDA / KIMI_HIP is on (with nvcc / hipcc
#                   found): what the GPU build installs under COMPONENT cuda / hip, and the
#                   systemd drop-in that lets kimi-appliance.service reach those devices
# Runtime library dependencies come from dpkg-shlibdeps, so they always match what the
# binaries were linked against. packaging/tests/deb_test.sh checks the result.

set(_pkg ${PROJECT_SOURCE_DIR}/packaging)
set(_gen ${PROJECT_BINARY_DIR}/packaging)

# Debian wants man pages and changelogs compressed reproducibly (gzip -n: no name, no time).
set(_kimi_gzipped)
function(kimi_gzip src out)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_gen}
    COMMAND gzip -9nc ${src} > ${out}
    DEPENDS ${src} VERBATIM)
  set(_kimi_gzipped ${_kimi_gzipped} ${out} PARENT_SCOPE)
endfunction()
foreach(page kimi-appliance.8 kimictl.8 kimi-engine.1 kimi-audit-verify.1)
  kimi_gzip(${_pkg}/man/${page} ${_gen}/${page}.gz)
endforeach()
kimi_gzip(${_pkg}/changelog ${_gen}/changelog.gz)
add_custom_target(kimi_package_files ALL DEPENDS ${_kimi_gzipped})

# kimi-appliance
install(TARGETS kimi-appliance RUNTIME DESTINATION sbin COMPONENT appliance)
install(TARGETS kimictl kimi-audit-verify RUNTIME DESTINATION bin COMPONENT appliance)
install(FILES ${_pkg}/systemd/kimi-appliance.service DESTINATION lib/systemd/system COMPONENT appliance)
# The postinst's path handling (never through a link the service account planted), sourced by it.
install(FILES ${_pkg}/debian/kimi-appliance/maintscript-paths.sh DESTINATION share/kimi-appliance COMPONENT appliance)
install(FILES ${_pkg}/etc/appliance.json DESTINATION /etc/kimi-appliance
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ COMPONENT appliance)
install(FILES ${_gen}/kimi-appliance.8.gz ${_gen}/kimictl.8.gz DESTINATION share/man/man8 COMPONENT appliance)
install(FILES ${_gen}/kimi-audit-verify.1.gz DESTINATION share/man/man1 COMPONENT appliance)
install(FILES ${_pkg}/copyright ${_gen}/changelog.gz DESTINATION share/doc/kimi-appliance COMPONENT appliance)
# The web console's static files, served from console.assets_dir (default
# /usr/share/kimi-appliance/console); the source files are the shipped files (no build step).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/admin-ui/ DESTINATION share/kimi-appliance/console COMPONENT appliance
  FILES_MATCHING PATTERN "*.html" PATTERN "*.css" PATTERN "*.js" PATTERN "*.svg")
# The policy schema, the default policy and the bank and hospital examples, for operators to
# start from (the default is also compiled in and installed as version 1 on first start).
install(FILES ${PROJECT_SOURCE_DIR}/policies/schema.json ${PROJECT_SOURCE_DIR}/policies/default.json
  DESTINATION share/kimi-appliance/policies COMPONENT appliance)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/policies/examples/ DESTINATION share/kimi-appliance/policies/examples
  COMPONENT appliance FILES_MATCHING PATTERN "*.json")

# kimi-engine
install(TARGETS kimi-engine RUNTIME DESTINATION bin COMPONENT engine)
install(FILES ${_gen}/kimi-engine.1.gz DESTINATION share/man/man1 COMPONENT engine)
install(FILES ${_pkg}/copyright ${_gen}/changelog.gz DESTINATION share/doc/kimi-engine COMPONENT engine)

# kimi-engine-cuda, kimi-engine-hip: engine/gpu/ adds its own install rules with COMPONENT
# cuda or hip; the package itself brings the drop-in (DeviceAllow= for the vendor's device
# nodes only) and depends on the kimi-engine of the same build.
set(_kimi_gpu_components)
if(KIMI_CUDA)
  list(APPEND _kimi_gpu_components cuda)
endif()
if(KIMI_HIP)
  list(APPEND _kimi_gpu_components hip)
endif()
foreach(gpu IN LISTS _kimi_gpu_components)
  string(TOUPPER ${gpu} _GPU)
  install(FILES ${_pkg}/systemd/gpu/${gpu}-devices.conf DESTINATION lib/systemd/system/kimi-appliance.service.d
    COMPONENT ${gpu})
  install(FILES ${_pkg}/copyright ${_gen}/changelog.gz DESTINATION share/doc/kimi-engine-${gpu} COMPONENT ${gpu})
  set(CPACK_DEBIAN_${_GPU}_PACKAGE_NAME kimi-engine-${gpu})
  set(CPACK_DEBIAN_${_GPU}_PACKAGE_SECTION science)
  set(CPACK_DEBIAN_${_GPU}_PACKAGE_DEPENDS "kimi-engine (= ${PROJECT_VERSION})")
  set(CPACK_DEBIAN_${_GPU}_PACKAGE_CONTROL_EXTRA ${_pkg}/debian/kimi-engine-gpu/postinst
    ${_pkg}/debian/kimi-engine-gpu/postrm)
endforeach()
set(CPACK_DEBIAN_CUDA_DESCRIPTION "Kimi K3 inference engine, NVIDIA CUDA build
Files of the engine's CUDA build, and a drop-in for kimi-appliance.service that
lets the daemon open NVIDIA's character devices (DeviceAllow=char-nvidia*)
while every other device stays closed to it.")
set(CPACK_DEBIAN_HIP_DESCRIPTION "Kimi K3 inference engine, AMD HIP build
Files of the engine's HIP (ROCm) build, and a drop-in for kimi-appliance.service
that lets the daemon open /dev/kfd and the DRM render nodes while every
other device stays closed to it.")

# `make package` builds first; packaging itself must not rebuild the whole tree.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kimi-appliance)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# The packages' Maintainer: the team that builds the bundle for a site can name itself.
set(KIMI_PACKAGE_MAINTAINER "Kimi appliance developers <dev@kimi-appliance.local>" CACHE STRING
  "Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${KIMI_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL appliance engine ${_kimi_gpu_components})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_APPLIANCE_PACKAGE_NAME kimi-appliance)
set(CPACK_DEBIAN_APPLIANCE_PACKAGE_SECTION net)
set(CPACK_DEBIAN_APPLIANCE_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_APPLIANCE_DESCRIPTION "Kimi K3 sovereign appliance daemon
Serves the Kimi K3 model inside the operator's network through an
OpenAI-compatible API, records every request and administrative act in a
tamper-evident audit log, and loads only model files whose OpenSSF Model
Signing signature verifies against the operator's trust store.")
set(CPACK_DEBIAN_APPLIANCE_PACKAGE_CONTROL_EXTRA
  ${_pkg}/debian/kimi-appliance/postinst
  ${_pkg}/debian/kimi-appliance/prerm
  ${_pkg}/debian/kimi-appliance/postrm
  ${_pkg}/debian/kimi-appliance/conffiles)

set(CPACK_DEBIAN_ENGINE_PACKAGE_NAME kimi-engine)
set(CPACK_DEBIAN_ENGINE_PACKAGE_SECTION science)
set(CPACK_DEBIAN_ENGINE_DESCRIPTION "Kimi K3 inference engine tool and worker
Runs the Kimi K3 architecture (Kimi Delta Attention and gated MLA layers,
mixture of experts, MXFP4 weights) from safetensors model directories on
the CPU: inspection, generation, tokenisation, benchmarks and a worker.")

include(CPack)

add_test(NAME packaging_deb COMMAND ${_pkg}/tests/deb_test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(packaging_deb PROPERTIES TIMEOUT 600 LABELS packaging)

# The postinst's path handling on a staged root: links planted by the service account are
# refused and their targets left alone (no root needed; as root it checks owners too).
add_test(NAME packaging_maintscript_paths COMMAND ${_pkg}/tests/maintscript_paths_test.sh)
set_tests_properties(packaging_maintscript_paths PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 LABELS packaging)

# No phone-home: the daemon and kimictl under strace connect only to loopback, local sockets
# and configured upstreams (skipped, exit 77, where strace is missing or cannot trace).
find_package(Python3 COMPONENTS Interpreter)
add_test(NAME packaging_no_phone_home
  COMMAND ${CMAKE_COMMAND} -E env KIMI_APPLIANCE_BIN=$<TARGET_FILE:kimi-appliance> KIMICTL_BIN=$<TARGET_FILE:kimictl>
          KIMI_ENGINE_BIN=$<TARGET_FILE:kimi-engine>
          ${Python3_EXECUTABLE} ${_pkg}/tests/no_phone_home_test.py -v)
set_tests_properties(packaging_no_phone_home PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS "packaging;integration")

# The offline install end to end (make test-install, docs/packaging.md): root only, skipped
# (exit 77) without root, debootstrap or network namespaces. The first run fetches
# debootstrap's packages once into BUILD_DIR/debootstrap.
add_test(NAME packaging_install COMMAND ${_pkg}/tests/install_test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(packaging_install PROPERTIES TIMEOUT 1800 SKIP_RETURN_CODE 77 LABELS "packaging;install")
