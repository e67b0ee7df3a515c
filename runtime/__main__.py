"""opgrad in one screen: fit a tiny MLP, then look at the graph autograd built.

Run as ``python -m opgrad``. The model is a 2-16-1 ReLU network fitted by
plain SGD to synthetic data, y = relu(2 x0 - 3 x1) + 0.5 plus a little noise,
written exactly as it would be with ``import torch``. The second half prints
the backward graph of one step: each node's ``name()`` and the values it saved
for backward (its ``_saved_*`` fields), found by following ``next_functions``
from ``loss.grad_fn``.
"""

import opgrad as og


def describe(value):
    if isinstance(value, og.Tensor):  # a tensor: shape and dtype, or a 0-dim value
        shape = tuple(value.shape)
        return repr(value) if not shape else f"tensor{list(shape)} {value.dtype}"
    return repr(value)


def print_graph(root):
    """One line per node, indented by depth; iterative, so deep graphs are fine."""
    seen = set()
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        pad = "    " * depth
        if node in seen:
            print(f"{pad}{node.name()} (shown above)")
            continue
        seen.add(node)
        print(f"{pad}{node.name()}")
        for field in sorted(f for f in dir(node) if f.startswith("_saved_")):
            try:
                shown = describe(getattr(node, field))
            except Exception as exc:  # e.g. freed by an earlier backward
                shown = f"<{type(exc).__name__}: {exc}>"
            print(f"{pad}  . {field} = {shown}")
        children = [child for child, _ in node.next_functions if child is not None]
        stack.extend((child, depth + 1) for child in reversed(children))


def main():
    og.manual_seed(0)
    x = og.randn(128, 2, dtype=og.float32)
    w_true = og.tensor([[2.0], [-3.0]])
    y = (x @ w_true).relu() + 0.5 + 0.05 * og.randn(128, 1, dtype=og.float32)

    W1 = og.randn(2, 16, dtype=og.float32, requires_grad=True)
    b1 = og.randn(16, dtype=og.float32, requires_grad=True)
    W2 = og.randn(16, 1, dtype=og.float32, requires_grad=True)
    b2 = og.randn(1, dtype=og.float32, requires_grad=True)
    params = [W1, b1, W2, b2]
    with og.no_grad():  # scale the init down to ~1/sqrt(fan_in)
        W2 *= 0.25

    def loss_fn():
        h = (x @ W1 + b1).relu()
        return ((h @ W2 + b2 - y) ** 2).mean()

    lr, steps = 0.05, 200
    print(f"fitting a 2-16-1 MLP to {x.shape[0]} points with SGD, lr={lr}")
    for step in range(steps + 1):
        loss = loss_fn()
        if step % 20 == 0:
            print(f"  step {step:3d}  loss {loss.item():.4f}")
        if step == steps:
            break
        for p in params:
            p.grad = None
        loss.backward()
        with og.no_grad():
            for p in params:
                p -= lr * p.grad

    print("\nthe graph of one step, from loss.grad_fn (saved fields indented):")
    print_graph(loss_fn().grad_fn)


if __name__ == "__main__":
    main()
