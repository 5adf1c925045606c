# The two commands of the README, and the few targets they are made of.
#   make run   install missing packages, build, prepare var/, start the appliance on loopback
#              (the console at http://127.0.0.1:8080/console/, served from admin-ui/)
#   make test  the same set-up, then every test through CTest
#   make package  the Debian packages; make iso  the offline medium; make test-install  (docs/packaging.md)
#   make fuzz  every libFuzzer target (or FUZZ_TARGETS) for FUZZ_SECONDS (default 600) each, clang + ASan + UBSan (docs/testing.md)
SHELL := /bin/bash
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
export CCACHE_DIR ?= $(CURDIR)/.ccache

.PHONY: all deps build run test test-asan fuzz package iso test-install clean

all: build

deps:
	@packaging/build-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake --preset release

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	@appliance/dev/prepare-var.sh $(BUILD_DIR) var
	exec $(BUILD_DIR)/appliance/kimi-appliance --config var/appliance.json --console-assets $(CURDIR)/admin-ui

# The suite sends no packet off the machine: what it needs from a registry is fetched first
# (test-deps.sh), and every test process runs with the network guard preloaded (tests/netguard),
# which ends a process that tries to reach any address but loopback outside a namespace it made.
NETGUARD = $(abspath $(BUILD_DIR))/tests/netguard/libkimi_netguard.so

test: build
	@packaging/test-deps.sh $(BUILD_DIR)
	LD_PRELOAD=$(NETGUARD) ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) --timeout 900

# The Debian packages kimi-appliance and kimi-engine, into $(BUILD_DIR)/packages/.
package: build
	cpack --config $(BUILD_DIR)/CPackConfig.cmake -B $(BUILD_DIR)/packages
	@ls -1 $(BUILD_DIR)/packages/*.deb

# The offline installation medium (docs/packaging.md): a signed apt repository, the installer,
# SHA256SUMS signed with the distribution key (KEY_DIR: a GnuPG home; a development key is
# created under $(BUILD_DIR)/distribution-key when absent). MODEL=DIR MODEL_TRUST=PUB.pem puts
# a signed model and its signer's public key on it; DEMO_MODEL=1 a signed random-weight k3-nano.
ISO ?= $(BUILD_DIR)/kimi-appliance.iso
iso: build
	packaging/iso/build-iso.sh --build-dir $(BUILD_DIR) --out $(ISO) $(if $(KEY_DIR),--key-dir $(KEY_DIR)) \
	  $(if $(MODEL),--model $(MODEL) --model-trust $(MODEL_TRUST)) $(if $(DEMO_MODEL),--demo-model)

# The offline install end to end, in a minimal Debian 12 root with no network (root only; the
# first run fetches debootstrap's and the medium's packages, test-deps.sh). `make test` runs it
# too, as CTest's packaging_install (skipped without root).
test-install: build
	@packaging/test-deps.sh $(BUILD_DIR)
	packaging/tests/install_test.sh $(BUILD_DIR)

# AddressSanitizer + UndefinedBehaviorSanitizer in their own tree; not part of `make test`.
test-asan: deps
	cmake --preset asan
	cmake --build build-asan -j$(JOBS)
	@packaging/test-deps.sh build-asan
	LD_PRELOAD=$(abspath build-asan)/tests/netguard/libkimi_netguard.so ASAN_OPTIONS=verify_asan_link_order=0 \
	  ctest --test-dir build-asan --output-on-failure -j$(JOBS) --timeout 1800

# The libFuzzer targets (tests/fuzz/) in their own clang tree, each run for FUZZ_SECONDS on a
# copy of its corpus, one after the other; fails on any crash, leak or hang. Not part of
# `make test`, which runs the same targets' corpus and a fixed set of mutants with any compiler.
# FUZZ_TARGETS="schema request" runs only those.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
fuzz:
	@packaging/build-deps.sh --fuzz
	cmake --preset fuzz
	cmake --build build-fuzz -j$(JOBS) --target kimi_fuzzers
	tests/fuzz/run_fuzz.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz
