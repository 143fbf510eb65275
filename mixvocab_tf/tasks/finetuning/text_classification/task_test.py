"""Tests of the text classification task: inputs, loss, metrics, teacher
init, on GLUE and on users' own text classification datasets."""

import csv
import os
import shutil
from unittest import mock

import gin
import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_tf.core import optimization
from mixvocab_testing import trainer_testing
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_testing import testing_utils

GLUE_DIR = testing_utils.shared_data("glue")
SST2_DIR = os.path.join(GLUE_DIR, "SST-2")
# The development machines' copy of GLUE (SST-2, MRPC, the MNLI sample).
needs_glue = pytest.mark.skipif(not os.path.isdir(GLUE_DIR),
                                reason=f"no GLUE data at {GLUE_DIR}")


_DATASET_ARGS = ("source", "text_column", "text_b_column", "label_column",
                 "out_of_scope")


def _dataset(name, data_dir=GLUE_DIR, **kwargs):
  return catalog.text_classification(name, data_dir, **kwargs)


def _tiny(name="glue/sst2", data_dir=GLUE_DIR, **kwargs):
  """A tiny task on the dataset `name` (the column arguments go to it)."""
  dataset = _dataset(name, data_dir, **{
      k: kwargs.pop(k) for k in _DATASET_ARGS if k in kwargs})
  kwargs.setdefault("student_preset", None)
  kwargs.setdefault("num_layers", 1)
  kwargs.setdefault("hidden_size", 32)
  kwargs.setdefault("num_attention_heads", 2)
  kwargs.setdefault("seq_length", 32)
  return text_classification_task.TextClassificationTask(
      dataset=dataset, eval_batch_size=16, global_batch_size=8, **kwargs)


def _steps(name, data_dir=GLUE_DIR, epochs=10.0, global_batch_size=64,
           **kwargs):
  return text_classification_task.text_classification_train_steps(
      epochs=epochs, global_batch_size=global_batch_size,
      dataset=_dataset(name, data_dir, **kwargs))


def _write_mrpc(directory, rows):
  os.makedirs(os.path.join(directory, "MRPC"), exist_ok=True)
  header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
  for split in ("train", "dev"):
    with open(os.path.join(directory, "MRPC", f"{split}.tsv"), "w") as f:
      f.write(header)
      for i, (label, a, b) in enumerate(rows):
        f.write(f"{label}\t{i}\t{i + 100}\t{a}\t{b}\n")


@pytest.mark.large
def test_pairs_are_packed_with_type_ids(tmp_path):
  _write_mrpc(str(tmp_path), [(1, "the cat sat", "a cat sat down"),
                              (0, "dogs bark", "it rains")] * 5)
  task = _tiny("glue/MRPC", str(tmp_path))
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
  assert _steps("glue/mrpc", str(tmp_path), epochs=1,
                global_batch_size=4) == 2


def test_mrpc_reports_f1_then_accuracy(tmp_path):
  _write_mrpc(str(tmp_path), [(1, "a", "b"), (0, "c", "d"), (1, "e", "f")])
  task = _tiny("glue/mrpc", str(tmp_path))
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
  # The floor beside the score: train's most frequent label (1) for all.
  assert results["majority_accuracy"] == pytest.approx(2 / 3)
  # Each example's answer in split order, by label name.
  names = task.label_names
  assert task.eval_answers(state) == [(0, {"label": names[1]}),
                                      (1, {"label": names[1]}),
                                      (2, {"label": names[0]})]


@needs_glue
def test_loss_is_mean_cross_entropy():
  task = _tiny("glue/sst2", GLUE_DIR)
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


@pytest.mark.large
@needs_glue
def test_mnli_sample_and_sizes():
  task = _tiny("glue/mnli")
  assert task.eval_split == "validation_matched"
  assert task.missing_files() == {}
  assert task.num_train_examples() == 8999
  assert _dataset("glue/sst2", None).num_train_examples() == 67349  # TFDS.
  batch = next(iter(task.build_inputs(training=False)))
  assert set(batch["label"].numpy()) <= {0, 1, 2}
  assert np.any(batch["input_type_ids"].numpy() == 1)
  with pytest.raises(ValueError, match="Unknown GLUE task 'cola'"):
    _tiny("glue/cola")


@needs_glue
def test_starts_from_a_teacher_with_its_vocabulary(tmp_path):
  teacher = trainer_testing.write_tiny_teacher(str(tmp_path / "teacher"))
  task = _tiny("glue/sst2", teacher_checkpoint=teacher)
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


@pytest.mark.large
@needs_glue
@pytest.mark.parametrize("buckets", [None, (12, 20)])
def test_batches_padded_to_their_longest_example_give_the_same_logits(
    buckets):
  fixed = _tiny("glue/mrpc", seq_length=128, shuffle_buffer=64)
  trimmed = _tiny("glue/mrpc", seq_length=128, shuffle_buffer=64,
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
  # Evaluation (SST-2 dev): the same examples, in batches of near-equal
  # lengths (`batch_padding.evaluation_order`), each cut to its longest.
  def rows(task):
    return {int(i): ids for batch in task.build_inputs(training=False)
            for i, ids in zip(batch["example_index"].numpy(),
                              batch["input_word_ids"].numpy())}
  cut = rows(_tiny("glue/sst2", seq_length=128, pad_to_longest=True))
  full = rows(_tiny("glue/sst2", seq_length=128))
  assert sorted(cut) == sorted(full) == list(range(872))
  for i, ids in cut.items():
    np.testing.assert_array_equal(ids, full[i][:len(ids)])
    assert not full[i][len(ids):].any()
  # Fewer tokens run than in batches cut in file order.
  lengths = np.array([int(full[i].nonzero()[0].max()) + 1
                      for i in range(872)])
  batch = _tiny("glue/sst2").eval_batch_size
  in_file_order = sum(lengths[i:i + batch].max() * len(lengths[i:i + batch])
                      for i in range(0, 872, batch))
  assert sum(map(len, cut.values())) < 0.7 * in_file_order


# -----------------------------------------------------------------------------
# A user's own dataset ('files').
# -----------------------------------------------------------------------------

_WORDS = {"bird": ["feathers", "wings", "sky", "nest", "beak"],
          "cat": ["purr", "whiskers", "meow", "mouse", "claws"],
          "dog": ["bark", "bone", "leash", "fetch", "puppy"]}


def _write_csv(path, header, rows):
  with open(path, "w", newline="", encoding="utf-8") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)


def _write_user_dataset(directory, pair=False):
  """30 train rows of 3 labels (bird 12, cat 9, dog 9); validation: 6 rows,
  the last one labelled 'fish', which train lacks; test: no labels."""
  os.makedirs(directory, exist_ok=True)
  labels = ["bird", "cat", "dog"] * 9 + ["bird"] * 3
  train = []
  for i, label in enumerate(labels):
    words = _WORDS[label]
    text = f"the {words[i % 5]}, and {words[(i + 2) % 5]} number {i}"
    train.append((text, f"about {words[(i + 1) % 5]}", label) if pair else
                 (text, label))
  validation = [("a bird in the sky", "bird"), ("the cat will purr", "cat"),
                ("the dog will bark", "dog"), ("wings and a beak", "bird"),
                ("a bone for the puppy", "dog"),
                ("a fish swims, with fins", "fish")]
  if pair:
    validation = [(a, "and b", label) for a, label in validation]
  header = ["text_a", "text_b", "label"] if pair else ["text", "label"]
  _write_csv(os.path.join(directory, "train.csv"), header, train)
  _write_csv(os.path.join(directory, "validation.csv"), header, validation)
  test = [("a dog barks", "at night"), ("a cat sleeps", "all day")]
  _write_csv(os.path.join(directory, "test.csv"), header[:-1],
             test if pair else [row[:1] for row in test])
  return directory


def _evaluate(task, model):
  """reduce_aggregated_logs over the whole evaluation split."""
  state = None
  for batch in task.build_inputs(training=False):
    outputs = task.validation_step(model, batch)
    state = task.aggregate_logs(
        state, {k: np.asarray(v) for k, v in outputs.items()})
  return task.reduce_aggregated_logs(state)


@pytest.mark.large
def test_user_dataset_labels_inputs_and_unknown_label(tmp_path):
  data_dir = _write_user_dataset(str(tmp_path / "pets"))
  with mock.patch.object(user_dataset.logging, "warning") as warning:
    task = _tiny("files", data_dir)
    assert task.dataset.name == "files" and task.dataset.glue_task is None
    assert task.label_names == ("bird", "cat", "dog")
    assert not task.is_pair
    assert task.missing_files() == {}
    assert task.eval_split == "validation"
    assert task.best_metric == "accuracy"
    assert task.report_metrics == ("accuracy", "macro_f1",
                                   "majority_accuracy")
    assert task.dataset_name == "user:" + os.path.abspath(data_dir)
    # The dataset's warning, once per process (a second task reads the cache).
    _ = _tiny("files", data_dir).label_names
  assert warning.call_count == 1
  assert "'fish' (1 example)" in warning.call_args[0][1]
  assert task.num_train_examples() == 30
  description = task.describe()
  assert os.path.abspath(data_dir) in description
  assert "3 labels" in description
  assert task.report_name().endswith(" pets")

  batch = next(iter(task.build_inputs(training=False)))
  assert batch["label"].numpy().tolist() == [0, 1, 2, 0, 2, -1]
  assert batch["example_index"].numpy().tolist() == list(range(6))
  assert not np.any(batch["input_type_ids"].numpy())
  train = next(iter(task.build_inputs(training=True)))
  assert train["input_word_ids"].shape == (8, 32)
  assert set(train["label"].numpy()) <= {0, 1, 2}

  # The unknown label is left out of the loss (no NaN, no error), whose mean
  # is over the 5 known labels, and counts as wrong in the accuracy.
  model = task.build_model()
  with tf.GradientTape() as tape:
    loss, metrics = task.compute_loss(model, batch, training=True)
  gradients = tape.gradient(loss, model.trainable_variables)
  assert np.isfinite(float(loss))
  assert all(np.all(np.isfinite(tf.convert_to_tensor(g).numpy()))
             for g in gradients if g is not None)
  logits = model(batch, training=False)["logits"].numpy().astype(np.float64)
  loss, metrics = task.compute_loss(model, batch, training=False)
  log_probs = logits - logits.max(-1, keepdims=True)
  log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
  labels = np.array([0, 1, 2, 0, 2])
  expected = -log_probs[np.arange(5), labels].mean()
  np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
  np.testing.assert_allclose(metrics["classifier/loss"].numpy(),
                             [5 * expected, 5], rtol=1e-5)
  assert metrics["classifier/accuracy"].numpy()[1] == 6
  loss_sum, correct, count = text_classification_task.classification_loss(
      logits[:2], tf.constant([-1, -1]))
  assert float(loss_sum) == 0.0 and float(correct) == 0.0
  assert float(count) == 2


def test_added_out_of_scope_texts_are_a_label_but_not_the_floor(tmp_path):
  data_dir = _write_user_dataset(str(tmp_path / "pets"))
  texts = tmp_path / "out_of_scope.txt"
  texts.write_text("".join(f"prose line {i}\n" for i in range(20)))
  task = _tiny("files", data_dir, out_of_scope=str(texts))
  assert task.label_names == ("bird", "cat", "dog", "out_of_scope")
  assert task.num_train_examples() == 50
  # 20 out-of-scope texts outnumber bird's 12; the floor stays bird.
  assert task.label_names[task.majority_label()] == "bird"


@pytest.mark.large
def test_user_dataset_trains_and_reports_its_metrics(tmp_path):
  data_dir = _write_user_dataset(str(tmp_path / "pets"))
  task = _tiny("files", data_dir, shuffle_buffer=64)
  trainer = trainer_lib.Trainer(
      model_dir=str(tmp_path / "run"), task=task, train_steps=4, log_every=1,
      evaluate_every=4,
      optimization=optimization.optimization_config(
          train_steps=4, learning_rate=1e-3))
  records = trainer.train()
  losses = [record.scalars["loss"] for record in records]
  assert losses and np.all(np.isfinite(losses)), losses
  (results,) = trainer.eval_results
  assert results["num_examples"] == 6 and results["num_unseen_labels"] == 1
  assert np.isfinite(results["classifier/loss"])
  for name in ("accuracy", "macro_f1", "majority_accuracy"):
    assert 0.0 <= results[name] <= 1.0
  # Bird is train's most frequent label (12 of 30): 2 of the 6 examples.
  assert results["majority_accuracy"] == pytest.approx(2 / 6)
  # At most 5 of 6 right: no prediction is the unknown label.
  assert results["accuracy"] <= 5 / 6

  # The metrics against the model's own predictions.
  model = task.build_model()
  results = _evaluate(task, model)
  batch = next(iter(task.build_inputs(training=False)))
  predictions = np.argmax(model(batch, training=False)["logits"].numpy(), -1)
  gold = np.array([0, 1, 2, 0, 2, -1])
  assert results["accuracy"] == pytest.approx(np.mean(predictions == gold))
  sklearn_metrics = pytest.importorskip("sklearn.metrics")
  present = sorted({k for k in set(gold) | set(predictions) if k >= 0})
  assert results["macro_f1"] == pytest.approx(sklearn_metrics.f1_score(
      gold, predictions, labels=present, average="macro", zero_division=0))


@pytest.mark.large
def test_user_pair_dataset_packs_pairs_and_exports_its_labels(tmp_path):
  data_dir = _write_user_dataset(str(tmp_path / "pairs"), pair=True)
  task = _tiny("files", data_dir, eval_split="dev")
  assert task.eval_split == "validation"
  assert task.is_pair
  assert "sentence pairs" in task.describe()
  batch = next(iter(task.build_inputs(training=False)))
  assert np.any(batch["input_type_ids"].numpy()[0] == 1)
  assert batch["label"].numpy().tolist()[-1] == -1
  model = task.build_model()
  loss, _ = task.compute_loss(model, batch, training=False)
  assert np.isfinite(float(loss))
  a, b, labels = task.train_split_lists()
  assert len(a) == len(b) == len(labels) == 30
  assert b[0].startswith("about ") and set(labels) == {0, 1, 2}
  module = task.export_module(model)
  assert module.pair and module.label_names == ["bird", "cat", "dog"]
  outputs = module.serve(sentence_a=tf.constant(["a dog barks"]),
                         sentence_b=tf.constant(["at night"]))
  assert outputs["label"].numpy()[0].decode() in task.label_names
  assert outputs["probabilities"].shape == (1, 3)


def test_user_dataset_splits_columns_and_errors(tmp_path):
  data_dir = _write_user_dataset(str(tmp_path / "pets"))
  with pytest.raises(ValueError, match="data_dir must name its directory"):
    _tiny("files", None)
  with pytest.raises(ValueError, match="leave source 'auto'"):
    _tiny("files", data_dir, source="tfds")
  with pytest.raises(ValueError, match="Unknown split 'eval'"):
    _tiny("files", data_dir, eval_split="eval")
  # The test split has no labels: it cannot be evaluated.
  task = _tiny("files", data_dir, eval_split="test")
  missing = task.missing_files()
  assert list(missing) == [f"user dataset {data_dir} test"]
  assert "has no labels" in missing[f"user dataset {data_dir} test"]
  with pytest.raises(ValueError, match="has no labels"):
    task.build_inputs(training=False)
  # Other column names.
  other = str(tmp_path / "columns")
  os.makedirs(other)
  rows = [(f"text {i}", ["yes", "no"][i % 2]) for i in range(6)]
  for split in ("train", "dev"):
    _write_csv(os.path.join(other, f"{split}.csv"), ["review", "verdict"],
               rows)
  with pytest.raises(ValueError, match="no columns 'text', 'label'"):
    _ = _tiny("files", other).label_names
  assert "no columns 'text', 'label'" in " ".join(
      _tiny("files", other).missing_files().values())
  task = _tiny("files", other, text_column="review",
               label_column="verdict")
  assert task.label_names == ("no", "yes")
  assert _steps("files", other, epochs=2, global_batch_size=4,
                text_column="review", label_column="verdict") == 3
  # A missing directory: reported, and described without raising.
  gone = _tiny("files", str(tmp_path / "gone"))
  assert "the directory does not exist" in str(gone.missing_files())
  assert "unreadable" in gone.describe()
  # An intent-and-slot dataset belongs to the SNIPS-style task.
  slots = tmp_path / "slots"
  for split in ("train", "valid"):
    os.makedirs(slots / split)
    (slots / split / "seq.in").write_text("play jazz\nbook a table\n")
    (slots / split / "seq.out").write_text("O B-genre\nO O O\n")
    (slots / split / "label").write_text("PlayMusic\nBookRestaurant\n")
  with pytest.raises(ValueError, match="use the intent-and-slot task"):
    _ = _tiny("files", str(slots)).label_names


def test_glue_train_steps_counts_the_users_train_split(tmp_path):
  data_dir = _write_user_dataset(str(tmp_path / "pets"))
  assert _steps("files", data_dir, epochs=1, global_batch_size=6) == 5
  assert _steps("files", data_dir, epochs=10,
                global_batch_size=64) == 5  # round(300 / 64)
  with pytest.raises(ValueError, match="data_dir must name its directory"):
    _steps("files", None)
  # With gin, one configurable names the data of the task and of the step
  # count (finetune_glue_paper.gin binds it to the macros DATASET and DATA_DIR).
  gin.clear_config()
  try:
    gin.parse_config([
        "DATASET = 'files'", f"DATA_DIR = '{data_dir}'",
        "text_classification_dataset.name = %DATASET",
        "text_classification_dataset.data_dir = %DATA_DIR",
        "text_classification_train_steps.global_batch_size = 6",
        "text_classification_train_steps.epochs = 2"])
    assert text_classification_task.text_classification_train_steps() == 10
    task = text_classification_task.TextClassificationTask(student_preset=None)
    assert task.dataset.name == "files" and task.num_train_examples() == 30
    assert "text_classification_dataset.data_dir" in gin.operative_config_str()
  finally:
    gin.clear_config()


@pytest.mark.skipif(not os.path.isdir(SST2_DIR),
                    reason=f"no SST-2 data at {SST2_DIR}")
@pytest.mark.large
def test_sst2_as_a_users_dataset_reads_as_glue_sst2(tmp_path):
  for name in ("train.tsv", "dev.tsv"):
    shutil.copy(os.path.join(SST2_DIR, name), tmp_path / name)
  user = _tiny("files", str(tmp_path), text_column="sentence")
  glue = _tiny("glue/sst2", GLUE_DIR)
  # Labels '0' and '1' sort to ids 0 and 1, as GLUE's negative / positive.
  assert user.label_names == ("0", "1")
  assert not user.is_pair
  assert user.train_split_lists() == glue.train_split_lists()
  assert user.num_train_examples() == glue.num_train_examples() == 67349
  assert _steps("files", str(tmp_path), text_column="sentence") == (
      _steps("glue/sst2", GLUE_DIR))
  # The dev split, through the evaluation inputs.
  labels = {}
  for task in (user, glue):
    labels[task] = np.concatenate([
        b["label"].numpy() for b in task.build_inputs(training=False)])
  assert len(labels[user]) == 872
  np.testing.assert_array_equal(labels[user], labels[glue])
