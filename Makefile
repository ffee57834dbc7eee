# SPDX-License-Identifier: MIT
# Thin wrapper over CMake. `make` builds; `make demo` and `make test` also install
# what they need on a Debian 12 machine, then run.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
# `make fuzz`: seconds per target; `make test-fuzz`: the same, about a minute in all.
FUZZ_SECONDS ?= 600
FUZZ_TEST_SECONDS ?= 15
FUZZ_TARGETS ?= fuzz_wire fuzz_reasm fuzz_srd fuzz_engine fuzz_auth
JOBS       ?= $(shell nproc)
# `make install`: where to (docs/install.md); DESTDIR stages it elsewhere, as packagers do.
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all build install deb demo bench bench-fabric bench-multihost bench-mpi test test-unit test-asan test-tsan test-interop deps-build deps-test format format-check clean fuzz fuzz-build test-fuzz fuzz-coverage

all: build

# A new tree is RelWithDebInfo (CMakeLists.txt); one configured otherwise (an ASan tree
# that `make install BUILD=...` is given) keeps its type.
build:
	@cmake -S . -B $(BUILD) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The libraries into PREFIX/lib/softefa (never over the system's libibverbs), softefa
# into PREFIX/bin, our efadv.h, softefa.pc and the man pages (docs/install.md).
# Under umask 022: what is installed is for every user, whatever the installer's umask
# (CMake makes directories with mkdir's mode, which the umask cuts).
install: build
	@umask 022 && DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(abspath $(PREFIX))"

# A Debian package of the same files under /usr: $(BUILD)/softefa_<version>_<arch>.deb.
deb: build
	@scripts/deb.sh $(BUILD) $(BUILD)

deps-build:
	@scripts/deps.sh build

deps-demo:
	@scripts/deps.sh demo

deps-test:
	@scripts/deps.sh test

demo: deps-demo
	@$(MAKE) --no-print-directory build
	@$(BUILD)/bin/softefa demo

# The whole suite: format check, unit tests (plain, ASan+UBSan, TSan), a short run of
# each fuzz target, interop tests with Debian's unmodified clients.
test: deps-test
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory format-check
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-tsan
	@$(MAKE) --no-print-directory test-fuzz
	@cd $(BUILD) && ctest --output-on-failure --timeout 900

test-asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug \
		-DSOFTEFA_SANITIZE=address,undefined >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ctest --output-on-failure -L 'unit|asan' --timeout 600

# The engine is multi-threaded (progress thread, application threads): ThreadSanitizer.
test-tsan:
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSOFTEFA_SANITIZE=thread >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	@cd $(TSAN_BUILD) && ctest --output-on-failure -L unit --timeout 600

# The libFuzzer targets of tests/fuzz (docs/security.md), built by clang with coverage,
# ASan and UBSan in a build of their own.
fuzz-build:
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSOFTEFA_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz

# Long runs: each target FUZZ_SECONDS on one core, its corpus kept between runs.
fuzz: fuzz-build
	@tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# A short run of each from fresh seeds, in `make test`.
test-fuzz: fuzz-build
	@tests/fuzz/run.sh --fresh $(FUZZ_BUILD) $(FUZZ_TEST_SECONDS) $(FUZZ_TARGETS)

# The source lines the corpora of the last run reach (llvm-cov, a build of its own).
fuzz-coverage:
	@tests/fuzz/coverage.sh $(FUZZ_BUILD)

# softefa against raw UDP, kernel TCP, libfabric and UCX: docs/performance.md.
bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	@PERF_DOCS=$(CURDIR)/docs bench/perf.sh $(BUILD)

# The simulated fabric studies: docs/fabric.md and its plots (a few minutes).
bench-fabric:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	@bench/fabric.sh $(BUILD)

# softefa across namespace hosts against kernel TCP: docs/multihost.md (root).
bench-multihost:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	@bench/multihost.sh $(BUILD)

# MPI alone (also part of make bench): Open MPI over softefa beside its tcp transport,
# bench/out/perf/mpi.md (docs/mpi.md).
bench-mpi:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	@bench/mpi.sh $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(FUZZ_BUILD)-cov
