"""End-to-end test of tools/build_vocab.py, run as a subprocess on tiny text."""

import pytest
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from absl.testing import absltest

from mixvocab_tf import assets

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TOOL = os.path.join(_ROOT, "tools", "build_vocab.py")
_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _start(*args):
  env = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.Popen([sys.executable, _TOOL, *args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env, cwd=_ROOT)


def _finish(process):
  stdout, stderr = process.communicate(timeout=300)
  return subprocess.CompletedProcess(process.args, process.returncode, stdout,
                                     stderr)


def _run(*args):
  return _finish(_start(*args))


class BuildVocabCliTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    # tempfile, not create_tempdir: that needs absl flags, which pytest leaves
    # unparsed.
    tmp = tempfile.TemporaryDirectory()
    self.addCleanup(tmp.cleanup)
    self.dir = tmp.name
    # 200 lines of the built-in corpus over two files, in BERT layout.
    with open(assets.builtin_corpus_files()[0], encoding="utf-8") as f:
      lines = [l for l in f if l.strip()][:200]
    for name, part in (("a.txt", lines[:120]), ("b.txt", lines[120:])):
      with open(os.path.join(self.dir, name), "w", encoding="utf-8") as f:
        f.write("".join(part) + "\n")
    self.output = os.path.join(self.dir, "out", "vocab.txt")
  def test_learns_writes_and_summarises(self):
    # A teacher that has only some of the student's tokens.
    teacher = os.path.join(self.dir, "out", "teacher.txt")
    os.makedirs(os.path.dirname(teacher))
    with open(teacher, "w", encoding="utf-8") as f:
      f.write("\n".join(_SPECIALS + ["the", "and", "of", "!", "zebra"]) + "\n")
    result = _run(f"--input={self.dir}/*.txt", "--vocab_size=300",
                  f"--output={self.output}", f"--teacher_vocab={teacher}",
                  "--heldout_fraction=0.05")
    self.assertEqual(result.returncode, 0, result.stderr)
    summary = json.loads(result.stdout)
    with open(self.output, "rb") as f:
      content = f.read()
    tokens = content.decode("utf-8").splitlines()
    self.assertEqual(tokens[:5], _SPECIALS)
    self.assertLessEqual(len(tokens), 300)
    self.assertEqual(summary["student_size"], len(tokens))
    self.assertEqual(summary["fingerprint"],
                     hashlib.sha256(content).hexdigest())
    self.assertEqual([os.path.basename(p) for p in summary["input_files"]],
                     ["a.txt", "b.txt"])
    self.assertEqual(summary["heldout_lines"], 10)
    self.assertEqual(summary["train_lines"], 190)
    self.assertEqual(summary["student_missing_ascii"], 0)
    self.assertEqual(summary["student_unk_share"], 0.0)
    self.assertGreater(summary["heldout_words"], 100)
    self.assertBetween(summary["student_pieces_per_word"], 1.0, 3.0)
    # Specials, "the", "and", "of" and "!" of 5 teacher-only-in-part tokens.
    self.assertAlmostEqual(summary["student_in_teacher"], 9 / len(tokens))
    self.assertGreater(summary["teacher_unk_share"], 0.5)
    self.assertIn("Learned", result.stderr)  # Progress goes to stderr.
  def test_prune_to_teacher(self):
    teacher = os.path.join(self.dir, "teacher.txt")
    with open(teacher, "w", encoding="utf-8") as f:
      f.write("\n".join(_SPECIALS + ["the", "a", "##s", "!", "zebra"]) + "\n")
    result = _run(f"--input={self.dir}/a.txt,{self.dir}/b.txt",
                  "--vocab_size=300", f"--output={self.output}",
                  f"--teacher_vocab={teacher}", "--prune_to_teacher")
    self.assertEqual(result.returncode, 0, result.stderr)
    summary = json.loads(result.stdout)
    with open(self.output, encoding="utf-8") as f:
      tokens = f.read().splitlines()
    self.assertEqual(tokens, _SPECIALS + ["!", "a", "the", "##s"])
    self.assertTrue(summary["pruned_to_teacher"])
    self.assertGreater(summary["learned_size"], 200)
    self.assertEqual(summary["student_in_teacher"], 1.0)
    # Of the 136 ASCII tokens the teacher supplies "!", "a" and "##s".
    self.assertEqual(summary["student_missing_ascii"], 136 - 3)
  def test_errors(self):
    with open(os.path.join(self.dir, "empty.txt"), "w") as f:
      f.write("\n\n  \n")
    cases = {  # input, further flags, message.
        "no matching files": (f"{self.dir}/nothing*.txt", [],
                              "no file matches"),
        "empty input": (f"{self.dir}/empty.txt", [], "holds no text"),
        "vocab_size too small": (f"{self.dir}/a.txt", ["--vocab_size=100"],
                                 "at least 141 .*received 100"),
    }
    # Started together: each spends its time importing TensorFlow.
    processes = {
        name: _start(f"--input={spec}", f"--output={self.output}", *extra)
        for name, (spec, extra, _) in cases.items()}
    for name, process in processes.items():
      with self.subTest(name):
        result = _finish(process)
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("Traceback", result.stderr)
        # One paragraph, once (`cli/console.py`).
        last = result.stderr.strip().splitlines()[-1]
        self.assertRegex(last, "^error: .*" + cases[name][2])
        self.assertEqual(result.stderr.count(cases[name][2].split(" .*")[0]),
                         1, result.stderr)
        self.assertEmpty(result.stdout)
    self.assertFalse(os.path.exists(self.output))


if __name__ == "__main__":
  absltest.main()
