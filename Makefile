# The two commands of the README, and the few targets they are made of.
#   make run   install missing packages, build, prepare var/, start the appliance on loopback
#   make test  the same set-up, then every test through CTest
#   make package  the Debian packages (docs/packaging.md)
SHELL := /bin/bash
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
export CCACHE_DIR ?= $(CURDIR)/.ccache

.PHONY: all deps build run test test-asan package clean

all: build

deps:
	@packaging/build-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake --preset release

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	@appliance/dev/prepare-var.sh $(BUILD_DIR) var
	exec $(BUILD_DIR)/appliance/kimi-appliance --config var/appliance.json

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) --timeout 900

# The Debian packages kimi-appliance and kimi-engine, into $(BUILD_DIR)/packages/.
package: build
	cpack --config $(BUILD_DIR)/CPackConfig.cmake -B $(BUILD_DIR)/packages
	@ls -1 $(BUILD_DIR)/packages/*.deb

# AddressSanitizer + UndefinedBehaviorSanitizer in their own tree; not part of `make test`.
test-asan: deps
	cmake --preset asan
	cmake --build build-asan -j$(JOBS)
	ctest --test-dir build-asan --output-on-failure -j$(JOBS) --timeout 1800

clean:
	rm -rf $(BUILD_DIR) build-asan
