"""mixvocab_tf: tiny BERTs for phones by mixed-vocabulary distillation.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training",
EACL 2021, on TensorFlow Model Garden. The public entry points:

- text: `MixedVocabTokenizer` (per-word mixed segmentation, in graph),
  `PretrainingInputConfig` and `pretraining_dataset` (masked-LM batches),
  `load_vocab`;
- assets: `default_teacher_vocab`, `default_student_vocab`,
  `builtin_corpus_files`, `default_teacher_dir`, `pretrained_student_dir`,
  `snips_dir` (what the package ships, and where the default teacher is);
- layers, encoders and models: `DualVocabEmbedding`, `DualVocabBertEncoder`
  (the stage I teacher), `PlainBertEncoder` and `build_student_encoder` with
  `STUDENT_PRESETS` (students), `DualVocabPretrainer`, `MLMPretrainer`,
  `JointIntentSlotModel` (SNIPS), `SentenceClassifier` (GLUE, your labels),
  `load_teacher`;
- serving (`mixvocab_tf.serving`): `export_run` (a trained run to a
  SavedModel that takes raw strings), `convert_run` (that SavedModel to a
  .tflite, with its parity), `load_predictor` (either one, text in, labels
  out).

Importing the package registers its Keras serializable classes, so
`tf_keras.models.load_model` reads an exported SavedModel after
`import mixvocab_tf`. The levels below `core/` (`text`, `layers`,
`networks`, `models`, `assets`) are imported here; `export_run`, `convert_run`
and `load_predictor` sit above the tasks and are imported on first use, so
that importing any module of the package never imports the levels above it.
The trainer is `python -m mixvocab_tf.train` (not imported here).
"""

import importlib

# Before anything imports TensorFlow: its C++ start-up lines (CPU features,
# "failed call to cuInit" on machines without a GPU) stay off the console
# unless --tf_verbose is given or TF_CPP_MIN_LOG_LEVEL is set; and CPU
# tensors come from TensorFlow's pooling allocator (`cpu_allocator.py`).
from mixvocab_tf import quiet as _quiet
_quiet.quiet()
from mixvocab_tf import cpu_allocator as _cpu_allocator  # pylint: disable=g-import-not-at-top
_cpu_allocator.use_pool()

# Kept equal to `version` in setup.cfg (tests/test_readme.py checks it).
__version__ = "0.1.0"

from mixvocab_tf import assets
from mixvocab_tf import text
from mixvocab_tf import layers
from mixvocab_tf import networks
from mixvocab_tf import models

from mixvocab_tf.assets import builtin_corpus_files
from mixvocab_tf.assets import default_student_vocab
from mixvocab_tf.assets import default_teacher_dir
from mixvocab_tf.assets import default_teacher_vocab
from mixvocab_tf.assets import pretrained_student_dir
from mixvocab_tf.assets import snips_dir
from mixvocab_tf.text import load_vocab
from mixvocab_tf.text import MixedVocabTokenizer
from mixvocab_tf.text import pretraining_dataset
from mixvocab_tf.text import PretrainingInputConfig
from mixvocab_tf.layers import DualVocabEmbedding
from mixvocab_tf.networks import build_student_encoder
from mixvocab_tf.networks import DualVocabBertEncoder
from mixvocab_tf.networks import PlainBertEncoder
from mixvocab_tf.networks import STUDENT_PRESETS
from mixvocab_tf.models import DualVocabPretrainer
from mixvocab_tf.models import JointIntentSlotModel
from mixvocab_tf.models import load_teacher
from mixvocab_tf.models import MLMPretrainer
from mixvocab_tf.models import SentenceClassifier

# Public name -> the module that defines it, imported on first access.
_LAZY = {
    "export_run": "mixvocab_tf.serving.export_run",
    "convert_run": "mixvocab_tf.serving.convert_run",
    "load_predictor": "mixvocab_tf.serving.predictor",
}

__all__ = [
    "__version__",
    # Modules.
    "assets", "text", "layers", "networks", "models",
    # Data shipped with the package, and the default teacher.
    "builtin_corpus_files", "default_student_vocab", "default_teacher_dir",
    "default_teacher_vocab", "pretrained_student_dir", "snips_dir",
    # Text.
    "load_vocab", "MixedVocabTokenizer", "pretraining_dataset",
    "PretrainingInputConfig",
    # Layers, encoders, models.
    "DualVocabEmbedding", "build_student_encoder", "DualVocabBertEncoder",
    "PlainBertEncoder", "STUDENT_PRESETS", "DualVocabPretrainer",
    "JointIntentSlotModel", "load_teacher", "MLMPretrainer",
    "SentenceClassifier",
    # Export, conversion, prediction.
    "export_run", "convert_run", "load_predictor",
]


def __getattr__(name):
  if name in _LAZY:
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
  raise AttributeError(f"module 'mixvocab_tf' has no attribute {name!r}")


def __dir__():
  return sorted(set(globals()) | set(_LAZY))
