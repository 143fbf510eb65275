"""pytest's configuration for the whole repository.

The tests beside the modules (`mixvocab_tf/**/*_test.py`), `tests/`, `tools/`
and `projects/` import their helpers from `mixvocab_testing`, which is not
installed with the package: the repository root goes on `sys.path` however
pytest is started (`pytest`, `python -m pytest`, from any directory).
"""

import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
if _ROOT not in sys.path:
  sys.path.insert(0, _ROOT)
