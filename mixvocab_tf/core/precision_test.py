"""Tests for precision: bfloat16 only where the hardware computes it."""

import os

import tensorflow as tf

from mixvocab_tf.core import precision

_ZEN4 = frozenset("fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni".split())
_SAPPHIRE_RAPIDS = frozenset("avx2 avx512f amx_tile amx_bf16".split())
_AVX2 = frozenset("fpu sse2 avx2 fma".split())


class ResolveTest(tf.test.TestCase):

  def test_bfloat16_only_with_the_instructions_and_onednn(self):
    for flags, onednn, expected in (
        (_ZEN4, True, "mixed_bfloat16"),
        (_SAPPHIRE_RAPIDS, True, "mixed_bfloat16"),
        (_ZEN4, False, "float32"),
        (_AVX2, True, "float32"),
        (_AVX2, False, "float32"),
        (frozenset(), True, "float32")):
      chosen, why = precision.resolve(precision.IF_NATIVE, is_tpu=False,
                                      flags=flags, onednn=onednn, gpus=0)
      self.assertEqual(chosen, expected, (sorted(flags), onednn))
      self.assertTrue(why)
    _, why = precision.resolve(precision.IF_NATIVE, False, _ZEN4, False, 0)
    self.assertIn("TF_ENABLE_ONEDNN_OPTS", why)
    _, why = precision.resolve(precision.IF_NATIVE, False, _AVX2, True, 0)
    self.assertIn("emulated", why)

  def test_tpu_gpu_and_fixed_precisions(self):
    self.assertEqual(precision.resolve(precision.IF_NATIVE, True, _AVX2,
                                       False, 0)[0], "mixed_bfloat16")
    self.assertEqual(precision.resolve(precision.IF_NATIVE, False, _ZEN4,
                                       True, 1)[0], "float32")
    # 'auto' and the Keras names keep their meaning, with nothing to log.
    self.assertEqual(precision.resolve("auto", True), ("mixed_bfloat16", None))
    self.assertEqual(precision.resolve("auto", False), ("float32", None))
    for name in ("float32", "mixed_bfloat16", "mixed_float16"):
      self.assertEqual(precision.resolve(name, False, _ZEN4, True, 0),
                       (name, None))

  def test_this_machine_resolves_to_a_policy(self):
    chosen, why = precision.resolve(precision.IF_NATIVE, is_tpu=False)
    self.assertIn(chosen, ("float32", "mixed_bfloat16"))
    self.assertEqual(chosen == "mixed_bfloat16",
                     precision.native_bfloat16_cpu()[0] and
                     not tf.config.list_physical_devices("GPU"))
    self.assertTrue(why)


class CpuFlagsTest(tf.test.TestCase):

  def test_reads_the_flags_line(self):
    path = os.path.join(self.get_temp_dir(), "cpuinfo")
    with open(path, "w") as f:
      f.write("processor\t: 0\nmodel name\t: AMD EPYC\n"
              "flags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\n"
              "flags\t\t: fpu avx2 avx512_bf16\n")
    self.assertEqual(precision.cpu_flags(path),
                     frozenset({"fpu", "avx2", "avx512_bf16"}))
    self.assertEqual(precision.cpu_flags(path + ".missing"), frozenset())


class ConfigCommentTest(tf.test.TestCase):

  def test_round_trip(self):
    text = precision.config_comment(
        "mixed_bfloat16", "the CPU has avx512_bf16") + "Trainer.seed = 0\n"
    self.assertEqual(precision.precision_of_run(text), "mixed_bfloat16")
    text = precision.config_comment("float32", None) + "Trainer.seed = 0\n"
    self.assertEqual(text.split("\n")[0], "# Precision: float32.")
    self.assertEqual(precision.precision_of_run(text), "float32")
    self.assertIsNone(precision.precision_of_run("Trainer.seed = 0\n"))


if __name__ == "__main__":
  tf.test.main()
