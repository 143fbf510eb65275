"""Which precision a run computes in: bfloat16 where the hardware has it.

`Trainer.precision = 'mixed_bfloat16_if_native'` trains in Keras's
`mixed_bfloat16` policy (float32 variables and losses, bfloat16 matmuls and
activations) where bfloat16 arithmetic is native, and in float32 elsewhere:

- on a TPU;
- on a CPU with bfloat16 instructions (`avx512_bf16` or `amx_bf16` among
  its flags: AMD Zen 4 and later, Intel Cooper Lake, Sapphire Rapids and
  later) when TensorFlow's oneDNN kernels are on (TensorFlow turns them on
  by default on such CPUs; `TF_ENABLE_ONEDNN_OPTS=0` turns them off).

Without both, bfloat16 is emulated and far slower than float32 (the own-data
teacher's step took about 9 s instead of 0.4 s with oneDNN off), so the run
stays in float32, with the same arithmetic as before. With a GPU in sight
the run stays in float32 too: its speed there is not measured here.

The own-data job's teacher uses it: on a 2-core AMD EPYC with `avx512_bf16`
its SNIPS fine-tuning step ran at 228-233 examples/s against 143-160 in
float32 (docs/PERFORMANCE.md). The 6x96 student gains nothing from it (its
matmuls are too small: 636-789 examples/s in bfloat16, 690-780 in
float32) and stays in float32. The whole own-data job on SNIPS took 0.87x
the time there, the teacher 0.71x, with the same validation scores.
"""

import os
from typing import FrozenSet, Optional, Tuple

from absl import logging
import tensorflow as tf

#: The value of `Trainer.precision` resolved here.
IF_NATIVE = "mixed_bfloat16_if_native"
#: The values of `Trainer.precision`.
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16", IF_NATIVE)
#: CPU flags (as /proc/cpuinfo spells them) of native bfloat16 arithmetic.
BFLOAT16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> FrozenSet[str]:
  """The CPU's feature flags; empty where the file is missing (not Linux)."""
  try:
    with open(cpuinfo, encoding="utf-8", errors="replace") as f:
      for line in f:
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
          return frozenset(value.split())
  except OSError:
    pass
  return frozenset()


def onednn_enabled() -> bool:
  """Whether TensorFlow runs its oneDNN CPU kernels in this process."""
  try:
    from tensorflow.python.util import _pywrap_util_port  # pylint: disable=g-import-not-at-top
    return bool(_pywrap_util_port.IsMklEnabled())
  except (ImportError, AttributeError):
    # Without the query, only an explicit switch tells.
    return os.environ.get("TF_ENABLE_ONEDNN_OPTS", "") == "1"


def native_bfloat16_cpu(flags: Optional[FrozenSet[str]] = None,
                        onednn: Optional[bool] = None) -> Tuple[bool, str]:
  """(whether this CPU computes bfloat16 natively here, why in a phrase)."""
  flags = cpu_flags() if flags is None else flags
  onednn = onednn_enabled() if onednn is None else onednn
  found = [f for f in BFLOAT16_CPU_FLAGS if f in flags]
  if not found:
    return False, (f"this CPU has none of {', '.join(BFLOAT16_CPU_FLAGS)}, "
                   "so bfloat16 would be emulated")
  if not onednn:
    return False, (f"the CPU has {found[0]} but TensorFlow's oneDNN kernels "
                   "are off (TF_ENABLE_ONEDNN_OPTS), so bfloat16 would be "
                   "emulated")
  return True, f"the CPU has {found[0]} and TensorFlow's oneDNN kernels are on"


def resolve(precision: str, is_tpu: bool,
            flags: Optional[FrozenSet[str]] = None,
            onednn: Optional[bool] = None,
            gpus: Optional[int] = None) -> Tuple[str, Optional[str]]:
  """A Keras policy name for `precision`, and why when it was chosen here.

  Args:
    precision: 'auto' (bfloat16 on TPU, else float32), IF_NATIVE, or a Keras
      policy name (returned as it is).
    is_tpu: whether the run's strategy is a TPUStrategy.
    flags, onednn, gpus: the CPU's flags, whether oneDNN is on, how many GPUs
      TensorFlow sees; None: read from this machine.
  """
  if precision == "auto":
    return ("mixed_bfloat16" if is_tpu else "float32"), None
  if precision != IF_NATIVE:
    return precision, None
  if is_tpu:
    return "mixed_bfloat16", "a TPU computes bfloat16 natively"
  if gpus is None:
    gpus = len(tf.config.list_physical_devices("GPU"))
  if gpus:
    return "float32", "a GPU is in sight (bfloat16 is used on CPUs and TPUs)"
  native, why = native_bfloat16_cpu(flags, onednn)
  return ("mixed_bfloat16" if native else "float32"), why


def log_choice(precision: str, why: Optional[str]):
  if why:
    logging.info("Precision %s: %s.", precision, why)


#: How a run's operative_config.gin starts: the precision the run computed
#: in (`config_comment`, `precision_of_run`).
COMMENT = "# Precision: "


def config_comment(precision: str, why: Optional[str]) -> str:
  """The operative config's first line: the Keras policy the run used, and
  what chose it when `IF_NATIVE` did."""
  return f"{COMMENT}{precision}" + (f" ({why})" if why else "") + ".\n"


def precision_of_run(operative_config_text: str) -> Optional[str]:
  """The Keras policy a run computed in, from its operative config's first
  line; None for a run that does not say (written before that line)."""
  first = operative_config_text.split("\n", 1)[0]
  if first.startswith(COMMENT):
    return first[len(COMMENT):].split(" ", 1)[0].rstrip(".")
  return None
