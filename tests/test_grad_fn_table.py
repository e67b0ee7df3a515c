"""opgrad against the grad_fn table read off PyTorch 2.13.

``tests/data/torch_grad_fn_table.json`` records, for 114 expressions, the
grad_fn class, every ``_saved_*`` / ``_raw_saved_*`` attribute (type, value,
identity with an input), ``next_functions`` and the aten ops a dispatch mode
saw. Every expression whose ops are in opgrad's current scope is evaluated
here on inputs of the same shapes and checked field by field. The others are
listed, with the reason, in OUT_OF_SCOPE; nothing is dropped silently.

This file needs no PyTorch: the table is the oracle.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

import opgrad as og
from torch_oracle import (
    aten_log,
    dtype_name,
    next_function_names,
    node_type_name,
    saved_attribute_names,
    torch_signed,
)

# Read off torch 2.13 by tools/make_grad_fn_table.py; it lives in the repo, so this
# module always runs (a missing file is an error at collection, never a skip).
TABLE_PATH = Path(__file__).resolve().parent / "data" / "torch_grad_fn_table.json"
TABLE = json.loads(TABLE_PATH.read_text())
EXPRESSIONS = [key for key in TABLE if key != "_setup"]

_LATER = "op not in opgrad's current scope"
OUT_OF_SCOPE = {
    "x.max()": _LATER + ": max",
    "x.max(dim=1)[0]": _LATER + ": max.dim",
    "x.min(dim=1).values": _LATER + ": min.dim",
    "x.prod()": _LATER + ": prod",
    "x.prod(dim=1)": _LATER + ": prod.dim_int",
    "x.var()": _LATER + ": var",
    "x.var(dim=1)": _LATER + ": var",
    "x.std()": _LATER + ": std",
    "torch.addmm(bias, x, w)": _LATER + ": addmm",
    "x[idx]": _LATER + ": index.Tensor",
    "x[mask]": _LATER + ": index.Tensor",
    "torch.cat([x, y])": _LATER + ": cat",
    "torch.stack([x, y])": _LATER + ": stack",
    "x.split(1, dim=1)[0]": _LATER + ": split",
    "x.split([1, 2], dim=1)[1]": _LATER + ": split_with_sizes",
    "x.chunk(3, dim=1)[2]": _LATER + ": split",
    "x.unbind(0)[0]": _LATER + ": unbind",
    "x.diagonal()": _LATER + ": diagonal",
    "x.gather(1, gidx)": _LATER + ": gather",
    "x.scatter(1, gidx, y)": _LATER + ": scatter",
    "x.masked_fill(mask, 0.0)": _LATER + ": masked_fill",
    "x.clone().index_put_((idx,), y[0])": _LATER + ": index_put_ (in-place)",
    "F.linear(x, w.t(), bias3)": _LATER + ": torch.nn.functional / addmm",
    "F.linear(x, w.t())": _LATER + ": torch.nn.functional",
    "F.cross_entropy(logits, tgt)": _LATER + ": nll_loss / _log_softmax",
    "F.nll_loss(logits.log_softmax(1), tgt)": _LATER + ": nll_loss",
    "F.mse_loss(x, y)": _LATER + ": mse_loss",
    "F.layer_norm(x, (3,))": _LATER + ": native_layer_norm",
    "F.layer_norm(x, (3,), lnw, lnb)": _LATER + ": native_layer_norm",
    "F.embedding(eidx, emb)": _LATER + ": embedding",
    "x.clone().mul_(2)": _LATER + ": in-place mul_",
    "x.clone().add_(y)": _LATER + ": in-place add_",
    "x.floor()": _LATER + ": floor",
    "torch.einsum('ij,jk->ik', x, w)": _LATER + ": einsum",
    "x.norm()": _LATER + ": linalg_vector_norm",
    "F.gelu(x)": _LATER + ": gelu",
    "F.silu(x)": _LATER + ": silu",
    "x.atan2(y)": _LATER + ": atan2",
    "x.index_select(0, idx)": _LATER + ": index_select",
    "x.repeat(2, 1)": _LATER + ": repeat",
    "x.flip(0)": _LATER + ": flip",
    "x.roll(1, 0)": _LATER + ": roll",
    "x.cumsum(1)": _LATER + ": cumsum",
    "x.sort(1)[0]": _LATER + ": sort",
    "x.topk(2, 1)[0]": _LATER + ": topk",
    "x.amax(1)": _LATER + ": amax",
    "x.rsqrt()": _LATER + ": rsqrt",
    "torch.tril(x)": _LATER + ": tril",
    "x.lerp(y, 0.3)": _LATER + ": lerp",
    "torch.addcmul(x, x, y, value=0.5)": _LATER + ": addcmul",
}

IN_SCOPE = [expr for expr in EXPRESSIONS if expr not in OUT_OF_SCOPE]

# How many in-scope expressions the table gave when this file was written;
# a changed table must be looked at, not absorbed silently.
EXPECTED_IN_SCOPE_COUNT = 64


def make_inputs():
    """Inputs shaped and flagged as in the table's ``_setup`` (float32)."""
    rng = np.random.default_rng(0)

    def leaf(*shape, low=None):
        if low is None:
            data = rng.standard_normal(shape)
        else:
            data = rng.uniform(low, low + 1.0, shape)
        return og.tensor(np.asarray(data, dtype=np.float32), requires_grad=True)

    return {
        "x": leaf(2, 3),
        "y": leaf(2, 3),
        "p": leaf(2, 3, low=0.5),
        "w": leaf(3, 4),
        "v": leaf(3),
        "v2": leaf(3),
        "b1": leaf(2, 3, 4),
        "b2": leaf(2, 4, 5),
        "z": leaf(1, 3, 1),
        "img": leaf(1, 2, 5, 5),
        "ker": leaf(3, 2, 3, 3),
        "kb": leaf(3),
    }


NAMESPACE = {"torch": og, "F": og.nn.functional}  # the table's expressions' names


def evaluate(expr):
    inputs = make_inputs()
    out = eval(expr, dict(NAMESPACE), dict(inputs))
    return inputs, out


TENSOR_REPR = re.compile(
    r"Tensor\(shape=\((?P<shape>[0-9, ]*)\), dtype=(?P<dtype>\w+)(?P<rg>, requires_grad)?\)"
)


def parse_tensor_repr(text):
    match = TENSOR_REPR.fullmatch(text)
    assert match, f"unexpected tensor description in the table: {text}"
    shape = tuple(int(s) for s in match["shape"].replace(" ", "").split(",") if s)
    return shape, match["dtype"], bool(match["rg"])


def check_saved_value(name, got, spec, inputs):
    kind = spec["type"]
    if kind == "SavedTensor":
        assert type(got).__name__ == "SavedTensor", f"{name}: {type(got).__name__}"
        assert callable(getattr(got, "register_hooks", None)), f"{name}: no register_hooks"
    elif kind == "NoneType":
        assert got is None, f"{name}: expected None, got {got!r}"
    elif kind == "Tensor":
        assert isinstance(got, og.Tensor), f"{name}: expected a Tensor, got {type(got).__name__}"
        shape, dtype, requires_grad = parse_tensor_repr(spec["repr"])
        assert tuple(got.shape) == shape, f"{name}: shape"
        assert dtype_name(got.dtype) == dtype, f"{name}: dtype {got.dtype}"
        assert got.requires_grad == requires_grad, f"{name}: requires_grad"
        if "is" in spec:
            assert got is inputs[spec["is"]], f"{name} should be the input {spec['is']} itself"
        else:
            assert all(
                got is not t for t in inputs.values()
            ), f"{name} should be a new tensor, not one of the inputs"
    else:
        expected = torch_signed(ast.literal_eval(spec["repr"]))
        assert type(got).__name__ == kind, f"{name}: {type(got).__name__} != {kind}"
        assert got == expected, f"{name}: {got!r} != {expected!r}"


def in_scope_params():
    return [pytest.param(expr, id=expr) for expr in IN_SCOPE]


# ---------------------------------------------------------------------------


def test_every_table_expression_is_checked_or_listed_out_of_scope():
    stale = sorted(set(OUT_OF_SCOPE) - set(EXPRESSIONS))
    assert not stale, f"OUT_OF_SCOPE names expressions the table lacks: {stale}"
    assert len(IN_SCOPE) == EXPECTED_IN_SCOPE_COUNT, sorted(IN_SCOPE)


@pytest.mark.parametrize("expr", in_scope_params())
def test_grad_fn_name_matches_table(expr):
    _, out = evaluate(expr)
    expected = TABLE[expr]["grad_fn"]
    assert node_type_name(out.grad_fn) == expected
    if expected is not None:
        assert out.grad_fn.name() == expected


@pytest.mark.parametrize("expr", in_scope_params())
def test_saved_attribute_names_match_table(expr):
    _, out = evaluate(expr)
    if out.grad_fn is None:
        assert TABLE[expr]["attrs"] == {}
        return
    assert saved_attribute_names(out.grad_fn) == set(TABLE[expr]["attrs"])


@pytest.mark.parametrize("expr", in_scope_params())
def test_saved_attribute_values_match_table(expr):
    inputs, out = evaluate(expr)
    for name, spec in TABLE[expr]["attrs"].items():
        assert hasattr(out.grad_fn, name), f"{expr}: missing {name}"
        check_saved_value(name, getattr(out.grad_fn, name), spec, inputs)


@pytest.mark.parametrize("expr", in_scope_params())
def test_next_functions_match_table(expr):
    _, out = evaluate(expr)
    expected = TABLE[expr]["next_functions"]
    if expected is None:
        assert out.grad_fn is None
        return
    assert next_function_names(out.grad_fn) == [tuple(e) for e in expected]


@pytest.mark.parametrize("expr", in_scope_params())
def test_dispatch_mode_sees_table_aten_ops(expr):
    inputs = make_inputs()
    log = aten_log(og, lambda: eval(expr, dict(NAMESPACE), dict(inputs)))
    assert log == TABLE[expr]["aten_ops_seen"]


def test_every_table_test_runs_on_every_in_scope_expression():
    """A guard against a table test losing its parametrization (a decorator edited to a
    subset): each runs on exactly the in-scope expressions."""
    table_tests = [
        test_grad_fn_name_matches_table,
        test_saved_attribute_names_match_table,
        test_saved_attribute_values_match_table,
        test_next_functions_match_table,
        test_dispatch_mode_sees_table_aten_ops,
    ]
    for test in table_tests:
        (mark,) = [m for m in test.pytestmark if m.name == "parametrize"]
        assert [param.values[0] for param in mark.args[1]] == IN_SCOPE, test.__name__


def test_the_table_is_what_torch_gives(torch):
    """tools/make_grad_fn_table.py still makes exactly the file the tests read."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "tools" / "make_grad_fn_table.py"
    spec = importlib.util.spec_from_file_location("make_grad_fn_table", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.make_table(torch) == TABLE
