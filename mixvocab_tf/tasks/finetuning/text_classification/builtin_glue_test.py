"""The built-in GLUE tasks are read as a user's files, with today's results.

Since issue 32 ("one path, not two"), a GLUE task's name is a shortcut to a
directory: its TSV files go through
`datasets.text_classification_files.read_text_classification`, the reader of
a user's files (`datasets.glue.read_glue_tsv`). The digests below were taken
from the reader `load_glue` had before (its own csv loop): the same
sentences, label ids and label names that the task feeds its featurizer, so
the same scores. And SST-2 given as a user's CSV gives the same texts, label
ids and featurized examples as SST-2 by name.
"""

import pytest
import csv
import hashlib
import json
import os

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_testing import testing_utils

_GLUE = testing_utils.shared_data("glue")
_SST2 = os.path.join(_GLUE, "SST-2")

#: (task, split, source, file below the GLUE root) -> (examples, digest of
#: the [sentence_a, sentence_b, label] rows, digest of the label names),
#: read by `load_glue` before its TSV files went through the user-data
#: reader, in the form the task feeds its featurizer (`split_lists`). The
#: full MNLI TSV files are not on the development machines: no digest.
_BEFORE = {
    ("sst2", "train", "tsv", "SST-2/train.tsv"):
        (67349, "75d00803fbff1615", "af627d94d1fc9a77"),
    ("sst2", "validation", "tsv", "SST-2/dev.tsv"):
        (872, "7372ad042bf2461d", "af627d94d1fc9a77"),
    ("mrpc", "train", "tsv", "MRPC/train.tsv"):
        (3668, "d72b13e136d1eae3", "6419dea7fb125a69"),
    ("mrpc", "validation", "tsv", "MRPC/dev.tsv"):
        (408, "24ecad8c328af658", "6419dea7fb125a69"),
    ("mnli", "train", "mnli_json", "MNLI/train_sample.json"):
        (8999, "1a4f641df4792840", "117cd30a94c3b68f"),
    ("mnli", "validation_matched", "mnli_json", "MNLI/dev_sample.json"):
        (1000, "fa58323a5ad93038", "117cd30a94c3b68f"),
}


def _digest(value):
  text = json.dumps(value, sort_keys=True).encode("utf-8")
  return hashlib.sha256(text).hexdigest()[:16]


def _rows(lists):
  """[[sentence_a, sentence_b, label id]] of (sentences_a, sentences_b, ids)."""
  return [list(row) for row in zip(*lists)]


def _tsv_to_csv(tsv_path, csv_path):
  """Writes an SST-2 TSV file (`sentence`, `label`) as a `text,label` CSV.

  Split by hand, not by either reader under test.
  """
  with open(tsv_path, "rb") as f:
    lines = f.read().decode("utf-8").split("\n")
  if lines[-1] == "":
    lines.pop()
  rows = [line.rstrip("\r").split("\t") for line in lines]
  assert rows[0] == ["sentence", "label"], rows[0]
  with open(csv_path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(["text", "label"])
    for row in rows[1:]:
      assert len(row) == 2, row
      writer.writerow(row)


def _features(featurize, examples):
  """The featurized examples of an unbatched dataset, as NumPy arrays."""
  batch = next(iter(examples.batch(1 << 20)))
  return {k: np.asarray(v) for k, v in featurize(batch).items()}


def _examples(texts_a, texts_b, label_ids):
  """What `TextClassificationTask` builds from a user's split's lists."""
  return tf.data.Dataset.from_tensor_slices({
      "sentence_a": tf.constant(texts_a, tf.string),
      "sentence_b": tf.constant(texts_b, tf.string),
      "label": tf.constant(label_ids, tf.int32)})


def _task(name, data_dir, source="auto"):
  return text_classification_task.TextClassificationTask(
      dataset=catalog.text_classification(name, data_dir, source),
      student_preset=None, num_layers=1, hidden_size=32,
      num_attention_heads=2)


class BuiltinGlueTest(tf.test.TestCase, parameterized.TestCase):

  @pytest.mark.large
  @parameterized.parameters(*_BEFORE)
  def test_same_examples_and_label_names_as_before(self, task, split, source,
                                                   file_name):
    path = os.path.join(_GLUE, file_name)
    if not os.path.isfile(path):
      self.skipTest(f"no {path}")
    glue = _task(f"glue/{task}", _GLUE, source)
    rows = _rows(glue.split_lists(glue.dataset.split_name(split)))
    self.assertEqual(
        (len(rows), _digest(rows), _digest(list(glue.label_names))),
        _BEFORE[(task, split, source, file_name)])

  def test_sst2_as_a_users_csv_reads_as_sst2_by_name(self):
    if not os.path.isdir(_SST2):
      self.skipTest(f"no SST-2 data at {_SST2}")
    root = os.path.join(self.get_temp_dir(), "sst2_csv")
    os.makedirs(root)
    for tsv_name, csv_name in (("train.tsv", "train.csv"),
                               ("dev.tsv", "dev.csv")):
      _tsv_to_csv(os.path.join(_SST2, tsv_name), os.path.join(root, csv_name))
    dataset = user_dataset.load_dataset(root)
    self.assertEqual(dataset.files.format, "csv")
    self.assertEqual(dataset.summary()["examples"],
                     {"train": 67349, "validation": 872})
    # The task's label ids for a user's dataset: train's labels, sorted, so
    # '0' -> 0 and '1' -> 1, GLUE's negative and positive.
    task = _task("files", root)
    self.assertEqual(task.label_names, ("0", "1"))
    self.assertFalse(task.is_pair)
    user_lists = task.split_lists("validation")

    glue_lists = _task("glue/sst2", _GLUE).split_lists("validation")
    self.assertEqual(user_lists, glue_lists)

    featurize = text_classification_data.text_classification_featurizer(
        assets.default_student_vocab(), pair=task.is_pair)
    user_features = _features(featurize, _examples(*user_lists))
    glue_features = _features(featurize, _examples(*glue_lists))
    self.assertEqual(sorted(user_features), sorted(glue_features))
    self.assertEqual(user_features["input_word_ids"].shape, (872, 128))
    for key in glue_features:
      self.assertAllEqual(user_features[key], glue_features[key], msg=key)

  def test_a_users_csv_reads_as_the_same_glue_tsv(self):
    # Without the shared data too: quotes, commas and spaces survive both.
    sentences = ['" a quoted start , and a comma ', "plain", "it 's \"odd\""]
    labels = ["1", "0", "1"]
    root = self.get_temp_dir()
    glue_dir = os.path.join(root, "glue", "SST-2")
    user_dir = os.path.join(root, "user")
    os.makedirs(glue_dir)
    os.makedirs(user_dir)
    for name in ("train", "dev"):
      with open(os.path.join(glue_dir, f"{name}.tsv"), "w",
                encoding="utf-8") as f:
        f.write("sentence\tlabel\n")
        f.writelines(f"{s}\t{l}\n" for s, l in zip(sentences, labels))
      _tsv_to_csv(os.path.join(glue_dir, f"{name}.tsv"),
                  os.path.join(user_dir, f"{name}.csv"))
    glue = _task("glue/sst2", os.path.join(root, "glue"))
    self.assertEqual(_rows(glue.split_lists("validation")),
                     [[s, "", int(l)] for s, l in zip(sentences, labels)])
    user_lists = _task("files", user_dir).split_lists("validation")
    self.assertEqual(user_lists, (sentences, [""] * 3, [1, 0, 1]))


if __name__ == "__main__":
  tf.test.main()
