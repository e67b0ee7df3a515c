"""Issue 13's training check, MLP half: an MLP with layer_norm and dropout trained for 20
SGD steps from the same initial weights and seed in opgrad and torch gives the same
losses to 1e-6 (float64). (The CNN half is test_nn_cnn_training.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import torch_draws_bernoulli_from_mkl

STEPS = 20
LEARNING_RATE = 0.1


def _initial_arrays():
    rng = np.random.default_rng(13)
    return {
        "w1": rng.standard_normal((32, 20)) * 0.2,
        "b1": rng.standard_normal(32) * 0.1,
        "ln_w": 1 + rng.standard_normal(32) * 0.1,
        "ln_b": rng.standard_normal(32) * 0.1,
        "w2": rng.standard_normal((5, 32)) * 0.2,
        "b2": rng.standard_normal(5) * 0.1,
        "x": rng.standard_normal((16, 20)),
        "y": rng.integers(0, 5, 16),
    }


def _train(lib, dropout: float):
    F = lib.nn.functional
    arrays = _initial_arrays()
    params = {
        k: lib.tensor(v, dtype=lib.float64, requires_grad=True)
        for k, v in arrays.items()
        if k not in ("x", "y")
    }
    x, y = lib.tensor(arrays["x"], dtype=lib.float64), lib.tensor(arrays["y"])
    lib.manual_seed(0)
    losses = []
    for _ in range(STEPS):
        h = F.linear(x, params["w1"], params["b1"])
        h = F.layer_norm(h, (32,), params["ln_w"], params["ln_b"])
        h = F.dropout(F.relu(h), p=dropout, training=True)
        loss = F.cross_entropy(F.linear(h, params["w2"], params["b2"]), y)
        for p in params.values():
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in params.values():
                p -= LEARNING_RATE * p.grad
        losses.append(loss.item())
    return losses, loss.grad_fn.name()


def test_mlp_without_dropout_trains_as_torch(torch):
    got, expected = _train(og, 0.0), _train(torch, 0.0)
    assert got[1] == expected[1] == "NllLossBackward0"
    np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-6)
    assert expected[0][-1] < expected[0][0]  # it does learn


def test_mlp_with_dropout_trains_as_torch(torch):
    if torch_draws_bernoulli_from_mkl():
        pytest.skip("torch draws dropout masks from MKL's stream on this Intel CPU")
    got, expected = _train(og, 0.25), _train(torch, 0.25)
    np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-6)
