# SPDX-License-Identifier: MIT
# Thin wrapper over CMake. `make` builds; `make demo` and `make test` also install
# what they need on a Debian 12 machine, then run.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)

.PHONY: all build demo test test-unit test-asan test-interop deps-build deps-test format format-check clean

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

deps-build:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

demo: deps-build
	@$(MAKE) --no-print-directory build
	@$(BUILD)/bin/softefa demo

# The whole suite: format check, unit tests (plain and ASan+UBSan), interop tests
# with Debian's unmodified clients.
test: deps-test
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory format-check
	@$(MAKE) --no-print-directory test-asan
	@cd $(BUILD) && ctest --output-on-failure --timeout 900

test-asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug \
		-DSOFTEFA_SANITIZE=address,undefined >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ctest --output-on-failure -L unit --timeout 600

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
