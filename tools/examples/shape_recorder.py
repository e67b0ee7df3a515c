"""A tensor subclass that records the shapes of every aten op applied to it.

The wrapper holds an ordinary tensor (``elem``); ``__torch_dispatch__`` unwraps
the arguments, runs the op, notes the shapes, and wraps the results again.
Autograd runs on the wrapper itself, so backward ops are recorded too.

Run: python tools/examples/shape_recorder.py
"""

import opgrad as og
from opgrad.utils._pytree import tree_map


class ShapeRecorder(og.Tensor):
    records = []

    @staticmethod
    def __new__(cls, elem):
        return og.Tensor._make_wrapper_subclass(
            cls, elem.shape, dtype=elem.dtype, requires_grad=elem.requires_grad
        )

    def __init__(self, elem):
        self.elem = elem

    def __repr__(self):
        return f"ShapeRecorder({self.elem})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(t):
            return t.elem if isinstance(t, ShapeRecorder) else t

        def wrap(t):
            return ShapeRecorder(t) if isinstance(t, og.Tensor) else t

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        shapes = [tuple(a.shape) for a in args if isinstance(a, og.Tensor)]
        cls.records.append((str(func), shapes))
        return tree_map(wrap, out)


def demo():
    ShapeRecorder.records = []
    x = ShapeRecorder(og.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True))
    w = ShapeRecorder(og.tensor([[0.5], [-1.0]]))
    loss = (x @ w).sum()
    loss.backward()
    return ShapeRecorder.records, x.grad


if __name__ == "__main__":
    records, grad = demo()
    for name, shapes in records:
        print(f"{name:<28} {shapes}")
    print("x.grad:", grad)
