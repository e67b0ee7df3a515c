"""opgrad.nn.functional has torch 2.13's names, argument names and defaults for the
functions issue 13 brings so far (softmax family, activations, losses, linear and
normalisation, dropout)."""

from __future__ import annotations

import inspect

import pytest

import opgrad as og
import opgrad.nn.functional as F

#: the torch.nn.functional names this part of the surface covers
NAMES = (
    "softmax log_softmax softmin gumbel_softmax relu relu_ relu6 elu elu_ selu selu_ celu "
    "celu_ gelu silu mish softplus softsign hardtanh hardtanh_ hardsigmoid hardswish "
    "leaky_relu leaky_relu_ prelu rrelu rrelu_ logsigmoid tanhshrink softshrink hardshrink "
    "threshold threshold_ glu sigmoid tanh "
    # losses
    "cross_entropy nll_loss mse_loss l1_loss binary_cross_entropy binary_cross_entropy_with_logits "
    "smooth_l1_loss huber_loss soft_margin_loss kl_div poisson_nll_loss gaussian_nll_loss "
    "margin_ranking_loss hinge_embedding_loss multilabel_soft_margin_loss "
    "cosine_similarity pairwise_distance pdist cosine_embedding_loss triplet_margin_loss "
    "triplet_margin_with_distance_loss multi_margin_loss multilabel_margin_loss ctc_loss "
    # linear and normalisation
    "linear bilinear local_response_norm layer_norm batch_norm instance_norm group_norm rms_norm normalize "
    # dropout
    "dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout "
    # padding and pixel rearrangement
    "pad pixel_shuffle pixel_unshuffle channel_shuffle "
    # attention
    "scaled_dot_product_attention multi_head_attention_forward "
    # embeddings
    "embedding embedding_bag one_hot "
    # convolution and pooling
    "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
    "max_pool2d max_pool2d_with_indices max_pool3d max_pool3d_with_indices "
    "avg_pool2d avg_pool3d adaptive_avg_pool2d adaptive_avg_pool3d "
    # upsampling and sampling
    "interpolate upsample upsample_nearest upsample_bilinear unfold fold affine_grid grid_sample "
    # the other poolings
    "max_pool1d max_pool1d_with_indices avg_pool1d adaptive_avg_pool1d "
    "adaptive_max_pool1d adaptive_max_pool1d_with_indices adaptive_max_pool2d "
    "adaptive_max_pool2d_with_indices adaptive_max_pool3d adaptive_max_pool3d_with_indices "
    "lp_pool1d lp_pool2d lp_pool3d max_unpool1d max_unpool2d max_unpool3d "
    "fractional_max_pool2d fractional_max_pool2d_with_indices fractional_max_pool3d "
    "fractional_max_pool3d_with_indices"
).split()


@pytest.mark.parametrize("name", NAMES)
def test_torch_has_the_name_and_opgrad_too(torch, name):
    assert hasattr(torch.nn.functional, name)
    assert callable(getattr(F, name, None)), f"opgrad.nn.functional lacks {name}"


def test_all_lists_every_name():
    assert sorted(F.__all__) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_python_functions_have_torch_signature(torch, name):
    expected = getattr(torch.nn.functional, name)
    if not inspect.isfunction(expected):
        pytest.skip(f"torch's {name} is a C binding without a Python signature")
    got = inspect.signature(getattr(F, name))
    want = inspect.signature(expected)
    assert [(p.name, p.default, p.kind) for p in got.parameters.values()] == [
        (p.name, p.default, p.kind) for p in want.parameters.values()
    ]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp", "relu_", "prelu"])
def test_torch_functions_exist(torch, name):
    assert hasattr(torch, name) and callable(getattr(og, name, None))


@pytest.mark.parametrize(
    "name", ["softmax", "log_softmax", "logsumexp", "relu", "relu_", "hardshrink", "prelu"]
)
def test_tensor_methods_exist(torch, name):
    assert hasattr(torch.Tensor, name) and hasattr(og.Tensor, name)
