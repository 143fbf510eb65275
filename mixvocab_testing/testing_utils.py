"""Test helpers shared by the layer, network and model tests.

A test-only module: it is not part of the installed package (the repository's
`conftest.py` puts the repository root on the path, so the tests beside the
modules, `tests/` and `tools/` import it as `mixvocab_testing.testing_utils`).

Two kinds of helper live here:

* Serialization checks that every Keras layer, network and model of the package
  must pass: the config survives `get_config` ->
  `from_config` -> `get_config` and JSON, and a model saved in the `.keras` format
  and as a tf_keras SavedModel reloads and gives the same outputs.
* An independent NumPy BERT (post-LayerNorm, exact-erf or tanh GELU), with writers
  for tiny checkpoints in the Hugging Face (`config.json` + `model.safetensors`)
  and google-research/bert (`bert_config.json` + `bert_model.ckpt`) layouts, so
  that the checkpoint loaders of Section 4 (teachers: BERT-LARGE, MiniLM) are
  checked against a forward pass that shares no code with them.
"""

import json
import math
import os

import numpy as np
import tensorflow as tf
import tf_keras

#: Real development data next to a source checkout, if present
#: (`MIXVOCAB_SHARED_DATA` overrides where; the tests that read it skip
#: when it is absent, as in a user's clone).
SHARED_DATA = os.environ.get("MIXVOCAB_SHARED_DATA") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                 "shared", "data"))


def shared_data(*parts):
  """A path below `SHARED_DATA` (which may not exist)."""
  return os.path.join(SHARED_DATA, *parts)

# -----------------------------------------------------------------------------
# Serialization checks.
# -----------------------------------------------------------------------------


def _to_numpy_tree(outputs):
  return tf.nest.map_structure(
      lambda t: t.numpy() if hasattr(t, "numpy") else np.asarray(t), outputs)


def assert_config_round_trip(obj):
  """Checks `from_config(get_config())` rebuilds an object with the same config.

  Args:
    obj: A Keras layer or model of a registered class.

  Returns:
    The rebuilt object.
  """
  config = obj.get_config()
  # A config must be plain data: JSON is what `.keras` and SavedModel store.
  json_config = json.loads(json.dumps(
      tf_keras.utils.serialize_keras_object(obj)))
  rebuilt = tf_keras.utils.deserialize_keras_object(json_config)
  if type(rebuilt) is not type(obj):
    raise AssertionError(f"Deserialized a {type(rebuilt).__name__}, expected a "
                         f"{type(obj).__name__}.")
  rebuilt_config = rebuilt.get_config()
  if json.dumps(rebuilt_config, sort_keys=True, default=str) != json.dumps(
      config, sort_keys=True, default=str):
    raise AssertionError(
        f"Config changed in a round trip:\n{config}\n!=\n{rebuilt_config}")
  return rebuilt


def _wrap_in_functional_model(layer, inputs, static_batch):
  """Wraps a layer taking a dict (or a tensor) in a functional model."""
  def keras_input(name, value):
    value = tf.convert_to_tensor(value)
    return tf_keras.Input(shape=value.shape[1:], dtype=value.dtype, name=name,
                          batch_size=value.shape[0] if static_batch else None)

  if isinstance(inputs, dict):
    keras_inputs = {k: keras_input(k, v) for k, v in inputs.items()}
  else:
    keras_inputs = keras_input("inputs", inputs)
  return tf_keras.Model(keras_inputs, layer(keras_inputs))


def assert_save_and_reload(obj, inputs, directory, formats=("keras", "tf"),
                           atol=1e-6, static_batch=False):
  """Saves `obj`, reloads it, and checks the reloaded outputs match.

  Args:
    obj: A Keras model, or a layer (wrapped in a functional model first).
    inputs: Inputs to call it with (a dict of arrays or one array).
    directory: A fresh directory to save into.
    formats: Any of "keras" (the `.keras` archive) and "tf" (SavedModel).
    atol: Absolute tolerance on every output.
    static_batch: Give the wrapping model's inputs a fixed first dimension (for
      layers whose input has no batch axis, e.g. a weight matrix).

  Returns:
    The dict {format: reloaded model}.
  """
  model = obj if isinstance(obj, tf_keras.Model) else _wrap_in_functional_model(
      obj, inputs, static_batch)
  expected = _to_numpy_tree(model(inputs, training=False))
  reloaded = {}
  for save_format in formats:
    if save_format == "keras":
      path = os.path.join(directory, "model.keras")
      model.save(path)
    elif save_format == "tf":
      path = os.path.join(directory, "saved_model")
      model.save(path, save_format="tf")
    else:
      raise ValueError(f"format must be 'keras' or 'tf'; received {save_format!r}.")
    loaded = tf_keras.models.load_model(path)
    actual = _to_numpy_tree(loaded(inputs, training=False))
    tf.nest.assert_same_structure(expected, actual)
    for e, a in zip(tf.nest.flatten(expected), tf.nest.flatten(actual)):
      np.testing.assert_allclose(a, e, atol=atol, rtol=0,
                                 err_msg=f"after a {save_format} reload")
    reloaded[save_format] = loaded
  return reloaded


# -----------------------------------------------------------------------------
# NumPy reference BERT. Parameters are a nested dict of float arrays with
# kernels as [in, out]:
#   word, position, type, emb_ln_g, emb_ln_b,
#   layers: [{q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, ln1_g, ln1_b,
#             i_w, i_b, f_w, f_b, ln2_g, ln2_b}],
#   pool_w, pool_b, and optionally the MLM head mlm_w, mlm_b, mlm_ln_g, mlm_ln_b,
#   mlm_out_b (its output matrix is tied to `word`).
# -----------------------------------------------------------------------------

_LAYER_KEYS = ("q", "k", "v", "o", "i", "f")


def read_json(path):
  with open(path) as f:
    return json.load(f)


def tiny_bert_config(vocab_size=100, hidden_size=32, num_layers=2,
                     num_heads=4, inner_dim=64, max_positions=16,
                     type_vocab_size=2):
  """A tiny BERT config in the Hugging Face `config.json` spelling."""
  return dict(
      vocab_size=vocab_size, hidden_size=hidden_size,
      num_hidden_layers=num_layers, num_attention_heads=num_heads,
      intermediate_size=inner_dim, max_position_embeddings=max_positions,
      type_vocab_size=type_vocab_size, hidden_act="gelu",
      hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
      layer_norm_eps=1e-12, model_type="bert")


def random_bert_params(config, seed=0, with_mlm_head=True):
  """Random parameters of a BERT with `config` (HF spelling), scale ~0.2."""
  rng = np.random.default_rng(seed)
  d = config["hidden_size"]
  inner = config["intermediate_size"]

  def normal(*shape):
    return (0.2 * rng.standard_normal(shape)).astype(np.float32)

  def gamma(n):
    return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

  params = dict(
      word=normal(config["vocab_size"], d),
      position=normal(config["max_position_embeddings"], d),
      type=normal(config["type_vocab_size"], d),
      emb_ln_g=gamma(d), emb_ln_b=normal(d),
      pool_w=normal(d, d), pool_b=normal(d),
      layers=[])
  for _ in range(config["num_hidden_layers"]):
    params["layers"].append(dict(
        q_w=normal(d, d), q_b=normal(d), k_w=normal(d, d), k_b=normal(d),
        v_w=normal(d, d), v_b=normal(d), o_w=normal(d, d), o_b=normal(d),
        ln1_g=gamma(d), ln1_b=normal(d),
        i_w=normal(d, inner), i_b=normal(inner),
        f_w=normal(inner, d), f_b=normal(d),
        ln2_g=gamma(d), ln2_b=normal(d)))
  if with_mlm_head:
    params.update(mlm_w=normal(d, d), mlm_b=normal(d), mlm_ln_g=gamma(d),
                  mlm_ln_b=normal(d), mlm_out_b=normal(config["vocab_size"]))
  return params


def _layer_norm(x, g, b, eps):
  mean = x.mean(-1, keepdims=True)
  var = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(var + eps) * g + b


#: The error function elementwise, exact to float64 (NumPy has none).
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu(x, hidden_act):
  if hidden_act == "gelu":  # Exact, as Hugging Face's "gelu".
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))
  if hidden_act == "gelu_tanh":  # google-research/bert's and HF's "gelu_new".
    return 0.5 * x * (1.0 + np.tanh(
        np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
  raise ValueError(f"Unknown hidden_act {hidden_act!r}.")


def numpy_bert_forward(params, config, input_word_ids, input_mask=None,
                       input_type_ids=None, masked_lm_positions=None,
                       hidden_act="gelu"):
  """A BERT forward pass in float64 NumPy.

  Args:
    params: Parameters as documented above.
    config: The HF-spelled config (hidden_size, num_attention_heads,
      layer_norm_eps).
    input_word_ids: int [B, L].
    input_mask: int [B, L], 1 for real tokens; all ones if None.
    input_type_ids: int [B, L]; all zeros if None.
    masked_lm_positions: int [B, P]; if given (and the head is in `params`) the
      output has `mlm_logits` [B, P, V].
    hidden_act: "gelu" (exact erf) or "gelu_tanh".

  Returns:
    A dict with `sequence_output` [B, L, d], `pooled_output` [B, d],
    `encoder_outputs` (a list, one [B, L, d] per layer) and maybe `mlm_logits`.
  """
  p = tf.nest.map_structure(lambda a: np.asarray(a, np.float64), params)
  ids = np.asarray(input_word_ids)
  batch, length = ids.shape
  mask = np.ones_like(ids) if input_mask is None else np.asarray(input_mask)
  types = np.zeros_like(ids) if input_type_ids is None else np.asarray(
      input_type_ids)
  eps = config.get("layer_norm_eps", 1e-12)
  heads = config["num_attention_heads"]
  d = p["word"].shape[1]
  head_dim = d // heads

  x = p["word"][ids] + p["position"][:length][None] + p["type"][types]
  x = _layer_norm(x, p["emb_ln_g"], p["emb_ln_b"], eps)
  adder = (1.0 - mask[:, None, None, :].astype(np.float64)) * -1e9
  encoder_outputs = []
  for layer in p["layers"]:
    def split(t):
      return t.reshape(batch, length, heads, head_dim).transpose(0, 2, 1, 3)
    q = split(x @ layer["q_w"] + layer["q_b"])
    k = split(x @ layer["k_w"] + layer["k_b"])
    v = split(x @ layer["v_w"] + layer["v_b"])
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim) + adder
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probs = scores / scores.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, d)
    attention = _layer_norm(context @ layer["o_w"] + layer["o_b"] + x,
                            layer["ln1_g"], layer["ln1_b"], eps)
    inner = _gelu(attention @ layer["i_w"] + layer["i_b"], hidden_act)
    x = _layer_norm(inner @ layer["f_w"] + layer["f_b"] + attention,
                    layer["ln2_g"], layer["ln2_b"], eps)
    encoder_outputs.append(x)
  outputs = dict(sequence_output=x,
                 pooled_output=np.tanh(x[:, 0] @ p["pool_w"] + p["pool_b"]),
                 encoder_outputs=encoder_outputs)
  if masked_lm_positions is not None and "mlm_w" in p:
    positions = np.asarray(masked_lm_positions)
    gathered = np.take_along_axis(x, positions[..., None], axis=1)
    h = _gelu(gathered @ p["mlm_w"] + p["mlm_b"], hidden_act)
    h = _layer_norm(h, p["mlm_ln_g"], p["mlm_ln_b"], eps)
    outputs["mlm_logits"] = h @ p["word"].T + p["mlm_out_b"]
  return outputs


# -----------------------------------------------------------------------------
# Checkpoint writers and readers for the two teacher layouts.
# -----------------------------------------------------------------------------

_HF_LAYER_NAMES = dict(
    q="attention.self.query", k="attention.self.key", v="attention.self.value",
    o="attention.output.dense", i="intermediate.dense", f="output.dense")
_HF_LAYER_NORMS = dict(ln1="attention.output.LayerNorm", ln2="output.LayerNorm")
_GOOGLE_LAYER_NAMES = dict(
    q="attention/self/query", k="attention/self/key", v="attention/self/value",
    o="attention/output/dense", i="intermediate/dense", f="output/dense")
_GOOGLE_LAYER_NORMS = dict(ln1="attention/output/LayerNorm",
                           ln2="output/LayerNorm")


def hf_state_dict(params, prefix=""):
  """Hugging Face BertModel / BertForMaskedLM names, torch [out, in] kernels."""
  out = {
      f"{prefix}embeddings.word_embeddings.weight": params["word"],
      f"{prefix}embeddings.position_embeddings.weight": params["position"],
      f"{prefix}embeddings.token_type_embeddings.weight": params["type"],
      f"{prefix}embeddings.LayerNorm.weight": params["emb_ln_g"],
      f"{prefix}embeddings.LayerNorm.bias": params["emb_ln_b"],
      f"{prefix}pooler.dense.weight": params["pool_w"].T,
      f"{prefix}pooler.dense.bias": params["pool_b"],
  }
  for i, layer in enumerate(params["layers"]):
    base = f"{prefix}encoder.layer.{i}."
    for key, name in _HF_LAYER_NAMES.items():
      out[base + name + ".weight"] = layer[key + "_w"].T
      out[base + name + ".bias"] = layer[key + "_b"]
    for key, name in _HF_LAYER_NORMS.items():
      out[base + name + ".weight"] = layer[key + "_g"]
      out[base + name + ".bias"] = layer[key + "_b"]
  if "mlm_w" in params:
    out.update({
        "cls.predictions.transform.dense.weight": params["mlm_w"].T,
        "cls.predictions.transform.dense.bias": params["mlm_b"],
        "cls.predictions.transform.LayerNorm.weight": params["mlm_ln_g"],
        "cls.predictions.transform.LayerNorm.bias": params["mlm_ln_b"],
        "cls.predictions.bias": params["mlm_out_b"],
        "cls.predictions.decoder.weight": params["word"],
        "cls.predictions.decoder.bias": params["mlm_out_b"],
    })
  return {k: np.ascontiguousarray(v, np.float32) for k, v in out.items()}


def params_from_hf_state_dict(state_dict):
  """Inverse of `hf_state_dict` (for real HF checkpoints such as MiniLM)."""
  prefix = "bert." if "bert.embeddings.word_embeddings.weight" in state_dict else ""
  sd = state_dict
  params = dict(
      word=sd[f"{prefix}embeddings.word_embeddings.weight"],
      position=sd[f"{prefix}embeddings.position_embeddings.weight"],
      type=sd[f"{prefix}embeddings.token_type_embeddings.weight"],
      emb_ln_g=sd[f"{prefix}embeddings.LayerNorm.weight"],
      emb_ln_b=sd[f"{prefix}embeddings.LayerNorm.bias"],
      pool_w=sd[f"{prefix}pooler.dense.weight"].T,
      pool_b=sd[f"{prefix}pooler.dense.bias"],
      layers=[])
  i = 0
  while f"{prefix}encoder.layer.{i}.attention.self.query.weight" in sd:
    base = f"{prefix}encoder.layer.{i}."
    layer = {}
    for key, name in _HF_LAYER_NAMES.items():
      layer[key + "_w"] = sd[base + name + ".weight"].T
      layer[key + "_b"] = sd[base + name + ".bias"]
    for key, name in _HF_LAYER_NORMS.items():
      layer[key + "_g"] = sd[base + name + ".weight"]
      layer[key + "_b"] = sd[base + name + ".bias"]
    params["layers"].append(layer)
    i += 1
  return params


def write_hf_checkpoint(directory, params, config, prefix=""):
  """Writes `config.json` and `model.safetensors` under `directory`."""
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  os.makedirs(directory, exist_ok=True)
  with open(os.path.join(directory, "config.json"), "w") as f:
    json.dump(config, f)
  safetensors_numpy.save_file(hf_state_dict(params, prefix=prefix),
                              os.path.join(directory, "model.safetensors"))
  return directory


def google_variables(params):
  """google-research/bert variable names, [in, out] kernels."""
  out = {
      "bert/embeddings/word_embeddings": params["word"],
      "bert/embeddings/position_embeddings": params["position"],
      "bert/embeddings/token_type_embeddings": params["type"],
      "bert/embeddings/LayerNorm/gamma": params["emb_ln_g"],
      "bert/embeddings/LayerNorm/beta": params["emb_ln_b"],
      "bert/pooler/dense/kernel": params["pool_w"],
      "bert/pooler/dense/bias": params["pool_b"],
  }
  for i, layer in enumerate(params["layers"]):
    base = f"bert/encoder/layer_{i}/"
    for key, name in _GOOGLE_LAYER_NAMES.items():
      out[base + name + "/kernel"] = layer[key + "_w"]
      out[base + name + "/bias"] = layer[key + "_b"]
    for key, name in _GOOGLE_LAYER_NORMS.items():
      out[base + name + "/gamma"] = layer[key + "_g"]
      out[base + name + "/beta"] = layer[key + "_b"]
  if "mlm_w" in params:
    out.update({
        "cls/predictions/transform/dense/kernel": params["mlm_w"],
        "cls/predictions/transform/dense/bias": params["mlm_b"],
        "cls/predictions/transform/LayerNorm/gamma": params["mlm_ln_g"],
        "cls/predictions/transform/LayerNorm/beta": params["mlm_ln_b"],
        "cls/predictions/output_bias": params["mlm_out_b"],
    })
  return {k: np.asarray(v, np.float32) for k, v in out.items()}


def write_google_checkpoint(directory, params, config, extra_variables=None):
  """Writes `bert_config.json` and a TF1 `bert_model.ckpt` under `directory`.

  The checkpoint is written the way google-research/bert wrote its own: a TF1
  graph of named variables saved by `tf.compat.v1.train.Saver`.

  Args:
    directory: Output directory.
    params: Parameters as documented above.
    config: The HF-spelled config; written without `layer_norm_eps` and with
      google's key set.
    extra_variables: Optional {name: array} to add (e.g. optimizer slots).

  Returns:
    The checkpoint prefix.
  """
  os.makedirs(directory, exist_ok=True)
  google_config = {k: v for k, v in config.items()
                   if k not in ("layer_norm_eps", "model_type")}
  with open(os.path.join(directory, "bert_config.json"), "w") as f:
    json.dump(google_config, f)
  variables = google_variables(params)
  variables.update(extra_variables or {})
  prefix = os.path.join(directory, "bert_model.ckpt")
  with tf.Graph().as_default():
    tf_variables = [tf.compat.v1.Variable(value, name=name)
                    for name, value in variables.items()]
    saver = tf.compat.v1.train.Saver(tf_variables)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      saver.save(session, prefix, write_meta_graph=False)
  return prefix


def write_tiny_teacher(directory, words, google=False, prefix="",
                       max_positions=128, seed=0):
  """A tiny random BERT with a vocabulary of `words`, as a teacher directory.

  The vocabulary is BERT's five special tokens, each of `words`, its
  lowercase letters and their `##` forms (so any lowercase word splits);
  the weights are `random_bert_params`' (hidden 32, 2 layers), written in
  Hugging Face's layout (`prefix`: e.g. 'bert.', as a task model saves
  them) or, with `google`, google-research/bert's.

  Returns:
    The directory.
  """
  letters = sorted({c for w in words for c in w if c.isalpha()} |
                   set("abcdefghijklmnopqrstuvwxyz"))
  tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
  for token in list(dict.fromkeys(words)) + letters + [
      "##" + c for c in letters]:
    if token not in tokens:
      tokens.append(token)
  config = tiny_bert_config(vocab_size=len(tokens),
                            max_positions=max_positions)
  params = random_bert_params(config, seed=seed)
  if google:
    write_google_checkpoint(directory, params, config)
  else:
    write_hf_checkpoint(directory, params, config, prefix=prefix)
  with open(os.path.join(directory, "vocab.txt"), "w",
            encoding="utf-8") as f:
    f.write("\n".join(tokens) + "\n")
  return directory
