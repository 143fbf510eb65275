"""What `pip install` puts on a user's machine stands on its own.

- every third-party module that the package's non-test modules import is
  provided by a requirement of setup.cfg's `install_requires`; the test code
  the suite runs (tests beside the modules, `mixvocab_testing/`, `tests/`,
  `tools/`, `projects/`) needs at most those and the `test` extra;
- the test helpers (`mixvocab_testing`: a NumPy reference BERT, the
  development data of a checkout) are not among the installed packages;
- no installed file (non-test modules, gin configs, package data) points at
  what only a development checkout has: `../shared`, `STYLE.md`, `DESIGN.md`.

The sources are read with `ast`; nothing is imported.
"""

import ast
import configparser
import fnmatch
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "mixvocab_tf"
TEST_HELPERS = "mixvocab_testing"

#: Top-level module name -> the distribution (pip name) that provides it.
#: A new third-party import needs a line here and a requirement in setup.cfg.
DISTRIBUTIONS = {
    "absl": "absl-py",
    "ai_edge_litert": "ai-edge-litert",
    "flatbuffers": "flatbuffers",
    "gin": "gin-config",
    # Keras 3, which tensorflow requires (a test loads an export with it).
    "keras": "tensorflow",
    "matplotlib": "matplotlib",
    "numpy": "numpy",
    "official": "tf-models-official",
    "orbit": "tf-models-official",
    "safetensors": "safetensors",
    "tensorflow": "tensorflow",
    "tensorflow_datasets": "tensorflow-datasets",
    "tensorflow_text": "tensorflow-text",
    "tf_keras": "tf-keras",
    "yaml": "pyyaml",
    # Test-only.
    "hypothesis": "hypothesis",
    "pytest": "pytest",
    "seqeval": "seqeval",
    "tokenizers": "tokenizers",
}

#: Text that names what only a development checkout has.
CHECKOUT_ONLY = ("../shared", "STYLE.md", "DESIGN.md")

#: Directories of the repository whose code the test suite runs.
TEST_CODE_DIRS = ("mixvocab_tf", TEST_HELPERS, "tests", "tools", "projects")


def _setup_cfg():
  config = configparser.ConfigParser()
  config.read(os.path.join(ROOT, "setup.cfg"))
  return config


def _normalize(distribution):
  return re.sub(r"[-_.]+", "-", distribution).lower()


def _requirement_names(text):
  names = set()
  for line in text.splitlines():
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    if match:
      names.add(_normalize(match.group(1)))
  return names


def _install_requires():
  return _requirement_names(_setup_cfg()["options"]["install_requires"])


def _test_extra():
  return _requirement_names(_setup_cfg()["options.extras_require"]["test"])


def _is_test_file(path):
  name = os.path.basename(path)
  return (name.endswith("_test.py") or name.startswith("test_") or
          name == "conftest.py")


def _python_files(directory):
  files = glob.glob(os.path.join(ROOT, directory, "**", "*.py"),
                    recursive=True)
  return sorted(f for f in files if "egg-info" not in f)


def _guards_import_error(node):
  """A `try:` whose handlers catch ImportError: its imports are optional."""
  for handler in node.handlers:
    caught = handler.type
    names = ([caught] if not isinstance(caught, ast.Tuple) else caught.elts)
    for name in names:
      if isinstance(name, ast.Name) and name.id in ("ImportError",
                                                    "ModuleNotFoundError"):
        return True
  return False


def _imported_modules(path):
  """Top-level names of the absolute imports of a file, optional ones aside."""
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read(), path)
  optional = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Try) and _guards_import_error(node):
      for statement in node.body:
        optional.update(id(n) for n in ast.walk(statement))
  modules = set()
  for node in ast.walk(tree):
    if id(node) in optional:
      continue
    if isinstance(node, ast.Import):
      modules.update(alias.name.split(".")[0] for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0:
      modules.add(node.module.split(".")[0])
  return modules


def _undeclared(files, declared, local=()):
  """["file: module (why)"] for imports no declared requirement provides."""
  problems = []
  for path in files:
    siblings = {os.path.splitext(f)[0]
                for f in os.listdir(os.path.dirname(path))}
    for module in sorted(_imported_modules(path)):
      if (module in sys.stdlib_module_names or module == PACKAGE or
          module in local or module in siblings):
        continue
      where = os.path.relpath(path, ROOT)
      distribution = DISTRIBUTIONS.get(module)
      if distribution is None:
        problems.append(f"{where}: {module} (not in DISTRIBUTIONS)")
      elif _normalize(distribution) not in declared:
        problems.append(f"{where}: {module} ({distribution} is not declared)")
  return problems


def test_the_package_imports_only_declared_requirements():
  files = [f for f in _python_files(PACKAGE) if not _is_test_file(f)]
  assert len(files) > 50, files
  problems = _undeclared(files, _install_requires())
  assert not problems, (
      "Modules of the installed package import what setup.cfg's "
      "install_requires does not provide:\n  " + "\n  ".join(problems))


def test_test_code_imports_only_declared_or_test_requirements():
  files = [f for d in TEST_CODE_DIRS for f in _python_files(d)]
  files.append(os.path.join(ROOT, "conftest.py"))
  local = {TEST_HELPERS, "projects", "tools"}
  problems = _undeclared(files, _install_requires() | _test_extra(), local)
  assert not problems, (
      "Test code imports what neither install_requires nor the test extra "
      "provides (an optional one belongs in a try/except ImportError or "
      "pytest.importorskip):\n  " + "\n  ".join(problems))


def _installed_packages():
  """The packages `packages = find:` picks: setup.cfg's `include` patterns."""
  include = _setup_cfg()["options.packages.find"]["include"].split()
  packages = []
  for directory, subdirectories, files in os.walk(ROOT):
    subdirectories[:] = [d for d in subdirectories if not d.startswith(".")]
    name = os.path.relpath(directory, ROOT).replace(os.sep, ".")
    if "__init__.py" in files and any(fnmatch.fnmatchcase(name, pattern)
                                      for pattern in include):
      packages.append(name)
  return packages


def test_the_test_helpers_are_not_installed():
  packages = _installed_packages()
  assert PACKAGE in packages and f"{PACKAGE}.core" in packages, packages
  assert not [p for p in packages if p.split(".")[0] != PACKAGE], packages
  helpers = []
  for package in packages:
    directory = os.path.join(ROOT, *package.split("."))
    helpers += [os.path.join(directory, f) for f in os.listdir(directory)
                if f in ("testing.py", "testing_utils.py") or
                f.endswith("_testing.py")]
  assert not helpers, (
      f"Test helpers belong in {TEST_HELPERS}/, which is not installed: "
      f"{helpers}")


def _package_data_files():
  config = _setup_cfg()["options.package_data"][PACKAGE]
  files = set()
  for pattern in config.replace(",", " ").split():
    files.update(f for f in glob.glob(os.path.join(ROOT, PACKAGE, pattern))
                 if os.path.isfile(f))
  return sorted(files)


def test_installed_files_name_nothing_outside_the_package():
  modules = [f for f in _python_files(PACKAGE) if not _is_test_file(f)]
  data = _package_data_files()
  assert any(f.endswith(".gin") for f in data), data
  problems = []
  for path in modules + data:
    with open(path, encoding="utf-8", errors="replace") as f:
      text = f.read()
    for fragment in CHECKOUT_ONLY:
      if fragment in text:
        line = text[:text.index(fragment)].count("\n") + 1
        problems.append(f"{os.path.relpath(path, ROOT)}:{line}: {fragment}")
  assert not problems, (
      "Installed files name what a user's installation does not have:\n  " +
      "\n  ".join(problems))


def test_the_installed_files_stay_under_30_mb():
  """The wheel carries the package's modules and data (the pretrained
  students among them) and stays at most 30 MB: the files it zips are
  bounded before compression."""
  total = 0
  for directory, subdirs, files in os.walk(os.path.join(ROOT, PACKAGE)):
    subdirs[:] = [d for d in subdirs if d != "__pycache__"]
    total += sum(os.path.getsize(os.path.join(directory, f)) for f in files)
  assert total <= 30e6, f"{total / 1e6:.1f} MB of package files"
