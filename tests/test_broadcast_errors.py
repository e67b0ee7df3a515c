"""Shapes that do not broadcast raise PyTorch's RuntimeError, not numpy's ValueError."""

import pytest

import opgrad as og

CASES = [
    ("add", lambda T: T.ones(3) + T.ones(2)),
    ("mul_3d", lambda T: T.ones(2, 3) * T.ones(4, 1, 2)),
    ("where", lambda T: T.where(T.ones(3) > 0, T.ones(2), T.ones(3))),
    ("maximum", lambda T: T.maximum(T.ones(2, 2), T.ones(3))),
    ("compare", lambda T: T.ones(3) < T.ones(2)),
    ("copy_", lambda T: T.zeros(3).copy_(T.ones(2))),
    # the shapes broadcast, but to another shape than the written tensor's
    ("copy_into_smaller", lambda T: T.zeros(2).copy_(T.ones(3, 2))),
    ("add_into_smaller", lambda T: T.zeros(2).add_(T.ones(3, 2))),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_broadcast_error_matches_torch(torch, name, fn):
    with pytest.raises(RuntimeError) as expected:
        fn(torch)
    with pytest.raises(RuntimeError) as got:
        fn(og)
    assert str(got.value) == str(expected.value)
