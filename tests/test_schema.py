"""The schema parser shared by codegen and the runtime."""

import pytest

from opgrad.schema import SchemaError, parse_schema

SCHEMAS = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    "_foreach_add.List(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]",
    "my::op(Tensor x) -> ()",
]


@pytest.mark.parametrize("text", SCHEMAS)
def test_str_round_trips(text):
    assert str(parse_schema(text)) == text


def test_arguments_carry_types_defaults_and_kwarg_only():
    s = parse_schema(SCHEMAS[3])
    self_, dim, keepdim, dtype = s.arguments
    assert (s.name, s.overload_name) == ("sum", "dim_IntList")
    assert dim.type.is_list and dim.type.list_size == 1 and dim.type.optional
    assert not dim.has_default
    assert keepdim.default_value is False and not keepdim.kwarg_only
    assert dtype.kwarg_only and dtype.default_value is None


def test_alias_annotations_mark_views_and_mutation():
    inplace = parse_schema(SCHEMAS[1])
    view = parse_schema(SCHEMAS[2])
    out = parse_schema(SCHEMAS[7])
    assert inplace.is_inplace and inplace.is_mutable and not inplace._is_view_op()
    assert view._is_view_op() and not view.is_mutable
    assert out.is_out and not out.is_inplace
    split = parse_schema(SCHEMAS[4])
    assert split.arguments[0].alias_info.after_set == ("*",)


def test_named_returns_and_namespace():
    s = parse_schema(SCHEMAS[5])
    assert [r.name for r in s.returns] == ["values", "indices"]
    assert parse_schema(SCHEMAS[-1]).namespace == "my"
    assert parse_schema(SCHEMAS[-1]).returns == ()


def test_defaults_become_python_values():
    s = parse_schema(
        "f(int[2] stride=1, int[] pad=[0, 1], float eps=1e-05, str mode='none') -> Tensor"
    )
    assert [a.default_value for a in s.arguments] == [(1, 1), (0, 1), 1e-05, "none"]


@pytest.mark.parametrize(
    "text, phrase",
    [
        ("mul(Tensr self) -> Tensor", "unknown type"),
        ("mul(Tensor self", "expected 'name(args) -> returns'"),
        ("mul(Tensor self)", "missing '-> returns'"),
        ("mul(Tensor self, Tensor self) -> Tensor", "duplicate argument name"),
        ("mul(Tensor) -> Tensor", "argument without a name"),
        ("m-ul(Tensor self) -> Tensor", "bad operator name"),
        ("mul(Tensor self, *, *, Tensor o) -> Tensor", "'*' appears twice"),
    ],
)
def test_bad_schemas_say_what_is_wrong(text, phrase):
    with pytest.raises(SchemaError, match=phrase.replace("(", r"\(").replace(")", r"\)")):
        parse_schema(text)
