"""The shape ops of issue 14 against torch: flip, roll, rot90, tril/triu, diag_embed,
block_diag, diagonal_copy, squeeze over several dims, division with a rounding mode, and
the composites over them (fliplr, flipud, tile, diag, diagflat, movedim, swapaxes, ravel,
the stacks and splits, atleast_Nd, broadcast_to/tensors/shapes, meshgrid,
cartesian_prod): values, dtypes, shapes, strides, the aten calls a dispatch mode sees,
node names, in-place and out= variants, and errors. Their float64 OpInfo samples run in
test_opinfo.py (gradients, second derivatives, tangents, saved fields)."""

from __future__ import annotations

import math
import warnings

import pytest

import opgrad as og
from torch_oracle import assert_same_error, dtype_name, outcome_and_aten_log


def _described(value):
    if isinstance(value, (tuple, list)) and not hasattr(value, "dtype"):
        return type(value).__name__, [_described(v) for v in value]
    if not hasattr(value, "dtype"):
        return type(value).__name__, list(value)
    data = value.reshape(-1).tolist()
    data = [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in data]
    node = type(value.grad_fn).__name__ if value.grad_fn is not None else None
    return data, dtype_name(value.dtype), tuple(value.shape), value.stride(), node


def _seen(lib, call):
    """What ``call(lib)`` gives (or raises) and the aten calls a dispatch mode sees."""
    return outcome_and_aten_log(lib, call, _described)


def _m(lib, rows=3, cols=4, dtype="float64", grad=True):
    x = lib.arange(rows * cols, dtype=getattr(lib, dtype)).reshape(rows, cols)
    return x.requires_grad_() if grad else x


def _v(lib, n=3, dtype="float64"):
    return lib.arange(n, dtype=getattr(lib, dtype)).requires_grad_()


def _inplace(method, *args, **kwargs):
    def call(lib):
        x = _m(lib, grad=False).clone()
        result = getattr(x, method)(*args, **kwargs)
        assert result is x
        return x

    return call


CALLS = {
    "flip": lambda L: _m(L).flip(0, 1),
    "flip_transposed": lambda L: _m(L).t().flip(0),
    "flip_no_dims": lambda L: L.flip(_m(L), []),
    "flip_0d": lambda L: L.tensor(2.0).flip(0),
    "flip_repeated_dim": lambda L: _m(L).flip(0, -2),
    "flip_dim_out_of_range": lambda L: _m(L).flip(2),
    "fliplr": lambda L: _m(L).fliplr(),
    "fliplr_1d": lambda L: L.fliplr(_v(L)),
    "flipud": lambda L: L.flipud(_v(L)),
    "flipud_0d": lambda L: L.flipud(L.tensor(1.0)),
    "roll": lambda L: _m(L).roll(1, 0),
    "roll_flat": lambda L: _m(L).roll(-5),
    "roll_several": lambda L: L.roll(_m(L), (1, -2), (0, 1)),
    "roll_transposed": lambda L: _m(L).t().roll(1, 0),
    "roll_misaligned": lambda L: _m(L).roll((1, 2), 0),
    "roll_no_shifts": lambda L: _m(L).roll((), ()),
    "rot90": lambda L: _m(L).rot90(),
    "rot90_twice": lambda L: _m(L).rot90(2, [1, 0]),
    "rot90_back": lambda L: L.rot90(_m(L), -1),
    "rot90_none": lambda L: _m(L).rot90(4),
    "rot90_3d": lambda L: L.arange(24.0).reshape(2, 3, 4).rot90(1, [2, 0]),
    "rot90_three_dims": lambda L: _m(L).rot90(1, [0, 1, 1]),
    "rot90_1d": lambda L: _v(L).rot90(),
    "rot90_same_dims": lambda L: _m(L).rot90(1, [0, -2]),
    "tril": lambda L: _m(L).tril(),
    "tril_offset": lambda L: L.tril(_m(L), -1),
    "triu": lambda L: _m(L).triu(2),
    "triu_batched": lambda L: L.arange(24.0).reshape(2, 3, 4).triu(),
    "tril_transposed": lambda L: _m(L).t().tril(),
    "tril_bool": lambda L: L.ones(3, 3, dtype=L.bool).tril(),
    "tril_1d": lambda L: _v(L).tril(),
    "tril_": _inplace("tril_", 1),
    "triu_": _inplace("triu_"),
    "diag_embed": lambda L: L.diag_embed(_m(L)),
    "diag_embed_dims": lambda L: L.diag_embed(_m(L), 1, 0, 2),
    "diag_embed_negative_offset": lambda L: _m(L).diag_embed(-2, -1, 0),
    "diag_embed_same_dims": lambda L: L.diag_embed(_m(L), 0, 1, 1),
    "diag_vector": lambda L: L.diag(_v(L), 1),
    "diag_matrix": lambda L: L.diag(_m(L), -1),
    "diag_3d": lambda L: L.diag(L.ones(2, 2, 2)),
    "diagflat": lambda L: L.diagflat(_m(L, 2, 2), 1),
    "diagflat_transposed": lambda L: L.diagflat(_m(L, 2, 3).t()),
    "diagonal_copy": lambda L: L.diagonal_copy(_m(L), 1),
    "block_diag": lambda L: L.block_diag(_m(L, 2, 2), _v(L), L.tensor(5.0, dtype=L.float64)),
    "block_diag_mixed_dtypes": lambda L: L.block_diag(_m(L, 2, 2), L.tensor([1, 2])),
    "block_diag_empty": lambda L: L.block_diag(L.ones(0, 2), _m(L, 2, 2)),
    "block_diag_3d": lambda L: L.block_diag(_m(L), L.ones(1, 1, 1)),
    "squeeze_dims": lambda L: L.ones(1, 3, 1, 2).squeeze((0, 2)),
    "squeeze_dims_kept": lambda L: L.ones(1, 3).squeeze((0, 1)),
    "squeeze_dims_repeated": lambda L: L.ones(1, 3).squeeze((0, -2)),
    "squeeze_dims_grad": lambda L: _m(L).reshape(1, 3, 1, 4).squeeze((0, 2)),
    "squeeze__dims": lambda L: L.ones(1, 3, 1).squeeze_((0, 2)),
    "div_floor": lambda L: L.div(_m(L) - 5, 3, rounding_mode="floor"),
    "div_trunc": lambda L: (_m(L) - 5).div(_m(L) + 1, rounding_mode="trunc"),
    "div_none": lambda L: L.div(_m(L), 3, rounding_mode=None),
    "div_floor_int": lambda L: L.div(L.tensor([-7, 7, -8]), 2, rounding_mode="floor"),
    "div_trunc_int": lambda L: L.div(
        L.tensor([-7, 7, -8]), L.tensor([2, -2, 3]), rounding_mode="trunc"
    ),
    "div_none_int": lambda L: L.div(L.tensor([-7, 7]), 2, rounding_mode=None),
    "div_floor_int_by_zero": lambda L: L.div(L.tensor([1, 2]), 0, rounding_mode="floor"),
    "div_floor_float_by_zero": lambda L: L.div(
        L.tensor([1.0, -1.0, 0.0]), 0.0, rounding_mode="floor"
    ),
    "div_floor_as_python": lambda L: L.div(
        L.tensor([1.0, -5.0]), L.tensor([0.1, 0.3]), rounding_mode="floor"
    ),
    "div_bad_mode": lambda L: L.div(_m(L), 2, rounding_mode="round"),
    "div__floor": _inplace("div_", 2, rounding_mode="floor"),
    "div__floor_int": lambda L: L.tensor([5, -5]).div_(2, rounding_mode="floor"),
    "div__none_int": lambda L: L.tensor([5, -5]).div_(2, rounding_mode=None),
    "div__tensor_trunc": lambda L: (_m(L, grad=False) - 5).div_(_m(L) + 1, rounding_mode="trunc"),
    "tile": lambda L: _m(L).tile(2),
    "tile_more": lambda L: L.tile(_v(L), (2, 1, 2)),
    "movedim": lambda L: L.arange(24.0).reshape(2, 3, 4).movedim(0, 2),
    "movedim_lists": lambda L: L.movedim(L.arange(24.0).reshape(2, 3, 4), (0, 1), (2, 0)),
    "moveaxis": lambda L: L.moveaxis(L.arange(24.0).reshape(2, 3, 4), -1, 0),
    "movedim_repeated": lambda L: L.movedim(L.ones(2, 3), (0, 0), (1, 0)),
    "movedim_misaligned": lambda L: L.movedim(L.ones(2, 3), (0, 1), (1,)),
    "swapaxes": lambda L: _m(L).swapaxes(0, 1),
    "swapdims": lambda L: L.swapdims(_m(L), 1, 0),
    "swapaxes_": _inplace("swapaxes_", 0, 1),
    "swapdims_": _inplace("swapdims_", 1, 0),
    "ravel": lambda L: _m(L).ravel(),
    "ravel_transposed": lambda L: L.ravel(_m(L).t()),
    "hstack": lambda L: L.hstack([_m(L), _m(L)]),
    "hstack_vectors": lambda L: L.hstack((_v(L), _v(L, 2))),
    "hstack_empty": lambda L: L.hstack([]),
    "vstack": lambda L: L.vstack([_v(L), _v(L)]),
    "row_stack": lambda L: L.row_stack([_m(L), _v(L, 4)]),
    "dstack": lambda L: L.dstack([_m(L), _m(L)]),
    "column_stack": lambda L: L.column_stack(
        [_v(L), _m(L, 3, 2), L.tensor(1.0, dtype=L.float64).expand(3)]
    ),
    "tensor_split_sections": lambda L: L.tensor_split(_m(L, 7, 2), 3),
    "tensor_split_indices": lambda L: _m(L).tensor_split([1, 3, 10], 1),
    "tensor_split_tensor": lambda L: L.tensor_split(_m(L), L.tensor([1, 2]), 1),
    "tensor_split_tensor_sections": lambda L: L.tensor_split(_m(L), L.tensor(2), 1),
    "tensor_split_float_tensor": lambda L: L.tensor_split(_m(L), L.tensor([1.0]), 1),
    "tensor_split_zero": lambda L: L.tensor_split(_m(L), 0),
    "tensor_split_0d": lambda L: L.tensor_split(L.tensor(1.0), 2),
    "hsplit": lambda L: L.hsplit(_m(L), 2),
    "hsplit_indices": lambda L: _m(L).hsplit([1, 3]),
    "hsplit_1d": lambda L: L.hsplit(_v(L), 3),
    "hsplit_indivisible": lambda L: L.hsplit(_m(L), 3),
    "vsplit": lambda L: L.vsplit(_m(L), 3),
    "vsplit_1d": lambda L: L.vsplit(_v(L), 3),
    "dsplit": lambda L: L.dsplit(L.ones(2, 2, 4), [1]),
    "atleast_1d": lambda L: L.atleast_1d(L.tensor(1.0)),
    "atleast_2d": lambda L: L.atleast_2d(_v(L)),
    "atleast_3d": lambda L: L.atleast_3d(_m(L)),
    "atleast_3d_vector": lambda L: L.atleast_3d(_v(L)),
    "atleast_2d_many": lambda L: L.atleast_2d(_v(L), L.tensor(2.0)),
    "atleast_1d_list": lambda L: L.atleast_1d([_v(L), L.tensor(2.0)]),
    "broadcast_to": lambda L: L.broadcast_to(_v(L), (2, 3)),
    "broadcast_to_bad": lambda L: _v(L).broadcast_to((2, 4)),
    "broadcast_tensors": lambda L: L.broadcast_tensors(_v(L), _m(L, 2, 1)),
    "broadcast_tensors_bad": lambda L: L.broadcast_tensors(_v(L), _m(L)),
    "broadcast_shapes": lambda L: L.broadcast_shapes((2, 1), (3,), 1),
    "broadcast_shapes_bad": lambda L: L.broadcast_shapes((2, 3), (4,)),
    "broadcast_shapes_later": lambda L: L.broadcast_shapes((1,), [2, 1], (3, 3)),
    "broadcast_shapes_negative": lambda L: L.broadcast_shapes((2, 1), (-1,)),
    "broadcast_shapes_none": lambda L: L.broadcast_shapes(),
    "meshgrid_ij": lambda L: L.meshgrid(_v(L), _v(L, 2), indexing="ij"),
    "meshgrid_xy": lambda L: L.meshgrid([_v(L), _v(L, 2), _v(L, 4)], indexing="xy"),
    "meshgrid_scalar": lambda L: L.meshgrid(L.tensor(1.0), _v(L, 2, "float32"), indexing="ij"),
    "meshgrid_bad_indexing": lambda L: L.meshgrid(_v(L), indexing="yx"),
    "cartesian_prod": lambda L: L.cartesian_prod(_v(L), _v(L, 2)),
    "cartesian_prod_one": lambda L: L.cartesian_prod(_v(L)),
    "cartesian_prod_2d": lambda L: L.cartesian_prod(_m(L)),
}


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_values_layout_nodes_and_aten_calls_match_torch(torch, call):
    assert _seen(og, call) == _seen(torch, call)


OUT_CALLS = {
    "flip": (lambda L, out: L.flip(_m(L), [0], out=out), "float64"),
    "roll": (lambda L, out: L.roll(_m(L), 1, out=out), "float64"),
    "rot90": (lambda L, out: L.rot90(_m(L), 1, [0, 1], out=out), "float64"),
    "tril": (lambda L, out: L.tril(_m(L), out=out), "float64"),
    "triu": (lambda L, out: L.triu(_m(L), 1, out=out), "float32"),
    "diag_embed": (lambda L, out: L.diag_embed(_v(L).detach(), out=out), "float64"),
    "diagonal_copy": (lambda L, out: L.diagonal_copy(_m(L, grad=False), out=out), "float64"),
    "diag": (lambda L, out: L.diag(_m(L, grad=False), 1, out=out), "float64"),
    "diag_vector": (lambda L, out: L.diag(_v(L).detach(), out=out), "float64"),
    "cat": (lambda L, out: L.cat([_m(L, grad=False)] * 2, 1, out=out), "float64"),
    "hstack": (lambda L, out: L.hstack([_m(L, grad=False)] * 2, out=out), "float64"),
    "vstack": (lambda L, out: L.vstack([_v(L).detach()] * 2, out=out), "float64"),
    "row_stack": (lambda L, out: L.row_stack([_v(L).detach()] * 2, out=out), "float64"),
    "dstack": (lambda L, out: L.dstack([_m(L, grad=False)] * 2, out=out), "float64"),
    "column_stack": (lambda L, out: L.column_stack([_v(L).detach()] * 2, out=out), "float64"),
    "div_floor": (
        lambda L, out: L.div(_m(L, grad=False), 3, rounding_mode="floor", out=out),
        "float64",
    ),
    "div_floor_int_out": (
        lambda L, out: L.div(L.tensor([5.0]), 2, rounding_mode="floor", out=out),
        "int64",
    ),
    "div_trunc_ints": (
        lambda L, out: L.div(L.tensor([-5]), 2, rounding_mode="trunc", out=out),
        "int64",
    ),
}


@pytest.mark.parametrize("case", list(OUT_CALLS.values()), ids=list(OUT_CALLS))
def test_out_variants_match_torch(torch, case):
    make, dtype = case

    def call(lib):
        out = lib.empty(0, dtype=getattr(lib, dtype))
        result = make(lib, out)
        assert result is out
        return out

    assert _seen(og, call) == _seen(torch, call)


ATEN_ONLY_OUTS = {
    "flip": lambda L: ((_m(L, grad=False), [0]), {}),
    "roll": lambda L: ((_m(L, grad=False), [1], [1]), {}),
    "rot90": lambda L: ((_m(L, grad=False), 1, [0, 1]), {}),
    "diag_embed": lambda L: ((_m(L, grad=False), 1), {}),
    "block_diag": lambda L: (([_m(L, grad=False), _v(L).detach()],), {}),
}


@pytest.mark.parametrize("name", list(ATEN_ONLY_OUTS))
def test_out_variants_only_aten_has_match_torch(torch, name):
    def call(lib):
        args, kwargs = ATEN_ONLY_OUTS[name](lib)
        out = lib.empty(0, dtype=lib.float64)
        assert getattr(lib.ops.aten, name).out(*args, out=out, **kwargs) is out
        return out

    assert _seen(og, call) == _seen(torch, call)


def test_block_diag_gradients_take_each_inputs_shape_and_dtype(torch):
    def scenario(lib):
        a = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        b = lib.ones(3, dtype=lib.float32, requires_grad=True)
        c = lib.tensor(1.0, requires_grad=True)
        y = lib.block_diag(a, b, c)
        weights = lib.arange(float(y.numel()), dtype=y.dtype).reshape(y.shape)
        grads = lib.autograd.grad((y * weights).sum(), (a, b, c))
        return [(g.tolist(), dtype_name(g.dtype)) for g in grads]

    assert scenario(og) == scenario(torch)


def test_rounded_division_has_zero_gradients_and_tangents(torch):
    def scenario(lib):
        a = lib.tensor([3.5, -2.0], requires_grad=True)
        b = lib.tensor([2.0, 3.0], requires_grad=True)
        y = lib.div(a, b, rounding_mode="floor")
        grads = lib.autograd.grad(y.sum(), (a, b))
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(a.detach(), lib.ones(2))
            tangent = lib.autograd.forward_ad.unpack_dual(
                lib.div(dual, b.detach(), rounding_mode="trunc")
            ).tangent
        names = sorted(n for n in dir(y.grad_fn) if n.startswith("_saved"))
        return [g.tolist() for g in grads], tangent.tolist(), names, y.grad_fn._saved_rounding_mode

    assert scenario(og) == scenario(torch)


def test_block_diag_of_nothing_is_an_empty_row(torch):
    # (its strides are left out: opgrad's zero-size tensors do not have torch's yet)
    def scenario(lib):
        y = lib.block_diag()
        return tuple(y.shape), dtype_name(y.dtype)

    assert scenario(og) == scenario(torch)


def test_meshgrid_without_indexing_warns_as_torch(torch):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = lib.meshgrid(lib.arange(2), lib.arange(3))
        # (torch's text ends with the C++ line that raised it)
        texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        return [g.tolist() for g in grids], [(w.category, t) for w, t in zip(caught, texts)]

    assert scenario(og) == scenario(torch)


def test_roll_reads_two_ints_as_a_shift_and_a_dim_and_flip_as_dims(torch):
    def scenario(lib):
        x = lib.arange(6).reshape(2, 3)
        return x.roll(1, 1).tolist(), x.flip(0, 1).tolist(), x.permute(1, 0).tolist()

    assert scenario(og) == scenario(torch)


def test_cat_out_refuses_a_listed_input_that_requires_grad(torch):
    def scenario(lib):
        out = lib.empty(0)
        lib.cat([lib.ones(2), lib.ones(2, requires_grad=True)], out=out)

    assert_same_error(torch, scenario, RuntimeError, "don't support automatic differentiation")
