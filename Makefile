# carve: `make test` and `make demo` are all a newcomer needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.carve-installed

.PHONY: test typecheck demo bench clean venv

venv: $(STAMP)

# torch is pinned to the local 2.13.0 CPU build and installed first, and every later
# install is constrained by constraints.txt, so that no requirement (transformers, a
# test dependency) can pull the multi-GB CUDA wheels.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(MAKE) --no-print-directory typecheck
	$(PY) -m pytest tests

# mypy checks the package as installed (`carve`, `carve.rewriters`, `carve.runtime`), which the
# source folders are not: the script lays that shape out as symlinks under .typecheck/ first.
typecheck: $(STAMP)
	$(PY) tools/typecheck_tree.py .typecheck
	$(PY) -m mypy

demo: $(STAMP)
	$(PY) examples/demo.py

# TorchFix (the linter `carve lint` is measured against) pins an older libcst, so it
# lives in its own environment; it does not depend on torch.
TORCHFIX_VENV := .venv-torchfix

$(TORCHFIX_VENV)/bin/torchfix:
	$(PYTHON) -m venv $(TORCHFIX_VENV)
	$(TORCHFIX_VENV)/bin/pip install -q torchfix

bench: $(STAMP) $(TORCHFIX_VENV)/bin/torchfix
	TORCHFIX=$(TORCHFIX_VENV)/bin/torchfix $(PY) bench/run.py

clean:
	rm -rf $(VENV) $(TORCHFIX_VENV) .typecheck build *.egg-info
