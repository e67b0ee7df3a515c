"""arange as torch computes it: bounds checked in double precision, an integer dtype
counting and stepping with the bounds cast to integers (int64 counts in integers, the
other integer dtypes count in double precision), values wrapping into narrow dtypes."""

import pytest

from torch_oracle import assert_same, result_scenario

CASES = [
    (0, 5, 1.5, "int64"),
    (0, 5, 1.5, "int32"),
    (0, 5, 0.5, "int32"),
    (0, 5, 2.5, "int64"),
    (0.5, 5, 1, "int64"),
    (0.5, 5, 1, "int32"),
    (-0.5, 3, 1, "int64"),
    (-1.5, 3, 1, "int32"),
    (0.5, 0.7, 1, "int64"),
    (0.5, 0.7, 1, "int32"),
    (5.5, None, None, "int64"),
    (5.5, None, None, "int32"),
    (2**31 + 5, 2**31 + 8, 1, "int32"),
    (2**62, 2**62 + 3, 1, None),
    (0, 5, float("inf"), None),
    (0, 1, 0.1, None),
    (0, 3, 1, "float32"),
    (10, 0, -3, None),
    (10, 0, -2.5, "int64"),
]


@pytest.mark.parametrize("start, end, step, dtype", CASES, ids=[str(c) for c in CASES])
def test_arange_values_match_torch(torch, start, end, step, dtype):
    def scenario(lib, tensor):
        args = [a for a in (start, end, step) if a is not None]
        return lib.arange(*args, dtype=None if dtype is None else getattr(lib, dtype))

    assert_same(torch, result_scenario(scenario))
