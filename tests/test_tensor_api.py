"""The Tensor surface: factories, dtype inference, reprs, sizes, indexing.

Values, dtypes and reprs are compared with PyTorch's (reprs after replacing
``torch.`` by ``opgrad.``); memory sharing of views is checked by writing
through ``.numpy()``.
"""

from __future__ import annotations

import numpy as np
import pytest

import opgrad as og
from torch_oracle import assert_same_tensor, dtype_name, to_opgrad_text

# ---------------------------------------------------------------------------
# Factories

FACTORIES = [
    ("zeros_varargs", lambda T: T.zeros(2, 3)),
    ("zeros_tuple", lambda T: T.zeros((2, 3))),
    ("zeros_float64", lambda T: T.zeros(2, dtype=T.float64)),
    ("zeros_int64", lambda T: T.zeros(2, dtype=T.int64)),
    ("ones", lambda T: T.ones(3)),
    ("ones_int64", lambda T: T.ones(2, 2, dtype=T.int64)),
    ("ones_bool", lambda T: T.ones(2, dtype=T.bool)),
    ("full_int_fill", lambda T: T.full((2,), 1)),
    ("full_float_fill", lambda T: T.full((2,), 1.5)),
    ("full_bool_fill", lambda T: T.full((2, 3), True)),
    ("full_dtype", lambda T: T.full((2,), 3, dtype=T.float64)),
    ("arange_stop", lambda T: T.arange(3)),
    ("arange_start_stop_step", lambda T: T.arange(1, 7, 2)),
    ("arange_float_step", lambda T: T.arange(0, 1, 0.25)),
    ("arange_dtype", lambda T: T.arange(3, dtype=T.float64)),
    ("eye_square", lambda T: T.eye(3)),
    ("eye_rectangular", lambda T: T.eye(2, 3)),
    ("zeros_like_int", lambda T: T.zeros_like(T.tensor([1, 2]))),
    ("ones_like_float", lambda T: T.ones_like(T.tensor([1.0, 2.0]))),
    ("ones_like_dtype", lambda T: T.ones_like(T.tensor([1.0, 2.0]), dtype=T.float64)),
    ("zeros_0dim", lambda T: T.zeros(())),
    ("zeros_empty_dim", lambda T: T.zeros(2, 0)),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in FACTORIES])
def test_factory_matches_torch(torch, fn):
    assert_same_tensor(fn(og), fn(torch))


RANDOM_FACTORIES = [
    ("rand", lambda T: T.rand(2, 3)),
    ("randn", lambda T: T.randn(2, 3)),
    ("rand_float64", lambda T: T.rand(2, dtype=T.float64)),
    ("randn_tuple", lambda T: T.randn((4,))),
    ("empty", lambda T: T.empty(2, 3)),
    ("empty_int64", lambda T: T.empty(2, dtype=T.int64)),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in RANDOM_FACTORIES])
def test_random_factory_shape_and_dtype_match_torch(torch, fn):
    got, expected = fn(og), fn(torch)
    assert got.shape == expected.shape
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)


def test_rand_values_lie_in_unit_interval():
    values = og.rand(1000).numpy()
    assert values.min() >= 0.0
    assert values.max() < 1.0


def test_manual_seed_makes_randn_reproducible():
    og.manual_seed(123)
    first = og.randn(5).numpy().copy()
    og.manual_seed(123)
    second = og.randn(5).numpy().copy()
    np.testing.assert_array_equal(first, second)


def test_factories_do_not_require_grad_by_default():
    assert og.zeros(2).requires_grad is False
    assert og.tensor([1.0]).requires_grad is False


def test_factory_requires_grad_flag_makes_a_leaf():
    x = og.zeros(2, requires_grad=True)
    assert x.requires_grad
    assert x.is_leaf
    assert x.grad_fn is None


def test_from_numpy_keeps_dtype():
    t = og.from_numpy(np.array([1, 2], dtype=np.int32))
    assert t.dtype == og.int32


def test_from_numpy_shares_memory():
    array = np.array([1.0, 2.0, 3.0])
    t = og.from_numpy(array)
    array[0] = 5.0
    assert t[0].item() == 5.0


def test_tensor_copies_its_data():
    array = np.array([1.0, 2.0, 3.0])
    t = og.tensor(array)
    array[0] = 5.0
    assert t[0].item() == 1.0


# ---------------------------------------------------------------------------
# dtype inference of og.tensor

INFERENCE = [
    ("int_list", lambda T: T.tensor([1, 2])),
    ("float_list", lambda T: T.tensor([1.0, 2.0])),
    ("mixed_int_float_list", lambda T: T.tensor([1, 2.5])),
    ("bool_list", lambda T: T.tensor([True, False])),
    ("bool_and_int_list", lambda T: T.tensor([True, 2])),
    ("int_scalar", lambda T: T.tensor(3)),
    ("float_scalar", lambda T: T.tensor(2.5)),
    ("bool_scalar", lambda T: T.tensor(True)),
    ("nested_int_list", lambda T: T.tensor([[1, 2], [3, 4]])),
    ("empty_list", lambda T: T.tensor([])),
    ("numpy_float64", lambda T: T.tensor(np.array([1.0, 2.0]))),
    ("numpy_float32", lambda T: T.tensor(np.array([1.0, 2.0], dtype=np.float32))),
    ("numpy_int32", lambda T: T.tensor(np.array([1, 2], dtype=np.int32))),
    ("numpy_bool", lambda T: T.tensor(np.array([True, False]))),
    ("explicit_dtype", lambda T: T.tensor([1, 2], dtype=T.float64)),
    ("explicit_int32", lambda T: T.tensor([1.0, 2.0], dtype=T.int32)),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in INFERENCE])
def test_tensor_dtype_inference_matches_torch(torch, fn):
    assert_same_tensor(fn(og), fn(torch))


@pytest.mark.parametrize(
    "data, dtype",
    [
        ([1, 2], "int64"),
        ([1.0, 2], "float32"),
        ([True], "bool"),
        (np.array([1.0]), "float64"),
    ],
)
def test_tensor_dtype_inference_is_documented(data, dtype):
    assert str(og.tensor(data).dtype) == f"opgrad.{dtype}"


def test_arange_and_full_with_ints_are_int64():
    assert og.arange(3).dtype == og.int64
    assert og.full((2,), 1).dtype == og.int64


# ---------------------------------------------------------------------------
# dtype objects and Size


@pytest.mark.parametrize(
    "name",
    ["float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"],
)
def test_dtype_repr_names_opgrad(name):
    assert repr(getattr(og, name)) == f"opgrad.{name}"
    assert str(getattr(og, name)) == f"opgrad.{name}"


def test_size_repr():
    assert repr(og.Size([2, 3])) == "opgrad.Size([2, 3])"


def test_size_repr_of_0dim():
    assert repr(og.zeros(()).shape) == "opgrad.Size([])"


def test_shape_is_a_size():
    assert type(og.zeros(2, 3).shape) is og.Size


def test_size_is_a_tuple():
    assert isinstance(og.zeros(2, 3).shape, tuple)


def test_shape_equals_plain_tuple():
    assert og.zeros(2, 3).shape == (2, 3)


def test_size_method_equals_shape():
    t = og.zeros(2, 3)
    assert t.size() == (2, 3)
    assert type(t.size()) is og.Size


@pytest.mark.parametrize("dim, expected", [(0, 2), (1, 3), (-1, 3), (-2, 2)])
def test_size_of_one_dim(dim, expected):
    assert og.zeros(2, 3).size(dim) == expected


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 0, 3), (1, 1, 1, 5)])
def test_dim_and_numel(torch, shape):
    got, expected = og.zeros(shape), torch.zeros(shape)
    assert got.dim() == expected.dim()
    assert got.numel() == expected.numel()
    assert got.shape == expected.shape


# ---------------------------------------------------------------------------
# repr

REPRS = [
    ("float_vector", lambda T: T.tensor([1.0, 2.0])),
    ("float_fraction", lambda T: T.tensor([1.5, 2.25])),
    ("float_negative", lambda T: T.tensor([-1.0, 0.5])),
    ("float_four_decimals", lambda T: T.tensor([0.1, 2.0])),
    ("float_matrix", lambda T: T.tensor([[1.0, 2.0], [3.0, 4.0]])),
    ("float_0dim", lambda T: T.tensor(3.5)),
    ("int_vector", lambda T: T.tensor([1, 2])),
    ("int_0dim", lambda T: T.tensor(3)),
    ("int32_vector", lambda T: T.tensor([1, 2], dtype=T.int32)),
    ("bool_vector", lambda T: T.tensor([True, False])),
    ("float64_vector", lambda T: T.tensor([1.0, 2.0], dtype=T.float64)),
    ("empty", lambda T: T.tensor([])),
    ("requires_grad", lambda T: T.tensor([1.0, 2.0], requires_grad=True)),
    ("grad_fn", lambda T: T.tensor([0.5, 1.0], requires_grad=True) * 2),
    (
        "grad_fn_float64",
        lambda T: T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True) * 2,
    ),
    ("grad_fn_sum", lambda T: T.tensor([1.0, 2.0], requires_grad=True).sum()),
    ("zeros_matrix", lambda T: T.zeros(2, 3)),
    # past 1000 elements the middle is summarized (" ..." in a row, "..." for rows)
    ("summarized_vector", lambda T: T.arange(2000.0)),
    ("summarized_ones", lambda T: T.ones(2000)),
    ("summarized_fractions", lambda T: T.arange(5000.0) / 7),
    ("summarized_rows", lambda T: T.arange(2000).reshape(1000, 2)),
    ("summarized_3d", lambda T: T.arange(3000).reshape(10, 10, 30)),
    # widths come from the nonzero finite values: nan, inf and -0. are not padded to
    ("neg_inf_and_zero", lambda T: T.tensor([0.0, 1.0]).log()),
    ("nan_and_one", lambda T: T.tensor([float("nan"), 1.0])),
    ("negative_zero", lambda T: T.tensor([-0.0, 1.5])),
    ("all_zeros", lambda T: T.tensor([0.0, 0.0])),
    ("sci_with_inf", lambda T: T.tensor([[1e-5, 0.0, float("inf")], [3.0, -2.0, 1.0]])),
    ("inf_and_large", lambda T: T.tensor([float("-inf"), 1e10])),
    ("nan_between", lambda T: T.tensor([1.5, float("nan"), -100.25])),
    ("int_widths", lambda T: T.tensor([1, -20, 3])),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in REPRS])
def test_repr_matches_torch(torch, fn):
    assert repr(fn(og)) == to_opgrad_text(repr(fn(torch)))


def test_subclass_repr_uses_the_class_name(torch):
    def scenario(lib):
        class Marked(lib.Tensor):
            pass

        return repr(lib.tensor([1.0, 2.0]).as_subclass(Marked)).replace(lib.__name__, "LIB")

    assert scenario(og) == scenario(torch)


FORMATS = [
    ("0dim_spec", lambda T: f"{T.tensor(3.14159, requires_grad=True):.2f}"),
    ("0dim_plain", lambda T: f"{T.tensor(3.14159)}"),
    ("0dim_int", lambda T: f"{T.tensor(7):>4}"),
    ("0dim_view", lambda T: f"{T.tensor([1.5, 2.0])[0]:.3f}"),
    ("vector_plain", lambda T: f"{T.tensor([1.0, 2.0])}"),
    ("vector_spec", lambda T: "{:>10}".format(T.tensor([1.0, 2.0]))),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in FORMATS])
def test_format_matches_torch(torch, fn):
    from torch_oracle import outcome

    assert outcome(lambda: fn(og)) == outcome(lambda: fn(torch))


def test_repr_shows_grad_fn():
    x = og.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 1) == "tensor([1., 2.], grad_fn=<MulBackward0>)"


# ---------------------------------------------------------------------------
# item / tolist / numpy


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda T: T.tensor(1.5), id="float"),
        pytest.param(lambda T: T.tensor(2), id="int"),
        pytest.param(lambda T: T.tensor(True), id="bool"),
        pytest.param(lambda T: T.tensor([[4.0]]), id="one_element_matrix"),
        pytest.param(lambda T: T.tensor([1.0, 2.0]).sum(), id="op_result"),
    ],
)
def test_item_matches_torch(torch, fn):
    got, expected = fn(og).item(), fn(torch).item()
    assert type(got) is type(expected)
    assert got == expected


def test_item_of_many_elements_raises():
    with pytest.raises(RuntimeError):
        og.tensor([1.0, 2.0]).item()


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda T: T.tensor([[1, 2], [3, 4]]), id="int_matrix"),
        pytest.param(lambda T: T.tensor([1.5, 2.0]), id="float_vector"),
        pytest.param(lambda T: T.tensor(2), id="int_0dim"),
        pytest.param(lambda T: T.tensor([True, False]), id="bool_vector"),
        pytest.param(lambda T: T.zeros(2, 0), id="empty"),
    ],
)
def test_tolist_matches_torch(torch, fn):
    got, expected = fn(og).tolist(), fn(torch).tolist()
    assert got == expected
    assert repr(got) == repr(expected)  # same Python types (1 vs 1.0 vs True)


def test_numpy_of_tensor_requiring_grad_raises():
    x = og.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead.",
    ):
        x.numpy()


def test_numpy_shares_memory_with_tensor():
    t = og.zeros(3)
    t.numpy()[1] = 4.0
    assert t[1].item() == 4.0


def test_numpy_keeps_dtype():
    assert og.zeros(2, dtype=og.int32).numpy().dtype == np.int32
    assert og.zeros(2).numpy().dtype == np.float32


# ---------------------------------------------------------------------------
# Indexing with ints and slices

INDICES = [
    ("int", (1,)),
    ("negative_int", (-1,)),
    ("int_int", (1, 2)),
    ("row_slice", (slice(1, None),)),
    ("column_slice", (slice(None), slice(1, 3))),
    ("column_step", (slice(None), slice(None, None, 2))),
    ("negative_start", (slice(None), slice(-2, None))),
    ("int_then_slice", (0, slice(1, None))),
    ("slice_then_int", (slice(None), -1)),
    ("row_step", (slice(None, None, 2),)),
    ("past_the_end", (slice(1, 10),)),
    ("empty_slice", (slice(2, 1),)),
]


def base_matrix(lib):
    return lib.tensor(np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("index", [pytest.param(i, id=name) for name, i in INDICES])
def test_indexing_matches_torch(torch, index):
    key = index if len(index) > 1 else index[0]
    assert_same_tensor(base_matrix(og)[key], base_matrix(torch)[key])


def test_chained_indexing_matches_torch(torch):
    assert_same_tensor(base_matrix(og)[1][2], base_matrix(torch)[1][2])


VIEW_INDICES = [
    name_index for name_index in INDICES if name_index[0] not in ("int_int", "empty_slice")
]


@pytest.mark.parametrize("index", [pytest.param(i, id=name) for name, i in VIEW_INDICES])
def test_index_result_sees_writes_to_the_base(index):
    key = index if len(index) > 1 else index[0]
    base = base_matrix(og)
    view = base[key]
    base.numpy()[...] = -np.arange(12.0).reshape(3, 4)
    expected = (-np.arange(12.0).reshape(3, 4))[key]
    np.testing.assert_array_equal(view.numpy(), expected)


@pytest.mark.parametrize("index", [pytest.param(i, id=name) for name, i in VIEW_INDICES])
def test_writes_to_index_result_reach_the_base(index):
    key = index if len(index) > 1 else index[0]
    base = base_matrix(og)
    base[key].numpy()[...] = 100.0
    expected = np.arange(12.0).reshape(3, 4)
    expected[key] = 100.0
    np.testing.assert_array_equal(base.numpy(), expected)


def test_0dim_index_result_shares_memory():
    base = base_matrix(og)
    element = base[1, 2]
    base.numpy()[1, 2] = 42.0
    assert element.item() == 42.0


def test_index_out_of_range_raises_index_error():
    with pytest.raises(IndexError):
        base_matrix(og)[3]


# ---------------------------------------------------------------------------
# Operators with Python scalars on either side

SCALAR_OPERATORS = [
    ("add", lambda t: t + 2),
    ("radd", lambda t: 2 + t),
    ("sub", lambda t: t - 2),
    ("rsub", lambda t: 2 - t),
    ("mul", lambda t: t * 3),
    ("rmul", lambda t: 3 * t),
    ("truediv", lambda t: t / 2),
    ("rtruediv", lambda t: 2 / t),
    ("pow", lambda t: t**2),
    ("rpow", lambda t: 2**t),
    ("add_float", lambda t: t + 0.5),
    ("rsub_float", lambda t: 1.5 - t),
    ("rmul_float", lambda t: 0.5 * t),
    ("pow_float", lambda t: t**0.5),
    ("rpow_float", lambda t: 1.5**t),
    ("neg", lambda t: -t),
    ("eq", lambda t: t == 2),
    ("ne", lambda t: t != 2),
    ("lt", lambda t: t < 2),
    ("le", lambda t: t <= 2),
    ("gt", lambda t: t > 2),
    ("ge", lambda t: t >= 2),
    ("reflected_lt", lambda t: 2 < t),
    ("reflected_ge", lambda t: 2 >= t),
    ("reflected_eq", lambda t: 2 == t),
]
OPERANDS = [
    ("float32", lambda T: T.tensor([1.0, 2.0, 4.0])),
    ("float64", lambda T: T.tensor([1.0, 2.0, 4.0], dtype=T.float64)),
    ("int64", lambda T: T.tensor([1, 2, 4])),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=n) for n, f in OPERANDS])
@pytest.mark.parametrize("op", [pytest.param(f, id=n) for n, f in SCALAR_OPERATORS])
def test_scalar_operator_matches_torch(torch, op, make):
    assert_same_tensor(op(make(og)), op(make(torch)), rtol=1e-6)


TENSOR_OPERATORS = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b),
    ("pow", lambda a, b: a**b),
    ("matmul", lambda a, b: a @ b.t()),
    ("eq", lambda a, b: a == b),
    ("lt", lambda a, b: a < b),
    ("ge", lambda a, b: a >= b),
]


@pytest.mark.parametrize("op", [pytest.param(f, id=n) for n, f in TENSOR_OPERATORS])
def test_tensor_operator_matches_torch(torch, op):
    def run(lib):
        a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 2.0, 0.5]])
        b = lib.tensor([[1.0, 3.0, 3.0], [0.5, 2.0, 2.0]])
        return op(a, b)

    assert_same_tensor(run(og), run(torch), rtol=1e-6)


DEVICES = [
    ("repr", lambda T: repr(T.device("cpu"))),
    ("str_index", lambda T: str(T.device("cpu", 0))),
    ("parse_index", lambda T: repr(T.device("cuda:1"))),
    ("fields", lambda T: (T.device("cpu").type, T.device("cpu").index)),
    ("never_equals_str", lambda T: T.device("cpu") == "cpu"),
    ("equal_devices", lambda T: T.device("cpu") == T.device("cpu")),
    ("hash", lambda T: hash(T.device("cpu")) == hash(T.device("cpu"))),
    ("tensor_device", lambda T: (repr(T.ones(2).device), T.ones(2).device.type, T.ones(2).is_cpu)),
    ("to_device", lambda T: T.ones(2).to(T.ones(2).device).tolist()),
    ("cpu_is_self", lambda T: (lambda x: x.cpu() is x)(T.ones(2))),
    ("unknown_type", lambda T: T.device("foo")),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in DEVICES])
def test_device_matches_torch(torch, fn):
    from torch_oracle import outcome

    assert outcome(lambda: fn(og)) == outcome(lambda: fn(torch))


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda T: T.cat([]), id="cat_empty"),
        pytest.param(lambda T: T.cat([], dim=0), id="cat_empty_dim"),
        pytest.param(lambda T: T.stack([]), id="stack_empty"),
        pytest.param(lambda T: T.ops.aten.cat.default([]), id="aten_cat_empty"),
    ],
)
def test_empty_tensor_list_errors_match_torch(torch, fn):
    from torch_oracle import outcome

    assert outcome(lambda: fn(og)) == outcome(lambda: fn(torch))
