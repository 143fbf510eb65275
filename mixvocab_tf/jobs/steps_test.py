"""Tests of job steps as values (`steps.Step`)."""

import os

import tensorflow as tf

from mixvocab_tf.jobs import steps


class StepTest(tf.test.TestCase):

  def test_bindings_are_made_from_values(self):
    step = steps.Step("student", "train", ["distill.gin"], {
        "INIT_CHECKPOINT": steps.JobPath("stage2"),
        "EPOCHS": 6.0, "Trainer.early_stopping_patience": None,
        "IntentSlotTask.bucket_boundaries": [9, 11],
        "optimization_config.learning_rate": 1e-4,
        "TextClassificationTask.model_name": "it's a student",
        "Stage1Task.teacher": steps.GinCode("@teacher()"),
        "MlmInputs.input_files": "{output_dir}/split/train.txt"})
    self.assertEqual(step.bindings("/runs/job"), [
        "INIT_CHECKPOINT = '/runs/job/stage2'",
        "EPOCHS = 6.0",
        "Trainer.early_stopping_patience = None",
        "IntentSlotTask.bucket_boundaries = [9, 11]",
        "optimization_config.learning_rate = 0.0001",
        "TextClassificationTask.model_name = \"it's a student\"",
        "Stage1Task.teacher = @teacher()",
        "MlmInputs.input_files = '/runs/job/split/train.txt'"])
    self.assertEqual(step.options("/runs/job")["INIT_CHECKPOINT"],
                     "/runs/job/stage2")
    with self.assertRaisesRegex(TypeError, "must be a Python literal"):
      steps.Step("x", "train", config={"A.b": object()}).bindings("/j")

  def test_a_gin_files_tuples_become_steps_that_read_what_they_name(self):
    job = steps.from_specs([
        ("vocab", "vocab", [], []),
        ("stage1", "train", ["stage1_small.gin"], [
            "Stage1Task.student_vocab = '{output_dir}/student_vocab.txt'"]),
        ("stage2", "train", ["stage2_small.gin"], [
            "STAGE1_DIR = '{output_dir}/stage1'", "A.b = %MACRO",
            "Trainer.train_steps = 200"]),
        ("export", "export", [], ["run = '{output_dir}/stage2'"])])
    self.assertEqual([s.reads for s in job], [(), (), ("stage1",),
                                               ("stage2",)])
    self.assertEqual(job[2].config, {
        "STAGE1_DIR": "{output_dir}/stage1", "A.b": steps.GinCode("%MACRO"),
        "Trainer.train_steps": 200})
    steps.check(job, ("vocab", "train", "export"))
    with self.assertRaisesRegex(ValueError, "is not in the job"):
      steps.check([steps.Step("a", "train", reads=("b",))], ("train",))
    with self.assertRaisesRegex(ValueError, "name = value"):
      steps.from_spec(("a", "train", [], ["{output_dir}/x"]))
    with self.assertRaisesRegex(ValueError, "lists of strings"):
      steps.from_spec(("a", "train", "x.gin", []))

  def test_inputs_are_recorded_and_compared_when_both_have_them(self):
    step = steps.Step("teacher", "train", ("a.gin",), {"EPOCHS": 3.0},
                      inputs={"train": "0123", "validation": "4567"})
    recipe = step.recipe()
    self.assertEqual(recipe["inputs"], {"train": "0123", "validation": "4567"})
    self.assertNotIn("inputs", steps.Step("teacher", "train").recipe())
    changed = dict(recipe, inputs={"train": "89ab", "validation": "4567",
                                   "test": "cdef"})
    self.assertEqual(steps.recipe_differences(recipe, changed), [
        "files changed since it ran: test (none -> cdef), "
        "train (0123 -> 89ab)"])
    earlier = {k: v for k, v in recipe.items() if k != "inputs"}
    self.assertEqual(steps.recipe_differences(earlier, changed), [])

  def test_files_fingerprint_of_files_and_directories(self):
    root = self.get_temp_dir()
    path = os.path.join(root, "train.csv")
    goo = os.path.join(root, "valid")
    os.makedirs(goo)
    for name, text in (("train.csv", "text,label\na,b\n"),
                       ("valid/seq.in", "play jazz\n"),
                       ("valid/label", "PlayMusic\n")):
      with open(os.path.join(root, name), "w") as f:
        f.write(text)
    first = steps.files_fingerprint({"train": path, "validation": goo})
    with open(os.path.join(goo, ".DS_Store"), "w") as f:
      f.write("a file browser's")
    self.assertEqual(first, steps.files_fingerprint(
        {"train": path, "validation": goo}))
    self.assertLen(first["train"], 16)
    with open(os.path.join(goo, "label"), "w") as f:
      f.write("GetWeather\n")
    second = steps.files_fingerprint({"train": path, "validation": goo})
    self.assertEqual(first["train"], second["train"])
    self.assertNotEqual(first["validation"], second["validation"])


if __name__ == "__main__":
  tf.test.main()
