r"""Parameter counts, sizes and FLOPs of students and teachers.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4, report their students as 1.2M to 10.9M parameters with a
4,928-token vocabulary. This tool builds the models of this package (weights
initialized, nothing trained or loaded) and reports, per model:

* parameters split into `embeddings` (word tables, positions, types, embedding
  LayerNorm), `encoder` (transformer layers, pooler), `heads` (MLM transforms and
  output biases; the output matrices are tied to the word tables and not counted
  twice) and `projections` (training-only bridges to the teacher: the stage I
  up-projection in a dual-vocabulary teacher; for a student, the shared
  projections U, V of dual training towards a teacher of --teacher_hidden_size);
* `encoder_parameters` = embeddings + encoder, the deployed encoder, which is
  what the paper counts; for the presets, the paper's number and the ratio;
* sizes of the deployed encoder in fp32 (4 bytes a weight) and int8 (an
  estimate: 1 byte per element of a matrix or table, vectors kept in fp32, as
  dynamic-range quantization does);
* encoder FLOPs per token at --seq_length (a multiply-add is 2 FLOPs; Q, K, V
  and output projections, attention scores and weighted sum, feed-forward; the
  pooler and softmaxes are left out) and MLM-head FLOPs per masked prediction.

Usage (the presets at the paper's vocabulary; `--json` for machine-readable):

  python tools/model_report.py --json
  python tools/model_report.py --checkpoint="$(python -c 'from mixvocab_tf \
    import assets; print(assets.default_teacher_dir())')" --presets= \
    --student_embedding_width=96

Expected (`--json`, about 15 s on 2 cores): encoder parameters L6-H96 1,202,976
(ratio to the paper 1.002), L6-H192 3,751,488 (1.042), L6-H256 6,198,016 (1.000),
L12-H256 10,936,576 (1.003); L6-H96 is 1.62 MFLOPs per token at length 128.
"""

import json
import sys

from absl import app
from absl import flags

from mixvocab_tf.layers import shared_projection
from mixvocab_tf.models import dual_vocab_pretrainer
from mixvocab_tf.models import mlm_pretrainer
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.networks import bert_variables
from mixvocab_tf.networks import dual_vocab_bert_encoder
from mixvocab_tf.networks import plain_bert_encoder
from mixvocab_tf.networks import student_encoder

_PRESETS = flags.DEFINE_list(
    "presets", list(student_encoder.STUDENT_PRESETS),
    "Student presets to report; empty for none.")
_VOCAB_SIZE = flags.DEFINE_integer(
    "vocab_size", student_encoder.PAPER_STUDENT_VOCAB_SIZE,
    "Student vocabulary size (the presets' and a dual teacher's student table).")
_SEQ_LENGTH = flags.DEFINE_integer(
    "seq_length", 128, "Sequence length for FLOPs per token.")
_CHECKPOINT = flags.DEFINE_string(
    "checkpoint", None,
    "A teacher checkpoint (Hugging Face or google-research/bert) to report; "
    "only its config is read.")
_STUDENT_EMBEDDING_WIDTH = flags.DEFINE_integer(
    "student_embedding_width", 0,
    "With --checkpoint: also report the dual-vocabulary teacher with a student "
    "table of this width (0: only the plain teacher).")
_TEACHER_HIDDEN_SIZE = flags.DEFINE_integer(
    "teacher_hidden_size", 384,
    "Teacher width for the students' shared projections (384: the default "
    "teacher).")
_JSON = flags.DEFINE_bool("json", False, "Print JSON instead of a table.")


def _size(variable):
  return int(variable.shape.num_elements())


def _int8_bytes(variables):
  return sum(_size(v) * (1 if len(v.shape) >= 2 else 4) for v in variables)


def encoder_flops_per_token(config, seq_length, student_embedding_width=0):
  """Forward FLOPs per token of a BERT encoder with `config` (BertEncoderV2 args).

  Args:
    config: Dict with hidden_size, num_layers, inner_dim.
    seq_length: Tokens attended to by each token.
    student_embedding_width: For a dual-vocabulary teacher, the up-projection
      (applied at every position) is counted too.

  Returns:
    An int.
  """
  d, inner = config["hidden_size"], config["inner_dim"]
  per_layer = 2 * 4 * d * d + 2 * 2 * seq_length * d + 2 * 2 * d * inner
  return (config["num_layers"] * per_layer +
          2 * student_embedding_width * d)


def mlm_flops_per_prediction(hidden_size, head_width, vocab_size):
  """Transform (hidden -> head width) and output layer, per masked token."""
  return 2 * hidden_size * head_width + 2 * head_width * vocab_size


def parameter_groups(model):
  """{group: [variables]} for an MLMPretrainer or DualVocabPretrainer."""
  encoder = model.encoder_network
  named = bert_variables.encoder_variables(encoder)
  groups = {"embeddings": [], "encoder": [], "heads": [], "projections": []}
  for name, variable in named.items():
    groups["embeddings" if name.startswith("bert/embeddings/")
           else "encoder"].append(variable)
  if isinstance(encoder, dual_vocab_bert_encoder.DualVocabBertEncoder):
    groups["embeddings"].append(encoder.get_student_embedding_table())
    groups["projections"].extend(encoder.up_projection.weights)
  tables = {id(encoder.get_embedding_table())}
  if hasattr(encoder, "get_student_embedding_table"):
    tables.add(id(encoder.get_student_embedding_table()))
  for _, _, head in model._heads():  # pylint: disable=protected-access
    groups["heads"].extend(w for w in head.weights if id(w) not in tables)
  counted = sum(_size(v) for vs in groups.values() for v in vs)
  if counted != model.count_params():
    raise AssertionError(f"Grouped {counted} parameters of {model.name}, which "
                         f"has {model.count_params()}.")
  return groups


def report(model, seq_length, extra_projections=(), paper=None):
  """The report entry of one model (see the module docstring)."""
  encoder = model.encoder_network
  config = encoder.get_config()
  groups = parameter_groups(model)
  groups["projections"].extend(extra_projections)
  counts = {k: sum(_size(v) for v in vs) for k, vs in groups.items()}
  deployed = groups["embeddings"] + groups["encoder"]
  encoder_parameters = counts["embeddings"] + counts["encoder"]
  student_width = config.get("student_embedding_width", 0)
  hidden = config["hidden_size"]
  entry = {
      "num_layers": config["num_layers"],
      "hidden_size": hidden,
      "num_attention_heads": config["num_attention_heads"],
      "inner_dim": config["inner_dim"],
      "vocab_size": config.get("vocab_size", config.get("teacher_vocab_size")),
      "parameters": dict(counts, total=sum(counts.values())),
      "encoder_parameters": encoder_parameters,
      "fp32_mb": round(4 * encoder_parameters / 1e6, 3),
      "int8_mb": round(_int8_bytes(deployed) / 1e6, 3),
      "seq_length": seq_length,
      "flops_per_token": encoder_flops_per_token(config, seq_length,
                                                 student_width),
      "mlm_flops_per_prediction": {
          key: mlm_flops_per_prediction(hidden, int(head.embedding_table.shape[1]),
                                        int(head.embedding_table.shape[0]))
          for key, _, head in model._heads()},  # pylint: disable=protected-access
  }
  if student_width:
    entry["student_vocab_size"] = config["student_vocab_size"]
    entry["student_embedding_width"] = student_width
  if paper is not None:
    ratio = encoder_parameters / paper
    entry.update(paper_parameters=int(paper), ratio_to_paper=round(ratio, 4),
                 within_5_percent=abs(ratio - 1) <= 0.05)
  return entry


def preset_report(preset, vocab_size, seq_length, teacher_hidden_size):
  encoder = student_encoder.build_student_encoder(preset, vocab_size=vocab_size)
  model = mlm_pretrainer.MLMPretrainer(encoder)
  projection = shared_projection.SharedProjDown(
      teacher_hidden_size, encoder.get_config()["hidden_size"])
  projection.build(None)
  paper = (student_encoder.PAPER_PARAMETER_COUNTS[preset]
           if vocab_size == student_encoder.PAPER_STUDENT_VOCAB_SIZE else None)
  entry = report(model, seq_length, projection.weights, paper)
  entry["preset"] = preset
  return entry


def checkpoint_reports(path, seq_length, student_vocab_size,
                       student_embedding_width):
  """Reports for the plain teacher of `path` (and its dual-vocabulary form)."""
  checkpoint_format, config = teacher_loader.read_bert_config(path)
  entries = {}
  plain = mlm_pretrainer.MLMPretrainer(
      plain_bert_encoder.PlainBertEncoder(**config))
  entries["teacher"] = dict(report(plain, seq_length), format=checkpoint_format,
                            checkpoint=path)
  if student_embedding_width:
    config = dict(config)
    teacher_vocab_size = config.pop("vocab_size")
    dual = dual_vocab_pretrainer.DualVocabPretrainer(
        dual_vocab_bert_encoder.DualVocabBertEncoder(
            teacher_vocab_size=teacher_vocab_size,
            student_vocab_size=student_vocab_size,
            student_embedding_width=student_embedding_width, **config))
    entries["dual_vocab_teacher"] = dict(
        report(dual, seq_length), format=checkpoint_format, checkpoint=path)
  return entries


def format_table(result):
  header = ("model", "L", "H", "vocab", "embeddings", "encoder", "heads",
            "projections", "enc. params", "paper", "ratio", "fp32 MB",
            "int8 MB", "MFLOPs/token")
  rows = [header]
  for name, e in list(result["presets"].items()) + list(
      result.get("checkpoint", {}).items()):
    p = e["parameters"]
    rows.append((name, e["num_layers"], e["hidden_size"], e["vocab_size"],
                 f"{p['embeddings']:,}", f"{p['encoder']:,}", f"{p['heads']:,}",
                 f"{p['projections']:,}", f"{e['encoder_parameters']:,}",
                 f"{e['paper_parameters'] / 1e6:.1f}M"
                 if "paper_parameters" in e else "-",
                 f"{e['ratio_to_paper']:.3f}" if "ratio_to_paper" in e else "-",
                 f"{e['fp32_mb']:.2f}", f"{e['int8_mb']:.2f}",
                 f"{e['flops_per_token'] / 1e6:.2f}"))
  widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
  lines = ["  ".join(str(c).rjust(w) for c, w in zip(r, widths)) for r in rows]
  lines.insert(1, "  ".join("-" * w for w in widths))
  return "\n".join(lines) + (
      f"\n(seq_length {result['seq_length']}; paper counts are at the paper's "
      "4,928-token vocabulary)")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  result = {"seq_length": _SEQ_LENGTH.value, "presets": {}}
  for preset in _PRESETS.value:
    result["presets"][preset] = preset_report(
        preset, _VOCAB_SIZE.value, _SEQ_LENGTH.value, _TEACHER_HIDDEN_SIZE.value)
  if _CHECKPOINT.value:
    result["checkpoint"] = checkpoint_reports(
        _CHECKPOINT.value, _SEQ_LENGTH.value, _VOCAB_SIZE.value,
        _STUDENT_EMBEDDING_WIDTH.value)
  if _JSON.value:
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
  else:
    print(format_table(result))


if __name__ == "__main__":
  app.run(main)
