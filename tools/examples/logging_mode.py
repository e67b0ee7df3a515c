"""Print every aten op of one training step, forward and backward, with a dispatch mode.

Run: python tools/examples/logging_mode.py
"""

import opgrad as og
from opgrad.utils._python_dispatch import TorchDispatchMode


class LoggingMode(TorchDispatchMode):
    """Records the name of every aten op that reaches the Python key."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def training_step_ops() -> list:
    og.manual_seed(0)
    x, target = og.randn(4, 3), og.randn(4, 1)
    w = og.randn(3, 1, requires_grad=True)
    b = og.zeros(1, requires_grad=True)
    with LoggingMode() as mode:
        loss = ((x @ w + b - target) ** 2).mean()
        loss.backward()
    return mode.ops


if __name__ == "__main__":
    for name in training_step_ops():
        print(name)
