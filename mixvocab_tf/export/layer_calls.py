"""Swapping a Keras layer's `call` while export signatures are traced.

The export contexts (`packed_embedding.packed_word_tables`, and
`saved_model_export`'s served layers) let the signatures traced inside them
compute a layer differently from the trained model, which keeps its own
`call` (and its weights) for saving and further fine-tuning.

Example:
```python
swapped = []
layer_calls.swap(layer, lambda inputs: inputs * 2.0, swapped)
try:
  signatures = module.signatures()  # Traced with the new call.
finally:
  layer_calls.restore(swapped)
```
"""


def swap(layer, call, swapped):
  """Makes `call` the layer's `call`; appends what `restore` needs.

  `object.__setattr__`: Keras tracking must not see the function. Keras may
  hold a wrapped `call` of its own on the instance; `restore` puts it back.
  """
  swapped.append((layer, vars(layer).get("call")))
  object.__setattr__(layer, "call", call)


def restore(swapped):
  """Gives each layer of `swapped` its own `call` again."""
  for layer, call in reversed(swapped):
    if call is None:
      object.__delattr__(layer, "call")
    else:
      object.__setattr__(layer, "call", call)
