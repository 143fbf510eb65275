"""pytest's configuration for the whole repository.

The tests beside the modules (`mixvocab_tf/**/*_test.py`), `tests/`, `tools/`
and `projects/` import their helpers from `mixvocab_testing`, which is not
installed with the package: the repository root goes on `sys.path` however
pytest is started (`pytest`, `python -m pytest`, from any directory).
"""

import os
import sys

import pytest

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
  config.addinivalue_line(
      "markers", "xdist_group(name): tests that one pytest-xdist worker "
      "runs together (set below for every test: its file)")
  if hasattr(config.option, "loadscopereorder"):
    # pytest-xdist would order the groups by their number of tests; keep
    # the order `pytest_collection_modifyitems` gives (longest first).
    config.option.loadscopereorder = False


# -----------------------------------------------------------------------------
# In parallel (`-n 2 --dist loadgroup`, pytest-xdist, as CI runs it): each
# test file runs whole on one worker, so a file's module fixtures (a trained
# run, an export) are made once. The files that share one process-wide model
# cache go to the same worker: the deployment tests, the browser test and
# the Android example's test all read the own-data job's exports
# (`deploy_testing.deploy_models`).
_SHARED_GROUPS = {
    "tests/test_android_example.py": "deploy_models",
    "tests/test_deploy.py": "deploy_models",
    "tests/test_web_demo.py": "deploy_models",
}


# The longest groups first (their durations in a full run, 2 cores): a group
# that starts last would leave one worker running alone at the end.
_LONGEST_FIRST = (
    "deploy_models",
    "projects/scaling/test_scaling_smoke.py",
    "tests/test_own_data.py",
    "tests/test_export_snips_tflite.py",
    "tests/test_export_custom_task.py",
    "tests/test_train_resume.py",
)


def _xdist_group(item):
  path = os.path.relpath(str(item.path), _ROOT).replace(os.sep, "/")
  return _SHARED_GROUPS.get(path, path)


# Before pytest-xdist's own hook, which reads the groups into the test ids.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
  groups = {item.nodeid: _xdist_group(item) for item in items}
  rank = {group: i for i, group in enumerate(_LONGEST_FIRST)}
  # Stable: each file keeps its order.
  items.sort(key=lambda item: rank.get(groups[item.nodeid], len(rank)))
  for item in items:
    item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
  if config.getoption("--run_large"):
    return
  skip = pytest.mark.skip(reason="large: run with --run_large")
  for item in items:
    if "large" in item.keywords:
      item.add_marker(skip)
