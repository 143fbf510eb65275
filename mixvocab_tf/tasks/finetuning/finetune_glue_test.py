"""Tests of the GLUE fine-tuning task: inputs, loss, metrics, teacher init."""

import os

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.tasks.finetuning import finetune_glue
from mixvocab_tf.core import testing as trainer_testing
from mixvocab_tf import testing_utils

GLUE_DIR = testing_utils.shared_data("glue")
# The development machines' copy of GLUE (SST-2, MRPC, the MNLI sample).
needs_glue = pytest.mark.skipif(not os.path.isdir(GLUE_DIR),
                                reason=f"no GLUE data at {GLUE_DIR}")


def _tiny(**kwargs):
  kwargs.setdefault("student_preset", None)
  kwargs.setdefault("num_layers", 1)
  kwargs.setdefault("hidden_size", 32)
  kwargs.setdefault("num_attention_heads", 2)
  kwargs.setdefault("data_dir", GLUE_DIR)
  kwargs.setdefault("seq_length", 32)
  return finetune_glue.FinetuneGlueTask(eval_batch_size=16,
                                        global_batch_size=8, **kwargs)


def _write_mrpc(directory, rows):
  os.makedirs(os.path.join(directory, "MRPC"), exist_ok=True)
  header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
  for split in ("train", "dev"):
    with open(os.path.join(directory, "MRPC", f"{split}.tsv"), "w") as f:
      f.write(header)
      for i, (label, a, b) in enumerate(rows):
        f.write(f"{label}\t{i}\t{i + 100}\t{a}\t{b}\n")


def test_pairs_are_packed_with_type_ids(tmp_path):
  _write_mrpc(str(tmp_path), [(1, "the cat sat", "a cat sat down"),
                              (0, "dogs bark", "it rains")] * 5)
  task = _tiny(glue_task="MRPC", data_dir=str(tmp_path))
  assert task.missing_files() == {}
  batch = next(iter(task.build_inputs(training=False)))
  assert batch["example_index"].numpy().tolist() == list(range(10))
  types = batch["input_type_ids"].numpy()[0]
  ids = batch["input_word_ids"].numpy()[0]
  sep = task.tokens.index("[SEP]")
  first_sep, second_sep = np.flatnonzero(ids == sep)[:2]
  assert ids[0] == task.tokens.index("[CLS]")
  assert np.all(types[:first_sep + 1] == 0)
  assert np.all(types[first_sep + 1:second_sep + 1] == 1)
  assert batch["label"].numpy()[:2].tolist() == [1, 0]
  train = next(iter(task.build_inputs(training=True)))
  assert train["input_word_ids"].shape == (8, 32)
  assert finetune_glue.glue_train_steps("mrpc", str(tmp_path), epochs=1,
                                        global_batch_size=4) == 2


def test_mrpc_reports_f1_then_accuracy(tmp_path):
  _write_mrpc(str(tmp_path), [(1, "a", "b"), (0, "c", "d"), (1, "e", "f")])
  task = _tiny(glue_task="mrpc", data_dir=str(tmp_path))
  assert task.best_metric == "f1"
  assert task.report_metrics == ("f1", "accuracy")
  state = task.aggregate_logs(None, {
      "example_index": np.array([2, 0]), "predictions": np.array([0, 1]),
      "labels": np.array([1, 1]), "classifier/loss": np.array([3.0, 2.0])})
  state = task.aggregate_logs(state, {
      "example_index": np.array([1]), "predictions": np.array([1]),
      "labels": np.array([0]), "classifier/loss": np.array([1.0, 1.0])})
  results = task.reduce_aggregated_logs(state)
  # Predictions 1, 1, 0 against labels 1, 0, 1: one true positive.
  assert results["accuracy"] == pytest.approx(1 / 3)
  assert results["f1"] == pytest.approx(2 * 1 / (2 + 2))
  assert results["classifier/loss"] == pytest.approx(4.0 / 3.0)


@needs_glue
def test_loss_is_mean_cross_entropy():
  task = _tiny(glue_task="sst2", data_dir=GLUE_DIR)
  model = task.build_model()
  batch = next(iter(task.build_inputs(training=False)))
  loss, metrics = task.compute_loss(model, batch, training=False)
  logits = model(batch, training=False)["logits"].numpy().astype(np.float64)
  logits -= logits.max(-1, keepdims=True)
  log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  labels = batch["label"].numpy()
  expected = -log_probs[np.arange(len(labels)), labels].mean()
  np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
  assert metrics["classifier/accuracy"].numpy()[1] == len(labels)


@needs_glue
def test_mnli_sample_and_sizes():
  task = _tiny(glue_task="mnli")
  assert task.eval_split == "validation_matched"
  assert task.missing_files() == {}
  assert task.num_train_examples() == 8999
  assert finetune_glue.count_train_examples("sst2") == 67349  # TFDS size.
  batch = next(iter(task.build_inputs(training=False)))
  assert set(batch["label"].numpy()) <= {0, 1, 2}
  assert np.any(batch["input_type_ids"].numpy() == 1)
  with pytest.raises(ValueError, match="Unknown GLUE task 'cola'"):
    _tiny(glue_task="cola")


@needs_glue
def test_starts_from_a_teacher_with_its_vocabulary(tmp_path):
  teacher = trainer_testing.write_tiny_teacher(str(tmp_path / "teacher"))
  task = _tiny(glue_task="sst2", teacher_checkpoint=teacher)
  assert task.vocab_role == "teacher"
  assert len(task.tokens) == 30522
  model = task.build_model()
  task.initialize(model)
  embeddings = model.encoder_network.get_embedding_table().numpy()
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  weights = safetensors_numpy.load_file(
      os.path.join(teacher, "model.safetensors"))
  np.testing.assert_array_equal(
      embeddings, weights["embeddings.word_embeddings.weight"])
  assert set(task.vocab_fingerprints()) == {"teacher"}
  assert tf.is_tensor(model(next(iter(task.build_inputs(training=False))))["logits"])


@needs_glue
@pytest.mark.parametrize("buckets", [None, (12, 20)])
def test_batches_padded_to_their_longest_example_give_the_same_logits(
    buckets):
  fixed = _tiny(glue_task="mrpc", seq_length=128, shuffle_buffer=64)
  trimmed = _tiny(glue_task="mrpc", seq_length=128, shuffle_buffer=64,
                  pad_to_longest=True, bucket_boundaries=buckets)
  model = fixed.build_model()
  for batch in trimmed.build_inputs(training=True).take(4):
    lengths = batch["input_mask"].numpy().sum(1)
    assert batch["input_word_ids"].shape == (8, lengths.max())
    if buckets:  # One bucket per batch.
      buckets_of = {int(sum(l >= b for b in buckets)) for l in lengths}
      assert len(buckets_of) == 1
    padded = {k: tf.pad(batch[k], [[0, 0], [0, 128 - lengths.max()]])
              for k in ("input_word_ids", "input_mask", "input_type_ids")}
    np.testing.assert_allclose(model(batch)["logits"].numpy(),
                               model(padded)["logits"].numpy(), atol=1e-5)
  # Evaluation (SST-2: short sentences): the same examples, in file order,
  # cut per batch.
  cut = next(iter(_tiny(glue_task="sst2", seq_length=128,
                        pad_to_longest=True).build_inputs(training=False)))
  full = next(iter(_tiny(glue_task="sst2", seq_length=128).build_inputs(
      training=False)))
  length = cut["input_word_ids"].shape[1]
  assert length == cut["input_mask"].numpy().sum(1).max() < 128
  np.testing.assert_array_equal(cut["input_word_ids"].numpy(),
                                full["input_word_ids"].numpy()[:, :length])
