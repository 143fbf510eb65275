"""Tests of masked-word accuracy per vocabulary."""

import numpy as np
import pytest

from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.pretraining import mlm_eval
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_testing import trainer_testing
from mixvocab_tf.text import unigram

_TEXT = """The quick brown fox jumps over the lazy dog near the river bank.
A stitch in time saves nine, said the old tailor to his apprentice.

It was the best of times, it was the worst of times, it was the age of wisdom.
Call me Ishmael. Some years ago, never mind how long precisely, I went to sea.
"""


@pytest.fixture()
def held_out(tmp_path):
  path = tmp_path / "held_out.txt"
  path.write_text(_TEXT * 3)
  return str(path)


def _inputs(path):
  return mlm_inputs.MlmInputs(input_files=[path], global_batch_size=4,
                              seq_length=32, max_predictions=5,
                              max_teacher_predictions=3)


def _tiny_nokd(path):
  task = nokd.NoKDTask(
      student=student_spec.StudentSpec(preset=None, num_layers=1,
                                       hidden_size=32, num_attention_heads=2),
      inputs=_inputs(path))
  return task, task.build_model()


@pytest.mark.large
def test_student_accuracy_counts_every_masked_token(held_out):
  task, model = _tiny_nokd(held_out)
  results = mlm_eval.masked_word_accuracy(task, model)
  # The same pass by hand: argmax of the student logits at weighted masks.
  correct = total = 0
  batches = list(mlm_eval.masked_lm_dataset(task))
  for batch in batches:
    logits = model(batch, training=False)["mlm_logits"].numpy()
    weights = batch["masked_lm_weights"].numpy()
    hits = logits.argmax(-1) == batch["masked_lm_ids"].numpy()
    correct += (hits * weights).sum()
    total += weights.sum()
  assert results["eval_batches"] == len(batches) >= 2
  assert results["student_mlm/masked_tokens"] == total > 0
  assert results["student_mlm/accuracy"] == pytest.approx(correct / total)
  assert results["mode"] == "student"
  assert "teacher_mlm/accuracy" not in results
  # One pass, in order: the same numbers again; max_batches cuts it.
  again = mlm_eval.masked_word_accuracy(task, model)
  assert again["student_mlm/accuracy"] == results["student_mlm/accuracy"]
  assert mlm_eval.masked_word_accuracy(task, model,
                                       num_batches=1)["eval_batches"] == 1
  assert "| student |" in mlm_eval.accuracy_table(results)


@pytest.mark.large
def test_floor_scores_the_same_masked_tokens_by_frequency(held_out):
  task, model = _tiny_nokd(held_out)
  results = mlm_eval.masked_word_accuracy(task, model)
  # By hand: frequencies of the training text (here the same file), add-one.
  floor = unigram.UnigramFloor.from_files(held_out, task.vocab("student"))
  losses, hits, total = [], 0.0, 0.0
  for batch in mlm_eval.masked_lm_dataset(task):
    ids = batch["masked_lm_ids"].numpy()
    weights = batch["masked_lm_weights"].numpy()
    losses.extend(-floor.log_probs[ids[weights > 0]])
    hits += ((ids == floor.most_frequent) * weights).sum()
    total += weights.sum()
  assert results["student_mlm/unigram_loss"] == pytest.approx(
      np.mean(losses), rel=1e-6)
  assert results["student_mlm/unigram_accuracy"] == pytest.approx(
      hits / total)
  # A fresh model is far above the floor (near ln of the vocabulary size).
  assert results["student_mlm/loss"] > results["student_mlm/unigram_loss"]
  table = mlm_eval.accuracy_table(results)
  assert "unigram loss" in table
  assert f"{results['student_mlm/unigram_loss']:.3f}" in table
  without = mlm_eval.masked_word_accuracy(task, model, floors=False)
  assert "student_mlm/unigram_loss" not in without


def test_teacher_accuracy_per_vocabulary(held_out, tmp_path):
  teacher = trainer_testing.write_tiny_teacher(str(tmp_path / "teacher"))
  task = stage1.Stage1Task(teacher_checkpoint=teacher,
                           student_embedding_width=32,
                           inputs=_inputs(str(tmp_path / "unused.txt")))
  model = task.build_model()
  task.initialize(model)
  mixed = mlm_eval.masked_word_accuracy(task, model, num_batches=2,
                                        input_files=[held_out])
  for vocab in ("teacher", "student"):
    assert mixed[f"{vocab}_mlm/masked_tokens"] > 0
    assert 0.0 <= mixed[f"{vocab}_mlm/accuracy"] <= 1.0
    assert np.isfinite(mixed[f"{vocab}_mlm/loss"])
    # Its training text (unused.txt) does not exist: no floor, no failure.
    assert f"{vocab}_mlm/unigram_loss" not in mixed
  # All-teacher segmentation masks teacher tokens only.
  teacher_only = mlm_eval.masked_word_accuracy(
      task, model, num_batches=2, mode="teacher", input_files=[held_out])
  assert teacher_only["student_mlm/masked_tokens"] == 0
  assert teacher_only["teacher_mlm/masked_tokens"] > 0
  with pytest.raises(ValueError, match="mode must be one of"):
    mlm_eval.masked_word_accuracy(task, model, mode="both")
