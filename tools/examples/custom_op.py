"""A custom op defined from Python, with its autograd formula added by register_autograd.

Run: python tools/examples/custom_op.py
"""

import opgrad as og


@og.library.custom_op("examples::softplus", mutates_args=())
def softplus(x: og.Tensor, beta: float = 1.0) -> og.Tensor:
    """log(1 + exp(beta * x)) / beta, computed with opgrad ops."""
    return ((x * beta).exp() + 1).log() / beta


def _setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * (x * ctx.beta).sigmoid(), None  # no gradient for the float beta


softplus.register_autograd(_backward, setup_context=_setup_context)


def demo():
    x = og.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = og.ops.examples.softplus(x, 2.0)
    y.sum().backward()
    return y, x.grad


if __name__ == "__main__":
    y, grad = demo()
    print("softplus:", y)
    print("grad:    ", grad)
