"""What a dispatch mode sees of Python-level entry points, against PyTorch.

torch.tensor, from_numpy and index lists hand their fresh tensor to the mode
(aten.lift_fresh); x[i] = number converts the number first and then fills or
copies; arange and eye pick their overload from the arguments given; where with
a Python number makes it a 0-dim tensor of the result type (scalar_tensor).
Each scenario's log, result values and dtype must equal torch's.
"""

import numpy as np
import pytest

from torch_oracle import aten_log


def _result(value):
    if hasattr(value, "tolist"):
        return (value.tolist(), str(value.dtype).split(".")[-1])
    return value


SCENARIOS = {
    "tensor_list": lambda T, x: T.tensor([1.0, 2.0]),
    "tensor_scalar": lambda T, x: T.tensor(3),
    "from_numpy": lambda T, x: T.from_numpy(np.ones(2)),
    "tensor_ndarray": lambda T, x: T.tensor(np.ones(2, np.uint8)),
    "tensor_ndarray_dtype": lambda T, x: T.tensor(np.ones(2), dtype=T.float16),
    "as_tensor_ndarray": lambda T, x: T.as_tensor(np.ones(2, np.int8)),
    "as_tensor_ndarray_dtype": lambda T, x: T.as_tensor(np.ones(2), dtype=T.int16),
    "setitem_element": lambda T, x: x.__setitem__((1, 1), 5.0),
    "setitem_row": lambda T, x: x.__setitem__(0, 2.0),
    "setitem_mask": lambda T, x: x.__setitem__(x > 0, 2.0),
    "setitem_list": lambda T, x: x.__setitem__([0, 2], 1.0),
    "setitem_tensor": lambda T, x: x.__setitem__(0, T.zeros(3)),
    "getitem_list": lambda T, x: x[[0, 2]],
    "item": lambda T, x: x.sum().item(),
    "float": lambda T, x: float(x[0, 0]),
    "bool": lambda T, x: bool(x[0, 0] > 0),
    "data": lambda T, x: x.data,
    "data_then_write": lambda T, x: (x.data.add_(1), x._version)[1],
    "arange_end": lambda T, x: T.arange(4),
    "arange_float_end": lambda T, x: T.arange(2.5),
    "arange_start": lambda T, x: T.arange(1, 4),
    "arange_start_step": lambda T, x: T.arange(0, 4, 2),
    "arange_explicit_step": lambda T, x: T.arange(0, 4, 1),
    "eye_square": lambda T, x: T.eye(2),
    "eye_rect": lambda T, x: T.eye(2, 3),
    "where_other": lambda T, x: T.where(x > 0, x, 0.0),
    "where_self": lambda T, x: T.where(x > 0, 1.0, x),
    "where_both": lambda T, x: T.where(x > 0, 1, 0.0),
    "where_both_int": lambda T, x: T.where(x > 0, 1, 0),
    "where_int_tensor_float": lambda T, x: T.where(x > 0, T.ones(3, 3, dtype=T.int64), 2.5),
    "where_float_int_tensor": lambda T, x: T.where(x > 0, 2.5, T.ones(3, 3, dtype=T.int64)),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_entry_log_matches_torch(torch, name):
    import opgrad as og

    def run(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0], [2.0, 2.0, -3.0]])
        box = []
        log = aten_log(lib, lambda: box.append(SCENARIOS[name](lib, x)))
        return log, _result(box[0]), x.tolist()

    assert run(og) == run(torch)


def test_no_lift_fresh_without_a_mode(torch):
    """Outside a mode, torch.tensor costs no dispatch: the tensor is used as made."""
    import opgrad as og

    t = og.tensor([1.0, 2.0])
    assert t._base is None and t.grad_fn is None and t.tolist() == [1.0, 2.0]
