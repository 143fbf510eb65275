"""The pretrained student the package ships: it loads, fine-tuning starts
from it, and on the held-out text it was measured on it gives the held-out
masked-word accuracy and loss written beside it (`metrics.json`)."""

import json
import os

import numpy as np
import pytest

from mixvocab_tf import assets
from mixvocab_tf.core import evaluation
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.pretraining import mlm_eval
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.text import heldout


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CORPUS_DIR = os.path.join(_ROOT, "..", "shared", "data", "corpus")


#: The sizes the package ships, and the most bytes each may take: the 6 x 96
#: in float32, the larger ones in float16.
_MAX_BYTES = {"6x96": 5 * 2**20, "6x192": 8 * 2**20, "6x256": 13 * 2**20}


@pytest.fixture(scope="module", params=["6x96", "6x192"])
def shipped(request):
  path = assets.pretrained_student_dir(request.param)
  if path is None:
    assert request.param != "6x96", "the package ships no 6x96 student"
    pytest.skip(f"the package ships no {request.param} student")
  with open(os.path.join(path, "metrics.json"), encoding="utf-8") as f:
    return path, json.load(f), request.param


def _task(path, metrics, input_files):
  inputs = dict(metrics["inputs"], input_files=input_files)
  return nokd.NoKDTask(
      student=student_spec.StudentSpec(
          preset=metrics["preset"],
          vocab=os.path.join(path, "student_vocab.txt")),
      inputs=mlm_inputs.MlmInputs(**inputs))


def test_it_is_small_and_says_how_it_was_made(shipped):
  path, metrics, size_name = shipped
  size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
  assert size <= _MAX_BYTES[size_name]
  held = metrics["heldout"]
  # Below the unigram floor: it learned more than word frequencies.
  assert held["loss"] < held["unigram_loss"]
  assert held["accuracy"] > held["unigram_accuracy"]
  if metrics.get("weights_dtype") == "float16":
    # What the stored weights give on the same batches: within 0.01 nats.
    half = metrics["heldout_float16"]
    assert half["masked_tokens"] == held["masked_tokens"]
    assert abs(half["loss"] - held["loss"]) < 0.01


def test_fine_tuning_starts_from_it(shipped):
  path, _, size_name = shipped
  task = intent_slot_task.IntentSlotTask(
      init_checkpoint=path, vocab=os.path.join(path, "student_vocab.txt"),
      seq_length=32)
  assert task.missing_files() == {}
  model = task.build_model()
  task.initialize(model)
  config = model.encoder_network.get_config()
  assert f"{config['num_layers']}x{config['hidden_size']}" == size_name


@pytest.mark.large
def test_it_gives_its_held_out_accuracy(shipped, tmp_path):
  path, metrics, _ = shipped
  split = metrics["split"]
  corpus = [os.path.join(_CORPUS_DIR, name) for name in split["corpus"]]
  if not all(os.path.exists(c) for c in corpus):
    pytest.skip("the corpus it was measured on is not here (../shared)")
  heldout.split_files(corpus, str(tmp_path), split["heldout_every"],
                      split["block_lines"])
  task = _task(path, metrics, [str(tmp_path / heldout.TRAIN_TEXT)])
  model = task.build_model()
  evaluation.restore_model(task, model, path)
  results = mlm_eval.masked_word_accuracy(
      task, model, 50, input_files=[str(tmp_path / heldout.HELDOUT_TEXT)])
  # The weights as stored (float16 for the larger sizes).
  held = metrics.get("heldout_float16") or metrics["heldout"]
  assert results["student_mlm/masked_tokens"] == held["masked_tokens"]
  assert results["student_mlm/accuracy"] == pytest.approx(held["accuracy"],
                                                          abs=0.003)
  assert results["student_mlm/loss"] == pytest.approx(held["loss"], abs=0.02)
  assert results["student_mlm/unigram_loss"] == pytest.approx(
      metrics["heldout"]["unigram_loss"], abs=1e-4)
  assert np.isfinite(results["student_mlm/loss"])
