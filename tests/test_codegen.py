"""codegen: validation errors located at derivatives.yaml:LINE, --check, determinism."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# codegen's own dependencies come with the dev extra the test command installs: without
# them this module fails at collection rather than skipping its tests.
import black  # noqa: F401
import jinja2  # noqa: F401
import yaml  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codegen import gen  # noqa: E402
from codegen import model as m  # noqa: E402

GOOD_ENTRY = """\
- name: neg(Tensor self) -> Tensor
  cpu: np.negative(self)
  self: grad.neg()
  result: auto_linear
"""


def load_text(tmp_path: Path, text: str) -> m.Model:
    path = tmp_path / "derivatives.yaml"
    path.write_text(textwrap.dedent(text))
    return m.load(path)


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(m.ModelError) as info:
        load_text(tmp_path, text)
    return str(info.value)


def test_a_good_entry_loads(tmp_path):
    model = load_text(tmp_path, GOOD_ENTRY)
    (entry,) = model.entries
    assert entry.op_name == "neg"
    assert entry.differentiable_inputs == ("self",)
    assert m.node_class_name(entry, model.entries) == "NegBackward0"


def test_unknown_name_in_formula_is_located(tmp_path):
    text = GOOD_ENTRY + """\

- name: exp(Tensor self) -> Tensor
  cpu: np.exp(self)
  self: grad * reslt
  result: auto_element_wise
"""
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:8: exp: unknown name 'reslt' in formula for self"
    )


CHECKED_ENTRY = """\
- name: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  cpu: k.sub(self, other, alpha)
  check: {check}
  dtype: promote
  unpromoted: alpha
  self: grad
  other: maybe_multiply(-grad, alpha)
  result: self_t - maybe_multiply(other_t, alpha)
"""


def test_check_runs_first_on_the_arguments_as_given(tmp_path):
    model = load_text(tmp_path, CHECKED_ENTRY.format(check="k.sub_check(self, other)"))
    (entry,) = model.entries
    assert entry.check == "k.sub_check(self, other)"
    from codegen import template_context

    (overload,) = [ov for ov in template_context.overloads_of(entry) if ov.kind == "functional"]
    prelude = template_context.cpu_kernel(overload).prelude
    assert prelude[0] == "k.sub_check(self, other)"
    assert "promote2" in prelude[1]


@pytest.mark.parametrize(
    "check, problem",
    [
        ("k.sub_check(self, othr)", "unknown name 'othr' in check"),
        ("k.sub_check(self,", "check is not a Python expression: '(' was never closed"),
    ],
)
def test_bad_check_is_located(tmp_path, check, problem):
    assert error_of(tmp_path, CHECKED_ENTRY.format(check=check)) == (
        f"derivatives.yaml:3: sub.Tensor: {problem}"
    )


def test_check_needs_a_cpu_kernel(tmp_path):
    text = """\
- name: reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
  composite: reshape
  check: k.sub_check(self, self)
"""
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:3: reshape: only an op with a cpu kernel has a check"
    )


TOPK_ENTRY = """\
- name: topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
  cpu: {cpu}
  output_differentiability: [False, False]
"""


def test_an_argument_named_k_needs_the_kernels_module_by_its_long_name(tmp_path):
    assert error_of(tmp_path, TOPK_ENTRY.format(cpu="k.topk(self, k, dim, largest, sorted)")) == (
        "derivatives.yaml:2: topk: argument 'k' hides the kernels module k: name it "
        "numpy_kernels"
    )
    model = load_text(
        tmp_path, TOPK_ENTRY.format(cpu="numpy_kernels.topk(self, k, dim, largest, sorted)")
    )
    assert model.entries[0].op_name == "topk"


UNPROMOTED_ENTRY = """\
- name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  cpu: k.add(self, other, alpha)
  dtype: promote
  unpromoted: {names}
  self: grad
  result: self_t.clone()
"""


def test_unpromoted_scalars_stay_out_of_type_promotion(tmp_path):
    from codegen import template_context

    for names, promoted in (("alpha", "(other,)"), ("alpha, other", None)):
        model = load_text(tmp_path, UNPROMOTED_ENTRY.format(names=names))
        (entry,) = model.entries
        (overload,) = [ov for ov in template_context.overloads_of(entry) if ov.kind == "functional"]
        prelude = template_context.cpu_kernel(overload).prelude
        if promoted:
            assert prelude == [f"self, = promote((self,), {promoted}, False)"]
        else:
            assert prelude == ["self = self._data"]


def test_unpromoted_must_name_a_scalar_input(tmp_path):
    for names in ("alpah", "self"):
        assert error_of(tmp_path, UNPROMOTED_ENTRY.format(names=names)) == (
            f"derivatives.yaml:4: add.Scalar: unpromoted names '{names}', which is no Scalar "
            "input"
        )


def test_input_without_formula_is_an_error(tmp_path):
    text = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  cpu: np.multiply(self, other)
  self: grad * other
  result: self_t * other_p
"""
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:1: mul.Tensor: input 'other' has no formula and is not marked "
        "non_differentiable"
    )


def test_non_differentiable_input_needs_no_formula(tmp_path):
    text = """\
- name: where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
  cpu: np.where(condition, self, other)
  condition: non_differentiable
  self: where(condition, grad, 0)
  other: where(condition, 0, grad)
  result: where(condition, self_t, other_t)
"""
    (entry,) = load_text(tmp_path, text).entries
    assert entry.differentiable_inputs == ("self", "other")
    assert [f.name for f in entry.saved] == ["condition"]


def test_bad_schema_is_located(tmp_path):
    text = GOOD_ENTRY + """\

- name: exp(Tensr self) -> Tensor
  cpu: np.exp(self)
"""
    message = error_of(tmp_path, text)
    assert message.startswith("derivatives.yaml:6: exp: bad schema: unknown type 'Tensr'")


def test_duplicate_overload_is_located(tmp_path):
    text = GOOD_ENTRY + "\n" + GOOD_ENTRY
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:6: neg: duplicate overload neg (first at line 1)"
    )


def test_duplicate_through_an_inplace_variant(tmp_path):
    text = """\
- name: neg(Tensor self) -> Tensor
  cpu: np.negative(self)
  self: grad.neg()
  result: auto_linear
  inplace: neg_(Tensor(a!) self) -> Tensor(a!)

- name: neg_(Tensor(a!) self) -> Tensor(a!)
  cpu: np.negative(self)
  self: grad.neg()
  result: auto_linear
"""
    assert "duplicate overload neg_" in error_of(tmp_path, text)


def test_forward_formula_is_required(tmp_path):
    text = """\
- name: neg(Tensor self) -> Tensor
  cpu: np.negative(self)
  self: grad.neg()
"""
    assert "need a forward-mode formula" in error_of(tmp_path, text)


def test_forward_formula_rejects_bare_differentiable_names(tmp_path):
    text = """\
- name: neg(Tensor self) -> Tensor
  cpu: np.negative(self)
  self: grad.neg()
  result: -self
"""
    assert "unknown name 'self' in forward formula (use <name>_p" in error_of(tmp_path, text)


def test_formula_for_a_non_input(tmp_path):
    text = """\
- name: neg(Tensor self) -> Tensor
  cpu: np.negative(self)
  self: grad.neg()
  other: grad
  result: auto_linear
"""
    assert error_of(tmp_path, text).startswith(
        "derivatives.yaml:4: neg: unknown key or input 'other'"
    )


def test_metadata_reads_save_metadata_not_tensors(tmp_path):
    text = """\
- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  cpu: k.sum(self, None, False, dtype)
  self: grad.expand(self.sym_sizes())
  result: auto_linear
"""
    (entry,) = load_text(tmp_path, text).entries
    assert [(f.name, f.kind) for f in entry.saved] == [("self_sym_sizes", "metadata")]


def test_sizes_of_an_optional_tensor_save_an_optional_array(tmp_path):
    """PyTorch's ``bias->sym_sizes()`` on a ``Tensor?``: ``_saved_bias_sym_sizes_opt``,
    None when the tensor is absent."""
    text = """\
- name: addb(Tensor self, Tensor? bias) -> Tensor
  cpu: self
  self: grad
  bias: grad.sum_to_size(bias.sym_sizes())
  result: auto_linear
"""
    (entry,) = load_text(tmp_path, text).entries
    saved = [(f.name, f.kind, f.metadata) for f in entry.saved]
    assert saved == [("bias_sym_sizes_opt", "metadata", "sym_sizes_opt")]
    from codegen.template_context import metadata_expr

    assert metadata_expr("bias", "sym_sizes_opt") == (
        "(bias._data.shape if bias is not None else None)"
    )


def test_a_method_with_one_overload_becomes_an_entry_call(tmp_path):
    text = """\
- name: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  cpu: k.expand(self, size)
  self: grad.sum_to_size(self.sym_sizes())
  result: auto_linear
- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  cpu: k.sum(self, None, False, dtype)
  self: grad.expand(self.sym_sizes())
  result: auto_linear
- name: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
  cpu: k.sum(self, dim, keepdim, dtype)
  self: grad.expand(self.sym_sizes()).sum().expand(self.sym_sizes(), 1)
  result: auto_linear
"""
    _, total, by_dim = load_text(tmp_path, text).entries
    # one overload, its positional arguments exactly: the op's entry, no overload resolution
    assert total.formulas[0].expr == "aten.expand(grad, self_sym_sizes)"
    # sum has two overloads, and a call with more arguments than the schema's positional
    # ones (varargs sizes) stays a method call
    assert by_dim.formulas[0].expr == (
        "aten.expand(grad, self_sym_sizes).sum().expand(self_sym_sizes, 1)"
    )


def test_saved_inputs_are_guarded_by_the_inputs_that_need_them(tmp_path):
    text = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  cpu: np.multiply(self, other)
  self: grad * other
  other: grad * self
  result: other_t * self_p + self_t * other_p
"""
    (entry,) = load_text(tmp_path, text).entries
    assert {f.name: f.needed_by for f in entry.saved} == {"other": ("self",), "self": ("other",)}


def test_node_numbering_counts_differentiable_entries_in_file_order(tmp_path):
    text = """\
- name: pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
  cpu: np.power(self, exponent)
  self: grad * exponent
  result: auto_element_wise

- name: pow.Scalar(Scalar self, Tensor exponent) -> Tensor
  cpu: np.power(self, exponent)
  exponent: grad * result
  result: auto_element_wise

- name: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
  cpu: np.clip(self, min, max)
  node: ClampBackward1
  self: grad
  result: auto_element_wise
"""
    model = load_text(tmp_path, text)
    names = [m.node_class_name(e, model.entries) for e in model.entries]
    assert names == ["PowBackward0", "PowBackward1", "ClampBackward1"]


def test_node_prefix_follows_pytorch():
    assert m.node_prefix("_unsafe_view") == "UnsafeViewBackward"
    assert m.node_prefix("nll_loss_forward") == "NllLossBackward"
    assert m.node_prefix("squeeze_") == "SqueezeBackward"


def test_codegen_cli_reports_errors_with_location(tmp_path):
    bad = tmp_path / "derivatives.yaml"
    bad.write_text(
        "- name: exp(Tensor self) -> Tensor\n  cpu: np.exp(self)\n  self: grad * nope\n  result: auto_element_wise\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--yaml", str(bad), "--out", str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "derivatives.yaml:3: exp: unknown name 'nope' in formula for self" in proc.stderr


def test_check_names_stale_files_and_exits_1(tmp_path):
    out = tmp_path / "generated"
    cmd = [sys.executable, "-m", "codegen", "--out", str(out)]
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True).returncode == 0
    (out / "nodes.py").write_text("# edited by hand\n")
    proc = subprocess.run(cmd + ["--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "stale: generated/nodes.py" in proc.stderr
    assert "ops.py" not in proc.stderr


def test_checked_in_generated_code_is_current():
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_output_is_deterministic():
    first = gen.render_all(ROOT / "derivatives.yaml")
    second = gen.render_all(ROOT / "derivatives.yaml")
    assert first == second


def test_a_template_rendering_invalid_python_names_itself(tmp_path, monkeypatch):
    # black runs in worker processes: its refusal still reaches the caller, named
    (tmp_path / "broken.py.j2").write_text("def broken(:\n    pass\n")
    monkeypatch.setattr(gen, "TEMPLATES", tmp_path)
    monkeypatch.setattr(gen, "OUTPUTS", {"broken.py": "broken.py.j2"})
    with pytest.raises(SystemExit, match="broken.py.j2 rendered invalid Python"):
        gen.render_all(ROOT / "derivatives.yaml")


def test_codegen_does_not_import_opgrad():
    code = (
        "import sys; from codegen import gen; gen.render_all(gen.ROOT / 'derivatives.yaml'); "
        "print(any(m == 'opgrad' or m.startswith('opgrad.') for m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.strip() == "False", proc.stderr


@pytest.mark.parametrize(
    "expr, name, expected",
    [
        ("other_t * self + self_t * other", "self", "other_t * self"),
        ("other_t * self + self_t * other", "other", "self_t * other"),
        (
            "self_t + maybe_multiply(other_t, alpha)",
            "self",
            "maybe_multiply(other_t, alpha).clone()",
        ),
        ("self_t + maybe_multiply(other_t, alpha)", "other", "self_t.clone()"),
        ("self_t - maybe_multiply(other_t, alpha)", "self", "-maybe_multiply(other_t, alpha)"),
        ("(self_t - other_t * result) / other", "self", "-(other_t * result) / other"),
        ("F.mm(self_t, mat2) + F.mm(self, mat2_t)", "self", "F.mm(self, mat2_t)"),
        ("self_t.sum() + other_t", "self", "other_t.clone()"),
        # a zero that would have to be materialized: no variant
        ("F.where(condition, self_t, other_t)", "self", None),
        ("F.tanh_backward(grad_output_t, output)", "grad_output", None),
        ("other / self_t", "self", None),
    ],
)
def test_forward_formulas_drop_undefined_tangents(expr, name, expected):
    """An undefined tangent is an exact zero: its products vanish and sums drop it."""
    from codegen.template_context import _zero_variant, linearity

    linear = linearity(m.load(ROOT / "derivatives.yaml"))
    assert _zero_variant(expr, name, inplace=False, linear=linear) == expected


def test_inplace_forward_formula_gives_self_a_real_zero_tangent():
    """In place, self without a tangent gets real zeros to update (as PyTorch), not a copy."""
    from codegen.template_context import _zero_variant, linearity

    linear = linearity(m.load(ROOT / "derivatives.yaml"))
    expr = "self_t + maybe_multiply(other_t, alpha)"
    assert _zero_variant(expr, "self", inplace=True, linear=linear) == (
        "zeros_tangent(self) + maybe_multiply(other_t, alpha)"
    )
    assert _zero_variant(expr, "other", inplace=True, linear=linear) == "self_t.clone()"


TAGGED = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  cpu: np.multiply(self, other)
  tags: {first}
  other: grad * self
  self: grad * other
  result: other_t * self_p + self_t * other_p

- name: mul.Scalar(Tensor self, Scalar other) -> Tensor
  cpu: np.multiply(self, other)
  tags: {second}
  self: grad * other
  result: self_t * other
"""


NEUTRAL = "float16_scalar_other"  # a tag that says nothing about linearity or numbers


def test_linearity_comes_from_yaml_tags_and_helper_decorators(tmp_path):
    from codegen.template_context import linearity

    model = load_text(tmp_path, TAGGED.format(first="linear", second="linear"))
    linear = linearity(model)
    assert "mul" in linear.every and "mul" in linear.first
    # functions_manual's helpers marked @linear_in_first, and not the decorator itself
    assert {"maybe_multiply", "sum_to"} <= set(model.linear_helpers) <= set(model.helpers)
    assert "linear_in_first" not in model.helpers
    assert "maybe_multiply" in linear.first and "maybe_multiply" not in linear.every
    untagged = linearity(load_text(tmp_path, TAGGED.format(first=NEUTRAL, second=NEUTRAL)))
    assert "mul" not in untagged.first


@pytest.mark.parametrize("tag", ["numbers_as_tensors", "linear", "linear_in_first"])
def test_a_name_tag_holds_for_every_overload_or_none(tmp_path, tag):
    assert error_of(tmp_path, TAGGED.format(first=tag, second=NEUTRAL)) == (
        f"derivatives.yaml:8: mul.Scalar: tag '{tag}' holds for every overload of mul or none"
    )


def test_numbers_as_tensors_tag_lets_numbers_stand_for_tensors(tmp_path):
    from codegen import template_context

    for tags, expected in (("numbers_as_tensors", True), (NEUTRAL, False)):
        model = load_text(tmp_path, TAGGED.format(first=tags, second=tags))
        overload = template_context.overloads_of(model.entries[0])[0]
        assert overload.numbers_as_tensors is expected
        assert ("wrap_scalar(other)" in "\n".join(overload.normalizations)) is expected
    import opgrad

    assert opgrad.ops.aten.mul.Tensor._numbers_as_tensors
    assert not opgrad.ops.aten.maximum.default._numbers_as_tensors


OUT_ENTRY = GOOD_ENTRY + """\
  out: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  out_dtype: {rule}
"""


def test_out_dtype_rule_checks_out_before_the_kernel(tmp_path):
    from codegen import template_context

    (entry,) = load_text(tmp_path, OUT_ENTRY.format(rule="exact")).entries
    assert entry.out_dtype == "exact"
    out = next(ov for ov in template_context.overloads_of(entry) if ov.kind == "out_variant")
    prelude = template_context.cpu_kernel(out).prelude
    assert prelude[-1] == (
        "if self.dtype is not target._data.dtype: check_out_dtype(self.dtype, target._data.dtype)"
    )


def test_the_exact_scalar_type_rule_checks_out_before_the_kernel_in_its_words(tmp_path):
    from codegen import template_context

    (entry,) = load_text(tmp_path, OUT_ENTRY.format(rule="exact_scalar_type")).entries
    out = next(ov for ov in template_context.overloads_of(entry) if ov.kind == "out_variant")
    prelude = template_context.cpu_kernel(out).prelude
    assert prelude[-1] == (
        "if self.dtype is not target._data.dtype: "
        "check_out_scalar_type(self.dtype, target._data.dtype)"
    )


WRITTEN_TENSOR_ENTRY = """\
- name: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
  cpu: k.cumsum(self, dim, dtype, target)
  self: grad
  result: auto_linear
  inplace: cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)
  out: cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
"""


def test_a_kernel_naming_target_sees_none_in_the_functional_variant(tmp_path):
    from codegen import template_context as tc

    (entry,) = load_text(tmp_path, WRITTEN_TENSOR_ENTRY).entries
    kernels = {ov.kind: tc.cpu_kernel(ov) for ov in tc.overloads_of(entry)}
    assert "target = None" in kernels["functional"].prelude
    assert "target = self" in kernels["inplace_variant"].prelude
    assert "target = out" in kernels["out_variant"].prelude
    functional = next(ov for ov in tc.overloads_of(entry) if ov.kind == "functional")
    assert tc.plain_kernel(functional, None).expr == "k.cumsum(self_data, dim, dtype, None)"


def test_an_argument_named_target_is_not_the_written_tensor(tmp_path):
    from codegen import template_context as tc

    text = WRITTEN_TENSOR_ENTRY.replace("int dim,", "Tensor target, int dim,").replace(
        "  self: grad\n", "  self: grad\n  target: non_differentiable\n"
    )
    (entry,) = load_text(tmp_path, text).entries
    functional = next(ov for ov in tc.overloads_of(entry) if ov.kind == "functional")
    assert "target = None" not in tc.cpu_kernel(functional).prelude


def test_the_bool_out_dtype_rule_refuses_other_outs_before_the_kernel(tmp_path):
    from codegen import template_context

    (entry,) = load_text(tmp_path, OUT_ENTRY.format(rule="bool")).entries
    out = next(ov for ov in template_context.overloads_of(entry) if ov.kind == "out_variant")
    prelude = template_context.cpu_kernel(out).prelude
    assert prelude[-1] == 'check_bool_out(target._data.dtype, "neg")'


def test_an_augmented_assignment_schema_is_in_place():
    from opgrad.schema import parse_schema

    assert parse_schema("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)").is_inplace
    assert not parse_schema("__and__.Tensor(Tensor self, Tensor other) -> Tensor").is_inplace
    assert not parse_schema("__foo__(Tensor(a!) self) -> Tensor(a!)").is_inplace


def test_unknown_out_dtype_rule_is_located(tmp_path):
    assert error_of(tmp_path, OUT_ENTRY.format(rule="cast")) == (
        "derivatives.yaml:6: neg: out_dtype must be one of castable, exact, exact_matmul, "
        "exact_result, exact_scalar_type, bool, got 'cast'"
    )


def test_out_dtype_without_an_out_variant_is_refused(tmp_path):
    text = GOOD_ENTRY + "  out_dtype: exact\n"
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:5: neg: out_dtype without an out= variant"
    )


SEVERAL_OUTS_ENTRY = """\
- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  cpu: k.extremum_dim(self, dim, keepdim, True)
  output_differentiability: [True, False]
  self: grad
  values: self_t
  out: max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
  out_dtype: {rule}
"""


@pytest.mark.parametrize(
    "rule, check", [("castable", "None"), ("exact_result", "check_matmul_out_dtype")]
)
def test_an_out_variant_with_several_results_writes_each_out(tmp_path, rule, check):
    from codegen import template_context as tc

    (entry,) = load_text(tmp_path, SEVERAL_OUTS_ENTRY.format(rule=rule)).entries
    out = next(ov for ov in tc.overloads_of(entry) if ov.kind == "out_variant")
    assert out.all_written == ["max", "max_values"]
    kernel = tc.cpu_kernel(out)
    assert "targets = (max, max_values)" in kernel.prelude
    assert not any(line.startswith("if ") for line in kernel.prelude)  # checked as written
    assert (kernel.writes, kernel.out_check) == ("outs", check)


def test_exact_result_rule_checks_out_against_the_computed_result(tmp_path):
    from codegen import template_context as tc

    (entry,) = load_text(tmp_path, OUT_ENTRY.format(rule="exact_result")).entries
    out = next(ov for ov in tc.overloads_of(entry) if ov.kind == "out_variant")
    kernel = tc.cpu_kernel(out)
    assert kernel.prelude[0] == "targets = (out,)"
    assert not any(line.startswith("if ") for line in kernel.prelude)  # checked as written
    assert (kernel.writes, kernel.out_check, kernel.returns_many) == (
        "outs",
        "check_matmul_out_dtype",
        False,
    )


def test_a_formula_that_is_one_op_call_calls_its_plain_kernel(tmp_path):
    from codegen import template_context as tc

    text = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  cpu: np.multiply(self, other)
  dtype: promote
  self: grad * other
  other: grad * 2
  result: other_t * self_p + self_t * other_p
- name: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  cpu: k.expand(self, size)
  self: grad.sum_to_size(self.sym_sizes())
  result: auto_linear
- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  cpu: k.sum(self, None, False, dtype)
  self: aten.expand(grad, self.sym_sizes())
  result: auto_linear
"""
    context = tc.build_context(load_text(tmp_path, text))
    formulas = {n.name: {f.inputs[0]: f for f in n.formulas} for n in context["nodes"]}
    mul, total = formulas["MulBackward0"], formulas["SumBackward0"]["self"]
    # two tensors: the operator's overload, the saved tensor tested at run time
    assert mul["self"].plain_call == "plain_kernels.mul_Tensor(grad, other)"
    assert mul["self"].plain_tensors == ("other",)
    # a number for a Tensor argument is the entry's to wrap: runs as written
    assert mul["other"].plain_call is None
    # the defaults the entry would fill in are filled in
    assert total.plain_call == "plain_kernels.expand(grad, self_sym_sizes, False)"
    assert total.plain_tensors == ()
    # a method call's overload depends on its arguments: as written
    assert formulas["ExpandBackward0"]["self"].plain_call is None


def test_a_guarded_optional_tensor_is_saved_only_when_given():
    """nll_loss_backward's `Tensor? weight` is saved only when grad_output requires grad
    (only its formula reads weight), and then only when a weight was given."""
    source = (ROOT / "generated" / "autograd_kernels.py").read_text()
    kernel = source[source.index("def nll_loss_backward(") :]
    kernel = kernel[: kernel.index("\ndef ")]
    assert "if weight is not None and (grad_output._rg):" in kernel


SEVERAL_RESULTS_ENTRY = """\
- name: native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
  cpu: k.native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
  input, weight, grad_out: layer_norm_double_backward(input, weight, grads[0], grads[1], grads[2], grad_out, mean, rstd, normalized_shape, grad_input_mask)
  bias: None
  mean, rstd: non_differentiable
  result0: input_t
"""


def _node_and_kernels(tmp_path, text):
    from codegen import template_context as tc

    model = load_text(tmp_path, text)
    (entry,) = model.entries
    node = tc.node_class(entry, "N0", model.helpers, frozenset())
    (ov,) = tc.overloads_of(entry)
    return node, tc.cpu_kernel(ov)


def test_a_formula_for_several_inputs_returns_them_in_edge_order(tmp_path):
    node, _ = _node_and_kernels(tmp_path, SEVERAL_RESULTS_ENTRY)
    # edges follow the schema (grad_out, input, weight, bias), not the formula's key
    assert node.result_names == "grad_grad_out, grad_input, grad_weight, grad_bias,"


def test_an_optional_saved_input_is_guarded_against_none(tmp_path):
    node, _ = _node_and_kernels(tmp_path, SEVERAL_RESULTS_ENTRY)
    (weight,) = [s for s in node.slots if s.source == "weight"]
    assert weight.guard.startswith("weight is not None and (")
    assert "(weight is not None and weight._rg)" in weight.guard


def test_an_output_mask_lets_results_be_undefined(tmp_path):
    _, kernel = _node_and_kernels(tmp_path, SEVERAL_RESULTS_ENTRY)
    assert kernel.may_be_undefined


def test_helpers_include_the_modules_functions_manual_reexports():
    model = m.load(ROOT / "derivatives.yaml")
    # norm_manual.py's helpers, re-exported by functions_manual's `from .norm_manual import *`
    assert {"layer_norm_double_backward", "not_implemented"} <= set(model.helpers)


def test_entries_may_share_the_not_implemented_node_name(tmp_path):
    from codegen import template_context as tc

    text = """\
- name: a_backward(Tensor grad_output, Tensor self) -> Tensor
  cpu: grad_output
  node: NotImplemented
  grad_output, self: derivative_not_implemented("aten::a_backward")
  result: forward_ad_not_supported("aten::a_backward")

- name: b_backward(Tensor grad_output, Tensor self) -> Tensor
  cpu: grad_output
  node: NotImplemented
  grad_output, self: derivative_not_implemented("aten::b_backward")
  result: forward_ad_not_supported("aten::b_backward")
"""
    context = tc.build_context(load_text(tmp_path, text))
    # one Python class each, both named NotImplemented as PyTorch's node
    assert [n.name for n in context["nodes"]] == ["NotImplemented", "NotImplemented"]
    assert [n.class_name for n in context["nodes"]] == [
        "NotImplemented",
        "NotImplemented_b_backward",
    ]


def test_an_aten_only_out_variant_is_not_offered_to_python(tmp_path):
    from codegen import template_context

    model = load_text(
        tmp_path,
        GOOD_ENTRY
        + "  tags: aten_only_out\n"
        + OUT_ENTRY[len(GOOD_ENTRY) :].format(rule="castable"),
    )
    surface = template_context.build_context(model)["surface_functions"]
    assert surface["neg"] == ["neg"]  # the out= overload exists as an aten op only
    model = load_text(tmp_path, OUT_ENTRY.format(rule="castable"))
    assert template_context.build_context(model)["surface_functions"]["neg"] == ["neg", "neg_out"]


def test_the_division_rule_lifts_to_float_only_without_a_rounding_mode(tmp_path):
    from codegen import template_context

    (entry,) = load_text(
        tmp_path,
        """\
        - name: div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor
          cpu: np.true_divide(self, other)
          dtype: division
          output_differentiability: [False]
        """,
    ).entries
    (ov,) = template_context.overloads_of(entry)
    assert "self, other = promote2(self, other, rounding_mode is None)" in (
        template_context.cpu_kernel(ov).prelude
    )


def test_a_node_may_carry_torchs_copy_suffix(tmp_path):
    text = GOOD_ENTRY + "  node: NegBackward0_copy\n"
    (entry,) = load_text(tmp_path, text).entries
    assert m.node_class_name(entry, [entry]) == "NegBackward0_copy"
    assert "bad node name" in error_of(tmp_path, GOOD_ENTRY + "  node: NegBackward0_view\n")


TARGET_CHECKED_ENTRY = GOOD_ENTRY + """\
  target_check: {check}
  inplace: neg_(Tensor(a!) self) -> Tensor(a!)
  out: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
"""


def test_target_check_runs_in_the_in_place_and_out_kernels_only(tmp_path):
    from codegen import template_context as tc

    text = TARGET_CHECKED_ENTRY.format(check="k.neg_target_check(self, target)")
    (entry,) = load_text(tmp_path, text).entries
    kernels = {ov.kind: tc.cpu_kernel(ov) for ov in tc.overloads_of(entry)}
    assert "k.neg_target_check(self, target)" not in kernels["functional"].prelude
    for kind, written in (("inplace_variant", "self"), ("out_variant", "out")):
        prelude = kernels[kind].prelude
        assert prelude.index(f"target = {written}") < prelude.index(
            "k.neg_target_check(self, target)"
        )


def test_bad_target_check_is_located(tmp_path):
    text = TARGET_CHECKED_ENTRY.format(check="k.neg_target_check(slf, target)")
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:5: neg: unknown name 'slf' in target_check"
    )


def test_target_check_needs_a_variant_that_writes(tmp_path):
    text = GOOD_ENTRY + "  target_check: k.neg_target_check(self, target)\n"
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:5: neg: target_check without an in-place or out= variant"
    )


VIEW_WITH_COPIES = """\
- name: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
  cpu: k.transpose(self, dim0, dim1)
  self: grad.transpose(dim0, dim1)
  result: auto_linear
  copy: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor

- name: unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]
  cpu: k.unbind(self, dim)
  self: unbind_backward(grads, dim)
  result: auto_linear
  copy: unbind_copy.int(Tensor self, int dim=0) -> Tensor[]
"""


def test_a_views_copy_has_its_formulas_and_the_views_node_name_with_copy(tmp_path):
    model = load_text(tmp_path, VIEW_WITH_COPIES)
    transpose, unbind, transpose_copy, unbind_copy = model.entries
    assert transpose_copy.op_name == "transpose_copy.int" and not transpose_copy.is_view
    assert transpose_copy.cpu == "k.copy_of(k.transpose(self, dim0, dim1))"
    assert transpose_copy.formulas == transpose.formulas
    assert transpose_copy.saved == transpose.saved
    assert m.node_class_name(transpose_copy, model.entries) == "TransposeBackward0_copy"
    assert str(transpose_copy.out) == (
        "transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) -> Tensor(a!)"
    )
    assert transpose_copy.variants == ("function",)
    assert transpose_copy.copy_of == "transpose.int"
    assert transpose_copy.list_copy_out is None
    # a copy with a list of results: outs in a list, no return, and by default torch's
    # unbind_copy rules (outs of the results' dtypes, resized; outs requiring grad refused)
    assert m.node_class_name(unbind_copy, model.entries) == "UnbindBackward0_copy"
    assert str(unbind_copy.out) == (
        "unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()"
    )
    assert unbind_copy.list_copy_out == m.ListCopyOut("unbind_copy_int_out", "resized", True)
    assert unbind_copy.copied_view_cpu == "k.unbind(self, dim)"


def test_a_list_copys_out_takes_torchs_rules_from_copy_out(tmp_path):
    text = VIEW_WITH_COPIES.replace(
        "-> Tensor[]\n",
        "-> Tensor[]\n  copy_out: {size_error: f(), writes: copy_, grad_outs: accepted}\n",
    )
    unbind_copy = load_text(tmp_path, text).entries[-1]
    assert unbind_copy.list_copy_out == m.ListCopyOut("f()", "copy_", False)


@pytest.mark.parametrize(
    "where, value, error",
    [
        ("-> Tensor[]\n", "{writes: moved}", "its grad_outs refused or accepted"),
        ("-> Tensor[]\n", "{name: f}", "copy_out is a mapping of grad_outs, size_error, writes"),
        ("-> Tensor[]\n", "resized", "copy_out is a mapping of"),
        ("int dim1) -> Tensor\n", "{}", "copy_out is for a copy with a list of results"),
    ],
)
def test_copy_out_is_checked(tmp_path, where, value, error):
    text = VIEW_WITH_COPIES.replace(where, f"{where}  copy_out: {value}\n", 1)
    assert error in error_of(tmp_path, text)


def test_copy_out_needs_a_copy(tmp_path):
    text = GOOD_ENTRY + "  copy_out: {}\n"
    assert error_of(tmp_path, text) == "derivatives.yaml:5: neg: copy_out needs a copy"


def test_only_a_view_has_a_copy(tmp_path):
    text = GOOD_ENTRY + "  copy: neg_copy(Tensor self) -> Tensor\n"
    assert error_of(tmp_path, text) == (
        "derivatives.yaml:5: neg: only a view op with a cpu kernel has a copy variant"
    )


def test_a_copy_is_a_new_overload(tmp_path):
    text = VIEW_WITH_COPIES + textwrap.dedent("""
        - name: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor
          cpu: k.transpose(self, dim0, dim1).copy()
          output_differentiability: [False]
        """)
    assert "duplicate overload transpose_copy.int" in error_of(tmp_path, text)


def test_black_output_is_cached_by_rendering(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "CACHE", tmp_path / "cache")
    assert gen._cached("x = 1\n") is None
    gen._cache("x = 1\n", "formatted\n")
    assert gen._cached("x = 1\n") == "formatted\n"
    assert gen._cached("x = 2\n") is None  # another rendering misses
    assert [p.suffix for p in (tmp_path / "cache").iterdir()] == [""]  # no partial left


SPECIAL_ENTRY = """\
- name: special_entr(Tensor self) -> Tensor
  python_module: special
  variants: function
  cpu: k.special_entr(self)
  self: grad
  result: auto_element_wise
  out: special_entr.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
"""


def test_a_python_module_function_goes_to_its_module_not_the_top_level(tmp_path):
    context = gen.build_context(load_text(tmp_path, GOOD_ENTRY + "\n" + SPECIAL_ENTRY))
    assert context["surface_modules"] == {"special": {"entr": ["special_entr", "special_entr_out"]}}
    assert list(context["surface_functions"]) == ["neg"]


@pytest.mark.parametrize(
    "old, new, error",
    [
        ("python_module: special", "python_module: linalg", "python_module must be one of special"),
        ("variants: function", "variants: method", "a special function is a function variant"),
        ("special_entr(Tensor", "entr(Tensor", "a special function is a function variant"),
    ],
)
def test_python_module_is_checked(tmp_path, old, new, error):
    assert error in error_of(tmp_path, SPECIAL_ENTRY.replace(old, new, 1))
