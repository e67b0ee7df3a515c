"""Benchmark opgrad against hand-written numpy and PyTorch, in one run.

Every case is timed three ways:

* numpy  -- the same forward *and* backward math written out by hand with
            numpy arrays: the floor for a numpy-based autograd, since opgrad
            does this work plus its bookkeeping (tensors, nodes, dispatch);
* torch  -- PyTorch eager with autograd ("n/a" when torch is not installed);
* opgrad -- the identical autograd code as torch, with ``og`` for ``torch``.

Cases (``--case`` takes the name or the letter):

  a scalar  ``(x * w + b).sum().backward()`` on 1 float64 element: pure
            per-op overhead (dispatch, node creation, engine);
  b vec1k   the same on 1,000 float64 elements;
  c mlp     one training step (forward + backward) of an MLP 784-256-128-10,
            batch 64, float32, MSE loss: mostly BLAS time;
  d chain   a chain of 10,000 ``y = y * 1.0001`` on 100 float64 elements,
            then ``y.sum().backward()``: engine cost on a long graph.
  e rows    ``a[i] = tanh(0.5 * a[i-1])`` row by row over a 1000x8 clone of a
            leaf, then backward: in-place writes through views (CopySlices).
  f mode    case a inside an empty TorchDispatchMode; its "numpy" column is
            opgrad's case a without the mode, so opgrad/numpy is the cost of
            the mode (every forward and backward aten call goes through Python).
  g jvp     forward-mode AD of case a's expression: inside a dual level, x
            carries a tangent, ``(x * w + b).sum()`` is computed and its
            tangent unpacked (``(tx * w).sum()`` by hand in numpy).
  h cnn     one training step of a small CNN, batch 32, 3x32x32, float32: conv2d(16, 3x3)
            -> relu -> max_pool2d(2) -> conv2d(32, 3x3) -> relu -> adaptive_avg_pool2d(1)
            -> linear(10) -> cross_entropy. Its "numpy" column calls opgrad's convolution
            and pooling kernels directly (the same numpy work without the autograd).
  i xent    ``F.cross_entropy(x, t).backward()`` on 64 x 1,000 float32 logits: the
            softmax family's row kernels (log_softmax, nll_loss and their backwards).
  s sort    ``x.sort(dim=1)[0].backward(w)`` on a 256 x 1,024 float32 tensor: a stable
            argsort per row, a gather of the values and a scatter of the gradient.
  u cumsum  ``x.cumsum(1).backward(w)`` on a 256 x 1,024 float32 tensor: a running sum per
            row and the reversed running sum of the gradient (flip, cumsum, flip).

After the table, one line says how much memory case c's forward leaves allocated for
backward (saved activations and graph, traced by tracemalloc), plain and with the three
layers in one non-reentrant ``opgrad.utils.checkpoint``.

Leaf gradients are set to None between iterations, as a training loop does.
Before timing, each autograd library's gradients are compared once with the
numpy ones (``np.allclose``, rtol 1e-4), so that the times compare equal work.

Why one thread: numpy's BLAS and torch's intra-op pool would otherwise use
different thread counts, and on a 2-core machine thread start-up and
contention dominate small ops. With exactly one thread on every side the
ratios measure library overhead, not scheduling. The *_NUM_THREADS variables
are set before numpy is imported, torch.set_num_threads(1) is called, and
threadpoolctl (when installed) confirms what the loaded libraries use.

Timing is timeit-style: a warm-up call, a calibrated loop count per repeat,
and the minimum per-call time over the repeats (the least disturbed run). The
columns' loops are interleaved (numpy, torch, opgrad, numpy, ...), so a slow
spell of a shared machine hits all three alike and the ratios stay steady.
The garbage collector stays enabled, as it is in a real training loop.

The chain cases (d and e) run each library in a fresh process of its own: numpy and
opgrad interleaved in one where torch is never imported, torch alone in another. In one
shared process opgrad's garbage collections would also walk torch's heap (case d then
reads twice its real cost), and torch would pay for opgrad's.

Usage:  python tools/bench.py [--quick] [--case NAME ...] [--traceback]
        (``--child CASE --columns numpy,opgrad`` is how the script runs a chain case's
        process: it prints that process's times as one JSON line)

OPGRAD_BENCH_FAKE=torch runs the "opgrad" column with torch imported as og;
it exists only to test this script while opgrad is not importable.
"""

import os

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
for _var in _THREAD_VARS:
    os.environ[_var] = "1"  # must happen before numpy (and torch) load BLAS

import argparse  # noqa: E402
import importlib  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

# The libraries are imported by load_libraries: a chain case's process imports only
# the ones its columns need.
torch = None
og = None
OG_IMPORT_ERROR = None


def load_libraries(with_torch: bool = True, with_opgrad: bool = True) -> None:
    """Import torch (one thread) and opgrad as the columns need; None where missing."""
    global torch, og, OG_IMPORT_ERROR
    fake = os.environ.get("OPGRAD_BENCH_FAKE") == "torch"
    if with_torch or (with_opgrad and fake):
        try:
            import torch as torch_module
        except ImportError:
            torch_module = None
        else:
            torch_module.set_num_threads(1)
            try:
                torch_module.set_num_interop_threads(1)  # CPU backward runs on the caller
            except RuntimeError:  # already set in this process
                pass
        if with_torch:
            torch = torch_module
    if with_opgrad:
        if fake:
            og = torch_module  # testing this script only
            return
        try:
            import opgrad as og_module
        except Exception as exc:  # report, and still run numpy and torch
            OG_IMPORT_ERROR = f"{type(exc).__name__}: {exc}"
        else:
            og = og_module


RTOL = 1e-4


def to_numpy(t):
    return t.detach().numpy()


def check_grads(label, got, expected):
    """Raise AssertionError unless every gradient matches the numpy one."""
    for name, g, ref in zip(label, got, expected):
        if g is None:
            raise AssertionError(f"{name}.grad is None")
        g = to_numpy(g)
        if g.shape != ref.shape or g.dtype != ref.dtype:
            raise AssertionError(
                f"{name}.grad is {g.shape} {g.dtype}, expected {ref.shape} {ref.dtype}"
            )
        # atol scaled to the gradient's size: float32 sums that cancel to ~0
        # differ in the last bits between summation orders.
        atol = 1e-6 * float(np.abs(ref).max())
        if not np.allclose(g, ref, rtol=RTOL, atol=atol):
            err = float(np.abs(g - ref).max())
            raise AssertionError(f"{name}.grad differs from numpy (max |diff| {err:g})")


class AffineCase:
    """(x * w + b).sum().backward() on n float64 elements."""

    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.x, self.w, self.b = (rng.standard_normal(n) for _ in range(3))

    def numpy_step(self):
        x, w, b = self.x, self.w, self.b

        def step():
            out = x * w + b
            out.sum()
            g = np.ones_like(out)  # d sum / d out
            return g * w, g * x, g  # grads of x, w, b

        return step

    def autograd_step(self, mod):
        x, w, b = (mod.tensor(a, requires_grad=True) for a in (self.x, self.w, self.b))

        def step():
            x.grad = None
            w.grad = None
            b.grad = None
            (x * w + b).sum().backward()

        step.check = lambda: check_grads("xwb", (x.grad, w.grad, b.grad), self.numpy_step()())
        return step


class MLPCase:
    """One SGD-free training step of a 784-256-128-10 MLP, batch 64, float32."""

    def __init__(self):
        rng = np.random.default_rng(0)
        f32 = np.float32
        self.x = rng.standard_normal((64, 784), dtype=f32)
        self.y = rng.standard_normal((64, 10), dtype=f32)
        self.params = []
        for fan_in, fan_out in ((784, 256), (256, 128), (128, 10)):
            scale = f32(1.0 / np.sqrt(fan_in))
            self.params.append(rng.standard_normal((fan_in, fan_out), dtype=f32) * scale)
            self.params.append(rng.standard_normal(fan_out, dtype=f32) * scale)

    def numpy_step(self):
        x, y = self.x, self.y
        W1, b1, W2, b2, W3, b3 = self.params

        def step():
            z1 = x @ W1 + b1
            h1 = np.maximum(z1, 0)
            z2 = h1 @ W2 + b2
            h2 = np.maximum(z2, 0)
            out = h2 @ W3 + b3
            diff = out - y
            (diff**2).mean()
            g_out = diff * (2 / diff.size)
            gW3, gb3, g_h2 = h2.T @ g_out, g_out.sum(0), g_out @ W3.T
            g_z2 = g_h2 * (z2 > 0)
            gW2, gb2, g_h1 = h1.T @ g_z2, g_z2.sum(0), g_z2 @ W2.T
            g_z1 = g_h1 * (z1 > 0)
            gW1, gb1 = x.T @ g_z1, g_z1.sum(0)
            return gW1, gb1, gW2, gb2, gW3, gb3

        return step

    def autograd_step(self, mod):
        x, y = mod.tensor(self.x), mod.tensor(self.y)
        params = [mod.tensor(p, requires_grad=True) for p in self.params]
        W1, b1, W2, b2, W3, b3 = params

        def step():
            for p in params:
                p.grad = None
            h1 = (x @ W1 + b1).relu()
            h2 = (h1 @ W2 + b2).relu()
            out = h2 @ W3 + b3
            loss = ((out - y) ** 2).mean()
            loss.backward()

        step.check = lambda: check_grads(
            ("W1", "b1", "W2", "b2", "W3", "b3"),
            [p.grad for p in params],
            self.numpy_step()(),
        )
        return step


class ChainCase:
    """A chain of 10,000 multiplications on 100 float64 elements."""

    LENGTH = 10_000
    FACTOR = 1.0001

    def __init__(self):
        self.x = np.random.default_rng(0).standard_normal(100)

    def numpy_step(self):
        x, c, length = self.x, self.FACTOR, self.LENGTH

        def step():
            y = x
            for _ in range(length):
                y = y * c
            y.sum()
            g = np.ones_like(y)
            for _ in range(length):  # d(y * c)/dy = c, once per link
                g = g * c
            return (g,)

        return step

    def autograd_step(self, mod):
        x = mod.tensor(self.x, requires_grad=True)
        c, length = self.FACTOR, self.LENGTH

        def step():
            x.grad = None
            y = x
            for _ in range(length):
                y = y * c
            y.sum().backward()

        step.check = lambda: check_grads("x", (x.grad,), self.numpy_step()())
        return step


class RowsCase:
    """In place, row by row: ``a[i] = tanh(0.5 * a[i-1])`` over 1,000 rows, then backward.

    Every assignment writes through a view of ``a``, so autograd rewrites the
    history of ``a`` each time (CopySlices) and backward runs 999 of them.
    """

    ROWS, COLS = 1000, 8

    def __init__(self):
        self.x = np.random.default_rng(0).standard_normal((self.ROWS, self.COLS))

    def numpy_step(self):
        x = self.x

        def step():
            a = x.copy()
            for i in range(1, len(a)):
                a[i] = np.tanh(0.5 * a[i - 1])
            a.sum()
            # dL/da[i] = 1 + dL/da[i+1] * d a[i+1] / d a[i]; rows >= 1 of x are overwritten
            g = np.ones(a.shape[1])
            for i in range(len(a) - 1, 0, -1):
                g = 1 + g * 0.5 * (1 - a[i] * a[i])
            grad = np.zeros_like(x)
            grad[0] = g
            return (grad,)

        return step

    def autograd_step(self, mod):
        x = mod.tensor(self.x, requires_grad=True)

        def step():
            x.grad = None
            a = x.clone()
            for i in range(1, self.ROWS):
                a[i] = (a[i - 1] * 0.5).tanh()
            a.sum().backward()

        step.check = lambda: check_grads("x", (x.grad,), self.numpy_step()())
        return step


class ModeCase(AffineCase):
    """Case a under an empty TorchDispatchMode: what a Python mode adds per op.

    The "numpy" column is case a without the mode, so opgrad/numpy reads as
    the slowdown an empty mode causes; torch's column runs torch's own mode.
    """

    def __init__(self):
        super().__init__(1)

    def numpy_step(self):
        import opgrad as og

        step = super().autograd_step(og)
        step.check = lambda: None
        return step

    def autograd_step(self, mod):
        dispatch = importlib.import_module(mod.__name__ + ".utils._python_dispatch")

        class Empty(dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        inner = super().autograd_step(mod)
        mode = Empty()

        def step():
            with mode:
                inner()

        step.check = lambda: None  # the gradients are those of case a, checked there
        return step


class JvpCase(AffineCase):
    """Case a's expression in forward mode: the tangent of ``(x*w+b).sum()`` along ``tx``."""

    def __init__(self):
        super().__init__(1)
        self.tx = np.random.default_rng(1).standard_normal(1)

    def numpy_step(self):
        x, w, b, tx = self.x, self.w, self.b, self.tx

        def step():
            (x * w + b).sum()
            return ((tx * w).sum(),)

        return step

    def autograd_step(self, mod):
        fwAD = importlib.import_module(mod.__name__ + ".autograd.forward_ad")
        x, w, b, tx = (mod.tensor(a) for a in (self.x, self.w, self.b, self.tx))
        tangent = [None]

        def step():
            with fwAD.dual_level():
                dual = fwAD.make_dual(x, tx)
                tangent[0] = fwAD.unpack_dual((dual * w + b).sum()).tangent

        step.check = lambda: check_grads(("tangent",), tangent, self.numpy_step()())
        return step


class CNNCase:
    """One training step of conv -> relu -> maxpool -> conv -> relu -> global avg -> linear
    -> cross_entropy, batch 32 of 3x32x32 float32 images."""

    def __init__(self):
        rng = np.random.default_rng(0)
        f32 = np.float32
        self.x = rng.standard_normal((32, 3, 32, 32), dtype=f32)
        self.target = rng.integers(0, 10, 32)
        self.params = [
            rng.standard_normal((16, 3, 3, 3), dtype=f32) * f32(0.2),
            rng.standard_normal(16, dtype=f32) * f32(0.1),
            rng.standard_normal((32, 16, 3, 3), dtype=f32) * f32(0.1),
            rng.standard_normal(32, dtype=f32) * f32(0.1),
            rng.standard_normal((10, 32), dtype=f32) * f32(0.2),
            rng.standard_normal(10, dtype=f32) * f32(0.1),
        ]

    def numpy_step(self):
        from opgrad import conv_kernels as ck, pool_kernels as pk

        x, t = self.x, self.target
        w1, b1, w2, b2, w3, b3 = self.params
        conv = (1, 1), (1, 1), (1, 1), False, (0, 0), 1

        def step():
            z1 = ck.convolution(x, w1, b1, *conv)
            h1 = np.maximum(z1, 0)
            p1, idx = pk.max_pool_with_indices(h1, (2, 2), (), (0,), (1,), False, 2)
            z2 = ck.convolution(p1, w2, b2, *conv)
            h2 = np.maximum(z2, 0)
            g = h2.mean(axis=(2, 3))
            logits = g @ w3.T + b3
            shifted = logits - logits.max(1, keepdims=True)
            probs = np.exp(shifted)
            probs /= probs.sum(1, keepdims=True)
            g_logits = probs
            g_logits[np.arange(len(t)), t] -= 1
            g_logits /= len(t)
            gw3, gb3, g_g = g_logits.T @ g, g_logits.sum(0), g_logits @ w3
            g_h2 = np.broadcast_to(g_g[:, :, None, None] / (h2.shape[2] * h2.shape[3]), h2.shape)
            g_z2 = g_h2 * (z2 > 0)
            g_p1, gw2, gb2 = ck.convolution_backward(g_z2, p1, w2, (32,), *conv, (True,) * 3)
            g_h1 = pk.max_pool_with_indices_backward(g_p1, h1, idx, 2)
            g_z1 = g_h1 * (z1 > 0)
            _, gw1, gb1 = ck.convolution_backward(g_z1, x, w1, (16,), *conv, (False, True, True))
            return gw1, gb1, gw2, gb2, gw3, gb3

        return step

    def autograd_step(self, mod):
        F = mod.nn.functional
        x, t = mod.tensor(self.x), mod.tensor(self.target)
        params = [mod.tensor(p, requires_grad=True) for p in self.params]
        w1, b1, w2, b2, w3, b3 = params

        def step():
            for p in params:
                p.grad = None
            h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
            h = F.relu(F.conv2d(h, w2, b2, padding=1))
            h = F.adaptive_avg_pool2d(h, 1).flatten(1)
            F.cross_entropy(F.linear(h, w3, b3), t).backward()

        step.check = lambda: check_grads(
            ("w1", "b1", "w2", "b2", "w3", "b3"),
            [p.grad for p in params],
            self.numpy_step()(),
        )
        return step


class CrossEntropyCase:
    """log_softmax + nll_loss (F.cross_entropy) forward and backward on 64 rows of 1,000
    float32 logits: two row-wise kernels, no matmul."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.logits = rng.standard_normal((64, 1000), dtype=np.float32)
        self.target = rng.integers(0, 1000, 64)

    def numpy_step(self):
        x, t = self.logits, self.target
        rows = np.arange(len(t))

        def step():
            shifted = x - x.max(1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
            loss = -log_probs[rows, t].mean()
            grad = np.exp(log_probs)
            grad[rows, t] -= 1
            grad /= len(t)
            return loss, grad

        return lambda: step()[1:]

    def autograd_step(self, mod):
        F = mod.nn.functional
        x = mod.tensor(self.logits, requires_grad=True)
        t = mod.tensor(self.target)

        def step():
            x.grad = None
            F.cross_entropy(x, t).backward()

        step.check = lambda: check_grads(("x",), (x.grad,), self.numpy_step()())
        return step


class SortCase:
    """x.sort(dim=1) forward and backward on a 256x1024 float32 tensor: a stable argsort per
    row, a gather of the values and, backward, a scatter of the gradient."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((256, 1024), dtype=np.float32)
        self.weights = rng.standard_normal((256, 1024), dtype=np.float32)

    def numpy_step(self):
        x, w = self.x, self.weights
        rows = np.arange(x.shape[0])[:, None]

        def step():
            order = np.argsort(x, axis=1, kind="stable")
            values = np.take_along_axis(x, order, 1)
            grad = np.zeros_like(x)
            grad[rows, order] = w
            return values, grad

        return lambda: step()[1:]

    def autograd_step(self, mod):
        x = mod.tensor(self.x, requires_grad=True)
        w = mod.tensor(self.weights)

        def step():
            x.grad = None
            values, _ = x.sort(dim=1)
            values.backward(w)

        step.check = lambda: check_grads(("x",), (x.grad,), self.numpy_step()())
        return step


class CumsumCase:
    """x.cumsum(1) forward and backward on a 256x1024 float32 tensor: a running sum per row
    (accumulated in float64, as torch's CPU kernel) and, backward, the reversed running sum of
    the gradient."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((256, 1024), dtype=np.float32)
        self.weights = rng.standard_normal((256, 1024), dtype=np.float32)

    def numpy_step(self):
        x, w = self.x, self.weights

        def step():
            # widened first: numpy's accumulate casting as it goes is three times slower
            values = np.cumsum(x.astype(np.float64), axis=1).astype(np.float32)
            reversed_sums = np.cumsum(w[:, ::-1].astype(np.float64), axis=1)[:, ::-1]
            return values, reversed_sums.astype(np.float32)

        return lambda: step()[1:]

    def autograd_step(self, mod):
        x = mod.tensor(self.x, requires_grad=True)
        w = mod.tensor(self.weights)

        def step():
            x.grad = None
            x.cumsum(1).backward(w)

        step.check = lambda: check_grads(("x",), (x.grad,), self.numpy_step()())
        return step


class MaxDimCase:
    """x.max(dim=1) forward and backward on a 256x1024 float32 tensor: the largest value of
    each row with its index and, backward, the gradient sent to that index."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((256, 1024), dtype=np.float32)
        self.weights = rng.standard_normal(256, dtype=np.float32)

    def numpy_step(self):
        x, w = self.x, self.weights
        rows = np.arange(x.shape[0])

        def step():
            index = np.argmax(x, axis=1)
            values = x[rows, index]
            grad = np.zeros_like(x)
            grad[rows, index] = w
            return values, grad

        return lambda: step()[1:]

    def autograd_step(self, mod):
        x = mod.tensor(self.x, requires_grad=True)
        w = mod.tensor(self.weights)

        def step():
            x.grad = None
            values, _ = x.max(dim=1)
            values.backward(w)

        step.check = lambda: check_grads(("x",), (x.grad,), self.numpy_step()())
        return step


class GatherCase:
    """x.gather(1, index) forward and backward on a 256x1024 float32 tensor with a random
    256x1024 index: a read per element and, backward, a scatter-add of the gradient."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((256, 1024), dtype=np.float32)
        self.index = rng.integers(0, 1024, (256, 1024))
        self.weights = rng.standard_normal((256, 1024), dtype=np.float32)

    def numpy_step(self):
        x, index, w = self.x, self.index, self.weights
        flat = (np.arange(x.shape[0])[:, None] * x.shape[1] + index).ravel()

        def step():
            values = np.take_along_axis(x, index, 1)
            grad = np.bincount(flat, w.ravel(), x.size).astype(np.float32).reshape(x.shape)
            return values, grad

        return lambda: step()[1:]

    def autograd_step(self, mod):
        x = mod.tensor(self.x, requires_grad=True)
        index = mod.tensor(self.index)
        w = mod.tensor(self.weights)

        def step():
            x.grad = None
            x.gather(1, index).backward(w)

        step.check = lambda: check_grads(("x",), (x.grad,), self.numpy_step()())
        return step


CASES = {
    # name: (letter, label, factory)
    "scalar": ("a", "a  (x*w+b).sum() bwd, 1 f64", lambda: AffineCase(1)),
    "vec1k": ("b", "b  (x*w+b).sum() bwd, 1000 f64", lambda: AffineCase(1000)),
    "mlp": ("c", "c  MLP 784-256-128-10 b64 f32 step", MLPCase),
    "chain": ("d", "d  10k-op mul chain fwd+bwd", ChainCase),
    "rows": ("e", "e  a[i] = f(a[i-1]), 1000 rows, bwd", RowsCase),
    "mode": ("f", "f  case a inside an empty dispatch mode", ModeCase),
    "jvp": ("g", "g  jvp of case a's expression, 1 f64", JvpCase),
    "cnn": ("h", "h  CNN b32 3x32x32 f32 step", CNNCase),
    "xent": ("i", "i  cross_entropy 64x1000 f32 fwd+bwd", CrossEntropyCase),
    "sort": ("s", "s  x.sort(dim=1) 256x1024 f32 fwd+bwd", SortCase),
    "cumsum": ("u", "u  x.cumsum(1) 256x1024 f32 fwd+bwd", CumsumCase),
    "max_dim": ("v", "v  x.max(dim=1) 256x1024 f32 fwd+bwd", MaxDimCase),
    "gather": ("w", "w  x.gather(1, idx) 256x1024 f32 fwd+bwd", GatherCase),
}


#: timed with each library in its own process (see the module docstring)
OWN_PROCESS_CASES = ("chain", "rows")
#: the processes of a chain case: numpy and opgrad together, torch alone
PROCESS_COLUMNS = (("numpy", "opgrad"), ("torch",))


def calibrate(fn, budget, repeats, min_repeats):
    """(calls per timed loop, loops) for ~budget seconds of fn, like timeit.autorange."""
    gc.collect()
    fn()  # warm-up: first-call caches, lazy imports
    number, elapsed = 1, 0.0
    while True:  # calibrate on loops of >= 20 ms
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= 0.02:
            break
        number *= 2
    per_call = elapsed / number
    per_repeat = budget / repeats
    if per_call > per_repeat:  # slow case: one call per loop, fewer loops
        return 1, max(min_repeats, int(budget / per_call))
    return max(1, int(per_repeat / per_call)), repeats


def measure_interleaved(fns: dict, budget, repeats, min_repeats) -> dict:
    """Min per-call seconds of each fn, timing one loop of each in turn per round, so
    that a slower spell of the machine hits every column alike (the ratios are what
    the issues gate on)."""
    plans = {name: calibrate(fn, budget, repeats, min_repeats) for name, fn in fns.items()}
    best = {name: float("inf") for name in fns}
    for round_ in range(max(loops for _, loops in plans.values())):
        for name, fn in fns.items():
            number, loops = plans[name]
            if round_ >= loops:
                continue
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def fmt_time(seconds):
    if seconds is None:
        return "n/a"
    if isinstance(seconds, str):
        return seconds
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(num, den):
    if not isinstance(num, float) or not isinstance(den, float):
        return "n/a"
    ratio = num / den
    # two decimals below 10x, where the issue gates sit (1.05x, 1.3x, 1.5x)
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"


def print_environment():
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus")
    blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    print(f"numpy {np.__version__}, BLAS {blas.get('name', '?')} {blas.get('version', '')}")
    if torch is None:
        print("torch: not installed (its column shows n/a)")
    else:
        print(
            f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()},"
            f" inter-op threads {torch.get_num_interop_threads()}"
        )
    if os.environ.get("OPGRAD_BENCH_FAKE") == "torch":
        print("opgrad: FAKE -- torch imported as og (OPGRAD_BENCH_FAKE=torch)")
    elif og is None:
        print(f"opgrad: not importable ({OG_IMPORT_ERROR}); its column shows n/a")
    else:
        version = getattr(og, "__version__", "?")
        print(f"opgrad {version} from {os.path.dirname(getattr(og, '__file__', '?'))}")
    print("env: " + ", ".join(f"{v}={os.environ[v]}" for v in _THREAD_VARS))
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        value = os.environ.get(var)
        print(f"env: {var} {'is set: ' + value if value is not None else 'is not set'}")
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        print("threadpoolctl not installed: thread-count check skipped")
        return
    pools = threadpool_info()
    for pool in pools:
        lib = os.path.basename(pool.get("filepath", "?"))
        print(f"threadpool: {pool['internal_api']} {lib}: {pool['num_threads']} thread(s)")
    if any(pool["num_threads"] != 1 for pool in pools):
        print("WARNING: a thread pool is not single-threaded; ratios are unreliable")


def run_case(name, args, columns=("numpy", "torch", "opgrad")):
    """Time ``columns`` of one case in this process, interleaved: (label, times, notes)."""
    _, label, factory = CASES[name]
    case = factory()
    budget, repeats, min_repeats = (0.4, 3, 1) if args.quick else (2.0, 5, 3)
    times, notes = {}, []
    steps = {"numpy": case.numpy_step()} if "numpy" in columns else {}
    for column, mod in (("torch", torch), ("opgrad", og)):
        if column not in columns:
            continue
        if mod is None:
            times[column] = None
            continue
        try:
            step = case.autograd_step(mod)
            step()
            step.check()
            steps[column] = step
        except AssertionError as exc:
            times[column] = "WRONG"
            notes.append(f"{column}: gradient check failed: {exc}")
        except Exception as exc:
            times[column] = "error"
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{os.path.relpath(frame.filename)}:{frame.lineno}"
            notes.append(f"{column}: {type(exc).__name__}: {exc}  (at {where})")
            if args.traceback:
                traceback.print_exc()
    times.update(measure_interleaved(steps, budget, repeats, min_repeats))
    return label, times, notes


def run_case_in_own_processes(name, args):
    """Time a chain case with numpy+opgrad in one fresh process and torch in another."""
    _, label, _ = CASES[name]
    times, notes = {}, []
    for columns in PROCESS_COLUMNS:
        if columns == ("torch",) and torch is None:
            times["torch"] = None
            continue
        command = [sys.executable, os.path.abspath(__file__), "--child", name]
        command += ["--columns", ",".join(columns)]
        command += ["--quick"] if args.quick else []
        command += ["--traceback"] if args.traceback else []
        proc = subprocess.run(command, capture_output=True, text=True)
        if args.traceback:
            sys.stderr.write(proc.stderr)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            times.update({column: "error" for column in columns})
            notes.append(f"{'+'.join(columns)} process failed: {last}")
            continue
        result = json.loads(lines[-1])
        times.update(result["times"])
        notes += result["notes"]
    return label, times, notes


def child_main(args) -> int:
    """One process of a chain case: import only what its columns need, print the times
    as one JSON line."""
    columns = tuple(args.columns.split(","))
    load_libraries(with_torch="torch" in columns, with_opgrad="opgrad" in columns)
    _, times, notes = run_case(args.child, args, columns)
    fake = os.environ.get("OPGRAD_BENCH_FAKE") == "torch"
    if "torch" not in columns and "torch" in sys.modules and not fake:
        notes.append("torch was imported in the process meant to be free of it")
    print(json.dumps({"times": times, "notes": notes}))
    return 0


# ---- activation checkpointing: memory the graph holds -----------------------------------


def checkpoint_memory() -> None:
    """Print, in one line, how much memory case c's MLP keeps for backward after its
    forward, without and with activation checkpointing (the three layers in one
    non-reentrant checkpoint): the bytes allocated during the forward that are still
    alive (saved activations and the graph), as traced by tracemalloc. opgrad only:
    tracemalloc sees numpy's buffers, not torch's."""
    import tracemalloc

    if og is None:
        print("\ncheckpointed MLP memory: n/a (opgrad not importable)")
        return
    case = MLPCase()
    x, y = og.tensor(case.x), og.tensor(case.y)
    params = [og.tensor(p, requires_grad=True) for p in case.params]
    W1, b1, W2, b2, W3, b3 = params

    def mlp(inp):
        h1 = (inp @ W1 + b1).relu()
        h2 = (h1 @ W2 + b2).relu()
        return h2 @ W3 + b3

    def run(checkpointed):
        for p in params:
            p.grad = None
        gc.collect()
        tracemalloc.start()
        try:
            if checkpointed:
                out = og.utils.checkpoint.checkpoint(mlp, x, use_reentrant=False)
            else:
                out = mlp(x)
            loss = ((out - y) ** 2).mean()
            del out
            held = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        loss.backward()
        return held, [p.grad.numpy().copy() for p in params]

    plain, plain_grads = run(False)
    checkpointed, grads = run(True)
    same = all(np.allclose(a, b, rtol=RTOL) for a, b in zip(plain_grads, grads))
    print(
        "\ncheckpointed MLP (case c's forward, opgrad): memory held for backward "
        f"plain {plain / 1024:.0f} KiB, checkpointed {checkpointed / 1024:.0f} KiB "
        f"({checkpointed / plain:.2f}x; tracemalloc)"
        + ("" if same else "  WRONG: gradients differ from the plain run")
    )


# ---- the 1,000,000-op chain: time and peak memory, each library in its own process ----

LONG_CHAIN = 1_000_000
_LONG_CHAIN_CHILD = """
import resource, sys, time
lib = sys.argv[1]
if lib == "torch":
    import torch as m
    torch_threads = m.set_num_threads(1)
else:
    import opgrad as m
x = m.tensor([1.0], dtype=m.float64, requires_grad=True)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
y = x
for _ in range({n}):
    y = y * 1.0000001
mid = time.perf_counter()
y.sum().backward()
end = time.perf_counter()
del y
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(mid - start, end - mid, (peak - base) / 1024.0, float(x.grad))
"""


def long_chain(n: int = LONG_CHAIN) -> None:
    """Print forward/backward time and peak RSS growth of an n-op chain, per library."""
    print(f"\n{n:,}-op chain (y = y * c on one float64 element), one process per library:")
    print(f"  {'library':<8} {'forward':>10} {'backward':>10} {'peak RSS growth':>16}")
    for lib in ("torch", "opgrad"):
        if lib == "torch" and torch is None:
            print(f"  {lib:<8} {'n/a':>10}")
            continue
        proc = subprocess.run(
            [sys.executable, "-c", _LONG_CHAIN_CHILD.format(n=n), lib],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print(f"  {lib:<8} error: {proc.stderr.strip().splitlines()[-1]}")
            continue
        fwd, bwd, mib, _ = (float(v) for v in proc.stdout.split())
        print(f"  {lib:<8} {fwd:>9.2f}s {bwd:>9.2f}s {mib:>13.0f} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--long-chain",
        action="store_true",
        help=f"also run the {LONG_CHAIN:,}-op chain (time and peak memory; ~1 min)",
    )
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument("--traceback", action="store_true", help="print full tracebacks of errors")
    parser.add_argument("--child", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--columns", default="numpy,torch,opgrad", help=argparse.SUPPRESS)
    choices = sorted(set(CASES) | {letter for letter, _, _ in CASES.values()})
    parser.add_argument(
        "--case",
        action="append",
        choices=choices,
        metavar="NAME",
        help=f"run only this case (repeatable): {', '.join(choices)}",
    )
    args = parser.parse_args()
    if args.child:
        return child_main(args)
    load_libraries()
    letters = {letter: name for name, (letter, _, _) in CASES.items()}
    names = [letters.get(c, c) for c in args.case] if args.case else list(CASES)

    print_environment()
    print()
    header = ("case", "numpy", "torch", "opgrad", "opgrad/numpy", "opgrad/torch")
    widths = (36, 10, 10, 10, 12, 12)
    row = "  ".join(f"{{:<{widths[0]}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    print(row.format(*header))
    print(row.format(*("-" * w for w in widths)))
    all_notes = []
    for name in dict.fromkeys(names):
        if name in OWN_PROCESS_CASES:
            label, t, notes = run_case_in_own_processes(name, args)
        else:
            label, t, notes = run_case(name, args)
        cells = (
            label,
            fmt_time(t["numpy"]),
            fmt_time(t["torch"]),
            fmt_time(t["opgrad"]),
            fmt_ratio(t["opgrad"], t["numpy"]),
            fmt_ratio(t["opgrad"], t["torch"]),
        )
        print(row.format(*cells), flush=True)
        all_notes += [f"{label.split()[0]}: {note}" for note in notes]
    if all_notes:
        print()
        print("\n".join(all_notes))
    print("\ntimes: min over repeats, per call; one thread everywhere")
    isolated = [CASES[name][0] for name in names if name in OWN_PROCESS_CASES]
    if isolated:
        print(
            f"case{'s' if len(isolated) > 1 else ''} {', '.join(isolated)}: numpy and opgrad "
            "in one process without torch, torch in its own"
        )
    checkpoint_memory()
    if args.long_chain:
        long_chain()
    return 1 if all_notes else 0


if __name__ == "__main__":
    sys.exit(main())
