"""Tests for SharedProjDown and SharedProjUp."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.layers import shared_projection

D_T, D_S = 12, 4


def _numpy_down(u, v, w):
  """Blockwise U^T W V written with explicit loops over the blocks."""
  k1, k2 = w.shape[0] // D_T, w.shape[1] // D_T
  out = np.zeros((k1 * D_S, k2 * D_S))
  for a in range(k1):
    for b in range(k2):
      block = w[a * D_T:(a + 1) * D_T, b * D_T:(b + 1) * D_T]
      out[a * D_S:(a + 1) * D_S, b * D_S:(b + 1) * D_S] = u.T @ block @ v
  return out


@pytest.mark.parametrize("shape", [(D_T, D_T), (D_T, 4 * D_T), (4 * D_T, D_T)])
def test_down_matches_blockwise_reference(shape):
  down = shared_projection.SharedProjDown(D_T, D_S)
  w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  out = down(w).numpy()
  assert out.shape == (shape[0] // D_T * D_S, shape[1] // D_T * D_S)
  np.testing.assert_allclose(
      out, _numpy_down(down.u.numpy(), down.v.numpy(), w), atol=1e-5)


def test_up_is_u_w_vt_and_vectors_use_v():
  up = shared_projection.SharedProjUp(D_T, D_S)
  rng = np.random.default_rng(1)
  w = rng.standard_normal((D_S, D_S)).astype(np.float32)
  up(w)  # Builds U and V.
  u, v = up.u.numpy(), up.v.numpy()
  assert not np.allclose(u, v)
  np.testing.assert_allclose(up(w).numpy(), u @ w @ v.T, atol=1e-5)
  b = rng.standard_normal(4 * D_S).astype(np.float32)
  expected = np.concatenate([b[i * D_S:(i + 1) * D_S] @ v.T for i in range(4)])
  np.testing.assert_allclose(up(b).numpy(), expected, atol=1e-5)


def test_loss_is_mean_squared_difference_and_trains_u_v():
  down = shared_projection.SharedProjDown(D_T, D_S)
  rng = np.random.default_rng(2)
  w_t = rng.standard_normal((D_T, 4 * D_T)).astype(np.float32)
  w_s = tf.Variable(rng.standard_normal((D_S, 4 * D_S)).astype(np.float32))
  with tf.GradientTape() as tape:
    loss = down.loss(w_t, w_s)
  np.testing.assert_allclose(
      loss.numpy(),
      np.mean((_numpy_down(down.u.numpy(), down.v.numpy(), w_t) - w_s.numpy())
              ** 2), rtol=1e-5)
  grads = tape.gradient(loss, [down.u, down.v, w_s])
  assert all(np.any(g.numpy()) for g in grads)


def test_rejects_a_side_not_a_multiple_of_the_hidden_size():
  down = shared_projection.SharedProjDown(D_T, D_S)
  with pytest.raises(ValueError, match=r"multiple of its hidden size 12"):
    down(np.zeros((D_T, 13), np.float32))


@pytest.mark.parametrize("cls,width", [
    (shared_projection.SharedProjDown, D_T),
    (shared_projection.SharedProjUp, D_S)])
def test_serialization(tmp_path, cls, width):
  layer = cls(D_T, D_S)
  testing_utils.assert_config_round_trip(layer)
  w = np.random.default_rng(3).standard_normal(
      (width, 4 * width)).astype(np.float32)
  testing_utils.assert_save_and_reload(layer, w, str(tmp_path),
                                       static_batch=True)
