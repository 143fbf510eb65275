"""Tests of GLUE distillation across vocabularies and its cached teacher logits.

A tiny random teacher (2 layers x 32, the default teacher's 30,522-token
vocabulary) stands in for the fine-tuned teacher; SST-2 and MRPC are slices
of the real train and dev splits (tests skipped without them), a user's
dataset a tiny CSV directory.
"""

import csv
import os
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_testing import testing_utils
from mixvocab_tf import text as text_lib
from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import glue
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import optimization
from mixvocab_testing import trainer_testing as testing
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.tasks.distillation import distill_text_classification
from mixvocab_tf.tasks.distillation import teacher_cache
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_tf.tasks.finetuning.text_classification import augment as text_classification_augment
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data

GLUE_DIR = testing_utils.shared_data("glue")
SEQ_LENGTH = 32


def _glue_slice(directory, glue_task, train_size=40, dev_size=12, skip=0):
  """The first rows of a real GLUE task's train and dev TSV files."""
  name = {"sst2": "SST-2", "mrpc": "MRPC"}[glue_task]
  os.makedirs(os.path.join(directory, name), exist_ok=True)
  for split, size in (("train", train_size), ("dev", dev_size)):
    with open(os.path.join(GLUE_DIR, name, f"{split}.tsv"),
              encoding="utf-8") as f:
      lines = f.read().split("\n")
    rows = lines[1 + (skip if split == "train" else 0):][:size]
    with open(os.path.join(directory, name, f"{split}.tsv"), "w",
              encoding="utf-8") as f:
      f.write("\n".join([lines[0]] + rows) + "\n")
  return directory


def _dataset(glue_task, data_dir):
  """GLUE `glue_task` in `data_dir`, or with None the user's files there."""
  return catalog.text_classification(
      f"glue/{glue_task}" if glue_task else "files", data_dir)


def _write_teacher_run(run_dir, teacher_dir, data_dir, glue_task, seed=0,
                       pooling=None):
  """A `text_classification` teacher run (random head) as the trainer saves it.

  With `pooling`, the run's operative_config.gin records it, as the trainer's
  does.
  """
  tf.keras.utils.set_random_seed(seed)
  task = text_classification_task.TextClassificationTask(
      dataset=_dataset(glue_task, data_dir), teacher_checkpoint=teacher_dir,
      seq_length=SEQ_LENGTH, pooling=pooling or "cls")
  if pooling:
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "operative_config.gin"), "w") as f:
      f.write("# Parameters for TextClassificationTask:\n"
              f"TextClassificationTask.pooling = {pooling!r}\n")
  model = task.build_model()
  task.initialize(model)
  if seed:  # Another fine-tuning: other head weights.
    kernel = model.classifier.kernel
    kernel.assign(kernel + 0.1)
  checkpointing.RunCheckpoint(
      run_dir, {"model": model}, task_name="text_classification",
      vocab_fingerprints=task.vocab_fingerprints()).save(1)
  return model


@pytest.fixture(scope="module", params=["sst2", "mrpc"])
def setup(request, tmp_path_factory):
  # The tests of real GLUE slices (the user-dataset tests below need none).
  if not os.path.isdir(GLUE_DIR):
    pytest.skip(f"no GLUE data at {GLUE_DIR}")
  glue_task = request.param
  root = tmp_path_factory.mktemp(f"distill_{glue_task}")
  data_dir = _glue_slice(str(root / "glue"), glue_task)
  teacher_dir = testing.write_tiny_teacher(str(root / "teacher"))
  run_dir = str(root / "teacher_run")
  teacher = _write_teacher_run(run_dir, teacher_dir, data_dir, glue_task)
  return dict(root=root, data_dir=data_dir, teacher_dir=teacher_dir,
              run_dir=run_dir, teacher=teacher, glue_task=glue_task)


def _task(setup, **kwargs):
  kwargs.setdefault("student_preset", None)
  if "teacher_checkpoint" not in kwargs:
    kwargs.setdefault("num_layers", 1)
    kwargs.setdefault("hidden_size", 32)
    kwargs.setdefault("num_attention_heads", 2)
  data_dir = kwargs.pop("data_dir", setup["data_dir"])
  kwargs.setdefault("shuffle_buffer", 64)
  return distill_text_classification.DistillTextClassificationTask(
      teacher_run=setup["run_dir"], teacher_base=setup["teacher_dir"],
      dataset=_dataset(setup["glue_task"], data_dir), seq_length=SEQ_LENGTH,
      teacher_seq_length=SEQ_LENGTH, global_batch_size=8, pad_to_longest=True,
      **kwargs)


@pytest.mark.large
def test_cached_logits_are_the_teachers_direct_outputs(setup):
  task = _task(setup, cache_dir=str(setup["root"] / "cache_direct"))
  outputs = task.teacher_outputs()
  a, b, labels, _ = task.train_examples()
  assert outputs.logits.shape == (len(labels), 2)
  # The teacher on each example alone, padded to SEQ_LENGTH: the cache ran
  # it in length-sorted batches cut to their longest example.
  featurize = text_classification_data.text_classification_featurizer(
      assets.default_teacher_vocab(), SEQ_LENGTH,
      pair=glue.is_pair_task(setup["glue_task"]))
  features = featurize({"sentence_a": tf.constant(a),
                        "sentence_b": tf.constant(b)})
  direct = setup["teacher"](features, training=False)["logits"].numpy()
  np.testing.assert_allclose(outputs.logits, direct, atol=1e-5)
  assert np.ptp(direct[:, 0]) > 1e-3  # Not a constant the test would miss.

  # Each training batch carries its examples' cached logits (by index), and
  # is padded to its longest example.
  batches = list(task.build_inputs(training=True).take(6))
  for batch in batches:
    index = batch["example_index"].numpy()
    np.testing.assert_array_equal(batch["teacher_logits"].numpy(),
                                  outputs.logits[index])
    np.testing.assert_array_equal(batch["label"].numpy(),
                                  np.asarray(labels)[index])
    assert batch["input_word_ids"].shape[1] == int(
        batch["input_mask"].numpy().sum(1).max())
  seen = np.concatenate([b["example_index"].numpy() for b in batches])
  assert len(set(seen.tolist())) == len(labels)  # Every example, shuffled.


@pytest.mark.large
def test_student_identical_to_teacher_has_zero_distillation_loss(setup):
  # The student: the teacher's architecture and vocabulary ...
  task = _task(setup, teacher_checkpoint=setup["teacher_dir"],
               cache_dir=str(setup["root"] / "cache_same"), temperature=2.0,
               hard_label_weight=0.0)
  student = task.build_model()
  # ... and its fine-tuned weights.
  student.set_weights(setup["teacher"].get_weights())
  for batch in task.build_inputs(training=True).take(3):
    logits = student(batch, training=False)["logits"]
    kl_sum, count = distill_text_classification.distillation_term(
        logits, batch["teacher_logits"], 2.0)
    assert float(count) == 8
    assert abs(float(kl_sum)) < 1e-5
    loss, metrics = task.compute_loss(student, batch, training=False)
    assert abs(float(loss)) < 1e-5
    assert "distill/kl" in metrics
  # A student that differs (here: in its classifier's bias) has a positive
  # one, T^2-weighted in the loss.
  other = task.build_model()
  other.set_weights(setup["teacher"].get_weights())
  other.classifier.bias.assign([1.0, -1.0])
  loss, metrics = task.compute_loss(other, batch, training=False)
  kl_sum, count = metrics["distill/kl"].numpy()
  assert kl_sum / count > 1e-2
  np.testing.assert_allclose(float(loss), 4.0 * kl_sum / count, rtol=1e-5)


@pytest.mark.large
def test_stale_cache_is_refused(setup, tmp_path):
  cache_dir = str(tmp_path / "cache")
  task = _task(setup, cache_dir=cache_dir)
  first = task.teacher_outputs()
  assert task.cache_build_seconds is not None
  assert teacher_cache.exists(cache_dir)
  # Read again, not recomputed.
  again = _task(setup, cache_dir=cache_dir)
  np.testing.assert_array_equal(again.teacher_outputs().logits, first.logits)
  assert again.cache_build_seconds is None

  # Another student vocabulary.
  other_vocab = str(tmp_path / "vocab.txt")
  tokens = text_lib.load_vocab(assets.default_student_vocab())
  with open(other_vocab, "w", encoding="utf-8") as f:
    f.write("\n".join(tokens[:-1]) + "\n")
  with pytest.raises(teacher_cache.StaleCacheError, match="student_vocab"):
    _task(setup, cache_dir=cache_dir, vocab=other_vocab).teacher_outputs()

  # Other training data (as many examples, other sentences).
  other_data = _glue_slice(str(tmp_path / "glue"), setup["glue_task"],
                           skip=40)
  with pytest.raises(teacher_cache.StaleCacheError, match="data"):
    _task(setup, cache_dir=cache_dir, data_dir=other_data).teacher_outputs()

  # Another teacher: the teacher run fine-tuned further.
  run_dir = str(tmp_path / "teacher_run")
  _write_teacher_run(run_dir, setup["teacher_dir"], setup["data_dir"],
                     setup["glue_task"], seed=1)
  moved = distill_text_classification.DistillTextClassificationTask(
      teacher_run=run_dir, teacher_base=setup["teacher_dir"],
      dataset=_dataset(setup["glue_task"], setup["data_dir"]),
      seq_length=SEQ_LENGTH, teacher_seq_length=SEQ_LENGTH,
      cache_dir=cache_dir, student_preset=None, num_layers=1, hidden_size=32,
      num_attention_heads=2)
  with pytest.raises(teacher_cache.StaleCacheError,
                     match="teacher_checkpoint"):
    moved.teacher_outputs()
  # The refused cache is left as it was.
  assert teacher_cache.read_fingerprint(cache_dir)["teacher_checkpoint"] == (
      first.fingerprint["teacher_checkpoint"])


@pytest.mark.large
def test_augmented_copies_are_labelled_by_the_teacher_only(setup):
  task = _task(setup, cache_dir=str(setup["root"] / "cache_aug"),
               augment_copies=1, augment_p=0.3, augment_p_delete=0.2,
               augment_swap_pairs=True)
  a, b, labels, is_original = task.train_examples()
  n = len(labels) // 2
  assert is_original == [True] * n + [False] * n
  assert a[n:] != a[:n]
  assert task.teacher_outputs().logits.shape == (2 * n, 2)
  for batch in task.build_inputs(training=True).take(4):
    index = batch["example_index"].numpy()
    np.testing.assert_array_equal(batch["label_weight"].numpy(),
                                  (index < n).astype(np.float32))


@pytest.mark.large
def test_neighbour_substitution_draws_from_the_teachers_embeddings(setup):
  task = _task(setup, cache_dir=str(setup["root"] / "cache_nb"),
               augment_copies=2, augment_p=1.0, augment_p_delete=0.0,
               augment_neighbours=3)
  assert task.cache_dir.endswith("cache_nb")
  a, b, _, is_original = task.train_examples()
  teacher = task.build_teacher()
  near = text_classification_augment.embedding_neighbours(
      teacher.encoder_network.get_embedding_table().numpy(),
      text_lib.load_vocab(task.teacher_vocab_path),
      {w.lower() for s, o in zip(a + b, is_original + is_original) if o
       for w in s.split()}, 3)
  for original, copy in zip(a[:len(a) // 3], a[len(a) // 3:2 * len(a) // 3]):
    for word, new in zip(original.split(), copy.split()):
      # p = 1: every word with neighbours is replaced by one of them.
      assert new in near.get(word.lower(), [word])
  with pytest.raises(ValueError, match="augment_neighbours must be >= 0"):
    _task(setup, augment_neighbours=-1)


@pytest.mark.large
def test_transfer_text_sentences_are_labelled_by_the_teacher_only(setup):
  text = setup["root"] / "transfer.txt"
  text.write_text("A fine film. It was dull!\n\nToo short.\nA fine film.\n"
                  "The story moves slowly but the cast is great.\n",
                  encoding="utf-8")
  if glue.is_pair_task(setup["glue_task"]):
    with pytest.raises(ValueError, match="add single texts"):
      _task(setup, transfer_text=str(text))
    return
  with pytest.raises(ValueError, match="augment_label_weight must be 0"):
    _task(setup, transfer_text=str(text), augment_label_weight=0.5)
  task = _task(setup, cache_dir=str(setup["root"] / "cache_text"),
               transfer_text=str(text), transfer_sentences=10)
  a, _, labels, is_original = task.train_examples()
  n = is_original.count(True)
  # "Too short." has 2 words; "A fine film." is kept once.
  assert sorted(a[n:]) == ["A fine film.", "It was dull!",
                           "The story moves slowly but the cast is great."]
  logits = task.teacher_outputs().logits
  assert logits.shape == (len(labels), 2)
  direct = setup["teacher"](text_classification_data.text_classification_featurizer(
      assets.default_teacher_vocab(), SEQ_LENGTH, pair=False)({
          "sentence_a": tf.constant(a[n:]),
          "sentence_b": tf.constant([""] * (len(a) - n))}),
                            training=False)["logits"].numpy()
  np.testing.assert_allclose(logits[n:], direct, atol=1e-5)
  for batch in task.build_inputs(training=True).take(4):
    index = batch["example_index"].numpy()
    np.testing.assert_array_equal(batch["label_weight"].numpy(),
                                  (index < n).astype(np.float32))


@pytest.mark.large
def test_pooled_outputs_are_cached_and_aligned_through_a_projection(setup):
  # The student: the teacher's architecture and fine-tuned weights, so that
  # an identity projection makes its pooled output the teacher's.
  task = _task(setup, teacher_checkpoint=setup["teacher_dir"],
               cache_dir=str(setup["root"] / "cache_pooled"),
               pooled_kd_weight=2.0, hard_label_weight=0.0)
  outputs = task.teacher_outputs()
  a, b, _, _ = task.train_examples()
  featurize = text_classification_data.text_classification_featurizer(
      assets.default_teacher_vocab(), SEQ_LENGTH,
      pair=glue.is_pair_task(setup["glue_task"]))
  direct = setup["teacher"](featurize({"sentence_a": tf.constant(a),
                                       "sentence_b": tf.constant(b)}),
                            training=False)
  np.testing.assert_allclose(outputs.pooled, direct["pooled_output"].numpy(),
                             atol=1e-5)
  np.testing.assert_allclose(outputs.logits, direct["logits"].numpy(),
                             atol=1e-5)
  assert outputs.pooled.shape == (len(a), 32)

  student = task.build_model()
  student.set_weights(setup["teacher"].get_weights())
  projection = task.pooled_projection
  # Trained and checkpointed beside the student, not inside it.
  assert set(map(id, projection.trainable_variables)) <= set(
      map(id, task.trainable_variables(student)))
  assert not set(map(id, projection.trainable_variables)) & set(
      map(id, student.trainable_variables))
  assert task.checkpoint_items(student)["kd_pooled_projection"] is projection
  projection.kernel.assign(np.eye(32, dtype=np.float32))
  projection.bias.assign(np.zeros(32, np.float32))
  batch = next(iter(task.build_inputs(training=True)))
  np.testing.assert_array_equal(
      batch["teacher_pooled"].numpy(),
      outputs.pooled[batch["example_index"].numpy()])
  loss, metrics = task.compute_loss(student, batch, training=False)
  assert abs(float(loss)) < 1e-5
  assert "distill/pooled_mse" in metrics

  # Another projection: a positive error, weighted in the loss (the KL stays
  # 0: the logits do not pass through it), whose gradient reaches the
  # projection and the student's encoder.
  projection.bias.assign(np.full(32, 0.5, np.float32))
  with tf.GradientTape() as tape:
    loss, metrics = task.compute_loss(student, batch, training=False)
  mse_sum, count = metrics["distill/pooled_mse"].numpy()
  np.testing.assert_allclose(mse_sum / count, 0.25, rtol=1e-5)
  np.testing.assert_allclose(float(loss), 2.0 * 0.25, rtol=1e-5)
  variables = task.trainable_variables(student)
  grads = dict(zip(map(id, variables), tape.gradient(loss, variables)))
  assert np.abs(grads[id(projection.bias)].numpy()).sum() > 0
  pooler = [v for v in student.encoder_network.trainable_variables
            if "pooler" in v.name]
  assert pooler and np.abs(grads[id(pooler[0])].numpy()).sum() > 0


@pytest.mark.large
def test_a_cache_without_pooled_outputs_is_refused_for_pooled_distillation(
    setup, tmp_path):
  cache_dir = str(tmp_path / "cache")
  _task(setup, cache_dir=cache_dir).teacher_outputs()
  with pytest.raises(teacher_cache.StaleCacheError, match="outputs"):
    _task(setup, cache_dir=cache_dir,
          pooled_kd_weight=1.0).teacher_outputs()
  # By default the two live in different directories.
  assert (_task(setup, pooled_kd_weight=1.0).cache_dir !=
          _task(setup).cache_dir)
  with pytest.raises(ValueError, match="pooled_kd_weight"):
    _task(setup, pooled_kd_weight=-1.0)


@pytest.mark.large
def test_the_augmented_transfer_set_is_shuffled_as_a_whole(setup):
  # 40 examples, then copy 1 of each (40-79), then copy 2 (80-119). A 4-example
  # buffer would give first batches of originals only.
  task = _task(setup, cache_dir=str(setup["root"] / "cache_aug2"),
               augment_copies=2, shuffle_buffer=4)
  batches = list(task.build_inputs(training=True).take(3))
  indices = np.concatenate([b["example_index"].numpy() for b in batches])
  assert len(indices) == 24 and indices.max() >= 80, indices
  _, _, labels, _ = task.train_examples()
  for batch in batches:
    index = batch["example_index"].numpy()
    np.testing.assert_array_equal(batch["label"].numpy(),
                                  np.asarray(labels)[index])


# -----------------------------------------------------------------------------
# A user's own dataset ('files').
# -----------------------------------------------------------------------------


def _write_user_dataset(directory, pair=False):
  """30 train rows of labels 'bird', 'cat', 'dog'; validation adds 'fish'."""
  os.makedirs(directory, exist_ok=True)
  words = {"bird": ["wings", "sky", "nest"], "cat": ["purr", "meow", "mouse"],
           "dog": ["bark", "bone", "fetch"]}
  header = ["text_a", "text_b", "label"] if pair else ["text", "label"]
  rows = {"train": [], "validation": []}
  for i in range(30):
    label = ["bird", "cat", "dog"][i % 3]
    text = f"the {words[label][i % 3]} and the {words[label][(i + 1) % 3]} {i}"
    rows["train"].append([text, f"a {words[label][0]}", label] if pair else
                         [text, label])
  rows["validation"] = rows["train"][:5] + [
      ["a fish swims", "in water", "fish"] if pair else
      ["a fish swims", "fish"]]
  for split, split_rows in rows.items():
    with open(os.path.join(directory, f"{split}.csv"), "w", newline="",
              encoding="utf-8") as f:
      writer = csv.writer(f)
      writer.writerow(header)
      writer.writerows(split_rows)
  return directory


@pytest.fixture(scope="module")
def user_setup(tmp_path_factory):
  root = tmp_path_factory.mktemp("distill_user")
  data_dir = _write_user_dataset(str(root / "pets"))
  teacher_dir = testing.write_tiny_teacher(str(root / "teacher"))
  run_dir = str(root / "teacher_run")
  teacher = _write_teacher_run(run_dir, teacher_dir, data_dir, None)
  return dict(root=root, data_dir=data_dir, teacher_dir=teacher_dir,
              run_dir=run_dir, teacher=teacher, glue_task=None)


@pytest.mark.large
def test_user_dataset_transfer_set_cache_and_training(user_setup, tmp_path):
  setup = user_setup
  assert setup["teacher"].num_classes == 3
  task = _task(setup, cache_dir=str(tmp_path / "cache"), augment_copies=1,
               augment_p=0.3)
  assert task.dataset.name == "files"
  assert task.label_names == ("bird", "cat", "dog")
  # The transfer set: the user's train split, then one edited copy of each.
  a, b, labels, is_original = task.train_examples()
  train_a, train_b, train_labels = task.train_split_lists()
  assert len(train_a) == 30 and train_a[0] == "the wings and the sky 0"
  assert a[:30] == train_a and b == train_b * 2 and labels == train_labels * 2
  assert train_labels[:3] == [0, 1, 2]
  assert is_original == [True] * 30 + [False] * 30
  # The teacher's logits, cached, are its direct outputs.
  outputs = task.teacher_outputs()
  assert outputs.logits.shape == (60, 3)
  featurize = text_classification_data.text_classification_featurizer(assets.default_teacher_vocab(),
                                        SEQ_LENGTH, pair=False)
  direct = setup["teacher"](featurize({"sentence_a": tf.constant(a),
                                       "sentence_b": tf.constant(b)}),
                            training=False)["logits"].numpy()
  np.testing.assert_allclose(outputs.logits, direct, atol=1e-5)
  # The fingerprint names the dataset by its directory, beside the data.
  name = "user:" + os.path.abspath(setup["data_dir"])
  assert task.dataset_name == name
  assert outputs.fingerprint["data"] == distill_text_classification.glue_data_fingerprint(
      name, a, b, labels)
  # The same files in another directory are another dataset.
  moved = _write_user_dataset(str(tmp_path / "moved"))
  with pytest.raises(teacher_cache.StaleCacheError, match="data"):
    _task(setup, cache_dir=str(tmp_path / "cache"), data_dir=moved,
          augment_copies=1, augment_p=0.3).teacher_outputs()

  # A step of training, then the user-dataset metrics on validation.
  task = _task(setup, cache_dir=str(tmp_path / "cache"), augment_copies=1,
               augment_p=0.3)
  batch = next(iter(task.build_inputs(training=True)))
  assert batch["teacher_logits"].shape == (8, 3)
  trainer = trainer_lib.Trainer(
      model_dir=str(tmp_path / "run"), task=task, train_steps=2,
      log_every=1, evaluate_every=2,
      optimization=optimization.optimization_config(
          train_steps=2, learning_rate=1e-3))
  records = trainer.train()
  losses = [record.scalars["loss"] for record in records]
  assert losses and np.all(np.isfinite(losses)), losses
  assert task.cache_build_seconds is None  # Read, not rebuilt.
  (results,) = trainer.eval_results
  assert results["num_examples"] == 6 and results["num_unseen_labels"] == 1
  assert np.isfinite(results["classifier/loss"])
  assert results["accuracy"] <= 5 / 6
  assert results["majority_accuracy"] == pytest.approx(2 / 6)
  assert 0.0 <= results["macro_f1"] <= 1.0


def test_the_teacher_reads_what_its_run_was_trained_with(user_setup, tmp_path):
  setup = dict(user_setup)
  # The fixture's run records no pooling: the teacher reads [CLS].
  assert _task(setup).teacher_pooling == "cls"
  setup["run_dir"] = str(tmp_path / "mean_run")
  teacher = _write_teacher_run(setup["run_dir"], setup["teacher_dir"],
                               setup["data_dir"], None, pooling="mean")
  task = _task(setup, cache_dir=str(tmp_path / "cache"))
  assert task.teacher_pooling == "mean"
  a, b, _, _ = task.train_examples()
  featurize = text_classification_data.text_classification_featurizer(
      assets.default_teacher_vocab(), SEQ_LENGTH, pair=False)
  features = featurize({"sentence_a": tf.constant(a),
                        "sentence_b": tf.constant(b)})
  direct = teacher(features, training=False)["logits"].numpy()
  np.testing.assert_allclose(task.teacher_outputs().logits, direct, atol=1e-5)
  # The same weights read through [CLS] are another classifier.
  teacher.pooling = "cls"
  assert np.abs(teacher(features, training=False)["logits"].numpy()
                - direct).max() > 1e-3
  with pytest.raises(ValueError, match="teacher_pooling must be one of"):
    _task(setup, teacher_pooling="max")


@pytest.mark.large
def test_unlabelled_texts_join_with_soft_labels_only(user_setup, tmp_path):
  setup = user_setup
  logs = tmp_path / "logs.txt"
  logs.write_text("a dog with a bone\n\nthe  sky\na dog with a bone\n"
                  "meow\n", encoding="utf-8")
  with pytest.raises(ValueError, match="augment_label_weight must be 0"):
    _task(setup, unlabelled=str(logs), augment_label_weight=0.5)
  task = _task(setup, cache_dir=str(tmp_path / "cache"),
               unlabelled=str(logs))
  a, b, _, is_original = task.train_examples()
  # Whole lines, spaces collapsed, each once, after train.
  assert a[30:] == ["a dog with a bone", "the sky", "meow"]
  assert b[30:] == [""] * 3 and is_original == [True] * 30 + [False] * 3
  assert "_unlabelled" in task.cache_dir
  direct = setup["teacher"](
      text_classification_data.text_classification_featurizer(
          assets.default_teacher_vocab(), SEQ_LENGTH, pair=False)({
              "sentence_a": tf.constant(a[30:]),
              "sentence_b": tf.constant(b[30:])}),
      training=False)["logits"].numpy()
  np.testing.assert_allclose(task.teacher_outputs().logits[30:], direct,
                             atol=1e-5)
  for batch in task.build_inputs(training=True).take(4):
    index = batch["example_index"].numpy()
    np.testing.assert_array_equal(batch["label_weight"].numpy(),
                                  (index < 30).astype(np.float32))
  pairs = _write_user_dataset(str(tmp_path / "pairs"), pair=True)
  with pytest.raises(ValueError, match="add single texts"):
    _task(setup, data_dir=pairs, unlabelled=str(logs)).train_examples()
  # A CSV of logs is read by the dataset's text column, as its splits are.
  renamed = tmp_path / "renamed"
  renamed.mkdir()
  for split in ("train", "validation"):
    rows = (pathlib.Path(setup["data_dir"]) / f"{split}.csv").read_text(
        encoding="utf-8").split("\n", 1)[1]
    (renamed / f"{split}.csv").write_text("sentence,label\n" + rows,
                                          encoding="utf-8")
  csv_logs = tmp_path / "logs.csv"
  csv_logs.write_text("sentence,source\na bird in the sky,app\n",
                      encoding="utf-8")
  task = distill_text_classification.DistillTextClassificationTask(
      teacher_run=setup["run_dir"], teacher_base=setup["teacher_dir"],
      dataset=catalog.text_classification("files", str(renamed),
                                          text_column="sentence"),
      unlabelled=str(csv_logs), student_preset=None, num_layers=1,
      hidden_size=32, num_attention_heads=2, seq_length=SEQ_LENGTH)
  assert task.unlabelled == ["a bird in the sky"]


def test_user_pair_dataset_refuses_transfer_text(user_setup, tmp_path):
  text = tmp_path / "transfer.txt"
  text.write_text("A fine film with a great cast.\n", encoding="utf-8")
  pairs = _write_user_dataset(str(tmp_path / "pairs"), pair=True)
  # Whether the data holds pairs is known once it is read.
  task = _task(user_setup, data_dir=pairs, transfer_text=str(text))
  assert task.is_pair
  with pytest.raises(ValueError, match="add single texts"):
    task.train_examples()
