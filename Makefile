# JointLimit: everything a fresh machine needs goes through these targets.
#   make demo      build, install into the embedded Blender and run the demo
#   make test      build, install and run the whole suite (bpy $(BPY_VERSION), Blender 5.2 LTS)
#   make test BPY_VERSION=4.5.15    the same on another Blender (5.0.1, 4.5.15: see SUPPORTED_BPY)
#   make test BLENDER=/path/to/blender   the same suite inside that Blender (pytest-blender)
#   make smoke     a subset through pytest-blender with the embedded launcher

# The Blender versions CI runs (the README's "Supported Blender versions" table); the first is the default.
SUPPORTED_BPY := 5.2.3 5.0.1 4.5.15
BPY_VERSION ?= $(firstword $(SUPPORTED_BPY))
# The Python that creates the venv; empty: the one bpy needs, found by scripts/make_venv.py.
PYTHON      ?=
BOOTSTRAP   ?= python3
VENV        ?= $(if $(filter $(firstword $(SUPPORTED_BPY)),$(BPY_VERSION)),.venv,.venv-bpy$(BPY_VERSION))
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.jointlimit-setup-$(BPY_VERSION)
BLENDER     ?=
PYTEST_ARGS ?=

.PHONY: setup build test smoke test-all demo bench docs clean

setup: $(STAMP)

$(STAMP): requirements-test.txt Makefile scripts/embedded_blender.py scripts/make_venv.py
	@$(BOOTSTRAP) scripts/make_venv.py $(BPY_VERSION) $(VENV) $(if $(PYTHON),--python $(PYTHON)) >/dev/null
	$(PY) -m pip install --quiet --disable-pip-version-check "bpy==$(BPY_VERSION)" -r requirements-test.txt
	@printf '#!/bin/sh\n# The embedded Blender (bpy $(BPY_VERSION)) as a blender command.\nJOINTLIMIT_BLENDER="%s" exec "%s" "%s" "$$@"\n' \
		"$(abspath $(VENV))/bin/blender" "$(abspath $(PY))" "$(abspath scripts/embedded_blender.py)" > $(VENV)/bin/blender
	@chmod +x $(VENV)/bin/blender
	@touch $@

build: setup
	$(PY) scripts/build_extension.py

test: build
	$(PY) scripts/run_tests.py $(if $(BLENDER),--blender $(BLENDER)) $(PYTEST_ARGS)

smoke: build
	$(PY) scripts/run_tests.py --blender $(VENV)/bin/blender -m smoke $(PYTEST_ARGS)

test-all:
	@for v in $(SUPPORTED_BPY); do $(MAKE) test BPY_VERSION=$$v || exit 1; done

demo: build
	@mkdir -p out/blender-user out/cache
	BLENDER_USER_RESOURCES=$(abspath out/blender-user) XDG_CACHE_HOME=$(abspath out/cache) \
		$(VENV)/bin/blender -b --factory-startup --python-exit-code 1 --python scripts/demo.py

bench: build
	$(PY) -m pip install --quiet --disable-pip-version-check ikpy==4.2.1
	$(PY) scripts/bench/limits.py
	@for b in live_limits limb_ik ccd deform; do \
		test -f scripts/bench/$$b.py || continue; \
		$(VENV)/bin/blender -b --factory-startup --python-exit-code 1 --python scripts/bench/$$b.py || exit 1; \
	done

docs: build
	$(VENV)/bin/blender -b --factory-startup --python-exit-code 1 --python scripts/make_docs.py

clean:
	rm -rf dist out .pytest_cache .hypothesis
