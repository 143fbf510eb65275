"""pytest's configuration for the whole repository.

The tests beside the modules (`mixvocab_tf/**/*_test.py`), `tests/`, `tools/`
and `projects/` import their helpers from `mixvocab_testing`, which is not
installed with the package: the repository root goes on `sys.path` however
pytest is started (`pytest`, `python -m pytest`, from any directory).
"""

import os
import sys

# The tests run TensorFlow's default CPU allocator: the pooling one that the
# package switches on for its jobs (`mixvocab_tf/cpu_allocator.py`) made the
# fast tier of many short tests 278 -> 332 s, and an allocator does not
# change arithmetic. `cpu_allocator_test.py` checks the switch in a child
# process without this value.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "false")

_ROOT = os.path.dirname(os.path.abspath(__file__))
if _ROOT not in sys.path:
  sys.path.insert(0, _ROOT)


# -----------------------------------------------------------------------------
# Two tiers. `python3.11 -m pytest -q` runs the fast one (every module, in a
# few minutes on 2 cores); `--run_large` adds the tests marked
# `@pytest.mark.large` (whole jobs, exports, real teachers, browsers): the
# full suite, which CI runs.


def pytest_addoption(parser):
  parser.addoption("--run_large", action="store_true", default=False,
                   help="also run the tests marked large (the full suite)")


def pytest_configure(config):
  config.addinivalue_line(
      "markers", "large: a slow test (a job, an export, a real teacher, a "
      "browser); runs only with --run_large")


def pytest_collection_modifyitems(config, items):
  if config.getoption("--run_large"):
    return
  import pytest  # pylint: disable=g-import-not-at-top
  skip = pytest.mark.skip(reason="large: run with --run_large")
  for item in items:
    if "large" in item.keywords:
      item.add_marker(skip)
