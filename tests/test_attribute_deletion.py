"""Deleting a tensor's attributes as torch allows and refuses it (issue 16 point 4):
``del x.grad`` clears the gradient; requires_grad and data refuse with torch's words; the
read-only attributes refuse with AttributeError. Also the truth value of a tensor, whose
error for an empty one says "no values" as torch's does."""

from __future__ import annotations

import pytest

from torch_oracle import message


def _delete(lib, name):
    leaf = lib.tensor([1.0], requires_grad=True)
    leaf.grad = lib.tensor([2.0])
    target = leaf if name == "grad" else leaf * 2
    try:
        delattr(target, name)
    except (RuntimeError, AttributeError) as err:
        return type(err).__name__, message(err) if isinstance(err, RuntimeError) else None
    return "deleted", target.grad if name == "grad" else None


@pytest.mark.parametrize(
    "name", ["grad", "requires_grad", "data", "grad_fn", "is_leaf", "shape", "_version"]
)
def test_deleting_attributes_as_torch(torch, name):
    import opgrad as og

    assert _delete(og, name) == _delete(torch, name)


@pytest.mark.parametrize("shape", [(0,), (1, 0), (2,), (1,)])
def test_truth_value_of_tensors_as_torch(torch, shape):
    import opgrad as og

    def run(lib):
        try:
            return bool(lib.ones(shape))
        except RuntimeError as err:
            return message(err)

    assert run(og) == run(torch)
