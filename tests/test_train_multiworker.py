"""Two local workers (MultiWorkerMirroredStrategy, TF_CONFIG) give the losses
of one process with the same global batch."""

import pytest
import json
import socket
import subprocess

import numpy as np

from mixvocab_testing import trainer_testing as testing

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

STEPS = 6


def _free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def test_two_workers_match_one_process(tmp_path):
  bindings = testing.tiny_bindings(batch_size=8, sharding="global_batch") + [
      "Trainer.task = 'nokd'",
      f"Trainer.train_steps = {STEPS}",
      "Trainer.log_every = 1",
      "Trainer.checkpoint_every = 3",
      # Dropout draws differ between replica layouts; the arithmetic does not.
      "StudentSpec.dropout_rate = 0.0",
  ]
  gin_files = ["nokd_small.gin"]
  single_dir, multi_dir = str(tmp_path / "single"), str(tmp_path / "multi")
  cluster = {"worker": [f"localhost:{_free_port()}" for _ in range(2)]}
  workers = []
  for index in range(2):
    tf_config = json.dumps({"cluster": cluster,
                            "task": {"type": "worker", "index": index}})
    workers.append(subprocess.Popen(
        testing.train_command(multi_dir, gin_files, bindings,
                              ["--strategy=multi_worker"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(__import__("os").environ, TF_CONFIG=tf_config)))
  for process in workers:
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-3000:]
  assert "2 replica(s)" in err
  # The one-process run after the workers, not beside them: three TensorFlow
  # processes on a loaded 2-core machine once delayed a worker's heartbeat
  # past the coordination service's timeout.
  single = subprocess.run(testing.train_command(single_dir, gin_files,
                                                bindings),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=600, check=False)
  assert single.returncode == 0, single.stderr[-3000:]

  single_losses = testing.read_scalars(single_dir, "loss")
  multi_losses = testing.read_scalars(multi_dir, "loss")
  assert sorted(single_losses) == list(range(1, STEPS + 1))
  assert sorted(multi_losses) == sorted(single_losses)
  np.testing.assert_allclose(
      [multi_losses[s] for s in sorted(multi_losses)],
      [single_losses[s] for s in sorted(single_losses)], rtol=1e-5)
  # The losses move: the comparison covers the updates, not only step 1.
  assert single_losses[STEPS] != single_losses[1]
  # Each worker saved its own input position.
  assert (tmp_path / "multi" / "worker_1" / "checkpoint").exists()
