"""Tests for tools/model_report.py."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from mixvocab_testing import testing_utils

_TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "model_report.py")
_REPO = os.path.dirname(os.path.dirname(_TOOL))


@pytest.fixture(scope="module")
def tool():
  spec = importlib.util.spec_from_file_location("model_report", _TOOL)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_json_shows_the_presets_within_5_percent_of_the_paper():
  result = subprocess.run(
      [sys.executable, _TOOL, "--json"], cwd=_REPO, check=True,
      capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  report = json.loads(result.stdout)
  presets = report["presets"]
  assert set(presets) == {"L6-H96", "L6-H192", "L6-H256", "L12-H256"}
  papers = {"L6-H96": 1.2e6, "L6-H192": 3.6e6, "L6-H256": 6.2e6,
            "L12-H256": 10.9e6}
  for name, entry in presets.items():
    assert entry["vocab_size"] == 4928
    assert entry["paper_parameters"] == papers[name]
    ratio = entry["encoder_parameters"] / papers[name]
    assert abs(ratio - 1) < 0.05 and entry["within_5_percent"], (name, ratio)
    assert entry["ratio_to_paper"] == pytest.approx(ratio, abs=1e-4)
    p = entry["parameters"]
    assert entry["encoder_parameters"] == p["embeddings"] + p["encoder"]
    assert p["total"] == sum(p[k] for k in ("embeddings", "encoder", "heads",
                                            "projections"))
    assert entry["fp32_mb"] == pytest.approx(4 * entry["encoder_parameters"]
                                             / 1e6, abs=1e-3)
    assert entry["int8_mb"] < entry["fp32_mb"] / 3.5
  # L6-H96 by hand: word 4928x96, 512 positions, 2 types, LayerNorm.
  assert presets["L6-H96"]["parameters"]["embeddings"] == (
      (4928 + 512 + 2) * 96 + 2 * 96)
  assert report["seq_length"] == 128


def test_flops_per_token(tool):
  config = dict(hidden_size=32, num_layers=2, inner_dim=128)
  # Per layer: QKVO 4*32*32 MACs, scores and mix 2*10*32, FFN 2*32*128.
  macs = 2 * (4 * 32 * 32 + 2 * 10 * 32 + 2 * 32 * 128)
  assert tool.encoder_flops_per_token(config, 10) == 2 * macs
  assert tool.encoder_flops_per_token(config, 10, student_embedding_width=8) == (
      2 * macs + 2 * 8 * 32)
  assert tool.mlm_flops_per_prediction(32, 8, 100) == 2 * (32 * 8 + 8 * 100)


def test_checkpoint_report_counts_the_teacher(tool, tmp_path):
  config = testing_utils.tiny_bert_config()
  testing_utils.write_hf_checkpoint(
      str(tmp_path), testing_utils.random_bert_params(config), config)
  entries = tool.checkpoint_reports(str(tmp_path), seq_length=16,
                                    student_vocab_size=60,
                                    student_embedding_width=8)
  teacher, dual = entries["teacher"], entries["dual_vocab_teacher"]
  assert teacher["format"] == "huggingface"
  d, inner = 32, 64
  layer = 4 * (d * d + d) + 2 * d * inner + inner + d + 4 * d
  assert teacher["parameters"]["encoder"] == 2 * layer + d * d + d
  assert teacher["parameters"]["embeddings"] == (100 + 16 + 2) * d + 2 * d
  assert teacher["parameters"]["heads"] == d * d + d + 2 * d + 100
  assert dual["parameters"]["embeddings"] == (
      teacher["parameters"]["embeddings"] + 60 * 8)
  assert dual["parameters"]["projections"] == 8 * d + d
  assert dual["parameters"]["heads"] == (teacher["parameters"]["heads"]
                                         + d * 8 + 8 + 2 * 8 + 60)
