"""Tests of gin parsing: the search path and the error messages."""

import os

import gin
import tensorflow as tf

from mixvocab_tf.core import base_task
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import trainer

class GinUtilsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)

  def test_misspelt_parameter_suggests_the_right_one(self):
    with self.assertRaisesRegex(
        gin_utils.GinConfigError,
        r"(?s)'Trainer' doesn't have a parameter named 'train_stepz'.*"
        r"Did you mean: train_steps"):
      gin_utils.parse([], ["Trainer.train_stepz = 3"])

  def test_unknown_configurable_suggests_close_names(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                r"(?s)'Trainr'.*Did you mean: Trainer"):
      gin_utils.parse([], ["Trainr.train_steps = 3"])

  def test_missing_file_lists_the_shipped_configs(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                r"not found: 'stage9.gin'.*stage1_small.gin"):
      gin_utils.parse(["stage9.gin"], [])

  def test_bare_names_are_unique_across_the_tree(self):
    names = []
    for directory in gin_utils.search_dirs():
      names += [f for f in os.listdir(directory) if f.endswith(".gin")]
    self.assertCountEqual(names, set(names))
    self.assertEqual(sorted(names), gin_utils.shipped_configs())
    self.assertGreater(len(gin_utils.search_dirs()), 1)

  def test_old_names_resolve_to_the_renamed_files(self):
    shipped = gin_utils.shipped_configs()
    for old, new in gin_utils.RENAMED_CONFIGS.items():
      self.assertNotIn(old, shipped)
      self.assertIn(new, shipped)
      self.assertEqual(gin_utils.find_config(old),
                       gin_utils.find_config(new))
    bindings = ["Trainer.train_steps = 7"]
    gin_utils.parse(["stage1_paper.gin"], bindings)
    expected = gin.config_str()
    gin.clear_config()
    with self.assertLogs(level="WARNING") as logs:
      gin_utils.parse(["stage1_tpu.gin"], bindings)
    self.assertEqual(gin.config_str(), expected)
    self.assertIn("stage1_tpu.gin is now stage1_paper.gin; reading ",
                  logs.output[0])
    # An `include` of an old name, in a file of one's own.
    own = os.path.join(self.get_temp_dir(), "own.gin")
    with open(own, "w", encoding="utf-8") as f:
      f.write("include 'stage1_tpu.gin'\nTrainer.train_steps = 7\n")
    gin.clear_config()
    gin_utils.parse([own], [])
    self.assertEqual(gin.config_str(), expected)

  def test_syntax_error_is_a_config_error(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                "Bad gin configuration"):
      gin_utils.parse([], ["Trainer.train_steps = ("])

  def test_unbound_required_macro_says_which_binding_to_add(self):
    required = ["STAGE1_DIR = %gin.REQUIRED"]
    with self.assertRaises(gin_utils.GinConfigError) as raised:
      gin_utils.parse([], required)
    self.assertEqual(
        str(raised.exception),
        "STAGE1_DIR is required by the gin files and not set: add "
        "--gin_bindings=\"STAGE1_DIR = '...'\" (the gin file's header says "
        "what it is).")
    gin.clear_config()
    gin_utils.parse([], required + ["STAGE1_DIR = '/runs/stage1'"])
    self.assertEqual(gin.query_parameter("STAGE1_DIR/gin.macro.value"),
                     "/runs/stage1")
    self.assertEqual(gin_utils.unbound_required(), [])

  def test_every_unbound_required_value_is_named(self):
    gin_utils.parse([], ["DATA_DIR = %gin.REQUIRED",
                         "STAGE1_DIR = %gin.REQUIRED",
                         "Trainer.train_steps = %gin.REQUIRED"],
                    require_all=False)
    self.assertEqual(gin_utils.unbound_required(),
                     ["DATA_DIR", "STAGE1_DIR", "Trainer.train_steps"])
    with self.assertRaisesRegex(
        gin_utils.GinConfigError,
        "^DATA_DIR, STAGE1_DIR and Trainer.train_steps are required .* add "
        "--gin_bindings=\"DATA_DIR = '...'\" --gin_bindings=\"STAGE1_DIR = "
        "'...'\" --gin_bindings=\"Trainer.train_steps = '...'\""):
      gin_utils.check_required()


@base_task.register_task("gin_utils_test_task")
class _RecordedTask(base_task.Task):
  """A task whose constructor argument the run's record sets."""

  def __init__(self, width=1, **kwargs):
    super().__init__(**kwargs)
    self.width = width

  def build_model(self):
    raise NotImplementedError

  def build_inputs(self, input_context=None, training=True):
    raise NotImplementedError

  def compute_loss(self, model, features, training):
    raise NotImplementedError


class ParseRunConfigTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)
    self.model_dir = self.get_temp_dir()
    with open(os.path.join(self.model_dir, trainer.OPERATIVE_CONFIG), "w",
              encoding="utf-8") as f:
      # A record also names configurables this process never imported.
      f.write("Trainer.task = 'gin_utils_test_task'\n"
              "_RecordedTask.width = 3\n"
              "pipeline_of_another_binary.steps = None\n")

  def test_reads_the_record_and_applies_bindings_on_top(self):
    task_class = gin_utils.parse_run_config(self.model_dir)
    self.assertIs(task_class, base_task.get_task_class("gin_utils_test_task"))
    self.assertEqual(task_class().width, 3)
    gin.clear_config()
    task_class = gin_utils.parse_run_config(
        self.model_dir, gin_bindings=["_RecordedTask.width = 5"])
    self.assertEqual(task_class().width, 5)

  def test_missing_record_says_what_to_pass(self):
    with self.assertRaisesRegex(FileNotFoundError,
                                "operative_config.gin not found"):
      gin_utils.parse_run_config(os.path.join(self.model_dir, "nope"))
    with self.assertRaisesRegex(ValueError, "received neither"):
      gin_utils.parse_run_config(None)

  def test_run_binding_reads_one_parameter_of_the_record(self):
    model_dir = self.get_temp_dir()
    with open(os.path.join(model_dir, trainer.OPERATIVE_CONFIG), "w") as f:
      f.write("# Parameters for StudentSpec:\n"
              "student/StudentSpec.vocab = '/runs/x/vocab.txt'\n"
              "TextClassificationTask.pooling = 'mean'\n"
              "Trainer.seed = None\n")
    self.assertEqual(gin_utils.run_binding(model_dir, "StudentSpec.vocab"),
                     "/runs/x/vocab.txt")
    self.assertEqual(
        gin_utils.run_binding(model_dir, "TextClassificationTask.pooling"),
        "mean")
    self.assertIsNone(gin_utils.run_binding(model_dir, "Trainer.seed", 3))
    self.assertEqual(gin_utils.run_binding(model_dir, "Spec.vocab", "d"), "d")
    self.assertEqual(gin_utils.run_binding(
        os.path.join(model_dir, "absent"), "Trainer.seed", "d"), "d")

  def test_isolated_config_restores_the_callers_config(self):
    gin_utils.parse([], ["Trainer.train_steps = 7"])
    with gin_utils.isolated_config():
      with self.assertRaises(ValueError):
        gin.query_parameter("Trainer.train_steps")
      gin_utils.parse_run_config(self.model_dir)
    self.assertEqual(gin.query_parameter("Trainer.train_steps"), 7)
    with self.assertRaises(ValueError):
      gin.query_parameter("_RecordedTask.width")



@gin.configurable
def _vocab_user(vocab=None, teacher_vocab=None, vocab_size=0):
  return vocab, teacher_vocab, vocab_size


class CopyVocabulariesTest(tf.test.TestCase):
  """Item 8 of issue 17: a run started by hand holds its vocabularies."""

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)
    self.workdir = self.get_temp_dir()
    self.addCleanup(os.chdir, os.getcwd())
    os.chdir(self.workdir)
    os.makedirs("runs", exist_ok=True)
    for name, tokens in (("student_vocab.txt", "[PAD]\na\n"),
                         ("teacher_vocab.txt", "[PAD]\nb\n")):
      with open(os.path.join("runs", name), "w", encoding="utf-8") as f:
        f.write(tokens)

  def test_relative_vocabularies_are_copied_and_recorded_absolute(self):
    absolute = os.path.join(self.workdir, "runs", "teacher_vocab.txt")
    gin_utils.parse([], [
        "STUDENT_VOCAB = 'runs/student_vocab.txt'",
        "_vocab_user.vocab = %STUDENT_VOCAB",
        f"_vocab_user.teacher_vocab = '{absolute}'",
        "_vocab_user.vocab_size = 2"])
    model_dir = os.path.join("runs", "by_hand")
    rebound = gin_utils.copy_vocabularies_into_run(model_dir)
    copy = os.path.join(self.workdir, model_dir, "vocab", "student_vocab.txt")
    self.assertEqual(rebound, {"STUDENT_VOCAB": copy})
    with open(copy, encoding="utf-8") as f:
      self.assertEqual(f.read(), "[PAD]\na\n")
    # The absolute path (as the pipeline binds) is left as it is.
    self.assertEqual(_vocab_user(), (copy, absolute, 2))
    operative = gin.operative_config_str()
    self.assertIn(copy, operative)
    self.assertNotIn("'runs/student_vocab.txt'", operative)
    # Started again (a resume), the same copy is used.
    gin.clear_config()
    gin_utils.parse([], ["_vocab_user.vocab = 'runs/student_vocab.txt'"])
    ((binding, again),) = gin_utils.copy_vocabularies_into_run(
        model_dir).items()
    self.assertTrue(binding.endswith("_vocab_user.vocab"), binding)
    self.assertEqual(again, copy)
    self.assertEqual(os.listdir(os.path.dirname(copy)), ["student_vocab.txt"])

  def test_missing_files_are_left_for_the_task_to_name(self):
    gin_utils.parse([], ["_vocab_user.vocab = 'runs/nope.txt'"])
    self.assertEqual(gin_utils.copy_vocabularies_into_run("runs/x"), {})
    self.assertFalse(os.path.exists(os.path.join("runs", "x")))


if __name__ == "__main__":
  tf.test.main()


@gin.configurable(module="mixvocab_tf.tasks")
def _listing_test_configurable(width=3):
  """Registered by a test module: not part of the package's listing."""
  return width


class ConfigurablesMarkdownTest(tf.test.TestCase):

  def test_lists_parameters_and_defaults_but_not_denied_or_test_ones(self):
    page = gin_utils.configurables_markdown()
    trainer_section = page.split("## `mixvocab_tf.trainer.Trainer`")[1]
    trainer_section = trainer_section.split("\n## ")[0]
    self.assertIn("Trains a task", trainer_section)
    self.assertIn("| `train_steps` | required |", trainer_section)
    self.assertIn("| `log_every` | `100` |", trainer_section)
    # Set by the binary, not by gin (the configurable's denylist).
    self.assertNotIn("`model_dir`", trainer_section)
    self.assertNotIn("_listing_test_configurable", page)
    self.assertIn(gin_utils.CONFIG_DOC_COMMAND, page)
