# JointLimit: everything a fresh machine needs goes through these targets.
#   make demo      build, install into the embedded Blender and run the demo
#   make test      build, install and run the whole suite (bpy $(BPY_VERSION))
#   make test BPY_VERSION=4.5.0     the same on the oldest supported Blender
#   make test BLENDER=/path/to/blender   the same suite inside that Blender (pytest-blender)
#   make smoke     a subset through pytest-blender with the embedded launcher

PYTHON      ?= python3.11
BPY_VERSION ?= 5.0.1
VENV        ?= $(if $(filter 5.0.1,$(BPY_VERSION)),.venv,.venv-bpy$(BPY_VERSION))
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.jointlimit-setup-$(BPY_VERSION)
BLENDER     ?=
PYTEST_ARGS ?=

.PHONY: setup build test smoke test-lts demo bench docs clean

setup: $(STAMP)

$(STAMP): requirements-test.txt Makefile scripts/embedded_blender.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
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

test-lts:
	$(MAKE) test BPY_VERSION=4.5.0

demo: build
	@mkdir -p out/blender-user out/cache
	BLENDER_USER_RESOURCES=$(abspath out/blender-user) XDG_CACHE_HOME=$(abspath out/cache) \
		$(VENV)/bin/blender -b --factory-startup --python scripts/demo.py --python-exit-code 1

bench: build
	$(PY) -m pip install --quiet --disable-pip-version-check ikpy==4.2.1
	$(PY) scripts/bench/limits.py
	@for b in live_limits limb_ik ccd deform; do \
		test -f scripts/bench/$$b.py || continue; \
		$(VENV)/bin/blender -b --factory-startup --python scripts/bench/$$b.py --python-exit-code 1 || exit 1; \
	done

docs: build
	$(VENV)/bin/blender -b --factory-startup --python scripts/make_docs.py --python-exit-code 1

clean:
	rm -rf dist out .pytest_cache .hypothesis
