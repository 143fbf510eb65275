"""docs/CONFIG.md lists the configurables the code registers, as they are now.

The page is generated; a configurable or default changed in the code and not
regenerated would mislead whoever configures a run from it.
"""

import os

# Registers what the trainer registers (tasks, jobs, trainer), as
# `python -m mixvocab_tf.train --list_configurables` does.
import mixvocab_tf.train  # pylint: disable=unused-import
from mixvocab_tf.core import gin_utils

_DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "docs", "CONFIG.md")


def test_config_doc_is_current():
  with open(_DOC, encoding="utf-8") as f:
    written = f.read()
  assert written == gin_utils.configurables_markdown(), (
      f"docs/CONFIG.md is out of date; regenerate it with (from the "
      f"repository root): {gin_utils.CONFIG_DOC_COMMAND}")
