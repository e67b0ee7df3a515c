"""Composites of the matmul family of issue 15, CompositeImplicitAutograd in PyTorch: they
call the aten ops PyTorch 2.13's C++ calls, in its order, so a dispatch mode and the
grad_fn chain see what torch's show (outer is a view and a mul, tensordot a permute/reshape
pair per side and one mm, matrix_power a chain of matmuls by repeated squaring...)."""

from __future__ import annotations

import warnings

from .generated import ops as aten
from . import dtypes
from .numpy_kernels import wrap_dim

__all__ = [
    "cdist",
    "chain_matmul",
    "chain_matmul_out",
    "cross",
    "cross_out",
    "einsum",
    "ger",
    "ger_out",
    "inner",
    "inner_out",
    "kron",
    "kron_out",
    "linalg_matrix_power",
    "linalg_matrix_power_out",
    "linalg_multi_dot",
    "linalg_multi_dot_out",
    "matrix_power",
    "matrix_power_out",
    "outer",
    "outer_out",
    "tensordot",
    "tensordot_out",
]


def _dims(t) -> int:
    return t._data.ndim


def _shape(t) -> tuple:
    return t._data.shape


def _dtype_name(t) -> str:
    return dtypes.scalar_type_name(t._data.dtype)


def _refuse_grad(name: str, *tensors) -> None:
    from ._tls import state as _tls

    if _tls.grad_enabled and any(t._rg for t in tensors):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


# ---- outer, ger --------------------------------------------------------------------------


def _check_1d(t, arg: str, fn: str) -> None:
    if _dims(t) != 1:
        raise RuntimeError(f"{fn}: Expected 1-D argument {arg}, but got {_dims(t)}-D")


def outer(self, vec2):
    _check_1d(self, "self", "outer")
    _check_1d(vec2, "vec2", "outer")
    return aten.mul_Tensor(aten.reshape(self, (_shape(self)[0], 1)), vec2)


def outer_out(self, vec2, out):
    _check_1d(self, "self", "outer")
    _check_1d(vec2, "vec2", "outer")
    return aten.mul_out(aten.reshape(self, (_shape(self)[0], 1)), vec2, out=out)


def ger(self, vec2):
    return outer(self, vec2)


def ger_out(self, vec2, out):
    return outer_out(self, vec2, out)


# ---- tensordot, inner --------------------------------------------------------------------


def _tensordot_plan(input1, input2, dims1, dims2):
    dims1, dims2 = list(dims1), list(dims2)
    if len(dims1) != len(dims2):
        raise RuntimeError("both dimension lists should have same length")
    if input1._data.dtype != input2._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    return dims1, dims2


def _dim_bitset(dims, ndim: int) -> set:
    seen = set()
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return seen


def _size_of(t, dim: int) -> int:
    ndim = _dims(t)
    return _shape(t)[wrap_dim(dim, ndim)]


def tensordot(self, other, dims_self, dims_other):
    """PyTorch 2.13's tensordot: size-1 contracted dims summed away first, both sides
    permuted (free dims then contracted ones) and reshaped for one mm, whose result is
    reshaped to the free sizes; a contraction to one element is a dot of the flattened
    sides (contiguous) or a sum of their product."""
    dims1, dims2 = _tensordot_plan(self, other, dims_self, dims_other)
    t1, t2 = self, other
    csize = 1
    for d1, d2 in zip(dims1, dims2):
        s1, s2 = _size_of(self, d1), _size_of(other, d2)
        if s2 == 1:
            t1 = aten.sum_dim_IntList(t1, [d1], True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = aten.sum_dim_IntList(t2, [d2], True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(
                    f"contracted dimensions need to match, but first has size {s1} in dim "
                    f"{d1} and second has size {s2} in dim {d2}"
                )
            csize *= s1
    c1, c2 = _dim_bitset(dims1, _dims(self)), _dim_bitset(dims2, _dims(other))
    p1, p2, rsizes = [], [], []
    size1 = size2 = 1
    for i in range(_dims(self)):
        if i not in c1:
            p1.append(i)
            size1 *= _shape(t1)[i]
            rsizes.append(_shape(t1)[i])
    p1 += dims1
    p2 += dims2
    for i in range(_dims(other)):
        if i not in c2:
            p2.append(i)
            size2 *= _shape(t2)[i]
            rsizes.append(_shape(t2)[i])
    if size1 != 1 or size2 != 1:
        t1 = aten.reshape(aten.permute(t1, p1), (size1, csize))
        t2 = aten.reshape(aten.permute(t2, p2), (csize, size2))
        return aten.reshape(aten.mm(t1, t2), rsizes)
    t1, t2 = aten.permute(t1, p1), aten.permute(t2, p2)
    if t1._data.flags.c_contiguous and t2._data.flags.c_contiguous:
        flat1 = aten.flatten_using_ints(t1, 0, -1)
        flat2 = aten.flatten_using_ints(t2, 0, -1)
        return aten.reshape(aten.dot(flat1, flat2), rsizes)
    product = aten.mul_Tensor(aten.squeeze(t1), aten.squeeze(t2))
    return aten.reshape(aten.sum(product, dtype=t1.dtype), rsizes)


def tensordot_out(self, other, dims_self, dims_other, out):
    result = tensordot(self, other, dims_self, dims_other)
    from ._tls import state as _tls

    if out._rg and _tls.grad_enabled and tuple(_shape(out)) != tuple(_shape(result)):
        raise RuntimeError(
            "tensordot(): the 'out' tensor was specified and requires gradients, and its "
            "shape does not match the expected result. Either remove the 'out' argument, "
            "ensure it does not require gradients, or make sure its shape matches the "
            "expected output."
        )
    if result._data.dtype != out._data.dtype:
        raise RuntimeError(
            f"tensordot: Expected the output tensor to have dtype {_dtype_name(result)}, but "
            f"got an output tensor with dtype {_dtype_name(out)}"
        )
    _resize_output(out, _shape(result))
    return aten.copy_(out, result)


def _resize_output(out, shape) -> None:
    """PyTorch's resize_output: a warning when a non-empty out changes shape."""
    if tuple(_shape(out)) != tuple(shape):
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(_shape(out))}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        aten.resize_(out, list(shape))


def _inner_check(self, other) -> bool:
    """True when one side is a number (inner is then a product)."""
    if _dims(self) == 0 or _dims(other) == 0:
        return True
    if _shape(self)[-1] != _shape(other)[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(_shape(self))} and {list(_shape(other))}"
        )
    return False


def inner(self, other):
    if _inner_check(self, other):
        return aten.mul_Tensor(self, other)
    return tensordot(self, other, [-1], [-1])


def inner_out(self, other, out):
    if _inner_check(self, other):
        return aten.mul_out(self, other, out=out)
    return tensordot_out(self, other, [-1], [-1], out)


# ---- kron --------------------------------------------------------------------------------


def _kron_shapes(self, other):
    maxdim = max(_dims(self), _dims(other))
    pad_self, pad_other = maxdim - _dims(self), maxdim - _dims(other)
    a_shape, b_shape, result_shape = [], [], []
    for i in range(maxdim):
        a = _shape(self)[i - pad_self] if i >= pad_self else 1
        b = _shape(other)[i - pad_other] if i >= pad_other else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        result_shape.append(a * b)
    return a_shape, b_shape, result_shape


def kron(self, other):
    a_shape, b_shape, result_shape = _kron_shapes(self, other)
    self_view = aten._unsafe_view(self, a_shape)
    other_view = aten._unsafe_view(other, b_shape)
    return aten._unsafe_view(aten.mul_Tensor(self_view, other_view), result_shape)


def kron_out(self, other, out):
    a_shape, b_shape, result_shape = _kron_shapes(self, other)
    self_view = aten._unsafe_view(self, a_shape)
    other_view = aten._unsafe_view(other, b_shape)
    mul_shape = [s for pair in zip(a_shape[::2], b_shape[1::2]) for s in pair]
    _resize_output(out, result_shape)
    aten.mul_out(self_view, other_view, out=aten._unsafe_view(out, mul_shape))
    return out


# ---- linalg_multi_dot, chain_matmul ------------------------------------------------------


def _multi_dot_operands(tensors):
    """The matrices multi_dot multiplies (a 1-D first one as a row, a 1-D last one as a
    column) and the result's shape, checked as PyTorch checks them."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    mats = list(tensors)
    out_shape = []
    first, last = tensors[0], tensors[-1]
    if _dims(first) == 1:
        mats[0] = aten.unsqueeze(first, 0)
    elif _dims(first) == 2:
        out_shape.append(_shape(first)[0])
    else:
        raise RuntimeError(
            f"multi_dot(): the first tensor must be 1D or 2D but got {_dims(first)}D"
        )
    if _dims(last) == 1:
        mats[-1] = aten.unsqueeze(last, -1)
    elif _dims(last) == 2:
        out_shape.append(_shape(last)[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {_dims(last)}D")
    for i in range(1, n - 1):
        if _dims(tensors[i]) != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {_dims(tensors[i])}D")
    dtype = mats[0]._data.dtype
    for i in range(1, n):
        if mats[i]._data.dtype != dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{dtypes.cpp_type_name(dtype)} and tensor {i} "
                f"{dtypes.cpp_type_name(mats[i]._data.dtype)}"
            )
        if _shape(mats[i - 1])[-1] != _shape(mats[i])[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i - 1} and {i} with shapes {list(_shape(tensors[i - 1]))}"
                f" and {list(_shape(tensors[i]))} cannot be multiplied"
            )
    return mats, out_shape


def _chain_order(mats) -> list:
    """The matrix chain order (CLRS): split[i][j] is where the product of i..j splits."""
    n = len(mats)
    p = [_shape(m)[0] for m in mats] + [_shape(mats[-1])[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(mats, split, i: int, j: int):
    if i == j:
        return mats[i]
    k = split[i][j]
    return aten.mm(_chain_product(mats, split, i, k), _chain_product(mats, split, k + 1, j))


def _multi_dot_product(mats):
    """The product of the 2-D ``mats``: one mm for two, the cheaper of the two orders for
    three, the optimal chain order for more, as PyTorch."""
    if len(mats) == 2:
        return aten.mm(mats[0], mats[1])
    if len(mats) == 3:
        a, b, c = mats
        sa, sb, sc = _shape(a)[0], _shape(b)[0], _shape(c)[0]
        sd = _shape(c)[1]
        if (sa * sc) * (sb + sd) > (sb * sd) * (sa + sc):
            return aten.mm(a, aten.mm(b, c))
        return aten.mm(aten.mm(a, b), c)
    return _chain_product(mats, _chain_order(mats), 0, len(mats) - 1)


def linalg_multi_dot(tensors):
    mats, out_shape = _multi_dot_operands(tensors)
    return aten.view(_multi_dot_product(mats), out_shape)


def linalg_multi_dot_out(tensors, out):
    mats, out_shape = _multi_dot_operands(tensors)
    if out._data.dtype != mats[0]._data.dtype:
        raise RuntimeError(
            "multi_dot(): expected out tensor to have dtype "
            f"{dtypes.cpp_type_name(mats[0]._data.dtype)} but got "
            f"{dtypes.cpp_type_name(out._data.dtype)}"
        )
    _refuse_grad("mm", *tensors)  # torch refuses them in mm_out
    result = _multi_dot_product(mats)
    _resize_output(out, out_shape)
    return aten.copy_(out, aten.view(result, out_shape))


_chain_matmul_warned = []


def _chain_matmul_operands(matrices):
    if not _chain_matmul_warned:  # once per process, as PyTorch's TORCH_WARN_ONCE
        _chain_matmul_warned.append(True)
        from .user_warnings import warn_user

        warn_user(
            "torch.chain_matmul is deprecated and will be removed in a future PyTorch "
            "release. Use torch.linalg.multi_dot instead, which accepts a list of two or more "
            "tensors rather than multiple parameters."
        )
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if _dims(m) != 2:
            raise RuntimeError(f"Tensor dimension is {_dims(m)}, expected 2 instead.")


def chain_matmul(matrices):
    matrices = list(matrices)
    _chain_matmul_operands(matrices)
    if len(matrices) == 1:
        return aten.clone(matrices[0])
    return linalg_multi_dot(matrices)


def chain_matmul_out(matrices, out):
    matrices = list(matrices)
    _chain_matmul_operands(matrices)
    if len(matrices) == 1:
        _resize_output(out, _shape(matrices[0]))
        return aten.copy_(out, matrices[0])
    return linalg_multi_dot_out(matrices, out)


# ---- matrix_power ------------------------------------------------------------------------


def _square_check(self, fn: str) -> None:
    if _dims(self) < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    rows, cols = _shape(self)[-2:]
    if rows != cols:
        raise RuntimeError(
            f"{fn}: A must be batches of square matrices, but they are {rows} by {cols} matrices"
        )


def _matrix_power(a, n: int):
    if n < 0:
        raise NotImplementedError(
            "linalg.matrix_power: negative powers go through linalg.inv, which opgrad does not "
            "have yet"
        )
    if n == 2:
        return aten.matmul(a, a)
    if n == 3:
        return aten.matmul(aten.matmul(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else aten.matmul(z, z)
        if bit == 1:
            result = z if result is None else aten.matmul(result, z)
    return result


def linalg_matrix_power(self, n):
    _square_check(self, "linalg.matrix_power")
    if n == 0:
        out = aten.clone(self, memory_format=_contiguous())
        return aten.copy_(out, aten.eye(_shape(self)[-2], dtype=self.dtype))
    if n == 1:
        return aten.clone(self, memory_format=_contiguous())
    return _matrix_power(self, n)


def _contiguous():
    from .memory_formats import contiguous_format

    return contiguous_format


def linalg_matrix_power_out(self, n, out):
    _square_check(self, "linalg.matrix_power")
    from .cpu_support import check_cast

    try:
        check_cast(self._data.dtype, out._data.dtype)
    except RuntimeError:
        raise RuntimeError(
            f"matrix_power: Expected result to be safely castable from {_dtype_name(self)} "
            f"dtype, but got result with dtype {_dtype_name(out)}"
        ) from None
    _resize_output(out, _shape(self))
    if n == 0:
        return aten.copy_(out, aten.eye(_shape(self)[-2], dtype=self.dtype))
    if n == 1:
        return aten.copy_(out, self)
    if out._data.dtype != self._data.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {dtypes.cpp_type_name(self._data.dtype)}, but "
            f"got {dtypes.cpp_type_name(out._data.dtype)} instead"
        )
    _refuse_grad("matmul", self)  # torch refuses it in matmul_out
    return aten.copy_(out, _matrix_power(self, n))


def matrix_power(self, n):
    return linalg_matrix_power(self, n)


def matrix_power_out(self, n, out):
    return linalg_matrix_power_out(self, n, out)


# ---- cross -------------------------------------------------------------------------------

_cross_warned = []


def _cross_dim(self, dim):
    if dim is not None:
        return dim
    if not _cross_warned:  # once per process, as PyTorch's TORCH_WARN_ONCE
        _cross_warned.append(True)
        from .user_warnings import warn_user

        warn_user(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
            "The default value of dim will change to agree with that of linalg.cross in a "
            "future release."
        )
    for i, size in enumerate(_shape(self)):
        if size == 3:
            return i
    raise RuntimeError("no dimension of size 3 in input")


def cross(self, other, dim):
    return aten.linalg_cross(self, other, dim=_cross_dim(self, dim))


def cross_out(self, other, dim, out):
    return aten.linalg_cross_out(self, other, dim=_cross_dim(self, dim), out=out)


# ---- cdist -------------------------------------------------------------------------------


def cdist(x1, x2, p, compute_mode):
    """PyTorch 2.13's cdist: p 2 with the matrix-product mode (compute_mode 1, or None with
    more than 25 rows on a side) runs _euclidean_dist on the inputs expanded to their batch
    and viewed as one (EuclideanDistBackward0 under a view), anything else
    _cdist_forward (CdistBackward0)."""
    from . import numpy_kernels as k

    k.cdist_check(x1, x2)
    if x1._data.size == 0 or x2._data.size == 0:
        return aten._cdist_forward(x1, x2, p, compute_mode)
    mode = 0 if compute_mode is None else compute_mode
    r1, r2 = _shape(x1)[-2], _shape(x2)[-2]
    if not (p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))):
        return aten._cdist_forward(x1, x2, p, compute_mode)
    k.cdist_impl_check(x1, x2, p, compute_mode)
    c = _shape(x1)[-1]
    from .matmul_kernels import _batch_shape

    batch = list(_batch_shape(x1._data, x2._data))
    product = 1
    for s in batch:
        product *= s
    t1 = aten.view(aten.expand(x1, batch + [r1, c]).contiguous(), [product, r1, c])
    t2 = aten.view(aten.expand(x2, batch + [r2, c]).contiguous(), [product, r2, c])
    dist = aten._euclidean_dist(x1, x2) if product == 1 else aten._euclidean_dist(t1, t2)
    return aten.view(dist, batch + [r1, r2])


# ---- einsum ------------------------------------------------------------------------------

_LETTERS = 26
_TOTAL_LABELS = 2 * _LETTERS
_ELLIPSIS = _TOTAL_LABELS


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _is_label(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _sumproduct_pair(left, right, sum_dims):
    """``(left * right).sum(sum_dims, keepdim=True)`` by permutes, reshapes and one bmm, as
    PyTorch's sumproduct_pair (dims in both sides and the output are the batch)."""
    if not sum_dims:
        return aten.mul_Tensor(left, right)
    ndim = _dims(left)
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = _shape(left)[i] != 1, _shape(right)[i] != 1
        if i in summed:
            if sl and sr:
                if _shape(left)[i] != _shape(right)[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= _shape(left)[i]
            elif sl:
                left = aten.sum_dim_IntList(left, [i], True)
            elif sr:
                right = aten.sum_dim_IntList(right, [i], True)
        elif sl and sr:
            if _shape(left)[i] != _shape(right)[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= _shape(left)[i]
        elif sl:
            lo.append(i)
            lo_size *= _shape(left)[i]
        else:
            ro.append(i)
            ro_size *= _shape(right)[i]
    if lo and ro and ro[-1] < lo[0]:  # bmm's result is then already in the output's order
        left, right = right, left
        lo, ro = ro, lo
        lo_size, ro_size = ro_size, lo_size
    out_size = (
        [_shape(left)[d] for d in lro]
        + [_shape(left)[d] for d in lo]
        + [1] * len(sum_dims)
        + [_shape(right)[d] for d in ro]
    )
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = aten.reshape(aten.permute(left, lperm), (lro_size, lo_size, sum_size))
    right = aten.reshape(aten.permute(right, rperm), (lro_size, sum_size, ro_size))
    result = aten.bmm(left, right)
    return aten.permute(aten.view(result, out_size), operm)


def _einsum_labels(equation: str, num_ops: int):
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == " ":
            pass
        elif ch == ".":
            if ell_in_input:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {curr} for which an ellipsis was already "
                    "found"
                )
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(
                    f"einsum(): found '.' for operand {curr} that is not part of any ellipsis"
                )
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            ell_in_input = True
        elif ch == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError(
                    "einsum(): fewer operands were provided than specified in the equation"
                )
            ell_in_input = False
        else:
            if not _is_label(ch):
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            op_labels[curr].append(_subscript(ch))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return arrow, lhs, op_labels


def einsum(equation, tensors, path):
    """PyTorch 2.13's einsum without opt_einsum: operands aligned (diagonals of repeated
    labels, unsqueezes for missing ones, one permute each), then contracted left to right
    (or along ``path``) by sumproduct pairs, contraction dims summed as soon as no other
    operand has them."""
    operands = list(tensors)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    if path is not None:
        path_size = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != path_size:
            raise RuntimeError(
                "einsum(): expected contraction path given in path parameter to have size "
                f"{path_size} but got {len(path)}"
            )
    arrow, lhs, op_labels = _einsum_labels(equation, num_ops)
    label_count = [0] * _TOTAL_LABELS
    ell_num_dim = 0
    for i, operand in enumerate(operands):
        labels = op_labels[i]
        ndims = _dims(operand)
        nlabels = len(labels)
        has_ellipsis = False
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[s] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) "
                + (
                    "is more than the number of dimensions ("
                    if has_ellipsis
                    else "does not match the number of dimensions ("
                )
                + f"{ndims}) for operand {i}"
                + ("" if has_ellipsis else " and no ellipsis was given")
            )
    label_perm_index = [-1] * _TOTAL_LABELS
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_TOTAL_LABELS):
            if label_count[s] == 1:
                label_perm_index[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2 :]
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == " ":
                pass
            elif ch == ".":
                if ell_in_output:
                    raise RuntimeError(
                        "einsum(): found '.' for output but an ellipsis (...) was already found"
                    )
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError(
                        "einsum(): found '.' for output that is not part of any ellipsis (...)"
                    )
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not _is_label(ch):
                    raise RuntimeError(
                        f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                        "equation string, subscripts must be in [a-zA-Z]"
                    )
                s = _subscript(ch)
                if not (label_count[s] > 0 and label_perm_index[s] == -1):
                    raise RuntimeError(
                        f"einsum(): output subscript {ch}"
                        + (
                            " appears more than once in the output"
                            if label_perm_index[s] > -1
                            else " does not appear in the equation for any input operand"
                        )
                    )
                label_perm_index[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_TOTAL_LABELS):
        if label_count[s] > 0 and label_perm_index[s] == -1:
            label_perm_index[s] = perm_index
            perm_index += 1

    label_size = [1] * _TOTAL_LABELS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, op in enumerate(operands):
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = _dims(operands[i]) - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = _shape(op)[dim]
                    if size != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}"
                                f"has size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension"
                            )
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                size = _shape(op)[dim]
                if size != 1:
                    if not (label_size[s] == 1 or label_size[s] == size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size {label_size[s]}"
                        )
                    label_size[s] = size
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:
                prev = permutation[label_perm_index[s]]
                if _shape(op)[dim] != _shape(op)[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {_shape(op)[dim]} != {_shape(op)[prev]}"
                    )
                op = aten.movedim_int(aten.diagonal(op, 0, prev, dim), -1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = aten.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(aten.permute(op, permutation))

    steps = list(path) if path is not None else []
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = steps.pop(0), steps.pop(0)
            if j < i:
                i, j = j, i
            if not (i != j and i >= 0 and j < len(ops)):
                raise RuntimeError(
                    f"einsum(): invalid contraction ({i}, {j}"
                    + (
                        ") cannot contract an operand with itself"
                        if i == j
                        else ") operand index is out of bounds"
                    )
                )
        a, b = ops[i], ops[j]
        del ops[j]
        del ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for dim in range(out_num_dim, perm_index):
            sa, sb = _shape(a)[dim] != 1, _shape(b)[dim] != 1
            if sa and sb:
                if _shape(a)[dim] != _shape(b)[dim]:
                    raise RuntimeError("non-broadcast dimensions must match")
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if sa:
                    a_sum.append(dim)
                    dim_counts[dim] = 0
                elif sb:
                    b_sum.append(dim)
                    dim_counts[dim] = 0
        if a_sum:
            a = aten.sum_dim_IntList(a, a_sum, True)
        if b_sum:
            b = aten.sum_dim_IntList(b, b_sum, True)
        pair = _sumproduct_pair(a, b, sum_dims)
        if path is not None:
            ops.append(pair)
        else:
            ops.insert(0, pair)

    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            sizes = list(_shape(ops[0]))
            del sizes[out_num_dim:perm_index]
            return aten.view(ops[0], sizes)
        return aten.sum_dim_IntList(ops[0], list(range(out_num_dim, perm_index)))
    return ops[0]
