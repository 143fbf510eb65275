"""The built-in SNIPS copy is read as a user's dataset, with today's results.

Since the rename (one reader for every intent-and-slot dataset), the built-in
copy goes through `datasets.user_dataset.load_dataset` like a user's
directory (`datasets.snips`, the dataset 'snips' the task reads). The
digests below were taken from the reader it had before (its own
`snips_data.read_snips`): the same queries, tags, intents, label ids and
featurized examples, so the same scores.
"""

import pytest
import hashlib
import json

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import snips
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task

#: Digests of the built-in SNIPS read by the reader before the rename.
_BEFORE = {
    "labels": "e7cc1b718819d9b4",
    "train": "cda452da8e360db6",
    "valid": "88155ab07ca8c91e",
    "valid_features": "f02c73f5862e05a7",
}


def _digest(value):
  text = json.dumps(value, sort_keys=True).encode("utf-8")
  return hashlib.sha256(text).hexdigest()[:16]


class BuiltinSnipsTest(tf.test.TestCase):

  def test_built_in_copy_is_a_user_dataset_directory(self):
    dataset = user_dataset.load_dataset(snips.builtin_dir())
    self.assertEqual(dataset.kind, examples_lib.INTENT_SLOT)
    self.assertEqual(sorted(dataset.splits), ["train", "validation"])
    task = intent_slot_task.IntentSlotTask(student_preset=None)
    train = task.examples("train")
    self.assertEqual(train.words, dataset.splits["train"].words)
    with self.assertRaisesRegex(FileNotFoundError, "no test split"):
      task.examples("test")

  @pytest.mark.large
  def test_same_examples_label_ids_and_features_as_before(self):
    train = intent_slot_task.builtin_snips("train")
    valid = intent_slot_task.builtin_snips("valid")
    labels = intent_slot_data.IntentSlotLabels.from_examples(train)
    featurize = intent_slot_data.intent_slot_featurizer(
        assets.default_student_vocab(), 64)
    batch = next(iter(intent_slot_data.make_intent_slot_dataset(
        valid, labels).map(featurize).batch(len(valid.intents))))
    features = {k: np.asarray(v).tolist() for k, v in sorted(batch.items())}
    self.assertEqual(
        {
            "labels": _digest([list(labels.intents), list(labels.slots)]),
            "train": _digest([train.words, train.tags, train.intents]),
            "valid": _digest([valid.words, valid.tags, valid.intents]),
            "valid_features": _digest(features),
        }, _BEFORE)


if __name__ == "__main__":
  tf.test.main()
