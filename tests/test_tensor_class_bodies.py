"""Tensor is written as three class bodies, joined when opgrad is imported.

runtime/tensor.py holds the class with its state and the API that reads it,
generated/tensor_methods.py ``TensorMethods`` (one method per op name) and
runtime/_tensor_methods.py ``TensorPythonMethods`` (operators, indexing,
conversions, the autograd entry points). What a user sees is one class: these
tests pin that each written attribute is what ``opgrad.Tensor`` holds, and that
operators, subclasses and handlers see it as torch's users see torch's.
"""

from __future__ import annotations

import importlib

import pytest

import opgrad as og
from opgrad._tensor_methods import TensorPythonMethods, join
from opgrad.generated.tensor_methods import TensorMethods
from opgrad.tensor import PUBLIC_API
from torch_oracle import assert_same

_BOOKKEEPING = set(vars(type("Empty", (), {})))


def written(body: type) -> dict:
    """The attributes a class body writes (without what every class statement adds)."""
    return {
        name: value
        for name, value in vars(body).items()
        if name not in _BOOKKEEPING and not (name == "__hash__" and value is None)
    }


def test_every_generated_method_is_the_tensor_method():
    methods = written(TensorMethods)
    assert {"add", "mul_", "view", "sum", "pow"} <= set(methods)
    for name, method in methods.items():
        assert og.Tensor.__dict__[name] is method, name


def test_every_hand_written_attribute_is_the_tensor_attribute():
    attributes = written(TensorPythonMethods)
    assert {"__add__", "__getitem__", "to", "T", "item", "backward"} <= set(attributes)
    for name, value in attributes.items():
        assert og.Tensor.__dict__[name] is value, name


def test_hand_written_methods_are_named_as_tensors():
    for name, value in written(TensorPythonMethods).items():
        function = getattr(value, "__func__", value)
        if callable(function):
            assert function.__qualname__.startswith("Tensor."), name
            assert function.__module__ != "opgrad._tensor_methods", name


def test_marked_api_reaches_tensor_wrapped():
    assert len(PUBLIC_API) > 30
    attributes = {
        value.fget if isinstance(value, property) else value: name
        for name, value in vars(og.Tensor).items()
    }
    for impl in PUBLIC_API:
        # the class holds a wrapper going through __torch_function__, never the bare method
        assert impl not in attributes, impl.__name__
        public = og.Tensor.__dict__[impl.__name__]
        wrapper = public.fget if isinstance(public, property) else public
        assert wrapper.__name__ == impl.__name__


def test_join_refuses_a_name_written_twice_before_changing_anything():
    class Core:
        def size(self):
            return "core"

    class Body:
        def view(self):
            return "body"

        def size(self):
            return "body"

    with pytest.raises(TypeError, match="Core.size is written twice"):
        join(Core, Body)
    assert "view" not in vars(Core) and Core().size() == "core"


def test_join_refuses_an_attribute_of_two_bodies():
    class Core:
        pass

    class One:
        def view(self):
            return 1

    class Two:
        def view(self):
            return 2

    with pytest.raises(TypeError, match="Core.view is written twice"):
        join(Core, One, Two)
    assert "view" not in vars(Core)


def test_every_public_tensor_method_is_one_torch_has(torch):
    for name in dir(og.Tensor):
        if not name.startswith("_"):
            assert hasattr(torch.Tensor, name), name


def test_unary_operators_and_pow_are_named_as_torchs(torch):
    def scenario(lib):
        T = lib.Tensor
        return T.__neg__ is T.neg, T.__abs__ is T.abs, T.__pow__.__name__, T.__ipow__.__name__

    assert_same(torch, scenario)


def _seen_by_a_mode(lib, fn, attribute: str):
    """Whether the ``func`` a TorchFunctionMode receives first for ``fn()`` is the Tensor
    attribute ``attribute``, and its name."""
    overrides = importlib.import_module(lib.__name__ + ".overrides")

    class Record(overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen.append(func)
            return func(*args, **(kwargs or {}))

    with Record() as mode:
        fn()
    func = mode.seen[0]
    return func is getattr(lib.Tensor, attribute), func.__name__


#: an expression, and the Tensor attribute torch hands a mode for it
OPERATORS = {
    "x + y": (lambda x, y: x + y, "add"),
    "x * y": (lambda x, y: x * y, "mul"),
    "x - y": (lambda x, y: x - y, "sub"),
    "x / y": (lambda x, y: x / y, "div"),
    "x += y": (lambda x, y: x.__iadd__(y), "add_"),
    "2 - x": (lambda x, y: 2 - x, "__rsub__"),
    "2 / x": (lambda x, y: 2 / x, "__rdiv__"),
    "-x": (lambda x, y: -x, "neg"),
    "abs(x)": (lambda x, y: abs(x), "abs"),
    "x @ y": (lambda x, y: x @ y, "matmul"),
    "x ** 2": (lambda x, y: x**2, "__pow__"),
    "x **= 2": (lambda x, y: x.__ipow__(2), "__ipow__"),
    "x ** y": (lambda x, y: x**y, "__pow__"),
    "x < y": (lambda x, y: x < y, "lt"),
    "x >= y": (lambda x, y: x >= y, "ge"),
    "x == y": (lambda x, y: x == y, "__eq__"),
    "x[0]": (lambda x, y: x[0], "__getitem__"),
    "x.split(1)": (lambda x, y: x.split(1), "split"),
    "x.double()": (lambda x, y: x.double(), "double"),
}


@pytest.mark.parametrize("case", list(OPERATORS))
def test_a_mode_sees_each_operator_as_torchs_does(torch, case):
    fn, attribute = OPERATORS[case]

    def scenario(lib):
        x, y = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])
        return _seen_by_a_mode(lib, lambda: fn(x, y), attribute)

    assert_same(torch, scenario)


def test_a_subclass_overrides_a_method_and_an_operator(torch):
    def scenario(lib):
        class Sub(lib.Tensor):
            def add(self, other):
                return "Sub.add"

            def __mul__(self, other):
                return "Sub.__mul__"

        s = lib.Tensor._make_subclass(Sub, lib.tensor([1.0, 2.0]))
        total = s + 1  # Tensor.__add__, whose result the default handler makes a Sub
        return s.add(1), s * 2, type(total).__name__, total.tolist(), (s - 1).tolist()

    assert_same(torch, scenario)
