# Wattle: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
SYSTEM_PACKAGES := libcurl4-openssl-dev libsodium-dev libsqlite3-dev pkg-config openssl
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: all deps build demo test bench format lint clean

all: build

# Installs the system packages that are missing (apt-get, with sudo when not root).
deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

demo: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product wattle
	$$($(SWIFT) build --show-bin-path)/wattle demo

test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build --parallel --num-workers 2

format:
	$(SWIFT) format --in-place --recursive Sources Tests Samples Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Samples Package.swift

clean:
	rm -rf .build

# Regenerates Tests/WattleTests/ReadmeSnippets.swift from README.md's Swift snippets.
readme-snippets:
	python3 scripts/readme_snippets.py
