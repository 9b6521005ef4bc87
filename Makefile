# groundplane_otel — every target sets itself up (venv, pinned installs, Debian packages).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
EXTRAS := dev,prometheus,langgraph,mcp,openai,openinference,langchain,openai-agents,pydantic-ai,openinference-frameworks,traceloop,web,docs,dashboards
STAMP  := $(VENV)/.installed

.PHONY: demo quickstart docs test unit lint typecheck wheel-check peer-sdk bench bench-smoke system-deps clean

demo: $(STAMP)
	$(PY) examples/demo_agent.py

quickstart: $(STAMP)
	$(PY) examples/quickstart.py

test: $(STAMP) system-deps lint typecheck wheel-check docs peer-sdk
	$(PY) -m pytest

# The docs site (docs/, mkdocs.yml): strict, so a broken link or anchor fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -f mkdocs.yml -d build/site

unit: $(STAMP)
	$(PY) -m pytest -x -q --ignore=tests/integrations

lint: $(STAMP)
	$(VENV)/bin/ruff check groundplane_otel tests examples bench dashboards
	$(VENV)/bin/ruff format --check groundplane_otel tests examples bench dashboards

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict groundplane_otel
	$(VENV)/bin/mypy --strict --python-version 3.11 dashboards/generate.py  # the SDK needs 3.11

# The wheel builds, installs into a clean venv with only the core dependencies, and imports.
wheel-check: $(STAMP)
	rm -rf build/wheel-check && mkdir -p build/wheel-check
	$(PY) -m build --wheel --outdir build/wheel-check . > build/wheel-check/build.log 2>&1 \
		|| (cat build/wheel-check/build.log; exit 1)
	$(PYTHON) -m venv build/wheel-check/venv
	build/wheel-check/venv/bin/pip install -q -c constraints.txt build/wheel-check/*.whl
	build/wheel-check/venv/bin/python -c "import groundplane_otel as g, groundplane_otel.otel as o; \
		assert g.__version__ and o.install; print('wheel ok', g.__version__)"

# The SDK's own trace tests (the pinned sdist, downloaded into build/peer-sdk once), plain and
# with the guard on every TracerProvider: any difference not in tests/peer_sdk/allowlist.toml
# fails (about 10 s).
peer-sdk: $(STAMP)
	$(PY) tests/peer_sdk/run.py

bench: $(STAMP)
	$(PY) -m bench

bench-smoke: $(STAMP)
	$(PY) -m bench --smoke

# Real Prometheus + promtool (Debian) for the operations tests; Chromium for the browser test
# of the streamed page (tests/integrations/test_stream_page.py).
system-deps:
	@command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null)
	@test -x /usr/bin/chromium || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e ".[$(EXTRAS)]"
	touch $(STAMP)

clean:
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
