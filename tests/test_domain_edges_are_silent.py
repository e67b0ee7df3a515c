"""Values at the edge of an op's domain (log(0), sqrt(-1), 0/0, rsqrt(0)) give inf/NaN
silently, as PyTorch does: numpy's RuntimeWarnings never reach the user from any of
opgrad's modules (the plain path's generated kernels and the nn kernels included), while
the user's own numpy calls still warn."""

from __future__ import annotations

import subprocess
import sys

import opgrad as og

_EDGE_OPS = """
import warnings
import numpy as np
import opgrad as og
import opgrad.nn.functional as F
zero, negative = og.tensor([0.0]), og.tensor([-1.0])
x = og.tensor([0.0, -1.0], requires_grad=True)
results = [og.sqrt(negative), og.log(zero), og.tensor([1.0]) / 0, zero / 0, og.rsqrt(zero),
           og.rsqrt(og.tensor([0, 4])), og.log(x), og.sqrt(x), F.normalize(og.zeros(2, 3)),
           F.layer_norm(og.zeros(2, 0), (0,)), og.zeros(0).mean(), og.pow(zero, -1.0)]
(og.log(x).sum() + og.sqrt(x).sum()).backward()
with og.no_grad():
    results.append(og.log(zero))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    np.sqrt(np.array([-1.0]))  # the user's own numpy call keeps numpy's warning
print("ok", len(caught))
"""


def test_domain_edges_raise_no_numpy_warnings():
    run = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", _EDGE_OPS],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and run.stdout == "ok 1\n", run.stderr


def test_mean_over_nothing_is_nan_even_when_warnings_are_errors(torch):
    """The user's own filters come first (pytest -W error, catch_warnings): the mean of an
    empty tensor must raise no warning at all, as torch raises none."""
    import warnings

    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return [str(v) for v in (lib.zeros(0).mean().item(), lib.zeros(2, 0).mean(1).tolist())]

    assert scenario(og) == scenario(torch)
