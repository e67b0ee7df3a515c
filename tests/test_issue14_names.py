"""Every op issue 14 names that torch has, looked up in opgrad: functions, Tensor methods
and in-place methods. The ops not built yet are listed in NOT_YET, and the list must be
exactly what is missing: building one fails this test until it leaves the list."""

from __future__ import annotations

import opgrad as og

FUNCTIONS = """
max min amax amin aminmax argmax argmin prod var std var_mean std_mean norm dist logsumexp
cumsum cumprod cummax cummin logcumsumexp all any median nanmedian mode kthvalue nansum
nanmean count_nonzero quantile nanquantile trace diff cov corrcoef renorm histc bincount
gather scatter scatter_add scatter_reduce index_select index_add index_copy index_fill
index_reduce masked_select masked_scatter take take_along_dim put nonzero argwhere
select_scatter slice_scatter diagonal_scatter as_strided_scatter searchsorted bucketize
sort argsort msort topk unique unique_consecutive
flip fliplr flipud roll rot90 repeat_interleave tile tril triu diag diag_embed diagflat
block_diag movedim moveaxis swapaxes swapdims ravel unflatten hstack vstack dstack
column_stack row_stack hsplit vsplit dsplit tensor_split atleast_1d atleast_2d atleast_3d
broadcast_to broadcast_tensors broadcast_shapes meshgrid cartesian_prod combinations
isnan isinf isposinf isneginf isfinite isreal isclose allclose equal isin logical_not
logical_xor signbit minimum fmax fmin clamp_min clamp_max bitwise_and bitwise_or
bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift
alias_copy as_strided_copy diagonal_copy expand_copy narrow_copy permute_copy select_copy
slice_copy split_copy split_with_sizes_copy squeeze_copy t_copy transpose_copy unbind_copy
unfold_copy unsqueeze_copy view_copy
""".split()

METHODS = """
max min amax argmax prod var std norm cumsum cumsum_ cumprod_ all any median kthvalue
gather scatter scatter_ scatter_add_ index_select index_add_ masked_select masked_scatter_
take put_ nonzero sort argsort topk unique flip roll rot90 repeat repeat_interleave tile
tril tril_ triu triu_ diag diag_embed movedim swapaxes swapaxes_ ravel unflatten hsplit
tensor_split broadcast_to squeeze view_as reshape_as contiguous resize_ resize_as_ narrow_copy isclose
allclose equal logical_not_ logical_xor_ signbit fmax clamp_max_ bitwise_and_
bitwise_not_ __and__ __or__ __xor__ __invert__ __lshift__ __rshift__ __contains__
""".split()

LINALG = "vector_norm matrix_norm".split()

#: what issue 14 names and opgrad does not have yet
NOT_YET = {
    "function": set(),
    "method": set(),
    "linalg": set(),
}


def _missing():
    linalg = getattr(og, "linalg", None)
    return {
        "function": {n for n in FUNCTIONS if not hasattr(og, n)},
        "method": {n for n in METHODS if not hasattr(og.Tensor, n)},
        "linalg": {n for n in LINALG if linalg is None or not hasattr(linalg, n)},
    }


def test_every_op_issue_14_names_exists_but_those_listed_as_not_yet(torch):
    for name in FUNCTIONS:
        assert hasattr(torch, name), name
    for name in METHODS:
        assert hasattr(torch.Tensor, name), name
    assert _missing() == NOT_YET
