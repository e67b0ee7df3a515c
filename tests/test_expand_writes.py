"""An expanded tensor is writable where torch allows it (issue 16 point 1): only a stride-0
dim longer than 1 makes elements share memory and an in-place write refuse."""

from __future__ import annotations

import pytest

from torch_oracle import message


@pytest.mark.parametrize(
    "expand",
    [
        lambda t: t.expand(3),  # the same shape: a plain view
        lambda t: t.expand(1, 3),  # a new size-1 dim
        lambda t: t[:1].expand(1),
        lambda t: t.t().expand(3) if t.dim() == 2 else t.expand(-1),
        lambda t: t.expand(2, 3),  # shared memory: refused
        lambda t: t[:1].expand(3),
    ],
)
@pytest.mark.parametrize("write", ["mul_", "copy_", "setitem"])
def test_writes_through_expanded_views_as_torch(torch, expand, write):
    import opgrad as og

    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = x * 2
        view = expand(base)
        try:
            if write == "mul_":
                view.mul_(3)
            elif write == "copy_":
                view.copy_(lib.ones(view.shape))
            else:
                view[...] = 5.0
        except RuntimeError as err:
            return "error", message(err)
        base.sum().backward()
        return base.tolist(), x.grad.tolist(), type(view.grad_fn).__name__, view.stride()

    assert run(og) == run(torch)
