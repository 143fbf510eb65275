"""Old names of renamed tasks and gin configurables, kept for one release.

Tasks are named by what they do (`intent_slot`, `text_classification`), not
by the dataset they were first written for (`finetune_snips`,
`finetune_glue`). Gin files and run directories written before the rename
still say the old names, so each old name keeps working for one release:

* a task name: `Trainer.task = 'finetune_snips'` builds `IntentSlotTask`
  (`alias_task`), and an export whose `export_info.json` records
  `task_name: finetune_snips` finds its task;
* a gin class: `FinetuneSnipsTask.vocab = ...` and `IntentSlotTask.vocab =
  ...` both reach every `IntentSlotTask` (and its subclasses), whichever
  name `Trainer.task` uses (`alias_class`);
* a gin function: `snips_train_steps.epochs = ...` and
  `intent_slot_train_steps.epochs = ...` both reach a call through either
  name, `@snips_train_steps()` or `@intent_slot_train_steps()`
  (`configurable_with_old_name`).

Binding one parameter through both names is an error (`ValueError` naming
both bindings), not a silent choice: a gin file that includes a shipped one
(new names) and overrides it with an old name would otherwise depend on the
order of registration.
"""

import functools
from typing import Callable

import gin

from mixvocab_tf.core import base_task


def new_task_name(name: str) -> str:
  """The current name of task `name` (itself unless it is an old name)."""
  return base_task.current_task_name(name)


def same_task(recorded: str, current: str) -> bool:
  """Whether a recorded task name (possibly an old one) is task `current`."""
  return new_task_name(recorded) == new_task_name(current)


def alias_task(old_name: str, cls: type) -> None:
  """Makes `Trainer.task = old_name` build `cls` (a registered task).

  The old name maps to the same class object in the task registry, so
  `get_task_class(old_name) is cls`, and `base_task.rename_task` records it
  so that a run directory that recorded the old name resumes.
  """
  registry = base_task._TASKS  # pylint: disable=protected-access
  if old_name in registry and registry[old_name] is not cls:
    raise ValueError(f"Task name {old_name!r} is already registered.")
  registry[old_name] = cls
  base_task.rename_task(old_name, cls.task_name)


def _selector(module: str, name: str) -> str:
  return f"{module}.{name}" if module else name


def _check_not_bound_twice(new_selector: str, old_selector: str) -> None:
  new = gin.get_bindings(new_selector, resolve_references=False)
  old = gin.get_bindings(old_selector, resolve_references=False)
  both = sorted(set(new) & set(old))
  if both:
    new_name, old_name = (s.rsplit(".", 1)[-1]
                          for s in (new_selector, old_selector))
    raise ValueError(
        f"{', '.join(both)} bound both as {new_name}.{both[0]} and as "
        f"{old_name}.{both[0]} (its old name, kept for one release); bind "
        f"it once, as {new_name}.{both[0]}.")


def alias_class(cls: type, old_name: str,
                module: str = "mixvocab_tf.tasks") -> type:
  """Registers the gin configurable class `cls` under `old_name` too.

  Gin decorates `__init__` in place, so bindings to both names reach the
  constructor of `cls` (and of its subclasses, through `super().__init__`).

  Returns:
    `cls`.
  """
  gin.configurable(old_name, module=module)(cls)
  init = cls.__init__
  new_selector = _selector(module, cls.__name__)
  old_selector = _selector(module, old_name)

  @functools.wraps(init)
  def checked_init(self, *args, **kwargs):
    _check_not_bound_twice(new_selector, old_selector)
    init(self, *args, **kwargs)

  cls.__init__ = checked_init
  return cls


def configurable_with_old_name(old_name: str,
                               module: str = "mixvocab_tf.tasks"
                               ) -> Callable[[Callable], Callable]:
  """Decorator: a gin configurable function known by its name and `old_name`.

  A call through either name (`@new()` or `@old()` in a gin file) takes the
  bindings of both names; the decorated function is the new name's.
  """

  def decorator(fn):
    new_selector = _selector(module, fn.__name__)
    old_selector = _selector(module, old_name)

    def entry(other_selector):
      @functools.wraps(fn)
      def call(*args, **kwargs):
        _check_not_bound_twice(new_selector, old_selector)
        for key, value in gin.get_bindings(other_selector).items():
          kwargs.setdefault(key, value)
        return fn(*args, **kwargs)
      return call

    old_entry = entry(new_selector)
    old_entry.__name__ = old_entry.__qualname__ = old_name
    old_entry.__doc__ = (f"Old name of `{fn.__name__}`, kept for one "
                         "release.")
    gin.configurable(old_name, module=module)(old_entry)
    return gin.configurable(fn.__name__, module=module)(entry(old_selector))

  return decorator
