"""Advanced indexing lays its result out as PyTorch's TensorIterator does.

numpy's fancy indexing gives its own strides (``x[:, :, idx]`` comes out with the
indexed dim outermost); PyTorch orders the result's dims by the strides of the
indexed tensor and of the index tensors. Values and the strides of every dim
longer than 1 must be torch's, for any layout of the tensor indexed.
"""

import numpy as np
import pytest

LAYOUTS = {
    "contiguous": lambda x: x,
    "permuted": lambda x: x.permute(2, 0, 1),
    "reversed": lambda x: x.permute(2, 1, 0),
    "transposed": lambda x: x.transpose(0, 1),
    "strided": lambda x: x[..., ::2],
}
KEYS = {
    "[:, :, i]": lambda x, T: x[:, :, T.tensor([0, 3])],
    "[:, i]": lambda x, T: x[:, T.tensor([0, 3])],
    "[i]": lambda x, T: x[T.tensor([0, 3])],
    "[i, :, i] (apart)": lambda x, T: x[T.tensor([0, 3]), :, T.tensor([1, 2])],
    "[:, j, i] (broadcast)": lambda x, T: x[:, T.tensor([[0], [2]]), T.tensor([0, 3])],
    "[..., j]": lambda x, T: x[..., T.tensor([[0], [2]])],
    "[:, transposed index]": lambda x, T: x[:, T.tensor([[0, 1], [2, 3]]).t()],
    "[mask]": lambda x, T: x[x > 0],
    "[:, mask]": lambda x, T: x[:, T.tensor([True, False, True, True, False])],
}


def significant_strides(t):
    return tuple(s if n > 1 else None for n, s in zip(t.shape, t.stride()))


def indexed(lib, layout, key):
    data = np.random.default_rng(0).standard_normal((5, 5, 8))
    return KEYS[key](LAYOUTS[layout](lib.from_numpy(data.copy())), lib)


@pytest.mark.parametrize("key", list(KEYS))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_index_result_has_torch_strides(torch, layout, key):
    import opgrad as og

    got, expected = indexed(og, layout, key), indexed(torch, layout, key)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert significant_strides(got) == significant_strides(expected)
