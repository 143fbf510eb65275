"""Tests of the own-data job's steps (no training: see tests/test_own_data.py)."""

import os

import tensorflow as tf

from mixvocab_tf.jobs import own_data


class OwnDataStepsTest(tf.test.TestCase):

  def test_column_names_reach_every_step_that_reads_the_files(self):
    # SST-2's own files name the text column 'sentence': the task, the epoch
    # budget of both trainers, and the export and report steps must all read
    # it (the epoch budget once read 'text' and failed after the check).
    data_dir = self.get_temp_dir()
    for split, rows in (("train", 30), ("dev", 10)):
      with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
        f.write("sentence\tlabel\n")
        for i in range(rows):
          f.write(f"a short sentence number {i}\t{i % 2}\n")
    steps = {name: (kind, bindings) for name, kind, _, bindings in
             own_data.own_data_steps(data_dir, student=data_dir,
                                     text_column="sentence")}
    for name in ("teacher", "student"):
      bindings = steps[name][1]
      for configurable in ("TextClassificationTask", "text_classification_train_steps"):
        self.assertIn(f"{configurable}.text_column = 'sentence'", bindings)
        self.assertIn(f"{configurable}.label_column = 'label'", bindings)
    for name in ("data", "export", "report"):
      self.assertIn("text_column = 'sentence'", steps[name][1])


if __name__ == "__main__":
  tf.test.main()
