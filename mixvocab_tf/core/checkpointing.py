"""Checkpoints of a training run: save, keep, resume, and record vocabularies.

A run's checkpoint holds everything that makes a resumed run continue exactly
where the interrupted one was: the task's trackables (model, or the student
without its frozen teacher), the optimizer with its step and slots, the dropout
random generators, the position of the input iterator, and the fingerprints
(sha256) of the vocabularies the run reads. Zhao et al. (EACL 2021) hand the
student table from stage I to stage II through such a checkpoint; recording
the vocabularies lets stage II refuse a table learnt over another vocabulary.

Writes are atomic at the level that matters: `tf.train.CheckpointManager`
writes the shards and the index first and only then replaces the `checkpoint`
state file (itself with an atomic rename), so a process killed mid-save leaves
the previous checkpoint as the latest one.

Beside its checkpoints a run writes `encoder_config.json`: the config of each
encoder the task names (`Task.encoder_configs`), as keras-hub writes
`config.json` beside its weights, so that a later stage (stage II reading
stage I, fine-tuning reading a student) rebuilds the encoder from it instead
of inferring sizes from variable shapes.

With several workers, every worker saves its own copy (the chief into
`model_dir`, worker i into `model_dir/worker_i`), because each one's input
iterator is its own; a resumed run restores the newest step that every worker
finished writing.

Faults a run survives (docs/RELIABILITY.md): a checkpoint whose files were
truncated or corrupted is named, moved to `damaged/` and the newest intact one
before it is restored instead; the `ckpt-N_temp` directory of a save that
failed (full disk) is removed on the next start (both in
`damaged_checkpoints`); a second process on the same model_dir is refused
while the first one lives (`run_lock.RunLock`). Their names are re-exported
here, where the trainer and the tasks import them from.

`orbit.Controller` saves and restores through `ControllerCheckpointManager`,
a `tf.train.CheckpointManager` that hands both to the run's `RunCheckpoint`:
the stock manager checks no vocabulary, falls back past no damaged
checkpoint and counts its interval from the last save.

Every file operation goes through `tf.io.gfile`, so a model_dir may be on any
file system TensorFlow reads (`gs://`, `ram://`, a local disk).
"""

import json
import os
import re
import time
from typing import Any, Dict, List, Mapping, Optional

from absl import logging
import tensorflow as tf

from mixvocab_tf.core import damaged_checkpoints
from mixvocab_tf.core import half_checkpoints
from mixvocab_tf.core import run_lock

#: Prefix of checkpoint files inside a model_dir.
CHECKPOINT_PREFIX = "ckpt"
#: Name of the trackable holding the run's metadata inside a checkpoint.
METADATA_KEY = "metadata"
_METADATA_FIELDS = ("task", "teacher_vocab", "student_vocab")
#: The encoders' configs beside a run's checkpoints: {name: config}.
ENCODER_CONFIG_FILE = "encoder_config.json"

# The run lock and the handling of damaged checkpoints live in their own
# modules; their names stay importable from here.
DAMAGED_DIR = damaged_checkpoints.DAMAGED_DIR
LOCK_FILE = run_lock.LOCK_FILE
RunDirectoryBusyError = run_lock.RunDirectoryBusyError
RunLock = run_lock.RunLock


class VocabularyMismatchError(ValueError):
  """A checkpoint was trained with vocabularies other than this run's."""


def _is_checkpoint_prefix(path: str) -> bool:
  """Whether `path` names a checkpoint (`path.index` exists).

  Asked before `tf.io.gfile.isdir`: ram:// calls `.../ckpt-5` a directory
  because files named `ckpt-5.*` exist.
  """
  return tf.io.gfile.exists(path + ".index")


def resolve_checkpoint(path: str, what: str = "checkpoint") -> str:
  """The checkpoint prefix for a model_dir or a checkpoint path.

  Args:
    path: a directory (its latest checkpoint is taken) or a checkpoint prefix
      (`.../ckpt-1000`, with or without the `.index` suffix).
    what: what the checkpoint is for, for the error message.

  Returns:
    A checkpoint prefix that exists. A float16 checkpoint (a packaged
    student shipped in half precision) resolves to its float32 copy
    (`half_checkpoints.float32_copy`): variables restore only from tensors
    of their own dtype.

  Raises:
    FileNotFoundError: no checkpoint there.
  """
  if not path:
    raise FileNotFoundError(f"No {what} given (empty path).")
  path = os.fspath(path)
  if path.endswith(".index"):
    path = path[:-len(".index")]
  if not _is_checkpoint_prefix(path):
    if not tf.io.gfile.isdir(path):
      raise FileNotFoundError(
          f"{what.capitalize()} not found: {path} is neither a directory "
          "with checkpoints nor a checkpoint prefix with an .index file.")
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
      raise FileNotFoundError(
          f"The {what} directory {path} holds no checkpoint (no `checkpoint` "
          "state file with a complete ckpt-N). Did the earlier run save one?")
    path = latest
  if half_checkpoints.is_half(path):
    return half_checkpoints.float32_copy(path)
  return path


def make_metadata(task_name: str,
                  vocab_fingerprints: Mapping[str, str]) -> Dict[str, Any]:
  """String variables for the checkpoint: task name and vocab fingerprints.

  Created on the host and outside any strategy scope (strings are neither
  mirrored nor placed on accelerators).
  """
  unknown = set(vocab_fingerprints) - {"teacher", "student"}
  if unknown:
    raise ValueError(f"vocab_fingerprints keys must be 'teacher' and/or "
                     f"'student'; received {sorted(vocab_fingerprints)}.")
  values = {
      "task": task_name,
      "teacher_vocab": vocab_fingerprints.get("teacher", ""),
      "student_vocab": vocab_fingerprints.get("student", ""),
  }
  with tf.init_scope(), tf.device("/cpu:0"):
    return {k: tf.Variable(v, dtype=tf.string, trainable=False, name=k)
            for k, v in values.items()}


def read_metadata(checkpoint_path: str) -> Dict[str, str]:
  """{task, teacher_vocab, student_vocab} recorded in a checkpoint.

  Reads the checkpoint file alone, without building any model. Missing fields
  (checkpoints written by other tools) are empty strings.
  """
  if _is_checkpoint_prefix(checkpoint_path):
    reader = tf.compat.v1.train.NewCheckpointReader(checkpoint_path)
  else:  # A directory: its latest checkpoint.
    reader = tf.train.load_checkpoint(checkpoint_path)
  keys = reader.get_variable_to_dtype_map()
  out = {}
  for field in _METADATA_FIELDS:
    key = f"{METADATA_KEY}/{field}/.ATTRIBUTES/VARIABLE_VALUE"
    value = reader.get_tensor(key) if key in keys else b""
    out[field] = value.decode("utf-8") if isinstance(value, bytes) else str(
        value)
  return out


def check_vocab_fingerprints(checkpoint_path: str,
                             expected: Mapping[str, Optional[str]],
                             purpose: str) -> None:
  """Raises `VocabularyMismatchError` unless the recorded vocabularies match.

  Args:
    checkpoint_path: the checkpoint to check.
    expected: {'teacher'|'student': sha256 or None}; None skips that one.
    purpose: what the checkpoint is used for, for the message ("resuming",
      "initialising stage II").
  """
  recorded = read_metadata(checkpoint_path)
  for which, fingerprint in expected.items():
    if not fingerprint:
      continue
    have = recorded.get(f"{which}_vocab", "")
    if not have:
      logging.warning(
          "Checkpoint %s records no %s vocabulary; cannot check that it "
          "matches this run's (%s...).", checkpoint_path, which,
          fingerprint[:12])
      continue
    if have != fingerprint:
      raise VocabularyMismatchError(
          f"Refusing {purpose} from {checkpoint_path}: it was trained with a "
          f"different {which} vocabulary (sha256 {have[:16]}...) than this "
          f"run's {which} vocabulary (sha256 {fingerprint[:16]}...). Token "
          "ids would index the wrong embedding rows. Use the vocab.txt the "
          "checkpoint was trained with (`sha256sum vocab.txt` shows its "
          "fingerprint), or start from a checkpoint made with this one.")


def _jsonable(value):
  """Keras configs hold tracking wrappers (DictWrapper, ListWrapper); JSON
  needs plain dicts and lists."""
  if isinstance(value, Mapping):
    return {str(k): _jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_jsonable(v) for v in value]
  if hasattr(value, "item") and not isinstance(value, (str, bytes)):
    return value.item()  # NumPy scalars.
  return value


def write_encoder_configs(directory: str,
                          configs: Mapping[str, Mapping[str, Any]]) -> str:
  """Writes {name: encoder config} as `encoder_config.json` in `directory`.

  Written to a temporary file and renamed, so a reader never sees half a
  file.

  Returns:
    The path written.
  """
  text = json.dumps(_jsonable(configs), indent=2, sort_keys=True)
  tf.io.gfile.makedirs(directory)
  path = os.path.join(directory, ENCODER_CONFIG_FILE)
  with tf.io.gfile.GFile(path + ".tmp", "w") as f:
    f.write(text + "\n")
  tf.io.gfile.rename(path + ".tmp", path, overwrite=True)
  return path


def read_encoder_config(path: str, name: str) -> Optional[Dict[str, Any]]:
  """The config of encoder `name` written beside a checkpoint, or None.

  Args:
    path: a run's directory (model_dir, `best/`) or a checkpoint prefix in
      one.
    name: the encoder's name (e.g. 'student_encoder').

  Returns:
    The config dict, or None when the run wrote no `encoder_config.json`
    (checkpoints of older runs and of other tools) or it names no such
    encoder.
  """
  directory = (path if not _is_checkpoint_prefix(path) and
               tf.io.gfile.isdir(path) else os.path.dirname(path))
  config_path = os.path.join(directory, ENCODER_CONFIG_FILE)
  if not tf.io.gfile.exists(config_path):
    return None
  with tf.io.gfile.GFile(config_path) as f:
    configs = json.load(f)
  return configs.get(name)


def _steps_in(directory: str):
  state = tf.train.get_checkpoint_state(directory)
  if state is None:
    return set()
  steps = set()
  for path in state.all_model_checkpoint_paths:
    match = re.search(rf"{CHECKPOINT_PREFIX}-(\d+)$", path)
    if match and tf.io.gfile.exists(path + ".index"):
      steps.add(int(match.group(1)))
  return steps


def remove_failed_saves(directory: str) -> List[str]:
  """Removes the `ckpt-N_temp*` leftovers of saves that did not finish.

  See `damaged_checkpoints.remove_failed_saves`. Returns the paths removed.
  """
  return damaged_checkpoints.remove_failed_saves(directory, CHECKPOINT_PREFIX)


def has_checkpoint(model_dir: str) -> bool:
  """Whether `model_dir` holds a complete checkpoint (of the chief)."""
  return bool(_steps_in(model_dir))


def worker_directory(model_dir: str, worker_index: int) -> str:
  """Where worker `worker_index` keeps its checkpoints (chief: model_dir)."""
  if worker_index == 0:
    return model_dir
  return os.path.join(model_dir, f"worker_{worker_index}")


class RunCheckpoint:
  """Periodic checkpoints of one run, with resume and vocabulary checks.

  Example:
  ```python
  run_checkpoint = RunCheckpoint(model_dir, dict(model=model,
                                                 optimizer=optimizer),
                                 task_name="stage1",
                                 vocab_fingerprints={"student": sha},
                                 max_to_keep=3)
  step = run_checkpoint.restore_latest()  # None: a fresh run.
  ...
  run_checkpoint.save(step)
  ```

  Args:
    model_dir: the run's directory.
    items: trackables to save, by name (model, optimizer, rng, input, ...).
    task_name: the task, recorded in the checkpoint.
    vocab_fingerprints: {'teacher'|'student': sha256} of this run.
    max_to_keep: checkpoints kept (the oldest are deleted).
    worker_index: this worker's index (0: the chief).
    num_workers: number of workers of the run.
    encoder_configs: {name: encoder config} written as `encoder_config.json`
      beside the checkpoints (see `Task.encoder_configs`).
  """

  def __init__(self,
               model_dir: str,
               items: Mapping[str, Any],
               task_name: str,
               vocab_fingerprints: Mapping[str, str],
               max_to_keep: int = 3,
               worker_index: int = 0,
               num_workers: int = 1,
               encoder_configs: Optional[Mapping[str, Any]] = None):
    if max_to_keep is not None and max_to_keep < 1:
      raise ValueError(f"max_to_keep must be at least 1 (or None: keep all); "
                       f"received {max_to_keep}.")
    if METADATA_KEY in items:
      raise ValueError(f"{METADATA_KEY!r} is reserved for the run's metadata.")
    self.model_dir = model_dir
    self.vocab_fingerprints = dict(vocab_fingerprints)
    self.task_name = task_name
    self.worker_index = worker_index
    self.num_workers = num_workers
    self.encoder_configs = dict(encoder_configs or {})
    self._encoder_configs_written = False
    self.metadata = make_metadata(task_name, vocab_fingerprints)
    self.checkpoint = tf.train.Checkpoint(**items, metadata=self.metadata)
    self.directory = worker_directory(model_dir, worker_index)
    self._max_to_keep = max_to_keep
    self.manager = tf.train.CheckpointManager(
        self.checkpoint, self.directory, max_to_keep=max_to_keep,
        checkpoint_name=CHECKPOINT_PREFIX)

  def latest_common_step(self) -> Optional[int]:
    """The newest step that every worker has a complete checkpoint of."""
    common = None
    for index in range(self.num_workers):
      steps = _steps_in(worker_directory(self.model_dir, index))
      common = steps if common is None else common & steps
    return max(common) if common else None

  def restore_latest(self) -> Optional[int]:
    """Restores the newest intact checkpoint; its step, or None if none.

    A checkpoint whose files cannot be read (truncated, corrupted) is moved
    to `damaged/` with a warning that names it, and the one before it is
    tried, down to the oldest kept.

    Raises:
      VocabularyMismatchError: the checkpoint was trained with other
        vocabularies.
      ValueError: the checkpoint is another task's or another model's.
      FileNotFoundError: checkpoints exist but none can be restored.
    """
    if self.worker_index == 0:
      remove_failed_saves(self.directory)
    common = None
    for index in range(self.num_workers):
      steps = _steps_in(worker_directory(self.model_dir, index))
      common = steps if common is None else common & steps
    if not common:
      if self.manager.latest_checkpoint:
        raise FileNotFoundError(
            f"{self.directory} has checkpoints, but no step that all "
            f"{self.num_workers} workers finished saving; delete the run's "
            "directory or restore the missing worker directories.")
      return None
    paths = {self._path(step): step for step in sorted(common, reverse=True)}
    path, damaged = damaged_checkpoints.restore_newest_intact(
        self.directory, list(paths), self._restore)
    if damaged:
      self._forget_missing()
    return paths[path]

  def _path(self, step):
    return os.path.join(self.directory, f"{CHECKPOINT_PREFIX}-{step}")

  def _restore(self, path):
    check_vocab_fingerprints(path, self.vocab_fingerprints,
                             purpose="resuming")
    recorded_task = read_metadata(path)["task"]
    task = self.task_name
    if recorded_task and recorded_task != task:
      raise ValueError(
          f"Refusing to resume: {path} was written by task {recorded_task!r}, "
          f"this run is task {task!r}. Use a fresh model_dir (and point the "
          "task's init checkpoint at the old one).")
    logging.info("Resuming from %s.", path)
    # assert_existing_objects_matched: every saved item of this run must find
    # its variables; anything else is a different model in the same model_dir.
    try:
      status = self.checkpoint.read(path)
      status.assert_existing_objects_matched()
    except (AssertionError, ValueError, tf.errors.InvalidArgumentError) as e:
      detail = str(getattr(e, "message", e)).splitlines()[0][:300]
      raise ValueError(
          f"The checkpoint {path} does not fit this run's model: the run "
          "directory holds a model of another configuration (size, preset, "
          "vocabulary or heads). Use a fresh model_dir, or the configuration "
          f"it was trained with (its operative_config.gin). Details: "
          f"{detail}") from None
    except (tf.errors.NotFoundError, tf.errors.FailedPreconditionError) as e:
      if "dataset iterator" not in str(e):
        raise
      raise ValueError(
          f"The checkpoint {path} holds the position of an input pipeline "
          "that differs from this run's: the training data or its "
          "processing (transfer set, augmentation, batch size, padding, "
          "shuffling, package version) changed since it was written. Resume "
          "with the configuration it was written with (its "
          "operative_config.gin), or use a fresh model_dir and start from "
          "its weights (the task's init checkpoint).") from None
    status.expect_partial()

  def set_aside_from(self, step: int, subdir: str) -> List[str]:
    """Moves the checkpoints of `step` and later into `subdir`; their paths.

    The trainer sets aside checkpoints whose weights diverged, so that a
    rerun resumes from the latest good one.
    """
    moved = []
    for number in sorted(_steps_in(self.directory)):
      if number >= step:
        path = self._path(number)
        damaged_checkpoints.set_aside(self.directory, path, subdir)
        moved.append(path)
    if moved:
      self._forget_missing()
    return moved

  def _forget_missing(self):
    """Drops checkpoints moved aside from the state file and the manager."""
    damaged_checkpoints.forget_missing(self.directory)
    # A new manager reads the corrected state (what it keeps and deletes).
    self.manager = tf.train.CheckpointManager(
        self.checkpoint, self.directory, max_to_keep=self._max_to_keep,
        checkpoint_name=CHECKPOINT_PREFIX)

  def save(self, step: int) -> str:
    """Saves a checkpoint numbered `step`; returns its path."""
    path = self.manager.save(checkpoint_number=step)
    if self.encoder_configs and not self._encoder_configs_written:
      # Once per run: the configs do not change while it trains.
      write_encoder_configs(self.directory, self.encoder_configs)
      self._encoder_configs_written = True
    logging.info("Saved checkpoint %s.", path)
    return path

  @property
  def latest_checkpoint(self) -> Optional[str]:
    return self.manager.latest_checkpoint


class ControllerCheckpointManager(tf.train.CheckpointManager):
  """A `RunCheckpoint` in the form `orbit.Controller` saves and restores with.

  The Controller takes a `tf.train.CheckpointManager`; this one delegates to
  the `RunCheckpoint` (which owns the directory's state) for two behaviours
  the stock manager lacks:

  * `restore_or_initialize` is `RunCheckpoint.restore_latest`: the recorded
    task and vocabularies are checked, damaged checkpoints are set aside and
    the newest intact one is restored;
  * `save` with `check_interval` saves at multiples of `every` (the stock
    manager counts the interval from the last save, so a run resumed or
    stopped off a multiple would write other `ckpt-N` than an uninterrupted
    one), and never twice at one step;
  * with `every_seconds`, it also saves at the first loop boundary that
    many seconds after the last save (or the start), so a run whose step
    cadence is long (a teacher evaluated once an epoch) loses at most about
    that much work to a kill. Those extra checkpoints hold the same state a
    stop request saves, so a run resumed from one goes on exactly as well.

  Args:
    run_checkpoint: the run's `RunCheckpoint`.
    global_step: the step variable the checkpoints are numbered by.
    every: steps between checkpoints.
    every_seconds: seconds of training after which a checkpoint is saved at
      the next loop boundary even off a multiple of `every`; None: only
      `every` counts.
  """

  def __init__(self, run_checkpoint: RunCheckpoint, global_step: tf.Variable,
               every: int, every_seconds: Optional[float] = None,
               clock=time.monotonic):
    # pylint: disable=super-init-not-called
    # CheckpointManager.__init__ would track the directory's checkpoints a
    # second time, beside the RunCheckpoint's own manager.
    self.run_checkpoint = run_checkpoint
    self.global_step = global_step
    self.every = every
    self.every_seconds = every_seconds
    self._clock = clock
    self._last_save_time = clock()
    #: The step restored by `restore_or_initialize` (None: a fresh run).
    self.restored_step = None

  @property
  def checkpoint(self):
    return self.run_checkpoint.checkpoint

  @property
  def directory(self):
    return self.run_checkpoint.directory

  @property
  def checkpoint_interval(self):
    return self.every

  @property
  def latest_checkpoint(self):
    return self.run_checkpoint.latest_checkpoint

  @property
  def checkpoints(self):
    return self.run_checkpoint.manager.checkpoints

  def restore_or_initialize(self) -> Optional[str]:
    self.restored_step = self.run_checkpoint.restore_latest()
    return self.latest_checkpoint if self.restored_step is not None else None

  def save(self, checkpoint_number=None, check_interval: bool = True,
           options=None) -> Optional[str]:
    del options  # Saved synchronously, as RunCheckpoint does.
    step = int(self.global_step.numpy() if checkpoint_number is None
               else checkpoint_number)
    latest = self.latest_checkpoint
    if latest and os.path.basename(latest) == f"{CHECKPOINT_PREFIX}-{step}":
      return None
    if check_interval and step % self.every and not self._time_is_up():
      return None
    path = self.run_checkpoint.save(step)
    self._last_save_time = self._clock()
    return path

  def _time_is_up(self) -> bool:
    return (self.every_seconds is not None and
            self._clock() - self._last_save_time >= self.every_seconds)

  def sync(self):
    pass
