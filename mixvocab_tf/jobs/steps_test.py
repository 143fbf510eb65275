"""Tests of job steps as values (`steps.Step`)."""

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


if __name__ == "__main__":
  tf.test.main()
