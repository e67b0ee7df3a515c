"""Helpers that derivatives.yaml formulas call (PyTorch's FunctionsManual).

Every helper is built from dispatched ops, so formulas stay differentiable
(create_graph) and a dispatch mode sees each aten call they make. Codegen
reads this file's top-level function names to validate formulas.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .. import dispatcher
from .._tls import state as _tls
from ..dispatch_keys import PYTHON, TORCH_FUNCTION
from ..dtypes import FROM_NUMPY
from ..generated import ops as aten
from .. import numpy_kernels as k
from ..numpy_kernels import wrap_dim
from ..plain import PLAIN_FLOATS, PLAIN_KEYS
from ..tensor import TENSOR_CLASSES, Tensor, _make
from .views import as_view

_OBSERVERS = PYTHON | TORCH_FUNCTION


def _dtype_of(t):
    return FROM_NUMPY[t._data.dtype]


def _unobserved(a, b=None) -> bool:
    """Whether a helper may compute straight with numpy rather than through aten ops:
    no graph is recorded (no create_graph), no forward-AD level is open, no dispatch
    mode, torch-function mode or tensor subclass could see the aten calls, no user
    kernel replaces an aten op, and inference mode is off (its views are no views).
    The result is then the one the aten calls would give (values, dtype, layout,
    view-ness), at one numpy call instead of a dispatcher round trip per op."""
    if (
        _tls.plain  # no mode, level, user kernel or inference mode: the common case first
        and not _tls.grad_enabled
        and a._keys == PLAIN_KEYS
        and a.__class__ in TENSOR_CLASSES
        and (b is None or (b._keys == PLAIN_KEYS and b.__class__ in TENSOR_CLASSES))
    ):
        return True
    keys = _tls.include | a._keys
    if b is not None:
        keys |= b._keys
        if b.__class__ not in TENSOR_CLASSES:
            return False
    return not (
        keys & _OBSERVERS
        or _tls.grad_enabled
        or _tls.fw_active
        or _tls.inference_mode
        or dispatcher.user_aten_kernels
        or a.__class__ not in TENSOR_CLASSES
    )


_SUM_TO_PLANS: dict = {}
_PLAIN_SUM_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.longdouble))


def _sum_to_plan(sizes: tuple, shape: tuple) -> tuple:
    """The dims ``sum_to`` reduces (kept) and how many leading ones the view then drops,
    remembered per shape pair: a training loop meets the same few."""
    leading = len(sizes) - len(shape)
    reduce_dims = list(range(leading))
    for i, size in enumerate(shape):
        if size == 1 and sizes[leading + i] != 1:
            reduce_dims.append(leading + i)
    plan = (tuple(reduce_dims), leading)
    if len(_SUM_TO_PLANS) < 1024:
        _SUM_TO_PLANS[(sizes, shape)] = plan
    return plan


def linear_in_first(helper):
    """Marks ``helper`` linear in its first argument (``helper(0, ...)`` is 0), for
    codegen, which then drops a forward formula's call on a zero tangent."""
    return helper


@linear_in_first
def sum_to(grad, shape: Sequence[int]):
    """Sum ``grad`` down to ``shape`` (the reverse of broadcasting)."""
    if shape.__class__ is not tuple:
        shape = tuple(shape)
    data = grad._data
    sizes = data.shape
    if sizes == shape:
        return grad
    if not shape:
        return aten.sum(grad)  # as PyTorch: a full reduction (SumBackward0), not sum + view
    plan = _SUM_TO_PLANS.get((sizes, shape))
    if plan is None:
        plan = _sum_to_plan(sizes, shape)
    reduce_dims, leading = plan
    # (not float16: its sum accumulates in float32, which the dispatched sum does)
    if data.dtype in _PLAIN_SUM_DTYPES and _unobserved(grad):
        # sum_dim_IntList(keepdim=True), then a view of it without the leading dims
        summed = _make(np.add.reduce(data, reduce_dims, None, None, True))
        if leading > 0:
            return as_view(summed, _make(summed._data.reshape(shape)))
        return summed
    if reduce_dims:
        grad = aten.sum_dim_IntList(grad, tuple(reduce_dims), True)
    if leading > 0:
        grad = aten.view(grad, shape)
    return grad


def sum_to_detached(grad, shape: tuple):
    """``sum_to(grad, shape).detach()``, what a leaf stores of it, made as one fresh tensor
    (no view, no shared version counter: for a leaf without hooks nobody sees either)
    when nothing observes the aten calls; else None."""
    data = grad._data
    if not shape or data.dtype not in _PLAIN_SUM_DTYPES or not _unobserved(grad):
        return None
    sizes = data.shape
    plan = _SUM_TO_PLANS.get((sizes, shape))
    if plan is None:
        plan = _sum_to_plan(sizes, shape)
    return _make(np.add.reduce(data, plan[0], None, None, True).reshape(shape))


@linear_in_first
def maybe_multiply(t, scalar):
    """``t * scalar``, skipped when the scalar is 1."""
    if scalar == 1 and not isinstance(scalar, bool):
        return t
    return aten.mul_Scalar(t, scalar)


def _unsqueeze_multiple(t, dims: Sequence[int], ndim: int):
    for dim in sorted(wrap_dim(d, ndim) for d in dims):
        t = aten.unsqueeze(t, dim)
    return t


def sum_backward(grad, sizes: Sequence[int], dims: Optional[Sequence[int]], keepdim: bool):
    if not keepdim and sizes:
        if dims is None or len(dims) == 0:
            return aten.expand(grad, sizes)
        if len(dims) == 1:
            return aten.expand(aten.unsqueeze(grad, dims[0]), sizes)
        return aten.expand(_unsqueeze_multiple(grad, dims, len(sizes)), sizes)
    return aten.expand(grad, sizes)


def mean_backward(grad, sizes, dims, numel: int, keepdim: bool):
    if dims is None or len(dims) == 0:
        count = numel
    else:
        count = 1
        for d in dims:
            if sizes:  # a 0-d input's one dim has size 1
                count *= sizes[wrap_dim(d, len(sizes))]
    data = grad._data
    if (dims is None or keepdim) and data.dtype in PLAIN_FLOATS and _unobserved(grad):
        # expand then div_Scalar, as the dispatched ops compute them; the expanded view
        # is never seen, so it stays a numpy view
        if data.ndim == 0:
            # every element of the expanded quotient is the same one: computed once
            return _make(np.full(sizes, k.div(data, count)))
        quotient = k.div(k.expand(data, sizes), count)
        return _make(quotient if quotient.__class__ is np.ndarray else np.asarray(quotient))
    return aten.div_Scalar(sum_backward(grad, sizes, dims, keepdim), count)


def pow_backward(grad, self, exponent):
    if exponent == 0:
        return aten.zeros_like(self)
    # PyTorch evaluates the exponent as a double (complex stays complex)
    exponent = exponent if isinstance(exponent, complex) else float(exponent)
    data = grad._data
    if (
        exponent.__class__ is float
        and data.dtype in PLAIN_FLOATS
        and self._data.dtype is data.dtype
        and _unobserved(grad, self)
    ):
        # the three dispatched ops' numpy kernels, without the tensors between them (and
        # for a square, without pow's copy: x ** 1 is x, bit for bit)
        base = self._data if exponent == 2.0 else k.power(self._data, exponent - 1)
        product = np.multiply(data, k.mul(base, exponent))
        return _make(product if product.__class__ is np.ndarray else np.asarray(product))
    return grad * aten.mul_Scalar(aten.pow_Tensor_Scalar(self, exponent - 1), exponent)


def pow_backward_self(grad, self, exponent):
    # operands in PyTorch's evaluation order (right to left)
    nonzero = grad * (exponent * aten.pow_Tensor_Tensor(self, aten.sub_Scalar(exponent, 1)))
    zero = _zero_scalar(grad)
    return aten.where_self(aten.eq_Scalar(exponent, 0.0), zero, nonzero)


def pow_backward_exponent(grad, self, exponent, result):
    from ..tensor import Tensor

    if isinstance(self, Tensor):
        exponent_ok = aten.ge_Scalar(exponent, 0)
        cond = aten.logical_and(aten.eq_Scalar(self, 0), exponent_ok)
        scaled = result * aten.log(self)
        out = aten.where_self(cond, _zero_scalar(grad), scaled)
        return grad * out
    import math

    if self == 0:
        scaled = aten.mul_Scalar(result, float("-inf"))
        zero = aten.zeros([], dtype=_dtype_of(grad))
        return grad * aten.where_self(aten.ge_Scalar(exponent, 0), zero, scaled)
    return grad * aten.mul_Scalar(result, math.log(self))


def mm_mat1_backward(grad, mat2, sizes, strides, alpha):
    # a column-major input gets its gradient in column order too (as PyTorch)
    column_major = len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]
    if not column_major and alpha == 1 and _unobserved(grad, mat2):
        g, m = grad._data, mat2._data
        if g.ndim == 2 and m.ndim == 2 and g.dtype is m.dtype:  # else mm raises its error
            return _make(np.matmul(g, m.T))  # mm(grad, t(mat2))
    if column_major:
        return maybe_multiply(aten.t(aten.mm(mat2, aten.t(grad))), alpha)
    return maybe_multiply(aten.mm(grad, aten.t(mat2)), alpha)


def mm_mat2_backward(grad, mat1, sizes, strides, alpha):
    column_major = len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]
    if not column_major and alpha == 1 and _unobserved(grad, mat1):
        g, m = grad._data, mat1._data
        if g.ndim == 2 and m.ndim == 2 and g.dtype is m.dtype:
            return _make(np.matmul(m.T, g))  # mm(t(mat1), grad)
    if column_major:
        return maybe_multiply(aten.t(aten.mm(aten.t(grad), mat1)), alpha)
    return maybe_multiply(aten.mm(aten.t(mat1), grad), alpha)


def mv_self_backward(grad, vec):
    """``grad`` as a column (a view, as PyTorch's formula) times ``vec``."""
    return aten.view(grad, [grad._data.shape[0], 1]) * vec


def unsqueeze_to(grad, dim_or_sizes, sizes=None):
    """Undo a squeeze: put back the size-1 dims that ``sizes`` had."""
    if sizes is None:
        sizes = dim_or_sizes
        for dim, size in enumerate(sizes):
            if size == 1:
                grad = aten.unsqueeze(grad, dim)
        return grad
    if not isinstance(dim_or_sizes, int):  # squeeze.dims: each listed dim of size 1
        listed = {wrap_dim(d, len(sizes)) for d in dim_or_sizes}
        for dim, size in enumerate(sizes):
            if dim in listed and size == 1:
                grad = aten.unsqueeze(grad, dim)
        return grad
    dim = wrap_dim(dim_or_sizes, len(sizes))
    if len(sizes) == 0 or sizes[dim] != 1:
        return grad
    return aten.unsqueeze(grad, dim)


def permute_backwards(grad, dims: Sequence[int]):
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[wrap_dim(d, ndim)] = i
    return aten.permute(grad, inverse)


def _zero_scalar(grad):
    """A 0-dim zero of ``grad``'s dtype: ``where`` broadcasts it (PyTorch's formulas' ``0``)."""
    return aten.scalar_tensor(0.0, dtype=_dtype_of(grad))


def clamp_backward(grad, self, min, max):
    if min is None and max is None:
        return grad
    if isinstance(min, Tensor) or isinstance(max, Tensor):  # the clamp.Tensor overload
        return _clamp_backward_tensor(grad, self, min, max)
    # operands in PyTorch's evaluation order (its C++ evaluates call arguments right to left)
    zero = _zero_scalar(grad)
    if min is None:
        return aten.where_self(aten.le_Scalar(self, max), grad, zero)
    if max is None:
        return aten.where_self(aten.ge_Scalar(self, min), grad, zero)
    keep = aten.logical_and_(aten.ge_Scalar(self, min), aten.le_Scalar(self, max))
    return aten.where_self(keep, grad, zero)


def _subclass_like(*tensors) -> bool:
    """PyTorch's areAnyTensorSubclassLike: a dispatch mode is active or a tensor has the
    Python key. Its helpers then avoid in-place ops on their intermediates."""
    return bool(_tls.mode_stack) or any([t is not None and t._keys & PYTHON for t in tensors])


def _clamp_backward_tensor(grad, self, min, max):
    """clamp.Tensor's gradient for self: it passes where min <= self <= max."""
    zero = _zero_scalar(grad)
    if min is None:
        return aten.where_self(aten.le_Tensor(self, max), grad, zero)
    if max is None:
        return aten.where_self(aten.ge_Tensor(self, min), grad, zero)
    # in place on the first mask, as PyTorch (which then refuses a second mask that
    # broadcasts larger); out of place while a mode or subclass could watch
    combine = aten.logical_and if _subclass_like(self, min, max) else aten.logical_and_
    keep = combine(aten.ge_Tensor(self, min), aten.le_Tensor(self, max))
    return aten.where_self(keep, grad, zero)


def clamp_backward_min_max(grad, self, min, max, grad_input_mask: Sequence[bool]):
    """clamp.Tensor's gradients for (min, max), each only if its mask entry asks. A bound
    gets the gradient where it decided the result: min where self < min < max, max where
    self > max or max < min (then the result is max whatever self is)."""
    zero = _zero_scalar(grad)
    grad_min = grad_max = None
    if min is not None and max is not None:
        watched = _subclass_like(self, min, max)  # in place or not, as _clamp_backward_tensor
        if grad_input_mask[0]:
            combine = aten.logical_and if watched else aten.logical_and_
            below = combine(aten.lt_Tensor(self, min), aten.lt_Tensor(min, max))
            grad_min = aten.where_self(below, grad, zero)
        if grad_input_mask[1]:
            combine = aten.logical_or if watched else aten.logical_or_
            above = combine(aten.gt_Tensor(self, max), aten.lt_Tensor(max, min))
            grad_max = aten.where_self(above, grad, zero)
    elif min is not None and grad_input_mask[0]:
        grad_min = aten.where_self(aten.lt_Tensor(self, min), grad, zero)
    elif max is not None and grad_input_mask[1]:
        grad_max = aten.where_self(aten.gt_Tensor(self, max), grad, zero)
    return grad_min, grad_max


def clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t):
    """clamp.Tensor's tangent: the tangent of whichever operand the result came from."""
    # innermost where first: PyTorch's C++ evaluates call arguments right to left
    if min_p is not None and max_p is not None:
        inner = aten.where_self(aten.gt_Tensor(self_p, max_p), max_t, self_t)
        inner = aten.where_self(aten.lt_Tensor(self_p, min_p), min_t, inner)
        return aten.where_self(aten.gt_Tensor(min_p, max_p), max_t, inner)
    if min_p is not None:
        return aten.where_self(aten.gt_Tensor(self_p, min_p), self_t, min_t)
    if max_p is not None:
        return aten.where_self(aten.lt_Tensor(self_p, max_p), self_t, max_t)
    return self_t


def div_tensor_other_backward(grad, self, other, rounding_mode: Optional[str] = None):
    """``-grad * ((self / other) / other)``, the quotient first, as PyTorch evaluates it;
    zeros of other's dtype for a rounded quotient."""
    if rounding_mode is not None:
        return aten.zeros_like(grad, dtype=other.dtype)
    quotient = (self / other) / other
    return -grad * quotient


def maximum_backward(grad, self, other, is_other: bool):
    """Ties split the gradient evenly; the losing side's entries become 0 (as PyTorch)."""
    half = aten.div_Scalar(grad, 2)
    shared = aten.where_self(aten.eq_Tensor(self, other), half, grad)
    loser = aten.lt_Tensor(self, other) if not is_other else aten.gt_Tensor(self, other)
    return aten.masked_fill__Scalar(shared, loser, 0)


def to_copy_backward(grad, dtype):
    if grad._data.dtype == dtype.np:
        return grad
    return aten._to_copy(grad, dtype=dtype)


def zeros_like_info(info):
    """Zeros of a saved (shape, dtype): formulas' ``zeros_like(x)`` where only x's metadata is kept."""
    shape, dtype = info
    return aten.zeros(shape, dtype=dtype)


def as_strided_backward(grad, input_geometry, size, stride, storage_offset):
    """Gradient of as_strided: scatter-add ``grad`` into the input's storage."""
    import numpy as np

    from ..tensor import _make

    sizes, strides, input_offset = input_geometry
    if storage_offset is None:
        storage_offset = input_offset
    relative = storage_offset - input_offset
    positions = np.full(tuple(size), relative, dtype=np.int64)
    for dim, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = n
        positions = positions + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    extent = 1 + sum((n - 1) * st for n, st in zip(sizes, strides)) if all(sizes) else 1
    if positions.size:
        extent = max(extent, int(positions.max()) + 1)
    storage = aten.new_zeros(grad, (extent,))
    storage = aten.index_put(
        storage, (_make(positions.reshape(-1)),), aten.reshape(grad, (-1,)), True
    )
    return aten.as_strided(storage, sizes, strides, 0)


def unbind_backward(grads, dim: int):
    """Stack the outputs' gradients back (zeros for outputs that got none)."""
    reference = next(g for g in grads if g is not None)
    filled = [g if g is not None else aten.zeros_like(reference) for g in grads]
    return aten.stack(filled, dim)


def split_with_sizes_backward(grads, split_sizes, dim: int, sizes):
    ndim = len(sizes)
    d = wrap_dim(dim, ndim)
    reference = next(g for g in grads if g is not None)
    filled = []
    for g, length in zip(grads, split_sizes):
        if g is None:
            shape = tuple(sizes[:d]) + (length,) + tuple(sizes[d + 1 :])
            g = aten.zeros(shape, dtype=_dtype_of(reference))
        filled.append(g)
    return aten.cat(filled, d)


def split_backward(grads, split_size: int, dim: int, sizes):
    length = sizes[wrap_dim(dim, len(sizes))]
    split_sizes = [min(split_size, length - start) for start in range(0, length, split_size)] or [0]
    return split_with_sizes_backward(grads, split_sizes, dim, sizes)


def cat_tensors_backward(grad, sizes, dtypes_, dim: int):
    """The slice of ``grad`` each input of cat contributed (empty 1-D inputs get zeros)."""
    d = None
    result = []
    start = 0
    for shape, dtype in zip(sizes, dtypes_):
        if len(shape) == 1 and shape[0] == 0:
            result.append(aten.zeros((0,), dtype=dtype))
            continue
        if d is None:
            d = wrap_dim(dim, len(shape))
        length = shape[d]
        piece = aten.slice_Tensor(grad, d, start, start + length, 1)
        result.append(to_copy_backward(piece, dtype))
        start += length
    return result


def stack_tensors_backward(grad, dim: int, dtypes_):
    # one select per input, as PyTorch (not one unbind)
    return [to_copy_backward(aten.select_int(grad, dim, i), dt) for i, dt in enumerate(dtypes_)]


def index_backward(zeros, indices, grad):
    return aten.index_put(zeros, indices, grad, True)


# ---- softmax family ------------------------------------------------------------------


def softmax_double_backward(grad, grad_output, dim: int, output):
    return (
        grad_output * grad
        - (output * grad_output).sum(dim, True) * grad
        - grad_output * (output * grad).sum(dim, True)
    )


def logsumexp_backward(grad, self, result, dim: Sequence[int], keepdim: bool):
    if not keepdim and self.dim() != 0:
        ndim = self.dim()
        grad = _unsqueeze_multiple(grad, dim, ndim)
        result = _unsqueeze_multiple(result, dim, ndim)
    return grad * (self - result).exp()


def logsumexp_jvp(self_p, self_t, dim: Sequence[int], keepdim: bool):
    """The tangent of logsumexp: the softmax-weighted sum of ``self_t``. The maximum that
    keeps exp from overflowing is a constant here (it cancels out of the ratio)."""
    if self_p._data.size > 0:
        axis = k._dims(tuple(dim), self_p._data.ndim)
        shift = _make(np.max(self_p._data, axis=axis, keepdims=True))
        self_p_exp = (self_p - shift).exp()
    else:
        self_p_exp = self_p.exp()
    sumexp_p = self_p_exp.sum(dim, keepdim)
    return (self_p_exp * self_t).sum(dim, keepdim) / sumexp_p


# ---- activations ---------------------------------------------------------------------


def grad_mode_enabled() -> bool:
    """PyTorch's GradMode::is_enabled() inside a formula: on while create_graph records."""
    return _tls.grad_enabled


def to_float(scalar) -> float:
    """A Scalar's value read as a C float (PyTorch's ``toFloat()``)."""
    return float(np.float32(scalar))


def derivative_not_implemented(op: str):
    """The backward of an op PyTorch does not differentiate (its NotImplemented node)."""
    raise RuntimeError(f"derivative for {op} is not implemented")


def forward_ad_not_supported(op: str):
    """Forward AD through an op PyTorch does not differentiate at all."""
    raise NotImplementedError(f"Trying to use forward AD with {op} that does not support it.")


def forward_ad_not_implemented(op: str):
    """Forward AD through an op whose PyTorch entry has no forward-mode formula, in the words
    of PyTorch's generated check: its in-place ops' (a name ending in ``_``) end the request
    sooner than its functional ones'."""
    ending = (
        "." if op.endswith("_") else " or submit a PR adding the implementation to derivatives.yaml"
    )
    raise NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it because it has not been "
        "implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we "
        f"can prioritize its implementation{ending}"
    )


def elu_double_backward(
    grad, grad_output, alpha, scale, input_scale, is_result: bool, self_or_result
):
    negative = (self_or_result < 0).type_as(grad)
    if is_result:
        return grad * grad_output * input_scale * negative
    scaled = grad * grad_output * input_scale
    return (
        aten.elu_backward(scaled, alpha, scale, input_scale, is_result, self_or_result) * negative
    )


_SQRT2 = 1.41421356237309504880
_2_SQRTPI = 1.12837916709551257390
_SQRT1_2 = 0.70710678118654752440


def gelu_double_backward(grad, grad_output, self, approximate: str):
    if approximate == "tanh":
        beta = _SQRT2 * _2_SQRTPI * 0.5
        kappa = 0.044715
        inner = beta * (self + kappa * self.pow(3))
        tanh_inner = inner.tanh()
        f = 0.5 * self
        g = 1 - tanh_inner * tanh_inner
        h = beta * (1 + 3 * kappa * self * self)
        f_prime_gh = 0.5 * g * h
        # PyTorch writes sech(inner)^2 as 1 / cosh(inner)^2; opgrad has no cosh: 1 - tanh^2
        g_prime = 2 * (-g * tanh_inner) * h
        g_prime_fh = f * h * g_prime
        h_prime = 6 * kappa * self * beta
        h_prime_fg = f * g * h_prime
        return grad * grad_output * (f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg)
    beta = _2_SQRTPI * _SQRT1_2 * 0.5
    self_sq = self * self
    pdf = beta * (-0.5 * self_sq).exp()
    return grad * grad_output * (2 * pdf - self_sq * pdf)


def infinitely_differentiable_silu_backward(grad_output, input):
    sigmoid = input.sigmoid()
    return grad_output * sigmoid * (1.0 + input * (1.0 - sigmoid))


def infinitely_differentiable_mish_backward(grad_output, input):
    sigmoid = input.sigmoid()
    softplus = input.exp().log1p()
    tanh_softplus = softplus.tanh()
    return grad_output * (tanh_softplus + input * sigmoid * (1.0 - tanh_softplus * tanh_softplus))


def softplus_double_backward(grad, input, beta, threshold):
    x = input * beta
    return aten.sigmoid_backward(grad, x.sigmoid()) * (x < threshold).type_as(grad) * beta


def log1p_backward(grad, self):
    return grad / (self + 1)


def log_sigmoid_double_backward(grad, input):
    z = input.sigmoid()
    return grad * (z - 1) * z


def glu_double_backward(grad, grad_output, input, dim: int):
    g_o = grad_output
    input_size = input.size(dim) // 2
    first_half = input.narrow(dim, 0, input_size)
    second_half = input.narrow(dim, input_size, input_size)
    sig_second_half = second_half.sigmoid()
    one_sub_sig_second_half = 1 - sig_second_half
    sig_one_sub_sig = sig_second_half * one_sub_sig_second_half
    ggi_first_half = grad.narrow(dim, 0, input_size)
    ggi_second_half = grad.narrow(dim, input_size, input_size)
    ggi_second_half_times_first_half = ggi_second_half * first_half
    gi_first_half = ggi_second_half * g_o * sig_one_sub_sig
    second_order_sh = sig_one_sub_sig * one_sub_sig_second_half - sig_second_half * sig_one_sub_sig
    gi_second_half = (
        ggi_second_half_times_first_half * g_o * second_order_sh
        + ggi_first_half * g_o * sig_one_sub_sig
    )
    return aten.cat([gi_first_half, gi_second_half], dim)


def glu_double_backward_grad_output(grad, input, dim: int):
    if dim < 0:
        dim += input.dim()
    sizes = list(input.shape)
    sizes[dim] //= 2
    ones = aten.ones(sizes, dtype=_dtype_of(input))
    tmp = grad * aten.glu_backward(ones, input, dim)
    return tmp.narrow(dim, 0, sizes[dim]) + tmp.narrow(dim, sizes[dim], sizes[dim])


def glu_jvp(glu, x, dx, dim: int):
    """The tangent of glu(x) = a * sigmoid(b): da * sigmoid(b) + glu * (1 - sigmoid(b)) * db
    (PyTorch computes it in one kernel)."""
    dim = wrap_dim(dim, x.dim())
    glu_size = glu.size(dim)
    b = x.narrow(dim, glu_size, glu_size)
    da = dx.narrow(dim, 0, glu_size)
    db = dx.narrow(dim, glu_size, glu_size)
    sig_b = b.sigmoid()
    return da * sig_b + glu * (db - sig_b * db)


def glu_backward_jvp(grad_x, grad_glu, x, dgrad_glu, dx, dim: int):
    dim = wrap_dim(dim, x.dim())
    glu_size = grad_glu.size(dim)
    a = x.narrow(dim, 0, glu_size)
    b = x.narrow(dim, glu_size, glu_size)
    da = dx.narrow(dim, 0, glu_size)
    db = dx.narrow(dim, glu_size, glu_size)
    grad_x_a = grad_x.narrow(dim, 0, glu_size)
    sig_b = b.sigmoid()
    glu = a * sig_b
    db_neg_sig_b = db - db * sig_b
    dgrad_x_a = dgrad_glu * sig_b + grad_x_a * db_neg_sig_b
    dgrad_x_b = dgrad_x_a * (a - glu) + grad_x_a * (da - da * sig_b - glu * db_neg_sig_b)
    return aten.cat([dgrad_x_a, dgrad_x_b], dim)


# PyTorch's formulas for _prelu_kernel_backward: each input's gradient from the defined
# ones of the two incoming gradients (grads[0] for self's, grads[1] for weight's).


def prelu_kernel_double_backward_grad_output(grad_self, grad_weight, self, weight, grad_output):
    positive = self >= 0
    if grad_self is None:
        return aten.where_self(positive, _zero_scalar(grad_output), grad_weight * self)
    if grad_weight is None:
        return aten.where_self(positive, grad_self, grad_self * weight)
    return aten.where_self(positive, grad_self, grad_self * weight + grad_weight * self)


def prelu_kernel_double_backward_self(grad_weight, self, grad_output):
    if grad_weight is None:
        return aten.zeros_like(self)
    return aten.where_self(self >= 0, _zero_scalar(self), grad_output * grad_weight)


def prelu_kernel_double_backward_weight(grad_self, self, grad_output):
    if grad_self is None:
        return aten.zeros_like(self)
    return aten.where_self(self >= 0, _zero_scalar(self), grad_output * grad_self)


# The losses' helpers (its __all__).
from .loss_manual import *  # noqa: E402,F401,F403

# The linear and normalisation family's helpers (its __all__).
from .norm_manual import *  # noqa: E402,F401,F403
from .embedding_manual import *  # noqa: E402,F401,F403

# The convolution and pooling family's helpers (its __all__).
from .conv_manual import *  # noqa: E402,F401,F403

# The attention ops' helpers (its __all__).
from .attention_manual import *  # noqa: E402,F401,F403

# The grid-sampling ops' helpers (its __all__).
from .sampling_manual import *  # noqa: E402,F401,F403

# The gather, scatter and index ops' helpers (their __all__).
from .index_manual import *  # noqa: E402,F401,F403
# The max/min reductions' helpers (its __all__).
from .minmax_manual import *  # noqa: E402,F401,F403
# The statistical reductions' formula helpers (its __all__).
from .stats_manual import *  # noqa: E402,F401,F403
# The shape ops' and rounded division's helpers (its __all__).
from .shape_manual import *  # noqa: E402,F401,F403
# The masked and take/put ops' helpers (its __all__).
from .masked_manual import *  # noqa: E402,F401,F403
# The cumulative ops' formula helpers (its __all__).
from .cumulative_manual import *  # noqa: E402,F401,F403
# dist's and renorm's formula helpers (its __all__).
from .norm_reduction_manual import *  # noqa: E402,F401,F403
# The singular value decomposition's formula helpers (its __all__).
from .svd_manual import *  # noqa: E402,F401,F403
# The unary math ops' formula helpers (issue 15; its __all__).
from .unary_math_manual import *  # noqa: E402,F401,F403
# torch.special's formula helpers, and sgn's (issue 15; its __all__).
from .special_manual import *  # noqa: E402,F401,F403
# The binary math ops' formula helpers (issue 15; its __all__).
from .binary_math_manual import *  # noqa: E402,F401,F403
# The matmul family's formula helpers (issue 15; its __all__).
from .matmul_manual import *  # noqa: E402,F401,F403
