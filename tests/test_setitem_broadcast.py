"""``x[index] = value`` broadcasts as torch does: the value's leading 1s go first (a [1, 3]
value fills a [3] row), through an aten.view a dispatch mode sees; values and masks that
do not fit get torch's RuntimeError or IndexError, never numpy's ValueError."""

import pytest

from torch_oracle import aten_log, assert_same, outcome

# (id, index, shape of the value) written into zeros(3, 3)
ASSIGNMENTS = [
    ("row_from_1x3", lambda L: 0, (1, 3)),
    ("row_from_1x1x3", lambda L: 0, (1, 1, 3)),
    ("row_from_1", lambda L: 0, (1,)),
    ("row_from_3", lambda L: 0, (3,)),
    ("element_from_1x1", lambda L: (0, 0), (1, 1)),
    ("rows_from_1x1x3", lambda L: slice(0, 2), (1, 1, 3)),
    ("rows_from_2x1", lambda L: slice(0, 2), (2, 1)),
    ("index_list_from_1x3", lambda L: [0], (1, 3)),
    ("index_list_from_1x2x3", lambda L: [0, 1], (1, 2, 3)),
    ("mask_from_1", lambda L: L.ones(3, dtype=L.bool), (1,)),
    ("row_from_2x3", lambda L: 0, (2, 3)),
    ("row_from_3x1", lambda L: 0, (3, 1)),
    ("index_list_from_2x3", lambda L: [0], (2, 3)),
]


@pytest.mark.parametrize(
    "index, shape", [a[1:] for a in ASSIGNMENTS], ids=[a[0] for a in ASSIGNMENTS]
)
def test_setitem_value_broadcast_matches_torch(torch, index, shape):
    def scenario(lib):
        x, value = lib.zeros(3, 3), lib.arange(1.0, 1.0 + lib.ones(shape).numel()).reshape(shape)
        return outcome(lambda: aten_log(lib, lambda: x.__setitem__(index(lib), value))), x.tolist()

    assert_same(torch, scenario)


def test_setitem_value_with_leading_ones_gets_its_gradient_in_its_own_shape(torch):
    def scenario(lib):
        value = lib.ones(1, 1, 3, requires_grad=True)
        x = lib.zeros(3, 3)
        x[0:2] = value * 2
        x.sum().backward()
        return value.grad.tolist()

    assert_same(torch, scenario)


def test_masked_fill_inplace_with_a_mask_that_does_not_broadcast(torch):
    assert_same(
        torch, lambda lib: outcome(lambda: lib.zeros(3).masked_fill_(lib.tensor([True, False]), 1))
    )


def test_index_put_with_values_that_do_not_broadcast(torch):
    assert_same(
        torch,
        lambda lib: outcome(lambda: lib.zeros(3).index_put_((lib.tensor([0, 1]),), lib.ones(3))),
    )
