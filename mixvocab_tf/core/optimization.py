"""The optimizer of all pretraining stages: LAMB, linear warm-up, linear decay.

Zhao et al. (EACL 2021), Section 4: LAMB (You et al., 2020) with peak learning
rate 1.25e-3 at batch 2048, linear warm-up over the first 10% of the steps,
then linear decay to zero; no weight decay on LayerNorm parameters and biases,
as in BERT. Everything is built by `official.modeling.optimization`
(`OptimizationConfig` -> `OptimizerFactory`); this module only fills the
config from a few gin-visible numbers.

Gradient clipping is the trainer's job, not the optimizer's: the trainer
all-reduces the gradients itself, takes their global norm once (which it also
logs) and clips with it, as BERT's own TF2 trainer did. `optimization_config`
therefore stores the clip norm in the config's `global_clipnorm` for the record
and `build_optimizer` builds the optimizer without it.
"""

from typing import Optional, Sequence, Tuple

import gin
import tf_keras

from official.modeling.optimization import optimizer_factory
from official.modeling.optimization.configs import optimization_config as opt_cfg

#: Variable-name patterns that get no weight decay: LayerNorm (Keras names
#: `*layer_norm*/gamma|beta`, TF1 BERT names `LayerNorm`) and all biases.
NO_DECAY_PATTERNS = ("LayerNorm", "layer_norm", "bias")

OPTIMIZERS = ("lamb", "adamw", "adam")


@gin.configurable(module="mixvocab_tf.trainer")
def optimization_config(
    train_steps: int,
    optimizer: str = "lamb",
    learning_rate: float = 1.25e-3,
    warmup_fraction: float = 0.1,
    warmup_steps: Optional[int] = None,
    end_learning_rate: float = 0.0,
    weight_decay_rate: float = 0.01,
    exclude_from_weight_decay: Sequence[str] = NO_DECAY_PATTERNS,
    beta_1: float = 0.9,
    beta_2: float = 0.999,
    epsilon: float = 1e-6,
    clip_norm: Optional[float] = 1.0,
) -> opt_cfg.OptimizationConfig:
  """An `official` OptimizationConfig for warm-up then linear decay.

  The learning rate rises linearly from 0 to `learning_rate` over the warm-up
  steps, then falls linearly to `end_learning_rate` at `train_steps`. The decay
  is offset by the warm-up (`PolynomialDecayWithOffset`), so the peak is
  reached exactly at the end of the warm-up, with no jump.

  Args:
    train_steps: total optimizer steps of the run.
    optimizer: "lamb" (the paper's), "adamw" or "adam".
    learning_rate: peak learning rate.
    warmup_fraction: share of `train_steps` spent warming up.
    warmup_steps: warm-up steps; overrides `warmup_fraction`.
    end_learning_rate: learning rate at `train_steps`.
    weight_decay_rate: decoupled weight decay (lamb, adamw).
    exclude_from_weight_decay: regexes of variable names without weight decay.
    beta_1: first-moment decay.
    beta_2: second-moment decay.
    epsilon: numerical-stability constant.
    clip_norm: global gradient-norm clip (None: no clipping).

  Returns:
    The `OptimizationConfig`.
  """
  if optimizer not in OPTIMIZERS:
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}; received "
                     f"{optimizer!r}.")
  if int(train_steps) <= 0:
    raise ValueError(f"train_steps must be positive; received {train_steps!r}.")
  if warmup_steps is None:
    if not 0.0 <= warmup_fraction < 1.0:
      raise ValueError("warmup_fraction must be in [0, 1); received "
                       f"{warmup_fraction!r}.")
    warmup_steps = int(round(warmup_fraction * train_steps))
  if not 0 <= warmup_steps < train_steps:
    raise ValueError("warmup_steps must be in [0, train_steps); received "
                     f"{warmup_steps} and {train_steps}.")
  if learning_rate <= 0:
    raise ValueError(f"learning_rate must be positive; received "
                     f"{learning_rate!r}.")
  if clip_norm is not None and clip_norm <= 0:
    raise ValueError(f"clip_norm must be positive or None; received "
                     f"{clip_norm!r}.")
  optimizer_params = {
      "lamb": {
          "weight_decay_rate": weight_decay_rate,
          "exclude_from_weight_decay": list(exclude_from_weight_decay),
          "beta_1": beta_1, "beta_2": beta_2, "epsilon": epsilon,
      },
      "adamw": {
          "weight_decay_rate": weight_decay_rate,
          "exclude_from_weight_decay": list(exclude_from_weight_decay),
          "beta_1": beta_1, "beta_2": beta_2, "epsilon": epsilon,
      },
      "adam": {"beta_1": beta_1, "beta_2": beta_2, "epsilon": epsilon},
  }[optimizer]
  optimizer_params["global_clipnorm"] = clip_norm
  params = {
      "optimizer": {"type": optimizer, optimizer: optimizer_params},
      "learning_rate": {
          "type": "polynomial",
          "polynomial": {
              "initial_learning_rate": learning_rate,
              "decay_steps": int(train_steps) - warmup_steps,
              "end_learning_rate": end_learning_rate,
              "power": 1.0,
              "offset": warmup_steps,
          },
      },
  }
  if warmup_steps:
    params["warmup"] = {
        "type": "linear",
        "linear": {"warmup_steps": warmup_steps, "warmup_learning_rate": 0.0},
    }
  return opt_cfg.OptimizationConfig(params)


def clip_norm_of(config: opt_cfg.OptimizationConfig):
  """The global clip norm recorded in `config` (None: no clipping)."""
  return config.optimizer.get().global_clipnorm


def build_optimizer(
    config: opt_cfg.OptimizationConfig
) -> Tuple[tf_keras.optimizers.legacy.Optimizer,
           tf_keras.optimizers.schedules.LearningRateSchedule]:
  """Builds (optimizer, learning-rate schedule) without optimizer clipping.

  Call inside `strategy.scope()`. The trainer clips (see the module doc).
  """
  # A copy, so the caller's config keeps its record of the clip norm.
  config = opt_cfg.OptimizationConfig(config.as_dict())
  config.optimizer.get().global_clipnorm = None
  factory = optimizer_factory.OptimizerFactory(config)
  schedule = factory.build_learning_rate()
  return factory.build_optimizer(schedule), schedule
