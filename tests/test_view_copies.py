"""The ``*_copy`` ops (a view op's result as a fresh tensor: permute_copy, select_copy, ...,
the `copy:` key of derivatives.yaml) and narrow_copy against torch: values, dtypes, shapes,
strides, that the result shares no memory with its input, node names (the view's +
``_copy``), saved fields, gradients, the aten calls a dispatch mode sees, out= (out must have
the result's dtype) and errors. Their float64 OpInfo samples run in test_opinfo.py."""

from __future__ import annotations

import math
import warnings

import pytest

import opgrad as og
from torch_oracle import assert_same_error, assert_same_saved_fields, dtype_name
from torch_oracle import outcome_and_aten_log


def _described(value):
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_described(v) for v in value]
    data = value.reshape(-1).tolist()
    data = [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in data]
    node = type(value.grad_fn).__name__ if value.grad_fn is not None else None
    return data, dtype_name(value.dtype), tuple(value.shape), value.stride(), node


def _seen(lib, call):
    return outcome_and_aten_log(lib, call, _described)


def _x(lib, *shape, grad=True):
    shape = shape or (3, 1, 4)
    n = math.prod(shape)
    x = lib.arange(n, dtype=lib.float64).reshape(shape) * 0.5 - 1
    return x.requires_grad_() if grad else x


#: each copy op (every overload Python reaches) on a tensor: name -> (function, args)
COPIES = {
    "alias_copy": ("alias_copy", ()),
    "as_strided_copy": ("as_strided_copy", ((2, 2), (1, 2), 1)),
    "diagonal_copy": ("diagonal_copy", (1, 0, 2)),
    "expand_copy": ("expand_copy", ((2, 3, 5, 4),)),
    "narrow_copy": ("narrow_copy", (2, 1, 2)),
    "narrow_copy_negative_start": ("narrow_copy", (2, -1, 1)),
    "permute_copy": ("permute_copy", ((2, 0, 1),)),
    "select_copy": ("select_copy", (2, -1)),
    "slice_copy": ("slice_copy", (2, 1, None, 2)),
    "split_copy": ("split_copy", (2, 0)),
    "split_with_sizes_copy": ("split_with_sizes_copy", ([1, 3], 2)),
    "squeeze_copy": ("squeeze_copy", ()),
    "squeeze_copy_dim": ("squeeze_copy", (1,)),
    "squeeze_copy_dims": ("squeeze_copy", ((0, 1),)),
    "t_copy": ("t_copy", ()),
    "transpose_copy": ("transpose_copy", (0, 2)),
    "unbind_copy": ("unbind_copy", (2,)),
    "unfold_copy": ("unfold_copy", (2, 2, 1)),
    "unsqueeze_copy": ("unsqueeze_copy", (-1,)),
    "view_copy": ("view_copy", ((2, 6),)),
    "view_copy_dtype": ("view_copy", (None,)),  # the dtype (int32) is filled in per library
}


def _input(lib, name):
    if name == "t_copy":
        return _x(lib, 3, 4)
    if name == "expand_copy":
        return _x(lib, 3, 1, 4)
    return _x(lib)


def _args(lib, name):
    _, args = COPIES[name]
    return (lib.int32,) if name == "view_copy_dtype" else args


def _call(name):
    fn, _ = COPIES[name]
    return lambda lib: getattr(lib, fn)(_input(lib, name), *_args(lib, name))


@pytest.mark.parametrize("name", list(COPIES))
def test_values_layout_nodes_and_aten_calls_match_torch(torch, name):
    assert _seen(og, _call(name)) == _seen(torch, _call(name))


@pytest.mark.parametrize("name", list(COPIES))
def test_saved_fields_and_gradients_match_torch(torch, name):
    results = {}
    for lib in (og, torch):
        fn, _ = COPIES[name]
        x = _input(lib, name)
        y = getattr(lib, fn)(x, *_args(lib, name))
        outputs = list(y) if isinstance(y, (tuple, list)) else [y]
        if not outputs[0].requires_grad:  # view_copy.dtype: not differentiable, as torch's
            results[lib] = outputs[0].grad_fn, None, None, None
            continue
        loss = sum(((o * (i + 2)) ** 2).sum() for i, o in enumerate(outputs))
        (grad,) = lib.autograd.grad(loss, x, create_graph=True)
        (second,) = lib.autograd.grad((grad * grad).sum(), x)
        results[lib] = outputs[0].grad_fn, x, grad.tolist(), second.tolist()
    (og_node, og_x, og_grad, og_second), (node, x, grad, second) = results[og], results[torch]
    if node is None:
        assert og_node is None and og_x is None
        return
    assert_same_saved_fields(torch, og_node, node, [og_x], [x], what=name)
    assert (og_grad, og_second) == (grad, second)


@pytest.mark.parametrize("name", list(COPIES))
def test_the_copy_shares_no_memory_with_its_input(name):
    fn, _ = COPIES[name]
    x = _input(og, name).detach()
    y = getattr(og, fn)(x, *_args(og, name))
    outputs = list(y) if isinstance(y, (tuple, list)) else [y]
    before = [o.tolist() for o in outputs]
    x.add_(100.0)
    assert [o.tolist() for o in outputs] == before
    assert all(o._base is None and o.is_contiguous() for o in outputs)
    assert all(o._version == 0 for o in outputs)


def test_the_forward_tangent_is_the_views_tangent(torch):
    import opgrad.autograd.forward_ad as og_fwad
    import torch.autograd.forward_ad as fwad

    tangents = []
    for lib, ad in ((og, og_fwad), (torch, fwad)):
        with ad.dual_level():
            x = ad.make_dual(_x(lib, grad=False), _x(lib, grad=False) * 3)
            y = lib.permute_copy(x, (2, 0, 1))
            z = lib.narrow_copy(x, 2, 1, 2)
            tangents.append([ad.unpack_dual(t).tangent.tolist() for t in (y, z)])
    assert tangents[0] == tangents[1]


#: the copies with one result have out= variants: name -> dtype of an out that works
SINGLE = [n for n in COPIES if not n.startswith(("split", "unbind"))]


@pytest.mark.parametrize("name", SINGLE)
@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
def test_out_variants_match_torch(torch, name, dtype):
    """An out of the result's dtype is written (resized from zero elements); any other
    dtype fails as torch's."""

    def call(lib):
        fn, _ = COPIES[name]
        out = lib.empty(0, dtype=getattr(lib, dtype))
        x = _input(lib, name).detach()
        assert getattr(lib, fn)(x, *_args(lib, name), out=out) is out
        return out

    assert _seen(og, call) == _seen(torch, call)


def test_an_out_of_the_wrong_shape_is_resized_with_torchs_warning(torch):
    messages = []
    for lib in (og, torch):
        out = lib.zeros(5, dtype=lib.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.t_copy(_x(lib, 3, 4, grad=False), out=out)
        # torch adds where in its C++ sources it warned
        text = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        messages.append((text, out.tolist()))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["permute_copy", "narrow_copy"])
def test_an_out_that_requires_grad_is_refused(torch, name):
    fn, args = COPIES[name]

    def call(lib):
        getattr(lib, fn)(_x(lib, grad=False), *args, out=lib.empty(0, requires_grad=True))

    assert_same_error(torch, call, RuntimeError, "don't support automatic differentiation")


def test_an_input_that_requires_grad_is_refused_by_out_where_torch_records_no_derivative(torch):
    """A known difference: torch writes out and gives it a NotImplemented node (backward
    then fails: "derivative for aten::permute_copy is not implemented"); opgrad's out=
    variants record no graph, so this one refuses the input, in torch's words for an out
    that requires grad."""
    x, out = _x(og), og.empty(0, dtype=og.float64)
    with pytest.raises(RuntimeError, match=r"^aten::permute_copy\(\): functions with out="):
        og.permute_copy(x, (2, 0, 1), out=out)
    assert out.shape == (0,) and out._version == 0
    y = torch.empty(0, dtype=torch.float64)
    torch.permute_copy(_x(torch), (2, 0, 1), out=y)
    assert type(y.grad_fn).__name__ == "NotImplemented"


# ---- the out= variants of the copies with a list of results --------------------------------

#: (function, args, outs' shapes): unbind_copy.int_out, split_copy.Tensor_out and
#: split_with_sizes_copy.out
LIST_COPIES = {
    "unbind_copy": ("unbind_copy", (1,), [(3, 4)]),
    "split_copy": ("split_copy", (2, 2), [(3, 1, 2), (3, 1, 2)]),
    "split_with_sizes_copy": ("split_with_sizes_copy", ([1, 3], -1), [(3, 1, 1), (3, 1, 3)]),
}


def _list_out_call(name, make_outs, *, grad=False):
    """``fn(x, *args, out=outs)``: the outs after the call (its return must be None)."""
    fn, args, _ = LIST_COPIES[name]

    def call(lib):
        outs = make_outs(lib)
        assert getattr(lib, fn)(_x(lib, grad=grad), *args, out=outs) is None
        return outs

    return call


@pytest.mark.parametrize("name", list(LIST_COPIES))
def test_list_out_variants_write_each_out_as_torch(torch, name):
    """Outs of the results' shapes and dtype are written in place; a mode sees the out= op
    alone; an input that requires grad is read as data (the outs get no history); a tuple
    of outs does as a list."""
    shapes = LIST_COPIES[name][2]
    for grad, container in ((False, list), (True, list), (False, tuple)):
        make = lambda lib: container(lib.zeros(s, dtype=lib.float64) for s in shapes)
        call = _list_out_call(name, make, grad=grad)
        assert _seen(og, call) == _seen(torch, call)


#: outs that are not of the results' shapes and dtype: how torch's three ops differ
ODD_OUTS = {
    "zero_elements": lambda lib, shape: lib.empty(0, dtype=lib.float64),
    "int64": lambda lib, shape: lib.zeros(shape, dtype=lib.int64),
    "float32": lambda lib, shape: lib.zeros(shape, dtype=lib.float32),
    "broadcast_to": lambda lib, shape: lib.zeros((2,) + shape, dtype=lib.float64),
    "smaller": lambda lib, shape: lib.zeros(shape[-1:], dtype=lib.float64),
}


@pytest.mark.parametrize("odd", list(ODD_OUTS))
@pytest.mark.parametrize("name", list(LIST_COPIES))
def test_outs_of_other_shapes_and_dtypes_as_torch(torch, name, odd):
    """unbind_copy and split_with_sizes_copy want each out of its result's dtype and
    resize it; split_copy writes each with copy_ (any dtype, broadcast, never resized)."""
    shapes = LIST_COPIES[name][2]
    call = _list_out_call(name, lambda lib: [ODD_OUTS[odd](lib, s) for s in shapes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the resize warning: compared in the next test
        assert _seen(og, call) == _seen(torch, call)


def test_list_outs_keep_their_layout_or_are_resized_with_torchs_warning(torch):
    """An out of the right shape is written in place, keeping its strides (a column of a
    bigger tensor); one of another shape is resized, with torch's warning."""

    def call(lib):
        base = lib.zeros(4, 3, dtype=lib.float64)
        outs = [base[:, 0], lib.zeros(5, dtype=lib.float64), base[:, 2]]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.unbind_copy(_x(lib, 3, 4, grad=False), 0, out=outs)
        text = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        return text, base.tolist(), [(o.tolist(), o.stride()) for o in outs], base._version

    assert call(og) == call(torch)


def test_list_outs_that_overlap_the_input_read_what_earlier_writes_left(torch):
    """As torch's kernel, each out is written from a view of the input in turn."""

    def call(lib):
        y = lib.arange(4.0)
        lib.split_copy(y, 2, out=[y[2:], y[:2]])
        return y.tolist()

    assert call(og) == call(torch) == [0.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("name", list(LIST_COPIES))
def test_list_outs_that_require_grad_as_torch(torch, name):
    """unbind_copy refuses them (but not under no_grad); split_copy and
    split_with_sizes_copy write them, without history."""
    shapes = LIST_COPIES[name][2]
    make = lambda lib: [lib.zeros(s, dtype=lib.float64, requires_grad=True) for s in shapes]
    call = _list_out_call(name, make)
    assert _seen(og, call) == _seen(torch, call)
    for lib in (og, torch):
        with lib.no_grad():
            outs = _list_out_call(name, make)(lib)
        assert all(o.requires_grad and o.grad_fn is None and o._version == 1 for o in outs)


def test_unbind_copy_refuses_outs_that_require_grad_in_torchs_words(torch):
    def call(lib):
        outs = [lib.empty(0, requires_grad=True) for _ in range(3)]
        lib.unbind_copy(_x(lib, 3, 4, grad=False), 0, out=outs)

    assert_same_error(torch, call, RuntimeError, "unbind_copy(): functions with out=")


@pytest.mark.parametrize(
    "name, outs, phrase",
    [
        ("unbind_copy", 2, "unbind_copy_int_out expected an out= argument of size 1, got size 2"),
        ("split_copy", 1, "split_copy_Tensor_out() expected an out= argument of size 2, got"),
        ("split_with_sizes_copy", 3, "split_with_sizes_copy_out expected an out= argument"),
    ],
)
def test_a_list_of_the_wrong_length_is_refused_as_torch(torch, name, outs, phrase):
    def call(lib):
        _list_out_call(name, lambda lib: [lib.empty(0, dtype=lib.float64)] * outs)(lib)

    assert_same_error(torch, call, RuntimeError, phrase)


def test_list_outs_of_another_dtype_are_refused_before_any_is_written(torch):
    """Torch writes the outs before the first of a wrong dtype, then fails; opgrad checks
    every out first (bad input leaves no half-updated state), with torch's error."""

    def call(lib):
        outs = [lib.zeros(4, dtype=lib.float64), lib.zeros(4, dtype=lib.int64)]
        outs.append(lib.zeros(4, dtype=lib.float64))
        lib.unbind_copy(_x(lib, 3, 4, grad=False), 0, out=outs)

    assert_same_error(torch, call, RuntimeError, "Expected out tensor to have dtype double")
    outs = [og.zeros(4, dtype=og.float64), og.zeros(4, dtype=og.int64)]
    with pytest.raises(RuntimeError):
        og.unbind_copy(_x(og, 3, 4, grad=False), 0, out=outs + [og.zeros(4, dtype=og.float64)])
    assert outs[0].tolist() == [0.0] * 4 and outs[0]._version == 0


def test_a_list_out_element_that_is_no_tensor_is_refused_as_torch(torch):
    def call(lib):
        lib.unbind_copy(_x(lib, 3, 4, grad=False), 0, out=[1, 2, 3])

    assert_same_error(torch, call, TypeError, "expected Tensor as element 0 in argument 2")


ERRORS = {
    "narrow_copy_start_past_end": (
        lambda L: L.narrow_copy(_x(L), 0, 4, 1),
        IndexError,
        "start out of range",
    ),
    "narrow_copy_too_long": (
        lambda L: L.narrow_copy(_x(L), 2, 3, 2),
        RuntimeError,
        "exceeds dimension size",
    ),
    "narrow_copy_negative_length": (
        lambda L: L.narrow_copy(_x(L), 2, 0, -1),
        RuntimeError,
        "exceeds dimension size",
    ),
    "narrow_copy_0_dim": (
        lambda L: L.narrow_copy(L.tensor(1.0), 0, 0, 1),
        RuntimeError,
        "cannot be applied to a 0-dim tensor",
    ),
    "narrow_copy_dim_past_last": (
        lambda L: L.narrow_copy(_x(L), 3, 0, 1),
        RuntimeError,
        "Expected dim < static_cast<int64_t>(self_sizes.size())",
    ),
    "narrow_copy_negative_dim_out_of_range": (
        lambda L: L.narrow_copy(_x(L), -4, 0, 1),
        IndexError,
        "Dimension out of range",
    ),
    "narrow_copy_out_dtype": (
        lambda L: L.narrow_copy(_x(L, grad=False), 0, 0, 1, out=L.empty(0, dtype=L.float32)),
        RuntimeError,
        "Expected self.dtype() == output.dtype()",
    ),
    "narrow_copy_negative_start_backward": (
        lambda L: L.narrow_copy(_x(L), 2, -2, 2).sum().backward(),
        RuntimeError,
        "must match the size of tensor b (2)",
    ),
    "permute_copy_bad_dims": (
        lambda L: L.permute_copy(_x(L), (0, 1)),
        RuntimeError,
        "number of dimensions in the tensor input does not match",
    ),
    "select_copy_out_of_range": (
        lambda L: L.select_copy(_x(L), 0, 3),
        IndexError,
        "out of range",
    ),
    "view_copy_bad_size": (
        lambda L: L.view_copy(_x(L), (5, 5)),
        RuntimeError,
        "is invalid for input of size 12",
    ),
    "view_dtype_0_dim": (
        lambda L: L.tensor(1.0).view(L.float64),
        RuntimeError,
        "self.dim() cannot be 0 to view Float as Double",
    ),
    "view_dtype_strided": (
        lambda L: L.ones(4, 3).t().view(L.int16),
        RuntimeError,
        "self.stride(-1) must be 1 to view Float as Short",
    ),
    "view_dtype_size": (
        lambda L: L.ones(3, dtype=L.int16).view(L.int32),
        RuntimeError,
        "self.size(-1) must be divisible by 2 to view Short as Int",
    ),
    "view_dtype_offset": (
        lambda L: L.ones(8, dtype=L.int16)[1:5].view(L.int32),
        RuntimeError,
        "self.storage_offset() must be divisible by 2",
    ),
    "view_dtype_other_stride": (
        lambda L: L.ones(3, 6, dtype=L.int16)[:, :4].view(L.int64),
        RuntimeError,
        "self.stride(0) must be divisible by 4",
    ),
    "expand_copy_bad_size": (
        lambda L: L.expand_copy(_x(L), (2, 2)),
        RuntimeError,
        "the number of sizes provided (2) must be greater or equal",
    ),
}


@pytest.mark.parametrize("case", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_match_torch(torch, case):
    call, exc_type, phrase = case
    assert_same_error(torch, call, exc_type, phrase)


VIEW_DTYPE = {
    "same_size": lambda L: L.arange(8.0).reshape(2, 4).view(L.int32),
    "wider": lambda L: L.arange(8.0).reshape(2, 4).view(L.float64),
    "narrower": lambda L: L.arange(4.0).view(L.uint8),
    "same_dtype": lambda L: L.arange(4.0).view(L.float32),
    "keyword": lambda L: L.arange(4.0).view(dtype=L.int16),
    "of_a_slice": lambda L: L.arange(8.0).reshape(2, 4)[:, 2:].view(L.float64),
    "bool": lambda L: L.tensor([0, 1, 2], dtype=L.uint8).view(L.bool),
    "size_still_works": lambda L: L.arange(8.0).view(2, -1),
}


@pytest.mark.parametrize("name", list(VIEW_DTYPE))
def test_view_with_a_dtype_reads_the_same_memory_as_torch(torch, name):
    """A known difference: under a dispatch mode torch also logs an aten.detach after
    view.dtype (its non-differentiable view copies the TensorImpl the mode still holds, and
    that copy of a Python-key tensor is a detach call); opgrad's result needs no copy."""
    got, (outcome, log) = _seen(og, VIEW_DTYPE[name]), _seen(torch, VIEW_DTYPE[name])
    after_view_dtype = [i + 1 for i, c in enumerate(log) if c == "aten.view.dtype"]
    assert all(log[i] == "aten.detach.default" for i in after_view_dtype)
    log = [c for i, c in enumerate(log) if i not in after_view_dtype]
    assert got == (outcome, log)


def test_view_with_a_dtype_is_no_autograd_view_but_shares_memory_and_version(torch):
    seen = []
    for lib in (og, torch):
        x = lib.arange(4.0, requires_grad=True)
        y = x.detach()
        v = y.view(lib.int32)
        y.add_(1)
        seen.append(
            (
                x.view(lib.int32).requires_grad,
                x.view(lib.int32).grad_fn,
                x.view(lib.int32)._is_view(),
                v._version,
                v.tolist(),
            )
        )
    assert seen[0] == seen[1]


def test_copies_are_functions_only_and_narrow_copy_a_method_too(torch):
    for name in {fn for fn, _ in COPIES.values()}:
        assert hasattr(og, name) and hasattr(torch, name), name
        assert hasattr(og.Tensor, name) == hasattr(torch.Tensor, name), name


def test_every_copy_in_the_yaml_is_called_here():
    """Each `copy:` op and its out= variant is one these tests call (test_op_coverage
    trusts this file for them)."""
    yaml = pytest.importorskip("yaml")
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "derivatives.yaml").read_text()
    copies = {
        item["copy"].split("(")[0].split(".")[0]
        for item in yaml.safe_load(text)
        if isinstance(item, dict) and "copy" in item
    }
    assert copies | {"narrow_copy"} == {fn for fn, _ in COPIES.values()}
    assert "view_copy.dtype(" in text
