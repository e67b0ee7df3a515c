"""torch.tensor's dtype inference and shape checks, and the factories' size argument,
with PyTorch's results and error texts."""

import numpy as np
import pytest

from torch_oracle import assert_same, result_scenario

CASES = {
    # leaves are promoted by their own dtype: numpy scalars and tensors keep theirs
    "numpy float64 and int": lambda lib, T: lib.tensor([np.float64(1.0), 2]),
    "numpy float32 and float": lambda lib, T: lib.tensor([np.float32(1.5), 2.0]),
    "numpy int64 and float": lambda lib, T: lib.tensor([np.int64(3), 1.5]),
    "numpy float64 and float32": lambda lib, T: lib.tensor([np.float64(1.0), np.float32(2.0)]),
    "numpy float32 scalar": lambda lib, T: lib.tensor(np.float32(1.5)),
    "float64 tensor and float": lambda lib, T: lib.tensor(
        [lib.tensor(1.0, dtype=lib.float64), 2.5]
    ),
    "int32 tensor and int": lambda lib, T: lib.tensor([lib.tensor(1, dtype=lib.int32), 2]),
    "bool, int, float": lambda lib, T: lib.tensor([True, 2, 3.5]),
    "empty nested": lambda lib, T: lib.tensor([[], []]),
    # shape and content errors
    "ragged": lambda lib, T: lib.tensor([[1, 2], [3, 4, 5]]),
    "ragged deeper": lambda lib, T: lib.tensor([[[1], [2]], [[1], [2, 3]]]),
    "number where a list was": lambda lib, T: lib.tensor([[1, 2], 3]),
    "list where a number was": lambda lib, T: lib.tensor([1, [2]]),
    "str": lambda lib, T: lib.tensor("a"),
    "str in a list": lambda lib, T: lib.tensor([[1, 2], "ab"]),
    "None": lambda lib, T: lib.tensor(None),
    "object": lambda lib, T: lib.tensor([object()]),
    "int past int64": lambda lib, T: lib.tensor([2**63]),
    "int below int64": lambda lib, T: lib.tensor(-(2**63) - 1),
    # sizes
    "zeros(2, 3)": lambda lib, T: lib.zeros(2, 3),
    "zeros((2, 3))": lambda lib, T: lib.zeros((2, 3)),
    "zeros(size=(2,))": lambda lib, T: lib.ones(size=(2,), dtype=lib.int64),
    "zeros(0-d tensor)": lambda lib, T: lib.zeros(lib.tensor(3)),
    "zeros(2, 0-d tensor)": lambda lib, T: lib.zeros(2, lib.tensor(3)),
    "zeros()": lambda lib, T: lib.zeros(),
    "zeros(-1)": lambda lib, T: lib.zeros(-1),
    "zeros(2, -3)": lambda lib, T: lib.zeros(2, -3),
    "ones(-1)": lambda lib, T: lib.ones(-1),
    "empty((2, -3))": lambda lib, T: lib.empty((2, -3)),
    "ones(2.0)": lambda lib, T: lib.ones(2.0),
    "zeros(True)": lambda lib, T: lib.zeros(True),
    "zeros(2, 'a')": lambda lib, T: lib.zeros(2, "a"),
    "zeros((2, 2.5))": lambda lib, T: lib.zeros((2, 2.5)),
    "zeros([2], 3)": lambda lib, T: lib.zeros([2], 3),
    "ones(2, [3])": lambda lib, T: lib.ones(2, [3]),
    "zeros(1-d tensor)": lambda lib, T: lib.zeros(lib.tensor([2, 3])),
    "full(2, 1.0)": lambda lib, T: lib.full(2, 1.0),
    "full([2.5], 1)": lambda lib, T: lib.full([2.5], 1),
    "arange(0, 5, -1)": lambda lib, T: lib.arange(0, 5, -1),
    "scalar_tensor(2, requires_grad)": lambda lib, T: lib.scalar_tensor(2, requires_grad=True),
    "scalar_tensor(int64, requires_grad)": lambda lib, T: lib.scalar_tensor(
        2, dtype=lib.int64, requires_grad=True
    ),
    "scalar_tensor(1-d tensor)": lambda lib, T: lib.scalar_tensor(lib.tensor([2.0, 3.0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_factory_arguments_as_torch(torch, name):
    assert_same(torch, result_scenario(CASES[name]))
