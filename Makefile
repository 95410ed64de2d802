# carve: `make test` and `make demo` are all a newcomer needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.carve-installed

.PHONY: test demo bench lint-self clean venv

venv: $(STAMP)

# torch is pinned to the local 2.13.0 CPU build and installed first, so that no
# unpinned requirement can pull the multi-GB CUDA wheels.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest tests

demo: $(STAMP)
	$(PY) examples/demo.py

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info
