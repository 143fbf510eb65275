"""Pipeline steps that hold text out of pretraining and score students on it.

- `heldout_split`: cuts a corpus into a train part and held-out blocks
  (`text.heldout`); the pretraining steps read `{output_dir}/<step>/train.txt`.
- `heldout_mlm`: for each named student run, the masked-token loss and
  accuracy of every kept checkpoint on the held-out blocks, beside the unigram
  floor of the same tokens (`jobs.mlm_curve`), written as
  `<run>/mlm_curve.json`.

Their options are the step's config (`steps.Step.options`).
The job's directory may be on any file system TensorFlow reads (`gs://`);
`heldout_mlm` scores each run in a child process, which must reach it too (a
bucket, not `ram://`).
"""

import os
import subprocess
import sys

import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.core import run_files
from mixvocab_tf.text import heldout

MLM_CURVE_FILE = "mlm_curve.json"


def split_step(step_dir, output_dir, options):
  """Writes train.txt and heldout.txt of `corpus` (default: built-in)."""
  del output_dir
  corpus = options.get("corpus") or assets.builtin_corpus_files()
  # `split_files` writes local files only; they are copied to a remote
  # step_dir.
  with run_files.local_directory(step_dir) as directory:
    heldout.split_files(corpus, directory,
                        heldout_every=options.get("heldout_every", 10),
                        block_lines=options.get("block_lines", 100))


def mlm_step(step_dir, output_dir, options):
  """Held-out curves of `runs`, each in its own process (its gin config)."""
  split = options.get("split", "split")
  text = os.path.join(output_dir, split, heldout.HELDOUT_TEXT)
  if not tf.io.gfile.exists(text):
    raise FileNotFoundError(
        f"{text} does not exist: a 'heldout_split' step named {split!r} must "
        "run before this step.")
  curves = {}
  for run in options["runs"]:
    run_dir = os.path.join(output_dir, run)
    out = os.path.join(run_dir, MLM_CURVE_FILE)
    subprocess.run(
        [sys.executable, "-m", "mixvocab_tf.jobs.mlm_curve",
         f"--run_dir={run_dir}", f"--input_files={text}",
         f"--max_batches={options.get('batches', 50)}", f"--output={out}"],
        check=True)
    curves[run] = run_files.read_json(out)
  run_files.write_json(os.path.join(step_dir, "curves.json"), curves,
                       indent=1)


def step_functions():
  return {"heldout_split": split_step, "heldout_mlm": mlm_step}
