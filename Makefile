# Wattle: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
# tinyproxy-bin, microsocks: the real HTTP and SOCKS5 proxies the proxy tests go through (binaries only, no service).
# BUILD_PACKAGES: what building the library and the CLI needs (`make cli` installs only these).
BUILD_PACKAGES := libcurl4-openssl-dev libsodium-dev libsqlite3-dev pkg-config
SYSTEM_PACKAGES := $(BUILD_PACKAGES) openssl time tinyproxy-bin microsocks
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: all deps build demo test cli bench format lint clean

all: build

# Installs the system packages that are missing (apt-get, with sudo when not root).
deps:
	@scripts/install-packages.sh $(SYSTEM_PACKAGES)

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# `wattle demo` runs in `wattle-demo` (the demo server's SwiftNIO and BoringSSL stay out of `wattle`).
demo: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product wattle
	$(SWIFT) build $(SWIFT_FLAGS) --product wattle-demo
	$$($(SWIFT) build --show-bin-path)/wattle demo

# `make cli`: a `wattle` to keep on your PATH (README, "The `wattle` CLI"), in .build-cli/release
# with `wattle-demo` beside it: the Swift runtime linked in (--static-swift-stdlib), and libstdc++,
# libsodium and SQLite too (scripts/static-libs.sh: loading them as shared libraries took ~1.2 ms
# of a one-shot GET), linked by lld with RELR relocations (the same script's toolset.json).
# STATIC_PKG_CONFIG points pkg-config at the script's .pc files (see there). SwiftPM keeps its
# build plan when only the toolset's contents change, so the plan is dropped (seconds to redo).
CLI_SCRATCH := .build-cli
STATIC_PKG_CONFIG = PKG_CONFIG_PATH="$(CURDIR)/$(1)/static-libs/pkgconfig$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}"
cli:
	@scripts/install-packages.sh $(BUILD_PACKAGES)
	rm -f $(CLI_SCRATCH)/release.yaml $(CLI_SCRATCH)/*/release/description.json
	flags="$$(SWIFT=$(SWIFT) scripts/static-libs.sh $(CLI_SCRATCH)/static-libs)"; \
	export $(call STATIC_PKG_CONFIG,$(CLI_SCRATCH)); \
	$(SWIFT) build -c release --scratch-path $(CLI_SCRATCH) --static-swift-stdlib $$flags --product wattle && \
	$(SWIFT) build -c release --scratch-path $(CLI_SCRATCH) --static-swift-stdlib $$flags --product wattle-demo
	@# The static build takes its arguments from Samples/CArguments, not from the runtime's reader:
	@# `--help` succeeds only when the binary sees it.
	$(CLI_SCRATCH)/release/wattle --help > /dev/null
	@echo "Built $(CLI_SCRATCH)/release/wattle and $(CLI_SCRATCH)/release/wattle-demo: copy both to a folder on your PATH."

# Three invocations. The keychain suites that run worker processes (PROCESS_SUITES: SIGKILLed
# writers, 8 processes contending for one file) run in the second, after the rest: beside the
# whole suite on 2 cores their workers starved the in-process servers for seconds (streaming
# tests went past their bounds here, and under ThreadSanitizer in CI two timeout tests took 25 s
# for a 1 s limit while the contention test's 8 processes ran). The resource-count suite (leaks,
# load) runs alone in the third: counts of file descriptors, threads and memory are process-wide.
PROCESS_SUITES := KillDurabilityTests|ContentionTests|MultiProcessTests
# $(call SPLIT_TEST,ARGS,MAIN_ARGS): the suite but PROCESS_SUITES, then those; ARGS go to both.
SPLIT_TEST = { $(SWIFT) test --skip-build $(1) $(2) --skip '$(PROCESS_SUITES)' && \
  $(SWIFT) test --skip-build $(1) --filter '$(PROCESS_SUITES)'; }
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(call SPLIT_TEST,,)
	WATTLE_ISOLATED=1 $(SWIFT) test --skip-build --filter IsolatedResourceTests

format:
	$(SWIFT) format --in-place --recursive Sources Tests Samples Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Samples Package.swift

clean:
	rm -rf .build

# `make bench`: Wattle against raw libcurl (C), URLSession, AsyncHTTPClient, curl and httpie, in
# one run against a local nginx; writes BENCHMARKS.md (raw results in bench-results/). Not a
# test: a missed goal never fails. About 7 minutes of measuring; the first release build of the
# Benchmarks package (AsyncHTTPClient, SwiftNIO) and of the CLI takes about 8 more.
# The wattle CLI is built in release through the Benchmarks package, so it shares that package's
# release build of SwiftNIO and BoringSSL and leaves .build alone; BENCH_WATTLE_CLI=PATH measures
# another binary, BENCH_BUILD_CLI=0 skips building it. It is measured a second time linked with
# --static-swift-stdlib, and libstdc++, libsodium and SQLite linked in, as `make cli` builds it
# (its own scratch folder, Benchmarks/.build-static: about 8 more minutes the first time);
# BENCH_WATTLE_CLI_STATIC=PATH measures another binary, BENCH_STATIC_CLI=0 skips it.
# BENCH_ARGS=--quick tries the harness fast.
BENCH_SYSTEM_PACKAGES := nginx openssl curl pkg-config libcurl4-openssl-dev libsodium-dev libsqlite3-dev
BENCH_C_BIN := Benchmarks/.build/c
BENCH_CFLAGS ?= -O2 -Wall -Wextra
BENCH_ARGS ?=
BENCH_BUILD_CLI ?= 1
BENCH_WATTLE_CLI ?=
BENCH_STATIC_CLI ?= 1
BENCH_WATTLE_CLI_STATIC ?=
BENCH_STATIC_SCRATCH := Benchmarks/.build-static

bench: deps
	@scripts/install-packages.sh $(BENCH_SYSTEM_PACKAGES)
	@command -v http >/dev/null || python3 -m pip install -q httpie || echo "httpie could not be installed: its row will be missing"
	mkdir -p $(BENCH_C_BIN)
	cc $(BENCH_CFLAGS) -o $(BENCH_C_BIN)/bench-curl Benchmarks/C/bench-curl.c $$(pkg-config --cflags --libs libcurl)
	cc $(BENCH_CFLAGS) -o $(BENCH_C_BIN)/bench-keychain-c Benchmarks/C/bench-keychain.c $$(pkg-config --cflags --libs libsodium sqlite3)
	# SwiftPM keeps an existing build plan when files are added to a path dependency (the
	# root package, for Benchmarks): drop the plans so new files are compiled (seconds to redo).
	rm -f Benchmarks/.build/release.yaml Benchmarks/.build/*/release/description.json \
	  $(BENCH_STATIC_SCRATCH)/release.yaml $(BENCH_STATIC_SCRATCH)/*/release/description.json
	$(SWIFT) build -c release --package-path Benchmarks
	if [ "$(BENCH_BUILD_CLI)" = 1 ] && [ -z "$(BENCH_WATTLE_CLI)" ]; then \
	  $(SWIFT) build -c release --package-path Benchmarks --product wattle \
	    || echo "The wattle CLI did not build: its row will say not measured"; \
	fi
	if [ "$(BENCH_STATIC_CLI)" = 1 ] && [ -z "$(BENCH_WATTLE_CLI_STATIC)" ]; then \
	  flags="$$(SWIFT=$(SWIFT) scripts/static-libs.sh $(BENCH_STATIC_SCRATCH)/static-libs)"; \
	  $(call STATIC_PKG_CONFIG,$(BENCH_STATIC_SCRATCH)) $(SWIFT) build -c release --package-path Benchmarks \
	    --product wattle --static-swift-stdlib --scratch-path $(BENCH_STATIC_SCRATCH) $$flags \
	    || echo "The static wattle CLI did not build: its row will say not measured"; \
	fi
	bin="$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)"; \
	static="$(if $(BENCH_WATTLE_CLI_STATIC),$(BENCH_WATTLE_CLI_STATIC),$(if $(filter 1,$(BENCH_STATIC_CLI)),$(CURDIR)/$(BENCH_STATIC_SCRATCH)/release/wattle,))"; \
	python3 Benchmarks/run.py $(BENCH_ARGS) --bin-dir "$$bin" --c-bin-dir $(BENCH_C_BIN) \
	  --wattle-cli "$(if $(BENCH_WATTLE_CLI),$(BENCH_WATTLE_CLI),$$bin/wattle)" --wattle-cli-static "$$static"

# Regenerates Tests/WattleTests/ReadmeSnippets.swift from README.md's Swift snippets.
readme-snippets:
	python3 scripts/readme_snippets.py

# ---------------------------------------------------------------------------------------------
# Reliability (RELIABILITY.md): `make fuzz`, `make sanitize`, `make soak`.

# `make fuzz`: each libFuzzer target under Fuzz/ for FUZZ_SECONDS, starting from its committed
# corpus in Fuzz/Corpus/<Name> (new inputs go to .build-fuzz/corpus, crashes to
# .build-fuzz/artifacts); prints the executions per target and fails on any crash.
# FUZZ_SEED=N (not 0, which libFuzzer takes as "random") fixes libFuzzer's seed, makes Swift's
# hashing deterministic (SWIFT_DETERMINISTIC_HASHING) and empties the scratch corpus first, so
# a run starts like the earlier runs with that seed and follows them closely (not exactly: see
# RELIABILITY.md, Fuzzing). Empty (the default): a random seed, for exploring. FUZZ_RUNS=N stops
# a target after N inputs (FUZZ_SECONDS still caps the time). CI (`make reliability`) uses a
# fixed seed and count; finding new bugs is the job of longer `make fuzz` runs here, seeded
# past CI's budget and random. (Through `make soak`, set SOAK_FUZZ_SEED and SOAK_FUZZ_RUNS.)
FUZZ_TARGETS := FuzzCLIItem FuzzURLQuery FuzzHeaderParsing FuzzSealedRecord
FUZZ_SECONDS ?= 60
FUZZ_SEED ?=
FUZZ_RUNS ?=
FUZZ_SCRATCH := .build-fuzz
# libFuzzer without its main, from the Swift toolchain's clang.
FUZZ_RUNTIME ?= $(shell ls $$(dirname $$(dirname $$(readlink -f $$(command -v $(SWIFT)))))/lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-$$(uname -m).a 2>/dev/null | head -1)
FUZZ_BUILD_FLAGS = -c debug --scratch-path $(FUZZ_SCRATCH) -Xswiftc -DWATTLE_FUZZ -Xswiftc -sanitize=address \
  -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
  -Xlinker $(FUZZ_RUNTIME) -Xlinker -lstdc++

fuzz: deps
	for t in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_BUILD_FLAGS) --product $$t || exit 1; done
	@set -o pipefail; bin=$$($(SWIFT) build $(FUZZ_BUILD_FLAGS) --show-bin-path); \
	mkdir -p $(FUZZ_SCRATCH)/artifacts; : > $(FUZZ_SCRATCH)/fuzz-summary.txt; status=0; \
	for t in $(FUZZ_TARGETS); do \
	  $(if $(FUZZ_SEED),rm -rf $(FUZZ_SCRATCH)/corpus/$$t;) mkdir -p $(FUZZ_SCRATCH)/corpus/$$t; \
	  echo "== $$t: $(FUZZ_SECONDS) s$(if $(FUZZ_SEED), with seed $(FUZZ_SEED))"; \
	  $(if $(FUZZ_SEED),SWIFT_DETERMINISTIC_HASHING=1) SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=1 \
	    $$bin/$$t $(FUZZ_SCRATCH)/corpus/$$t Fuzz/Corpus/$$t $(if $(FUZZ_SEED),-seed=$(FUZZ_SEED)) $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS)) \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_SCRATCH)/artifacts/$$t- > $(FUZZ_SCRATCH)/$$t.log 2>&1 || status=1; \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_SCRATCH)/$$t.log); \
	  speed=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_SCRATCH)/$$t.log); \
	  cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_SCRATCH)/$$t.log | tail -1); \
	  line="$$t: $${runs:-?} executions ($${speed:-?}/s), $$cov, corpus $$(ls $(FUZZ_SCRATCH)/corpus/$$t | wc -l) new inputs"; \
	  if grep -q "ERROR: \|==ERROR\|Fatal error\|fuzz property broken" $(FUZZ_SCRATCH)/$$t.log; then \
	    line="$$line, FAILED (see $(FUZZ_SCRATCH)/$$t.log)"; status=1; fi; \
	  echo "$$line" | tee -a $(FUZZ_SCRATCH)/fuzz-summary.txt; \
	done; exit $$status

# `make sanitize`: the whole test suite under AddressSanitizer, then ThreadSanitizer, each in
# its own scratch folder (the first build of each takes about as long as `make test`'s). The
# three tests that bound resident memory while streaming (200 MB down, 64 MB up) are skipped: a
# sanitizer's shadow memory and quarantine break their budgets, not the code (the CLI's 64 MB
# upload peaked at 55 MB under ASan, against a 50 MB bound; read whole it is 158 MB).
# The suites that run worker processes run after the rest, as in `make test`.
# WATTLE_TEST_SANITIZER=1 triples the tests' time bounds for the sanitizers' slowdown
# (`promptBound(seconds:)` in Tests/WattleTests/TestSupport.swift). A failed run ends with
# scripts/sanitizer-summary.sh: the report's gist and the tests still running, so that the last
# lines CI shows name the cause (the whole output is in .build-asan/test.log, .build-tsan/test.log).
# scripts/asan-suppressions.txt lists the known bugs outside Wattle that ASan reports (one, in
# Foundation's Process.run(), fixed upstream after Swift 6.3.1).
SANITIZE_TEST_ARGS ?= --skip 'twoHundredMegabytes|downloadToFile|streamedUpload'
sanitize: deps
	$(SWIFT) build --build-tests --scratch-path .build-asan --sanitize=address
	set -o pipefail; export WATTLE_TEST_SANITIZER=1 SWIFT_BACKTRACE=enable=no \
	  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:malloc_context_size=40:suppressions=$(CURDIR)/scripts/asan-suppressions.txt; \
	  $(call SPLIT_TEST,--scratch-path .build-asan --sanitize=address,$(SANITIZE_TEST_ARGS)) 2>&1 \
	  | tee .build-asan/test.log || { scripts/sanitizer-summary.sh .build-asan/test.log; exit 1; }
	$(SWIFT) build --build-tests --scratch-path .build-tsan --sanitize=thread
	set -o pipefail; export WATTLE_TEST_SANITIZER=1 SWIFT_BACKTRACE=enable=no \
	  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1; \
	  $(call SPLIT_TEST,--scratch-path .build-tsan --sanitize=thread,$(SANITIZE_TEST_ARGS)) 2>&1 \
	  | tee .build-tsan/test.log || { scripts/sanitizer-summary.sh .build-tsan/test.log; exit 1; }

# `make soak`: the long versions of the reliability tests (300 SIGKILLs, 8 processes for 30 s,
# every byte of the keychain file changed twice), then `make fuzz` for 5 minutes per target.
# Figures go to .build/reliability-report.txt. About 25 minutes once `make test` has built.
SOAK_FUZZ_SECONDS ?= 300
SOAK_FUZZ_SEED ?=
SOAK_FUZZ_RUNS ?=
SOAK_KILL_ROUNDS ?= 300
soak: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	rm -f .build/reliability-report.txt
	WATTLE_KILL_ROUNDS=$(SOAK_KILL_ROUNDS) WATTLE_CONTENTION_SECONDS=30 WATTLE_CONTENTION_PROCESSES=8 WATTLE_TAMPER=full \
	  WATTLE_RELIABILITY_REPORT=$(CURDIR)/.build/reliability-report.txt \
	  $(SWIFT) test --skip-build --filter 'KillDurabilityTests|ContentionTests|FileTamperTests|DiskFaultTests|SecretLeakTests|FuzzCorpusReplayTests|MultiProcessTests'
	$(MAKE) fuzz FUZZ_SECONDS=$(SOAK_FUZZ_SECONDS) FUZZ_SEED=$(SOAK_FUZZ_SEED) FUZZ_RUNS=$(SOAK_FUZZ_RUNS)
	@cat .build/reliability-report.txt $(FUZZ_SCRATCH)/fuzz-summary.txt

# `make reliability`: what CI runs after `make test` (see .ci/run): `make soak` with a fixed
# fuzzing budget per target (seed 20261122, 1,000,000 inputs, at most 4 minutes: 35 s for the
# fastest target, ~3 min for FuzzURLQuery, whose URL parsing runs ~5,000 inputs/s since the
# library moved to FoundationEssentials), then `make sanitize`. About 20 minutes after
# `make test` from a clean clone on 2 cores.
RELIABILITY_FUZZ_SECONDS ?= 240
RELIABILITY_FUZZ_SEED ?= 20261122
RELIABILITY_FUZZ_RUNS ?= 1000000
reliability: deps
	$(MAKE) soak SOAK_FUZZ_SECONDS=$(RELIABILITY_FUZZ_SECONDS) SOAK_FUZZ_SEED=$(RELIABILITY_FUZZ_SEED) \
	  SOAK_FUZZ_RUNS=$(RELIABILITY_FUZZ_RUNS)
	$(MAKE) sanitize

.PHONY: fuzz sanitize soak reliability
