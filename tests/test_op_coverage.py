"""Every op in derivatives.yaml is exercised by the PyTorch comparison tests.

The cases of test_ops_vs_torch run (forward, first and second derivative)
under a recording mode; every overload must show up there, or in the short
list below of ops that other test files compare with PyTorch. A new YAML
entry without a test makes this fail.
"""

from pathlib import Path

import pytest

import opgrad as og
from opgrad import decompositions
from torch_oracle import logging_mode_class

import test_ops_vs_torch as cases

ROOT = Path(__file__).resolve().parent.parent

#: overloads compared with PyTorch elsewhere, with the file that does it
TESTED_ELSEWHERE = {
    "aten.ones.default": "test_tensor_api.py",
    "aten.repeat_interleave.self_int": "test_repeat_interleave.py",
    "aten.zeros.default": "test_tensor_api.py",
    "aten.empty.memory_format": "test_tensor_api.py",
    "aten.full.default": "test_tensor_api.py",
    "aten.arange.start_step": "test_tensor_api.py",
    "aten.arange.default": "test_python_entry_logs.py",
    "aten.arange.start": "test_python_entry_logs.py",
    "aten.eye.default": "test_python_entry_logs.py",
    "aten.where.Scalar": "test_python_entry_logs.py",
    "aten.where.ScalarSelf": "test_python_entry_logs.py",
    "aten.where.ScalarOther": "test_python_entry_logs.py",
    "aten.lift_fresh.default": "test_python_entry_logs.py",
    "aten._local_scalar_dense.default": "test_python_entry_logs.py",
    "aten.rand.default": "test_tensor_api.py and test_random_stream.py",
    "aten.randn.default": "test_tensor_api.py and test_random_stream.py",
    "aten.rand_like.default": "test_random_stream.py",
    "aten.randn_like.default": "test_random_stream.py",
    "aten.eye.m": "test_tensor_api.py",
    "aten.empty_like.default": "test_tensor_api.py",
    "aten.full_like.default": "test_tensor_api.py",
    "aten.add_.Tensor": "test_dispatch_mode.py (AccumulateGrad) and test_engine.py",
    "aten.sub_.Tensor": "test_inplace_basics.py",
    "aten.mul_.Tensor": "test_grad_fn_table.py (x.clone().mul_(2))",
    "aten.div_.Tensor": "test_inplace_basics.py",
    "aten.neg_.default": "test_inplace_basics.py",
    "aten.exp_.default": "test_inplace_basics.py",
    "aten.tanh_.default": "test_inplace_basics.py",
    "aten.sigmoid_.default": "test_inplace_basics.py",
    "aten.relu_.default": "test_inplace_basics.py",
    "aten.pow_.Scalar": "test_inplace_basics.py",
    "aten.pow_.Tensor": "test_inplace_pow_tensor.py",
    "aten.clamp_.default": "test_inplace_basics.py",
    "aten.logical_or_.default": "test_clamp_tensor.py",
    "aten.squeeze_.dim": "test_matmul.py (1-D @ 2-D)",
    "aten.squeeze_.default": "test_inplace_basics.py",
    "aten.unsqueeze_.default": "test_inplace_basics.py",
    "aten.t_.default": "test_inplace_basics.py",
    "aten.transpose_.default": "test_inplace_basics.py",
    "aten.copy_.default": "test_inplace_basics.py",
    "aten.zero_.default": "test_inplace_basics.py",
    "aten.sin_.default": "test_inplace_basics.py",
    "aten.cos_.default": "test_inplace_basics.py",
    "aten.log_.default": "test_inplace_basics.py",
    "aten.sqrt_.default": "test_inplace_basics.py",
    "aten.abs_.default": "test_inplace_basics.py",
    "aten.reciprocal_.default": "test_inplace_basics.py",
    "aten.fill_.Scalar": "test_inplace_basics.py",
    "aten.fill_.Tensor": "test_inplace_basics.py",
    "aten.masked_fill_.Scalar": "test_inplace_basics.py",
    "aten.masked_fill_.Tensor": "test_inplace_basics.py",
    "aten.index_put_.default": "test_inplace_basics.py",
    "aten.new_empty_strided.default": "test_inplace_views.py (CopySlices)",
    "aten.alias.default": "test_tensor_api.py (x[:])",
    "aten.exponential_.default": "test_nn_softmax.py (exponential_, gumbel_softmax)",
    # reached only by a backward without create_graph, or differentiated by no one
    "aten.silu_backward.default": "test_nn_activations.py (first-order backward)",
    "aten.mish_backward.default": "test_nn_activations.py (first-order backward)",
    "aten.hardsigmoid.default": "test_opinfo.py (nn.functional.hardsigmoid)",
    "aten.hardsigmoid_.default": "test_nn_activations.py",
    "aten.hardsigmoid_backward.default": "test_nn_activations.py (NotImplemented double backward)",
    # forward AD through it raises in torch: not a test_ops_vs_torch case
    "aten.rrelu_.default": "test_nn_activations.py (rrelu in place)",
    "aten.rrelu_with_noise_.default": "test_nn_activations.py (rrelu in place)",
    # under a dispatch mode reshape takes view instead, as in PyTorch
    "aten._reshape_alias.default": "test_ops_vs_torch.py (reshape_non_contiguous_view)",
}
# padding and pixel rearrangement: test_opinfo.py runs torch's samples for each (constant_pad_nd,
# nn.functional.pad's four modes, pixel_shuffle, pixel_unshuffle, channel_shuffle) and
# test_nn_padding.py the double backward of the pads
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_opinfo.py and test_nn_padding.py"
        for kind in ("reflection", "replication")
        for dims in "123"
        for name in (f"{kind}_pad{dims}d", f"{kind}_pad{dims}d_backward")
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_opinfo.py"
        for name in "constant_pad_nd pixel_shuffle pixel_unshuffle channel_shuffle".split()
    }
)
# embeddings: test_nn_embedding.py (and the embedding OpInfo in test_opinfo.py)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_nn_embedding.py"
        for name in "embedding embedding_dense_backward embedding_renorm_ one_hot".split()
    }
)
# fractional max pooling: test_fractional_max_pool.py and its OpInfos in test_opinfo.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_fractional_max_pool.py and test_opinfo.py"
        for name in (
            "fractional_max_pool2d fractional_max_pool2d_backward fractional_max_pool3d "
            "fractional_max_pool3d_backward"
        ).split()
    }
)
# gather, scatter and the index_* ops: test_gather_scatter.py (values, gradients, second
# derivatives, tangents, nodes, saved fields, errors) and their OpInfos in test_opinfo.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_gather_scatter.py and test_opinfo.py"
        for name in (
            "gather.default gather.out take_along_dim.default scatter.src scatter_.src "
            "scatter.src_out scatter.value scatter_.value scatter.value_out scatter.reduce "
            "scatter_.reduce scatter.reduce_out scatter.value_reduce scatter_.value_reduce "
            "scatter.value_reduce_out scatter_add.default scatter_add_.default scatter_add.out "
            "scatter_reduce.two scatter_reduce_.two scatter_reduce.two_out index_select.default "
            "index_add.default index_add_.default index_add.out index_copy.default "
            "index_copy_.default index_copy.out index_fill.int_Scalar index_fill_.int_Scalar "
            "index_fill.int_Tensor index_fill_.int_Tensor _unique.default remainder.Scalar"
        ).split()
    }
)
# embedding_bag: test_embedding_bag.py and the embedding_bag OpInfo in test_opinfo.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_embedding_bag.py and test_opinfo.py"
        for name in (
            "embedding_bag.default embedding_bag.padding_idx _embedding_bag.default "
            "_embedding_bag_forward_only.default _embedding_bag_backward.default "
            "_embedding_bag_per_sample_weights_backward.default"
        ).split()
    }
)
# the max/min reductions: test_max_min_reductions.py (incl. every out= form) and their OpInfos
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_max_min_reductions.py and test_opinfo.py"
        for name in (
            "max.dim max.dim_max max.default max.unary_out max.other max.out maximum.out "
            "min.dim min.dim_min min.default min.unary_out min.other min.out minimum.out "
            "amax.default amax.out amin.default amin.out aminmax.default aminmax.out "
            "argmax.default argmax.out argmin.default argmin.out"
        ).split()
    }
)
# sorting and order statistics: test_sorting.py (incl. every out= form) and their OpInfos
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_sorting.py and test_opinfo.py"
        for name in (
            "sort.default sort.values sort.stable sort.values_stable argsort.default "
            "argsort.stable argsort.stable_out msort.default msort.out topk.default topk.values "
            "kthvalue.default kthvalue.values median.default median.dim median.dim_values "
            "nanmedian.default nanmedian.dim nanmedian.dim_values mode.default mode.values"
        ).split()
    }
)
# masked_select/masked_scatter, nonzero, argwhere, take and put: test_masked_take.py (values,
# in-place and out= forms, gradients, second derivatives, tangents, nodes, saved fields, errors)
# and their OpInfos
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_masked_take.py and test_opinfo.py"
        for name in (
            "masked_select.default masked_select.out masked_scatter.default "
            "masked_scatter_.default masked_scatter_backward.default nonzero.default nonzero.out "
            "nonzero_static.default nonzero_static.out argwhere.default take.default take.out "
            "put.default put_.default"
        ).split()
    }
)
# the *_scatter ops: test_scatter_into.py and their OpInfos
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_scatter_into.py and test_opinfo.py"
        for name in (
            "select_scatter.default slice_scatter.default slice_scatter.out "
            "diagonal_scatter.default as_strided_scatter.default"
        ).split()
    }
)
# the cumulative ops: test_cumulative.py (incl. every in-place and out= form) and their OpInfos
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_cumulative.py and test_opinfo.py"
        for name in (
            "cumsum.default cumsum_.default cumsum.out cumprod.default cumprod_.default "
            "cumprod.out cummax.default cummax.out cummin.default cummin.out "
            "logcumsumexp.default logcumsumexp.out trace.default diff.default diff.out"
        ).split()
    }
)
# the norms: test_norms.py (torch.norm, linalg.vector_norm's out=, linalg.matrix_norm)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_norms.py and test_opinfo.py"
        for name in (
            "linalg_vector_norm.out dist.default renorm.default renorm_.default renorm.out"
        ).split()
    }
)
# the linear and normalisation family: test_nn_normalization.py compares each with torch
# (forward, gradients, second derivatives, tangents, nodes, saved fields)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_normalization.py"
        for name in (
            "addmm.default linear.default layer_norm.default native_layer_norm.default "
            "native_layer_norm_backward.default batch_norm.default native_batch_norm.default "
            "native_batch_norm_backward.default instance_norm.default repeat.default "
            "group_norm.default native_group_norm.default native_group_norm_backward.default "
            "rsqrt.default rsqrt_.default bilinear.default _trilinear.default"
        ).split()
    }
)
# rms_norm, normalize and their ops: test_nn_normalization.py; the dropouts and the random
# and in-place Scalar ops under them: test_nn_dropout.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_normalization.py"
        for name in (
            "rms_norm.default linalg_vector_norm.default clamp_min.default clamp_min_.default "
            "clamp_min.out clamp_min.Tensor clamp_min_.Tensor clamp_min.Tensor_out "
            "isnan.default"
        ).split()
    }
)
# the predicates, logical and bitwise ops, fmax, fmin and clamp_max:
# test_logical_and_bitwise.py compares each call (and the aten calls a dispatch mode sees)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_logical_and_bitwise.py"
        for name in (
            "logical_and.out logical_or.out logical_xor.default logical_xor_.default "
            "logical_xor.out logical_not.default logical_not_.default logical_not.out "
            "isinf.default isposinf.default isposinf.out isneginf.default isneginf.out "
            "signbit.default signbit.out isfinite.default isreal.default isclose.default "
            "allclose.default equal.default fmax.default fmax.out fmin.default fmin.out "
            "clamp_max.default clamp_max_.default clamp_max.out clamp_max.Tensor "
            "clamp_max_.Tensor clamp_max.Tensor_out"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{op}.{overload}": "test_logical_and_bitwise.py"
        for op, overloads in {
            "isin": "Tensor_Tensor Tensor_Tensor_out Tensor_Scalar Tensor_Scalar_out "
            "Scalar_Tensor Scalar_Tensor_out",
            "bitwise_and": "Tensor Tensor_out Scalar Scalar_out Scalar_Tensor",
            "bitwise_or": "Tensor Tensor_out Scalar Scalar_out Scalar_Tensor",
            "bitwise_xor": "Tensor Tensor_out Scalar Scalar_out Scalar_Tensor",
            "bitwise_and_": "Tensor Scalar",
            "bitwise_or_": "Tensor Scalar",
            "bitwise_xor_": "Tensor Scalar",
            "bitwise_not": "default out",
            "bitwise_not_": "default",
            "bitwise_left_shift": "Tensor Tensor_out Tensor_Scalar Tensor_Scalar_out Scalar_Tensor",
            "bitwise_right_shift": "Tensor Tensor_out Tensor_Scalar Tensor_Scalar_out Scalar_Tensor",
            "bitwise_left_shift_": "Tensor Tensor_Scalar",
            "bitwise_right_shift_": "Tensor Tensor_Scalar",
            "__and__": "Tensor Scalar",
            "__or__": "Tensor Scalar",
            "__xor__": "Tensor Scalar",
            "__iand__": "Tensor Scalar",
            "__ior__": "Tensor Scalar",
            "__ixor__": "Tensor Scalar",
            "__lshift__": "Tensor Scalar",
            "__rshift__": "Tensor Scalar",
            "__ilshift__": "Tensor Scalar",
            "__irshift__": "Tensor Scalar",
        }.items()
        for overload in overloads.split()
    }
)
# the shape ops and rounded division: test_shape_ops.py compares each call (values, strides,
# nodes and the aten calls a dispatch mode sees); test_opinfo.py runs their samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_shape_ops.py"
        for name in (
            "div.Tensor_mode div_.Tensor_mode div.out_mode div.Scalar_mode div_.Scalar_mode "
            "squeeze.dims squeeze_.dims cat.out flip.default flip.out roll.default roll.out "
            "rot90.default rot90.out tril.default tril_.default tril.out triu.default "
            "triu_.default triu.out diag_embed.default diag_embed.out block_diag.default "
            "block_diag.out fliplr.default "
            "flipud.default tile.default diag.default diag.out diagflat.default "
            "movedim.intlist movedim.int moveaxis.intlist moveaxis.int swapaxes.default "
            "swapaxes_.default swapdims.default swapdims_.default ravel.default "
            "atleast_1d.default atleast_1d.Sequence atleast_2d.default atleast_2d.Sequence "
            "atleast_3d.default atleast_3d.Sequence hstack.default hstack.out vstack.default "
            "vstack.out row_stack.default row_stack.out dstack.default dstack.out "
            "column_stack.default column_stack.out tensor_split.sections tensor_split.indices "
            "tensor_split.tensor_indices_or_sections hsplit.int hsplit.array vsplit.int "
            "vsplit.array dsplit.int dsplit.array broadcast_to.default meshgrid.default "
            "meshgrid.indexing cartesian_prod.default"
        ).split()
    }
)
# the unique family, index_reduce and combinations: test_unique_index_reduce.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_unique_index_reduce.py"
        for name in (
            "_unique2.default unique_dim.default unique_consecutive.default "
            "unique_dim_consecutive.default index_reduce.default index_reduce_.default "
            "index_reduce.out combinations.default"
        ).split()
    }
)
# resize_ and resize_as_: test_resize.py
TESTED_ELSEWHERE.update(
    {f"aten.{name}": "test_resize.py" for name in "resize_.default resize_as_.default".split()}
)
# searchsorted and bucketize: test_searchsorted.py (every overload, out= and errors)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_searchsorted.py"
        for name in (
            "searchsorted.Tensor searchsorted.Tensor_out searchsorted.Scalar "
            "searchsorted.Scalar_out bucketize.Tensor bucketize.Tensor_out bucketize.Scalar"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_dropout.py"
        for name in (
            "add_.Scalar sub_.Scalar mul_.Scalar div_.Scalar bernoulli_.float bernoulli_.Tensor "
            "bernoulli.default dropout.default dropout_.default feature_dropout.default "
            "feature_dropout_.default alpha_dropout.default alpha_dropout_.default "
            "feature_alpha_dropout.default feature_alpha_dropout_.default new_empty.default"
        ).split()
    }
)
# the convolution and pooling family: test_nn_conv.py and test_nn_pooling.py compare each
# with torch (forward, gradients, second derivatives, tangents, nodes, saved fields, modes)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_conv.py / test_nn_pooling.py"
        for name in (
            "convolution.default convolution_backward.default conv1d.default conv1d.padding "
            "conv2d.default conv2d.padding conv3d.default conv3d.padding "
            "conv_transpose1d.default conv_transpose2d.input conv_transpose3d.input "
            "constant_pad_nd.default max_pool2d.default max_pool2d_with_indices.default "
            "max_pool2d_with_indices_backward.default avg_pool2d.default "
            "avg_pool2d_backward.default adaptive_avg_pool2d.default "
            "_adaptive_avg_pool2d.default _adaptive_avg_pool2d_backward.default "
            "max_pool3d.default max_pool3d_with_indices.default "
            "max_pool3d_with_indices_backward.default avg_pool3d.default "
            "avg_pool3d_backward.default adaptive_avg_pool3d.default "
            "_adaptive_avg_pool3d.default _adaptive_avg_pool3d_backward.default"
        ).split()
    }
)
# the 1-d and adaptive max poolings: test_nn_pooling_1d.py and test_opinfo.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_pooling_1d.py and test_opinfo.py"
        for name in (
            "max_pool1d.default max_pool1d_with_indices.default avg_pool1d.default "
            "adaptive_avg_pool1d.default adaptive_max_pool1d.default "
            "adaptive_max_pool2d.default adaptive_max_pool2d_backward.default "
            "adaptive_max_pool3d.default adaptive_max_pool3d_backward.default"
        ).split()
    }
)
# the max unpoolings: test_nn_pooling_unpool.py and test_opinfo.py
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_pooling_unpool.py and test_opinfo.py"
        for name in "max_unpool2d.default max_unpool3d.default".split()
    }
)
# the losses: loss_decompositions.py holds the composites (the recorder above sees only
# decompositions.py's own); test_nn_losses*.py and test_opinfo.py compare each with torch
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_losses.py and test_opinfo.py"
        for name in (
            "cross_entropy_loss.default nll_loss_nd.default nll_loss.default "
            "nll_loss2d.default l1_loss.default"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_losses_pointwise.py and test_opinfo.py"
        for name in (
            "smooth_l1_loss.default smooth_l1_loss_backward.default huber_loss.default "
            "huber_loss_backward.default soft_margin_loss.default "
            "soft_margin_loss_backward.default xlogy.Tensor kl_div.default "
            "poisson_nll_loss.default margin_ranking_loss.default hinge_embedding_loss.default"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_losses_distance.py and test_opinfo.py"
        for name in (
            "norm.ScalarOpt_dim minimum.default cosine_similarity.default "
            "pairwise_distance.default cosine_embedding_loss.default triplet_margin_loss.default"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_losses_margin.py and test_opinfo.py"
        for name in (
            "multi_margin_loss.default multi_margin_loss_backward.default "
            "multilabel_margin_loss.default multilabel_margin_loss_forward.default "
            "multilabel_margin_loss_backward.default"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_losses_ctc.py and test_opinfo.py"
        for name in (
            "ctc_loss.IntList ctc_loss.Tensor _ctc_loss.default _ctc_loss.Tensor "
            "_ctc_loss_backward.default _ctc_loss_backward.Tensor"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_losses_distance.py and test_opinfo.py"
        for name in "pdist.default _pdist_forward.default _pdist_backward.default".split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_nn_attention.py and test_opinfo.py"
        for name in (
            "scaled_dot_product_attention.default _safe_softmax.default "
            "_scaled_dot_product_flash_attention_for_cpu.default "
            "_scaled_dot_product_flash_attention_for_cpu_backward.default"
        ).split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_inplace_basics.py (out= variants)"
        for name in (
            "add.out sub.out mul.out div.out neg.out exp.out tanh.out sigmoid.out "
            "pow.Tensor_Scalar_out clamp.out clamp.Tensor_out mm.out"
        ).split()
    }
)
# upsampling: test_nn_resample_interpolate.py compares every op (forward, gradients, second
# derivatives, tangents, nodes, saved fields, errors) and test_opinfo.py runs torch's
# interpolate samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{op}{suffix}": "test_nn_resample_interpolate.py and test_opinfo.py"
        for op in (
            "upsample_nearest1d upsample_nearest2d upsample_nearest3d _upsample_nearest_exact1d "
            "_upsample_nearest_exact2d _upsample_nearest_exact3d upsample_linear1d "
            "upsample_bilinear2d upsample_trilinear3d upsample_bicubic2d"
        ).split()
        for suffix in (".vec", ".default", "_backward.default")
    }
)

# antialiased upsampling: test_interpolate_antialias.py and test_interpolate_uint8.py compare
# every op (values, gradients, second derivatives, tangents, nodes, saved fields, errors; uint8
# bit for bit) and test_opinfo.py runs torch's _upsample_bilinear2d_aa samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{op}{suffix}": "test_interpolate_antialias.py and test_interpolate_uint8.py"
        for op in ("_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa", "_upsample_lanczos2d_aa")
        for suffix in (".vec", ".default", "_backward.default")
    }
)

# sliding blocks and grid sampling: test_fold.py and test_grid_sample.py compare each with
# torch (values, gradients, second derivatives, tangents, nodes, saved fields, errors), and
# test_opinfo.py runs torch's samples
TESTED_ELSEWHERE.update(
    {f"aten.{name}.default": "test_fold.py and test_opinfo.py" for name in ("im2col", "col2im")}
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_grid_sample.py"
        for name in ("affine_grid_generator", "affine_grid_generator_backward")
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_grid_sample.py and test_opinfo.py"
        for name in (
            "grid_sampler grid_sampler_2d grid_sampler_2d_backward grid_sampler_3d "
            "grid_sampler_3d_backward"
        ).split()
    }
)

# batched matmul: test_baddbmm.py compares each variant with torch (values, gradients, second
# derivatives, tangents, node, saved fields, errors) and test_opinfo.py runs torch's samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_baddbmm.py and test_opinfo.py"
        for name in ("baddbmm.default", "baddbmm_.default", "baddbmm.out")
    }
)
TESTED_ELSEWHERE["aten.unflatten.int"] = "test_unflatten.py and test_opinfo.py"
# the statistical reductions: test_stats_reductions.py (incl. every out= form) and their OpInfos
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_stats_reductions.py and test_opinfo.py"
        for name in (
            "prod.default prod.dim_int prod.int_out nansum.default nansum.out nanmean.default "
            "nanmean.out all.default all.all_out all.dim all.out all.dims all.dims_out "
            "any.default any.all_out any.dim any.out any.dims any.dims_out "
            "count_nonzero.default count_nonzero.dim_IntList var.dim var.correction "
            "var.correction_out var.out var.default std.dim std.correction std.correction_out "
            "std.out std.default var_mean.dim var_mean.correction var_mean.default "
            "std_mean.dim std_mean.correction std_mean.default"
        ).split()
    }
)
# quantile, nanquantile, cov, corrcoef, histc and bincount, and the rounding ops and lerp that
# quantile calls: test_quantile_cov_hist.py compares values, nodes, the aten calls a mode sees,
# out=, errors and gradients with torch (new_ones is among cov's logged calls), and
# test_opinfo.py runs torch's samples (bincount's int64 samples run in the former)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_quantile_cov_hist.py and test_opinfo.py"
        for name in (
            "floor.default floor_.default floor.out ceil.default ceil_.default ceil.out "
            "round.default round_.default round.out round.decimals round_.decimals "
            "round.decimals_out lerp.Scalar lerp_.Scalar lerp.Scalar_out lerp.Tensor "
            "lerp_.Tensor lerp.Tensor_out quantile.default quantile.scalar quantile.out "
            "quantile.scalar_out nanquantile.default nanquantile.scalar nanquantile.out "
            "nanquantile.scalar_out cov.default corrcoef.default histc.default histc.out "
            "bincount.default bincount.out new_ones.default"
        ).split()
    }
)


TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_view_copies.py and test_opinfo.py"
        for name in (
            "alias_copy.default alias_copy.out as_strided_copy.default as_strided_copy.out "
            "diagonal_copy.default diagonal_copy.out expand_copy.default expand_copy.out "
            "narrow_copy.default narrow_copy.out permute_copy.default permute_copy.out "
            "select_copy.int select_copy.int_out slice_copy.Tensor slice_copy.Tensor_out "
            "split_copy.Tensor split_copy.Tensor_out split_with_sizes_copy.default "
            "split_with_sizes_copy.out unbind_copy.int_out squeeze_copy.default "
            "squeeze_copy.out squeeze_copy.dim squeeze_copy.dim_out squeeze_copy.dims "
            "squeeze_copy.dims_out t_copy.default t_copy.out transpose_copy.int "
            "transpose_copy.int_out unbind_copy.int unfold_copy.default unfold_copy.out "
            "unsqueeze_copy.default unsqueeze_copy.out view_copy.default view_copy.out "
            "view_copy.dtype view_copy.dtype_out view.dtype"
        ).split()
    }
)

TESTED_ELSEWHERE.update(
    {
        f"aten.{name}.default": "test_svd.py and test_opinfo.py"
        for name in "_linalg_svd linalg_svd linalg_svdvals svd".split()
    }
)

# The unary math ops of issue 15 (acos ... frexp, the arc* aliases, fix, positive, and
# special_i1 and logit_backward, which their formulas call): test_unary_math.py compares
# values over dtypes, in-place and out= variants, nodes and saved fields, the aten calls a
# mode sees forward and backward, derivatives of both orders, tangents and errors with
# torch; test_opinfo.py runs torch's samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_unary_math.py and test_opinfo.py"
        for name in (
            "acos.default acos_.default acos.out asin.default asin_.default asin.out atan.default "
            "atan_.default atan.out acosh.default acosh_.default acosh.out asinh.default "
            "asinh_.default asinh.out atanh.default atanh_.default atanh.out arccos.default "
            "arccos_.default arccos.out arcsin.default arcsin_.default arcsin.out arctan.default "
            "arctan_.default arctan.out arccosh.default arccosh_.default arccosh.out arcsinh.default "
            "arcsinh_.default arcsinh.out arctanh.default arctanh_.default arctanh.out sinh.default "
            "sinh_.default sinh.out cosh.default cosh_.default cosh.out tan.default tan_.default "
            "tan.out trunc.default trunc_.default trunc.out fix.default fix_.default fix.out "
            "frac.default frac_.default frac.out erf.default erf_.default erf.out erfc.default "
            "erfc_.default erfc.out erfinv.default erfinv_.default erfinv.out exp2.default "
            "exp2_.default exp2.out expm1.default expm1_.default expm1.out log2.default log2_.default "
            "log2.out log10.default log10_.default log10.out deg2rad.default deg2rad_.default "
            "deg2rad.out rad2deg.default rad2deg_.default rad2deg.out positive.default lgamma.default "
            "lgamma_.default lgamma.out digamma.default digamma_.default digamma.out "
            "polygamma.default polygamma.out polygamma_.default mvlgamma.default mvlgamma_.default "
            "mvlgamma.out i0.default i0_.default i0.out special_i1.default special_i1.out "
            "sinc.default sinc_.default sinc.out logit.default logit_.default logit.out "
            "logit_backward.default nan_to_num.default nan_to_num_.default nan_to_num.out "
            "frexp.Tensor frexp.Tensor_out "
        ).split()
    }
)


# The binary math ops of issue 15 (atan2 ... float_power, igamma, igammac, the aten ops
# special_xlog1py and special_zeta, xlogy's other overloads, and pow's out= variants
# float_power's out= calls):
# test_binary_math.py compares values over dtype pairs and wrapped numbers, in-place and
# out= variants, nodes and saved fields, the aten calls a mode sees forward and backward,
# derivatives of both orders, tangents and errors with torch; test_opinfo.py runs torch's
# samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_binary_math.py and test_opinfo.py"
        for name in (
            "xlogy_.Tensor xlogy.OutTensor xlogy.Scalar_Self xlogy.OutScalar_Self "
            "xlogy.Scalar_Other xlogy_.Scalar_Other xlogy.OutScalar_Other "
            "pow.Tensor_Tensor_out pow.Scalar_out atan2.default atan2_.default atan2.out "
            "arctan2.default arctan2_.default arctan2.out hypot.default hypot_.default "
            "hypot.out logaddexp.default logaddexp.out logaddexp2.default logaddexp2.out "
            "copysign.Tensor copysign_.Tensor copysign.out copysign.Scalar copysign_.Scalar "
            "copysign.Scalar_out heaviside.default heaviside_.default heaviside.out "
            "nextafter.default nextafter_.default nextafter.out ldexp.Tensor ldexp_.default "
            "ldexp.out fmod.Scalar fmod_.Scalar fmod.Scalar_out fmod.Tensor fmod_.Tensor "
            "fmod.Tensor_out remainder_.Scalar remainder.Scalar_out remainder.Tensor "
            "remainder_.Tensor remainder.Tensor_out remainder.Scalar_Tensor "
            "floor_divide.default floor_divide_.Tensor floor_divide.out floor_divide.Scalar "
            "floor_divide_.Scalar true_divide.Tensor true_divide_.Tensor true_divide.out "
            "true_divide.Scalar true_divide_.Scalar addcmul.default addcmul_.default "
            "addcmul.out addcdiv.default addcdiv_.default addcdiv.out float_power.Tensor_Tensor "
            "float_power.Tensor_Tensor_out float_power.Tensor_Scalar "
            "float_power.Tensor_Scalar_out float_power.Scalar float_power.Scalar_out "
            "float_power_.Scalar float_power_.Tensor igamma.default igamma_.default igamma.out "
            "igammac.default igammac_.default igammac.out special_xlog1py.default "
            "special_xlog1py.out special_xlog1py.self_scalar special_xlog1py.self_scalar_out "
            "special_xlog1py.other_scalar special_xlog1py.other_scalar_out special_zeta.default "
            "special_zeta.out special_zeta.self_scalar special_zeta.self_scalar_out "
            "special_zeta.other_scalar special_zeta.other_scalar_out"
        ).split()
    }
)


def _all_overloads():
    from codegen import model

    loaded = model.load(ROOT / "derivatives.yaml")
    names = {}
    for entry in loaded.entries:
        for schema in (entry.schema, entry.inplace, entry.out):
            if schema is not None:
                overload = schema.overload_name or "default"
                names[f"aten.{schema.base_name}.{overload}"] = entry
    return names


def _seen_overloads(monkeypatch):
    seen = set()
    for name in dir(decompositions):
        fn = getattr(decompositions, name)
        if callable(fn) and not name.startswith("_") and fn.__module__ == decompositions.__name__:

            def record(*args, _fn=fn, _name=name, **kwargs):
                seen.add(_name)
                return _fn(*args, **kwargs)

            monkeypatch.setattr(decompositions, name, record)
    with logging_mode_class(og)() as mode:
        for case in cases.CASES:
            cases.run(og, case)
            if case.differentiable:
                cases.second_gradients(og, case)
    return set(mode.log), seen


# the matmul family (issue 15 point 3): test_matmul_family.py compares each with torch and
# test_opinfo.py runs torch's samples
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_matmul_family.py and test_opinfo.py"
        for name in (
            "addmv.default addmv_.default addmv.out addr.default addr_.default addr.out "
            "addbmm.default addbmm_.default addbmm.out vdot.default vdot.out outer.default "
            "outer.out ger.default ger.out inner.default inner.out kron.default kron.out "
            "tensordot.default tensordot.out chain_matmul.default chain_matmul.out "
            "linalg_multi_dot.default linalg_multi_dot.out matrix_power.default matrix_power.out "
            "linalg_matrix_power.default linalg_matrix_power.out linalg_cross.default "
            "linalg_cross.out cross.default cross.out cdist.default _cdist_forward.default "
            "_cdist_forward.out _cdist_backward.default _cdist_backward.out "
            "_euclidean_dist.default _euclidean_dist.out einsum.default"
        ).split()
    }
)


def test_every_yaml_overload_is_compared_with_pytorch(monkeypatch):
    pytest.importorskip("yaml")
    overloads = _all_overloads()
    logged, composites_called = _seen_overloads(monkeypatch)
    missing = []
    for name, entry in overloads.items():
        if (
            entry.composite
            and name == f"aten.{entry.schema.base_name}.{entry.schema.overload_name or 'default'}"
        ):
            if entry.composite not in composites_called and name not in TESTED_ELSEWHERE:
                missing.append(name)
        elif name not in logged and name not in TESTED_ELSEWHERE:
            missing.append(name)
    assert missing == [], f"ops without a PyTorch comparison test: {missing}"


# torch.special (issue 15): test_special.py compares every function's values over dtypes
# and edge values, the polynomials' three overloads and their out= variants, out= of the
# others, nodes, saved fields and backward calls of the differentiable ones, derivatives
# of both orders, tangents and errors with torch; test_opinfo.py runs torch's samples. Also
# sgn's and sign's in-place and out= variants, and log1p's and logsumexp's out=.
_SPECIAL_POLYNOMIALS = (
    "chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
    "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
    "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
    "laguerre_polynomial_l legendre_polynomial_p"
).split()
_SPECIAL_UNARY = (
    "entr erfcx i0e i1e log_ndtr ndtri airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 "
    "modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
    "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 expit erf erfc "
    "erfinv exp2 expm1 gammaln digamma psi i0 log1p logit multigammaln polygamma round sinc "
    "logsumexp ndtr"
).split()
TESTED_ELSEWHERE.update(
    {
        f"aten.special_{name}.{overload}": "test_special.py and test_opinfo.py"
        for name in _SPECIAL_POLYNOMIALS
        for overload in "default out x_scalar x_scalar_out n_scalar n_scalar_out".split()
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.special_{name}.{overload}": "test_special.py and test_opinfo.py"
        for name in _SPECIAL_UNARY
        for overload in ("default", "out")
    }
)
TESTED_ELSEWHERE.update(
    {
        f"aten.{name}": "test_special.py"
        for name in (
            "special_softmax.default special_log_softmax.default sgn_.default sgn.out "
            "special_xlogy.default special_xlogy.self_scalar special_xlogy.other_scalar "
            "special_xlogy.out special_xlogy.self_scalar_out special_xlogy.other_scalar_out "
            "special_gammainc.default special_gammainc.out special_gammaincc.default "
            "special_gammaincc.out "
            "sign_.default sign.out log1p.out logsumexp.out"
        ).split()
    }
)

# as_strided_ (issue 16, the reference's in-place view ops): test_custom_function_views.py
TESTED_ELSEWHERE["aten.as_strided_.default"] = "test_custom_function_views.py"
