"""A small CNN (conv2d -> relu -> max_pool2d -> conv2d -> relu -> adaptive_avg_pool2d ->
linear -> cross_entropy) trained by plain SGD for 20 steps from torch's initial weights:
opgrad's loss matches torch's at every step (float64)."""

from __future__ import annotations

import numpy as np

import opgrad as og


def _initial_parameters(torch):
    torch.manual_seed(0)
    shapes = {
        "w1": (6, 3, 3, 3),
        "b1": (6,),
        "w2": (8, 6, 3, 3),
        "b2": (8,),
        "w3": (5, 8),
        "b3": (5,),
    }
    return {name: torch.randn(shape, dtype=torch.float64) * 0.3 for name, shape in shapes.items()}


def _train(lib, params, images, labels, steps=20, lr=0.1):
    F = lib.nn.functional
    p = {
        k: lib.tensor(v.numpy() if hasattr(v, "numpy") else v, requires_grad=True)
        for k, v in params.items()
    }
    x, y = lib.tensor(images), lib.tensor(labels)
    losses = []
    for _ in range(steps):
        h = F.relu(F.conv2d(x, p["w1"], p["b1"], padding=1))
        h = F.max_pool2d(h, 2)
        h = F.relu(F.conv2d(h, p["w2"], p["b2"], stride=1, padding=1))
        h = F.adaptive_avg_pool2d(h, 1).flatten(1)
        loss = F.cross_entropy(F.linear(h, p["w3"], p["b3"]), y)
        for t in p.values():
            t.grad = None
        loss.backward()
        with lib.no_grad():
            for t in p.values():
                t -= lr * t.grad
        losses.append(loss.item())
    return losses


def test_cnn_training_matches_torch_step_by_step(torch):
    rng = np.random.default_rng(0)
    images = rng.standard_normal((4, 3, 8, 8))
    labels = rng.integers(0, 5, 4)
    params = _initial_parameters(torch)
    expected = _train(torch, params, images, labels)
    got = _train(og, params, images, labels)
    assert expected[-1] < expected[0]  # the run actually trains
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
