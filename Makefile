# accelkit: two commands do everything on a fresh Linux machine with Python 3.11.
#   make app    create .venv, install, serve the Voila app on http://127.0.0.1:$(PORT)
#   make test   create .venv, install test tools + torch + chromium, run the whole suite
#   make hub    the app under JupyterHub on http://127.0.0.1:$(HUB_PORT), one server per person (demo)
PYTHON ?= python3
VENV   ?= .venv
PORT   ?= 8866
HOST   ?= 127.0.0.1
BIN    := $(VENV)/bin
TORCH_VERSION ?= 2.13.0
# npm's configurable-http-proxy for JupyterHub, installed into $(HUB_DIR)/ (not globally).
# Version 5 needs Node.js >= 20; with an older node (Debian 12's is 18) the 4.6 line is taken.
HUB_DIR  ?= .hub
HUB_PORT ?= 8000
CHP_VERSION ?= 5.3.0
CHP_VERSION_OLD_NODE ?= 4.6.3

.PHONY: app hub test install install-test chromium cjk-fonts prometheus proxy benchmarks report probe clean help

help:
	@echo "make app        serve the Voila app on http://$(HOST):$(PORT) (PORT=… to change)"
	@echo "make test       run the whole test suite (unit, notebooks, browser)"
	@echo "make hub        the app under JupyterHub on http://127.0.0.1:$(HUB_PORT) (test login: any name and password)"
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

$(VENV)/.installed-hub: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[hub]"
	touch $@

install: $(VENV)/.installed-app
install-test: $(VENV)/.installed-test

chromium:
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's Noto CJK fonts: chromium prints the Chinese decision page (accelkit report --pdf --lang zh_CN)
# and the Chinese screenshots with them (without, every Chinese character prints as an empty box).
cjk-fonts:
	@fc-list :lang=zh 2>/dev/null | grep -q . || { \
	  echo "Installing Debian's Noto CJK fonts for the Chinese PDF"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq fonts-noto-cjk >/dev/null; }

# Debian's prometheus for the `accelkit monitor --prometheus` test (a real server on 127.0.0.1).
prometheus:
	@command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ] || { \
	  echo "Installing Debian's prometheus for the monitor test"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq prometheus >/dev/null; }

# npm's configurable-http-proxy (JupyterHub's proxy) into $(HUB_DIR)/node_modules, for the
# JupyterHub test and `make hub`; Debian's npm is installed first if npm is missing.
proxy: $(HUB_DIR)/.installed-proxy

$(HUB_DIR)/.installed-proxy:
	@command -v npm >/dev/null 2>&1 || { \
	  echo "Installing Debian's npm for configurable-http-proxy"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm >/dev/null; }
	@v=$$(node -p 'process.versions.node.split(".")[0] >= 20 ? "$(CHP_VERSION)" : "$(CHP_VERSION_OLD_NODE)"') && \
	  echo "Installing npm's configurable-http-proxy@$$v into $(HUB_DIR)/" && \
	  npm install --prefix $(HUB_DIR) --no-audit --no-fund --loglevel=error "configurable-http-proxy@$$v" >/dev/null
	$(HUB_DIR)/node_modules/.bin/configurable-http-proxy --version >/dev/null
	touch $@

app: $(VENV)/.installed-app
	$(BIN)/accelkit app --host $(HOST) --port $(PORT)

# deploy/jupyterhub_config.py with its demo defaults (DummyAuthenticator: any name, any password;
# every server runs as you); the hub's database and cookie secret go to $(HUB_DIR)/state.
hub: $(VENV)/.installed-hub proxy
	ACCELKIT_HUB_STATE=$(HUB_DIR)/state ACCELKIT_HUB_PORT=$(HUB_PORT) $(BIN)/jupyterhub -f deploy/jupyterhub_config.py

# ACCELKIT_REQUIRE_ALL turns a missing chromium, prometheus, torch, jupyterhub or
# configurable-http-proxy into a test failure, not a skip.
test: $(VENV)/.installed-test chromium cjk-fonts prometheus proxy
	ACCELKIT_REQUIRE_ALL=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

benchmarks: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks

probe: $(VENV)/.installed-test
	$(BIN)/accelkit probe --quick

clean:
	rm -rf $(VENV) $(HUB_DIR) build dist .pytest_cache
