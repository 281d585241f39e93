# Wattle: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
SYSTEM_PACKAGES := libcurl4-openssl-dev libsodium-dev libsqlite3-dev pkg-config openssl time
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: all deps build demo test bench format lint clean

all: build

# Installs the system packages that are missing (apt-get, with sudo when not root).
deps:
	@scripts/install-packages.sh $(SYSTEM_PACKAGES)

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

demo: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product wattle
	$$($(SWIFT) build --show-bin-path)/wattle demo

# The resource-count suite (leaks, load) runs alone in a second invocation: counts of file
# descriptors, threads and memory are process-wide.
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build
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
# another binary, BENCH_BUILD_CLI=0 skips building it. BENCH_ARGS=--quick tries the harness fast.
BENCH_SYSTEM_PACKAGES := nginx openssl curl pkg-config libcurl4-openssl-dev libsodium-dev libsqlite3-dev
BENCH_C_BIN := Benchmarks/.build/c
BENCH_CFLAGS ?= -O2 -Wall -Wextra
BENCH_ARGS ?=
BENCH_BUILD_CLI ?= 1
BENCH_WATTLE_CLI ?=

bench: deps
	@scripts/install-packages.sh $(BENCH_SYSTEM_PACKAGES)
	@command -v http >/dev/null || python3 -m pip install -q httpie || echo "httpie could not be installed: its row will be missing"
	mkdir -p $(BENCH_C_BIN)
	cc $(BENCH_CFLAGS) -o $(BENCH_C_BIN)/bench-curl Benchmarks/C/bench-curl.c $$(pkg-config --cflags --libs libcurl)
	cc $(BENCH_CFLAGS) -o $(BENCH_C_BIN)/bench-keychain-c Benchmarks/C/bench-keychain.c $$(pkg-config --cflags --libs libsodium sqlite3)
	$(SWIFT) build -c release --package-path Benchmarks
	if [ "$(BENCH_BUILD_CLI)" = 1 ] && [ -z "$(BENCH_WATTLE_CLI)" ]; then \
	  $(SWIFT) build -c release --package-path Benchmarks --product wattle \
	    || echo "The wattle CLI did not build: its row will say not measured"; \
	fi
	bin="$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)"; \
	python3 Benchmarks/run.py $(BENCH_ARGS) --bin-dir "$$bin" --c-bin-dir $(BENCH_C_BIN) \
	  --wattle-cli "$(if $(BENCH_WATTLE_CLI),$(BENCH_WATTLE_CLI),$$bin/wattle)"

# Regenerates Tests/WattleTests/ReadmeSnippets.swift from README.md's Swift snippets.
readme-snippets:
	python3 scripts/readme_snippets.py
