# Every third-party dependency is a Debian package. A missing one stops the configure step
# with the name of the package to install; nothing is vendored and nothing is downloaded.
find_package(PkgConfig QUIET)

function(kimi_missing what debian_package)
  message(FATAL_ERROR
    "Missing dependency: ${what}. Install the Debian package with:\n"
    "    apt-get install ${debian_package}\n"
    "(or run `make deps` as root, which installs every package the build needs)")
endfunction()

if(NOT PkgConfig_FOUND)
  kimi_missing("pkg-config" "pkg-config")
endif()

find_package(Threads REQUIRED)

pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
if(NOT HTTPLIB_FOUND)
  kimi_missing("cpp-httplib" "libcpp-httplib-dev")
endif()

find_package(SQLite3 QUIET)
if(NOT SQLite3_FOUND)
  kimi_missing("SQLite3" "libsqlite3-dev")
endif()

find_package(OpenSSL 3 QUIET)
if(NOT OpenSSL_FOUND)
  kimi_missing("OpenSSL 3" "libssl-dev")
endif()

pkg_check_modules(SODIUM QUIET IMPORTED_TARGET libsodium)
if(NOT SODIUM_FOUND)
  kimi_missing("libsodium" "libsodium-dev")
endif()

find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  kimi_missing("nlohmann/json" "nlohmann-json3-dev")
endif()

find_package(GTest QUIET)
if(NOT GTest_FOUND)
  kimi_missing("GoogleTest" "libgtest-dev")
endif()

find_package(benchmark QUIET)
if(NOT benchmark_FOUND)
  kimi_missing("Google Benchmark" "libbenchmark-dev")
endif()
