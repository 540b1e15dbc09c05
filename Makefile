# What people and CI run (DESIGN.md, "Public surface"). Every target that builds first runs
# scripts/setup, which installs missing Debian packages and prints nothing when none is missing.
#
#   make build      release build (preset "release", build/); the binary is build/vigil
#   make test       build, then the ctest suite but the "long" label (benchmarks smoke-run once)
#   make test-fast  build, then the tests labelled "unit" only: no child process, server, oracle
#                   or long test (labels: cmake/VigilHelpers.cmake); with the build up to date
#                   47 s on a 2-core machine for 1,170 tests (make test: 150 s, 1,452 tests)
#   make demo       build the vigil binary alone (what scripts/demo runs: 222 of the 497 build
#                   steps), then scripts/demo, which ends with how long setup, build and demo took
#   make demo-ui    build the vigil binary, then scripts/demo-ui: vigil serve with the
#                   workbench (/ui) on cases raised from generated payments; prints the URL
#                   and tokens, serves until Ctrl-C
#   make bench      build, then every benchmark measured for real; JSON in build/bench/
#   make debug      Debug build + tests in build-debug/
#   make asan       ASan + UBSan build + tests in build-asan/
#   make tsan       TSan build + tests in build-tsan/ (suppressions: scripts/tsan.supp)
#   make test-long  the tests labelled "long", in build/
#   make fuzz       clang + libFuzzer build in build-fuzz/, then each fuzzer for FUZZ_SECONDS;
#                   report in build-fuzz/fuzz-report.txt, crashes in fuzz/crashes/ (docs/fuzzing.md)
#   make clean      removes every build directory
#
# Variables: JOBS (compile jobs, default: all cores), TEST_JOBS (ctest jobs, default 2);
# for make fuzz: FUZZ_SECONDS (per target, default 300), FUZZ_TARGETS (default: all five),
# FUZZ_FLAGS (more libFuzzer flags, default -timeout=30).

SHELL := /bin/bash
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_JOBS ?= 2
CTEST_FLAGS ?= --output-on-failure

TSAN_SUPP := $(wildcard scripts/tsan.supp)
TSAN_OPTIONS ?= $(if $(TSAN_SUPP),suppressions=$(CURDIR)/$(TSAN_SUPP) )second_deadlock_stack=1
UBSAN_OPTIONS ?= print_stacktrace=1

FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= json_transaction amlworld_csv swift_mt iso20022 policy_expression
FUZZ_FLAGS ?= -timeout=30

.PHONY: all setup build test test-fast demo demo-ui bench debug asan tsan test-long fuzz clean

all: build

setup:
	@scripts/setup

# $(call build_preset,DIR,PRESET[,TARGETS]): configure DIR from PRESET only if it is not
# configured yet or its cache lacks VIGIL_WERROR, which the presets turn on (afterwards
# `cmake --build` re-runs CMake by itself when a CMakeLists.txt changes), then build TARGETS
# (default: all).
define build_preset
	@if [[ ! -f $(1)/build.ninja ]] || ! grep -q '^VIGIL_WERROR:' $(1)/CMakeCache.txt; then \
	  echo "cmake --preset $(2)"; cmake --preset $(2); fi
	cmake --build $(1) -j $(JOBS)$(if $(3), --target $(3))
endef

build: setup
	$(call build_preset,build,release)

test: build
	ctest --test-dir build -LE long $(CTEST_FLAGS) -j $(TEST_JOBS)

test-fast: build
	ctest --test-dir build -L unit $(CTEST_FLAGS) -j $(TEST_JOBS)

test-long: build
	ctest --test-dir build -L long $(CTEST_FLAGS) -j $(TEST_JOBS)

# The demo runs build/vigil and Python tools only: it builds that one target, not the tests and
# benchmarks. VIGIL_DEMO_T0, when make started, lets the demo say how long setup and build took.
ifneq ($(filter demo,$(MAKECMDGOALS)),)
DEMO_T0 := $(shell date +%s.%N)
endif
demo: setup
	$(call build_preset,build,release,vigil)
	VIGIL_DEMO_T0=$(DEMO_T0) scripts/demo

# The analysts' workbench on cases vigil raised (scripts/demo-ui): serves until stopped.
demo-ui: setup
	$(call build_preset,build,release,vigil)
	scripts/demo-ui

# Runs each benchmark binary with real timing (no --benchmark_min_time, no VIGIL_BENCH_SMOKE):
# those listed in build/benchmarks.txt (one per line: a path, or a name found under build/), else
# every build/**/*_benchmark. One failing binary does not stop the others; make fails at the end.
bench: build
	@mkdir -p build/bench
	@set -uo pipefail; \
	find_bins() { find build -path build/bench -prune -o -type f -name "$$1" -perm -u+x -print; }; \
	bins=(); \
	if [[ -s build/benchmarks.txt ]]; then \
	  while read -r entry; do \
	    [[ -z "$$entry" ]] && continue; \
	    if [[ -x "$$entry" ]]; then bins+=("$$entry"); \
	    elif [[ -x "build/$$entry" ]]; then bins+=("build/$$entry"); \
	    else bins+=($$(find_bins "$$(basename "$$entry")")); fi; \
	  done < build/benchmarks.txt; \
	else \
	  mapfile -t bins < <(find_bins '*_benchmark' | sort); \
	fi; \
	if [[ $${#bins[@]} -eq 0 ]]; then \
	  echo "make bench: no benchmark binaries under build/" >&2; exit 1; \
	fi; \
	failed=(); \
	for bin in "$${bins[@]}"; do \
	  name="$$(basename "$$bin")"; \
	  echo "== $$name -> build/bench/$$name.json"; \
	  env -u VIGIL_BENCH_SMOKE VIGIL_SOURCE_DIR="$(CURDIR)" "$$bin" \
	      --benchmark_out="build/bench/$$name.json" --benchmark_out_format=json \
	    || failed+=("$$name"); \
	done; \
	if [[ $${#failed[@]} -gt 0 ]]; then echo "make bench: failed: $${failed[*]}" >&2; exit 1; fi

debug: setup
	$(call build_preset,build-debug,debug)
	ctest --test-dir build-debug $(CTEST_FLAGS) -j $(TEST_JOBS)

asan: setup
	$(call build_preset,build-asan,asan)
	UBSAN_OPTIONS="$(UBSAN_OPTIONS)" ctest --test-dir build-asan $(CTEST_FLAGS) -j $(TEST_JOBS)

tsan: setup
	$(call build_preset,build-tsan,tsan)
	TSAN_OPTIONS="$(TSAN_OPTIONS)" ctest --test-dir build-tsan $(CTEST_FLAGS) -j $(TEST_JOBS)

# Builds only the fuzzers and the libraries they need (not the whole project under clang). Each
# target fuzzes its own writable corpus, build-fuzz/corpus/<target>/, seeded from
# fuzz/corpus/<target>/ (new inputs libFuzzer finds stay in build-fuzz/; copy the interesting
# ones back by hand). Crashing inputs go to fuzz/crashes/<target>/, which make test replays. One
# crashing target does not stop the others; make fails at the end. Logs: build-fuzz/fuzz-*.log.
fuzz: setup
	@command -v clang++ >/dev/null || { \
	  echo "make fuzz: needs clang++ and libFuzzer (Debian: clang libclang-rt-14-dev)" >&2; exit 2; }
	$(call build_preset,build-fuzz,fuzz,$(FUZZ_TARGETS:%=%_fuzzer))
	@set -uo pipefail; \
	report=build-fuzz/fuzz-report.txt; \
	echo "# make fuzz, $$(date -u +%FT%TZ), FUZZ_SECONDS=$(FUZZ_SECONDS) per target" > "$$report"; \
	failed=(); \
	for t in $(FUZZ_TARGETS); do \
	  bin="build-fuzz/fuzz/$${t}_fuzzer"; log="build-fuzz/fuzz-$$t.log"; \
	  if [[ ! -x "$$bin" || ! -d "fuzz/corpus/$$t" ]]; then \
	    echo "make fuzz: unknown target '$$t'" >&2; failed+=("$$t"); continue; \
	  fi; \
	  mkdir -p "build-fuzz/corpus/$$t" "fuzz/crashes/$$t"; \
	  cp -n "fuzz/corpus/$$t"/* "build-fuzz/corpus/$$t"/; \
	  dict=(); [[ -f "fuzz/dictionaries/$$t.dict" ]] && dict=("-dict=fuzz/dictionaries/$$t.dict"); \
	  echo "== $$t: $(FUZZ_SECONDS) s, log $$log"; \
	  UBSAN_OPTIONS="$(UBSAN_OPTIONS)" "$$bin" -max_total_time=$(FUZZ_SECONDS) \
	      -print_final_stats=1 -artifact_prefix="fuzz/crashes/$$t/" "$${dict[@]}" $(FUZZ_FLAGS) \
	      "build-fuzz/corpus/$$t" > "$$log" 2>&1; \
	  rc=$$?; \
	  stat() { sed -n "s/^stat::$$1: *//p" "$$log" | tail -n 1; }; \
	  runs="$$(stat number_of_executed_units)"; \
	  [[ -z "$$runs" ]] && runs="$$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$$log" | tail -n 1)"; \
	  line="$$(printf '%-18s executions %-10s per second %-7s corpus %s files' "$$t" \
	      "$${runs:-?}" "$$(stat average_exec_per_sec)" "$$(ls "build-fuzz/corpus/$$t" | wc -l)")"; \
	  if [[ $$rc -ne 0 ]]; then \
	    line+="  FAILED (exit $$rc): $$(grep -m 1 -o 'Test unit written to .*' "$$log" || echo "see $$log")"; \
	    failed+=("$$t"); \
	  fi; \
	  echo "$$line" | tee -a "$$report"; \
	done; \
	echo "report: $$report"; \
	if [[ $${#failed[@]} -gt 0 ]]; then echo "make fuzz: failed: $${failed[*]}" >&2; exit 1; fi

clean:
	rm -rf build build-debug build-asan build-tsan build-fuzz
