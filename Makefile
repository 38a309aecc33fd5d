# accelkit: two commands do everything on a fresh Linux machine with Python 3.11.
#   make app    create .venv, install, serve the Voila app on http://127.0.0.1:$(PORT)
#   make test   create .venv, install test tools + torch + chromium, run the whole suite
PYTHON ?= python3
VENV   ?= .venv
PORT   ?= 8866
HOST   ?= 127.0.0.1
BIN    := $(VENV)/bin
TORCH_VERSION ?= 2.13.0

.PHONY: app test install install-test chromium prometheus benchmarks report probe clean help

help:
	@echo "make app        serve the Voila app on http://$(HOST):$(PORT) (PORT=… to change)"
	@echo "make test       run the whole test suite (unit, notebooks, browser)"
	@echo "make benchmarks print the speed figures"
	@echo "make probe      run the quick local hardware probes"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Marker files record what was installed, so a second `make` is instant.
$(VENV)/.installed-app: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# torch is pinned here (not in pyproject) so pip takes the CPU wheel cached on this
# kind of machine instead of downloading a multi-GB CUDA build.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet "torch==$(TORCH_VERSION)"
	$(BIN)/python -m pip install --quiet -e ".[test,probe]"
	touch $@

install: $(VENV)/.installed-app
install-test: $(VENV)/.installed-test

chromium:
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's prometheus for the `accelkit monitor --prometheus` test (a real server on 127.0.0.1).
prometheus:
	@command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ] || { \
	  echo "Installing Debian's prometheus for the monitor test"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq prometheus >/dev/null; }

app: $(VENV)/.installed-app
	$(BIN)/accelkit app --host $(HOST) --port $(PORT)

# ACCELKIT_REQUIRE_ALL turns a missing chromium, prometheus or torch into a test failure, not a skip.
test: $(VENV)/.installed-test chromium prometheus
	ACCELKIT_REQUIRE_ALL=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

benchmarks: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks

probe: $(VENV)/.installed-test
	$(BIN)/accelkit probe --quick

clean:
	rm -rf $(VENV) build dist .pytest_cache
