"""The installed package's functions built from the library's option table (lint, diff,
determinism, fp16, profile, replay, baseline_save, baseline_check): each one's keywords are the
command's flags as `onnxprobe CMD --help` lists them, its result is the command line's (JSON,
JUnit, text, exit code), its errors carry the command line's message, and the verdicts agree
with faults these tests inject (checked against numpy / ONNX's own reading of the models). Run
by test_python_package.py with the interpreter of a fresh virtual environment; not collected on
its own."""
import inspect
import json
import os
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxprobe
from conftest import run
from test_shard import strip

BIN = os.environ.get("ONNXPROBE_BIN", "")
COMMANDS = ["lint", "diff", "determinism", "fp16", "profile", "replay", "baseline save", "baseline check"]


def cli(*args):
    return run([BIN, *map(str, args)])


def mlp(path, w2_scale=1.0, dropout_training=False):
    """x[2,8] -> MatMul W1 -> Relu -> MatMul W2 -> y, W2 optionally scaled (the injected fault)."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = (rng.standard_normal((16, 4)) * w2_scale).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu")]
    last = "r"
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")]
    if dropout_training:
        inits.append(numpy_helper.from_array(np.array(True), "training"))
        nodes.append(helper.make_node("Dropout", ["r", "", "training"], ["d"], name="drop"))
        last = "d"
    nodes.append(helper.make_node("MatMul", [last, "w2"], ["y"], name="mm2"))
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cmds")
    return {"good": mlp(tmp / "good.onnx"), "bad": mlp(tmp / "bad.onnx", w2_scale=1.5),
            "dropout": mlp(tmp / "dropout.onnx", dropout_training=True)}


def help_flags(command):
    r = cli(*command.split(), "--help")
    assert r.returncode == 0, r.stderr
    # the option lines ("  -o,--output DIR  ..." / "  --json[=FILE]  ..."), not flags named in help text
    return set(re.findall(r"^  (?:-\w,)?--([a-z][a-z0-9-]*)", r.stdout, re.M)) - {"help"}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_is_a_keyword_and_every_keyword_a_flag(command):
    fn = getattr(onnxprobe, command.replace(" ", "_"))
    keywords = {n for n, p in inspect.signature(fn).parameters.items() if p.kind == p.KEYWORD_ONLY} - {"progress"}
    assert keywords == {f.replace("-", "_") for f in help_flags(command)}
    assert command in fn.__doc__ and "Returns a CommandResult" in fn.__doc__


SESSION = {"provider", "allow_fallback", "provider_option", "opt_level", "intra_threads", "inter_threads", "parallel",
           "ort_lib", "ort_version", "session_config", "custom_op_lib", "platform", "remote", "provider_library"}
# The hand-written functions take Python values (arrays, dicts, reports): each of their command's
# flags is a keyword of the same name, a keyword of another name, the returned object's method
# (outputs and console presentation), or a gap listed here and in the closing note.
HAND_WRITTEN = {
    "compare": dict(renamed={"input": "inputs", "shape": "shapes", "dim": "dims", "range": "ranges",
                             "provider_option": "provider_options", "inputs": "inputs_dir", "no_diagnose": "diagnose",
                             "map": "map"},
                    # every report format is the Report's render(format)/write(format, path)
                    methods={f.replace("-", "_") for f in onnxprobe.Report.formats()} |
                            {"quiet", "rows", "color", "no_color", "force", "report_detail"},
                    gaps=set()),
    "run": dict(renamed={"input": "inputs", "shape": "shapes", "dim": "dims", "range": "ranges",
                         "provider_option": "provider_options", "inputs": "inputs_dir"},
                methods=set(), gaps=set()),
    "inspect": dict(renamed={}, methods={"json"}, gaps=set()),
    "generate": dict(renamed={"prompt_ids": "prompt", **{f: "sessions" for f in SESSION}},
                     methods={"json", "html", "quiet", "rows", "color", "no_color", "force"}, gaps=set()),
    "merge": dict(renamed={}, methods={"json", "force"}, gaps=set()),
    "import-polygraphy": dict(renamed={}, methods={"quiet", "force"}, gaps=set()),
}


@pytest.mark.parametrize("command", sorted(HAND_WRITTEN))
def test_every_flag_of_the_hand_written_functions_is_accounted_for(command):
    fn = getattr(onnxprobe, command.replace("-", "_"))
    params = inspect.signature(fn).parameters
    keywords = {n for n in params} | {"sessions" for p in params.values() if p.kind == p.VAR_KEYWORD}
    spec = HAND_WRITTEN[command]
    for flag in sorted(f.replace("-", "_") for f in help_flags(command)):
        name = spec["renamed"].get(flag, flag)
        if flag in spec["methods"] or name in spec["gaps"]:
            continue
        assert name in keywords, f"--{flag} of {command} has no keyword"
    for gap in spec["gaps"]:  # a gap filled: take it off the list
        assert gap not in keywords, gap


def test_lint_is_the_cli_and_finds_the_training_dropout(models):
    m = models["dropout"]
    result = onnxprobe.lint(m, fail_on="warning")
    r = cli("lint", m, "--json", "--fail-on", "warning")
    assert result.exit_code == r.returncode == 1
    assert result.to_dict() == json.loads(r.stdout)
    codes = {f["code"] for f in result.to_dict()["findings"]}
    assert "OP001" in codes  # the Dropout given training=True by construction
    assert onnxprobe.lint(m, disable=["OP001", "OP007"], fail_on="error").passed
    rules = onnxprobe.lint(list_rules=True)
    assert rules.text() == cli("lint", "--list-rules").stdout and rules.json() is None


def test_diff_names_the_weight_the_test_changed(models):
    result = onnxprobe.diff(models["good"], models["bad"])
    r = cli("diff", models["good"], models["bad"], "--json")
    assert result.exit_code == r.returncode == 1
    assert result.to_dict() == json.loads(r.stdout)
    a = {i.name: numpy_helper.to_array(i) for i in onnx.load(models["good"]).graph.initializer}
    b = {i.name: numpy_helper.to_array(i) for i in onnx.load(models["bad"]).graph.initializer}
    changed_by_numpy = sorted(n for n in a if not np.array_equal(a[n], b[n]))
    assert changed_by_numpy == ["w2"]
    assert "w2" in json.dumps(result.to_dict()["initializers"]) and "w1" not in json.dumps(
        result.to_dict()["initializers"])
    assert onnxprobe.diff(models["good"], models["good"]).passed


def test_determinism_and_fp16_are_the_cli(models, tmp_path):
    m = models["good"]
    det = onnxprobe.determinism(m, runs=2, seed=3)
    cli("determinism", m, "--runs", 2, "--seed", 3, "--json", tmp_path / "d.json")
    assert strip(det.to_dict()) == strip(json.loads((tmp_path / "d.json").read_text()))
    assert det.passed and det.to_dict()["outputs_reproducible"]
    fp = onnxprobe.fp16(m, rtol=0.05, output=tmp_path / "half.onnx")
    r = cli("fp16", m, "--rtol", 0.05, "--json", tmp_path / "f.json", "-o", tmp_path / "cli.onnx")
    assert fp.exit_code == r.returncode
    py_doc, cli_doc = fp.to_dict(), json.loads((tmp_path / "f.json").read_text())
    assert py_doc.pop("output_model") == str(tmp_path / "half.onnx")
    assert cli_doc.pop("output_model") == str(tmp_path / "cli.onnx")
    assert strip(py_doc) == strip(cli_doc)
    if fp.passed:  # the converted model was written, and its weights are float16
        half = onnx.load(str(tmp_path / "half.onnx"))
        assert any(i.data_type == TensorProto.FLOAT16 for i in half.graph.initializer)


def test_profile_lists_the_models_nodes(models):
    p = onnxprobe.profile(models["good"], runs=2, warmup=0).to_dict()
    r = cli("profile", models["good"], "--runs", 2, "--warmup", 0, "--json")
    c = json.loads(r.stdout)
    assert set(p) == set(c)
    names = {n.name for n in onnx.load(models["good"]).graph.node}
    assert {n["name"] for n in p["nodes"]} == {n["name"] for n in c["nodes"]} == names


def test_baseline_save_and_check_are_the_cli(models, tmp_path):
    base = tmp_path / "good.baseline"
    steps = []
    saved = onnxprobe.baseline_save(models["good"], output=base, samples=3,
                                    progress=lambda *a: steps.append(a))
    assert saved.passed and steps == [("sample", 1, 3), ("sample", 2, 3), ("sample", 3, 3)]
    assert "saved: " + str(base) in saved.text()
    check = onnxprobe.baseline_check(models["bad"], base, junit=tmp_path / "py.xml")
    r = cli("baseline", "check", models["bad"], base, "--json", tmp_path / "c.json",
            "--junit", tmp_path / "c.xml")
    assert check.exit_code == r.returncode == 1
    assert strip(check.to_dict()) == strip(json.loads((tmp_path / "c.json").read_text()))
    no_time = lambda s: re.sub(r'(time|timestamp)="[^"]*"', "", s)  # noqa: E731
    assert no_time(check.junit()) == no_time((tmp_path / "c.xml").read_text()) == no_time(
        (tmp_path / "py.xml").read_text())
    assert "<html" in check.html().lower()
    # the fault scales w2: every sample's y differs (numpy: y = relu(x w1) w2 changes by 1.5x)
    assert all(not s["passed"] for s in check.to_dict()["samples"])
    assert onnxprobe.baseline_check(models["good"], base).passed


def test_a_progress_callback_that_raises_stops_a_baseline_check(models, tmp_path):
    base = tmp_path / "b"
    onnxprobe.baseline_save(models["good"], output=base, samples=4)
    calls = []

    def stop(phase, done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        onnxprobe.baseline_check(models["good"], base, progress=stop)
    assert calls == [1]


def test_replay_of_a_repro_bundle_is_the_cli(models, tmp_path):
    bundle = tmp_path / "repro"
    r = cli("compare", models["good"], models["bad"], "--repro", bundle, "-q")
    assert r.returncode == 1, r.stderr
    found = [d for d in bundle.iterdir() if d.is_dir()] if not (bundle / "model.onnx").exists() else [bundle]
    folder = found[0]
    py = onnxprobe.replay(folder)
    c = cli("replay", folder)
    assert py.exit_code == c.returncode == 1 and py.text() == c.stdout
    assert onnxprobe.replay(folder, atol=100, rtol=100).passed


@pytest.mark.parametrize("call,argv", [
    (lambda m: onnxprobe.lint(m, fail_on="sometimes"), ["lint", "{m}", "--fail-on", "sometimes"]),
    (lambda m: onnxprobe.determinism(m, runs=1), ["determinism", "{m}", "--runs", "1"]),
    (lambda m: onnxprobe.fp16(m, max_memory="lots"), ["fp16", "{m}", "--max-memory", "lots"]),
    (lambda m: onnxprobe.profile(m, dim={"batch": -1}), ["profile", "{m}", "--dim", "batch=-1"]),
    (lambda m: onnxprobe.baseline_check(m, m + ".nobase"), ["baseline", "check", "{m}", "{m}.nobase"]),
    (lambda m: onnxprobe.diff(m, m + ".missing"), ["diff", "{m}", "{m}.missing"]),
])
def test_errors_carry_the_command_lines_message(models, call, argv):
    m = models["good"]
    r = cli(*[a.format(m=m) for a in argv])
    assert r.returncode == 2
    with pytest.raises(onnxprobe.Error) as e:
        call(m)
    assert r.stderr.strip() == f"onnxprobe: error: {e.value}"


def test_keywords_are_checked_before_any_work(models):
    with pytest.raises(onnxprobe.InvalidArgument) as e:  # the command line's message
        onnxprobe.lint(models["good"], frobnicate=True)
    assert str(e.value) == "lint: unknown option '--frobnicate' (see onnxprobe lint --help)"
    with pytest.raises(onnxprobe.InvalidArgument, match="switch"):
        onnxprobe.lint(models["good"], list_rules="yes")
    with pytest.raises(onnxprobe.InvalidArgument, match="True/False"):
        onnxprobe.determinism(models["good"], runs=True)


def test_compare_reports_junit_model_explorer_and_latency_as_the_cli(models, tmp_path):
    a, b = models["good"], models["bad"]
    report = onnxprobe.compare(a, b, latency_runs=2, seed=5)
    r = cli("compare", a, b, "--seed", 5, "--junit", tmp_path / "c.xml", "--model-explorer", tmp_path / "me.json",
            "-q")
    assert r.returncode == 1 and not report.passed
    no_time = lambda s: re.sub(r'(time|timestamp)="[^"]*"', "", s)  # noqa: E731
    assert report.junit(tmp_path / "py.xml") == str(tmp_path / "py.xml")
    assert no_time(report.junit()) == no_time((tmp_path / "c.xml").read_text()) == no_time(
        (tmp_path / "py.xml").read_text())
    assert json.loads(report.model_explorer()) == json.loads((tmp_path / "me.json").read_text())
    assert all(report.to_dict()["resources"][s]["latency_ms"]["runs"] == 2 for s in "ab")
    with pytest.raises(onnxprobe.InvalidArgument, match="quant"):
        onnxprobe.compare(a, b, quant="sometimes")


def test_run_to_a_dump_is_the_cli_and_holds_what_run_returns(models, tmp_path):
    m = models["good"]
    result = onnxprobe.run(m, output=tmp_path / "py.dump", seed=4, check_observer=True)
    r = cli("run", m, "-o", tmp_path / "cli.dump", "--seed", 4, "--check-observer", "--json")
    assert result.exit_code == r.returncode == 0
    py_doc, cli_doc = result.to_dict(), json.loads(r.stdout)
    assert py_doc.pop("output") == str(tmp_path / "py.dump") and cli_doc.pop("output") == str(tmp_path / "cli.dump")
    assert strip(py_doc) == strip(cli_doc) and py_doc["observer_identical"]
    in_memory = onnxprobe.run(m, seed=4)
    manifest = json.loads((tmp_path / "py.dump" / "manifest.json").read_text())
    files = {t["name"]: t["file"] for t in manifest["tensors"]}
    assert set(in_memory) <= set(files)
    for name, value in in_memory.items():
        assert np.array_equal(np.load(tmp_path / "py.dump" / files[name]), value), name
    x = in_memory.inputs["x"].astype(np.float64)
    w = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in onnx.load(m).graph.initializer}
    assert np.allclose(in_memory["y"], np.maximum(x @ w["w1"], 0) @ w["w2"], rtol=1e-5, atol=1e-5)
    sampled = onnxprobe.run(m, output=tmp_path / "set", samples=2, quiet=True)
    assert [s["name"] for s in sampled.to_dict()["samples"]] == ["seed-0", "seed-1"] and sampled.text() == ""


def test_run_names_where_nan_is_born(tmp_path):
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["a"], name="abs"),
                               helper.make_node("Neg", ["a"], ["n"], name="neg"),
                               helper.make_node("Log", ["n"], ["y"], name="log")], "nan",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "nan.onnx"))
    x = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    np.save(tmp_path / "x.npy", x)
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.log(-np.abs(x))).all()  # numpy: log of a negative number is NaN
    result = onnxprobe.run(tmp_path / "nan.onnx", inputs=tmp_path / "x.npy", output=tmp_path / "d",
                           fail_on_nonfinite=True)
    r = cli("run", tmp_path / "nan.onnx", "--input", tmp_path / "x.npy", "-o", tmp_path / "d2",
            "--fail-on-nonfinite")
    assert result.exit_code == r.returncode == 1
    line = [n for n in result.notes if n.startswith("nonfinite: ")]
    assert line and "'y' (Log node 'log')" in line[0]
    assert f"onnxprobe: {line[0]}" in r.stderr


def test_a_sweep_is_the_clis_and_python_writes_only_where_the_cli_would(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "dyn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    m = str(tmp_path / "dyn.onnx")
    onnx.save(model, m)
    sweep = onnxprobe.compare(m, b_opt_level="all", sweep={"batch": [1, 3]})
    assert isinstance(sweep, onnxprobe.SweepReport) and sweep.passed
    r = cli("compare", m, "--b-opt-level", "all", "--sweep", "batch=1,3", "--json", tmp_path / "s.json", "-q")
    assert r.returncode == 0, r.stderr
    assert strip(sweep.to_dict()) == strip(json.loads((tmp_path / "s.json").read_text()))
    points = sweep.to_dict()["points"]
    assert [p["dims"] for p in points] == [{"batch": 1}, {"batch": 3}]
    assert [p["report"]["tensors"][0]["shape_a"] for p in points] == [[1, 4], [3, 4]]
    # a user's file is never replaced by a report, from Python as from the command line
    precious = tmp_path / "notes.txt"
    precious.write_text("mine")
    report = onnxprobe.compare(m, b_opt_level="all")
    for write in (report.json, report.html, report.junit, report.model_explorer, sweep.json):
        with pytest.raises(onnxprobe.InvalidArgument):
            write(precious)
    with pytest.raises(onnxprobe.InvalidArgument):
        report.json(m)  # the model itself
    shard = onnxprobe.compare(m, b_opt_level="all", samples=2, shard=(0, 1))
    with pytest.raises(onnxprobe.InvalidArgument):
        onnxprobe.merge([shard], json=precious)
    assert precious.read_text() == "mine"
    assert onnxprobe.merge([shard], json=tmp_path / "merged.json").passed  # a new file is fine
    (tmp_path / "s0.json").write_text(shard.json())
    with pytest.raises(onnxprobe.InvalidArgument):  # a shard is an input, never the output
        onnxprobe.merge([tmp_path / "s0.json"], json=tmp_path / "s0.json")
    with pytest.raises(onnxprobe.InvalidArgument, match="empty file name"):
        onnxprobe.lint(m, json="")
    with pytest.raises(onnxprobe.InvalidArgument, match="--quiet writes a dump: give -o"):
        onnxprobe.run(m, quiet=True)
    assert onnxprobe.determinism(m, runs=np.int64(2)).passed  # numpy numbers are numbers


# ---- one front door: every option of every command, the same message from Python and the CLI ----

# compare's "reports" options have no keyword: the Report returned renders and writes them
# (render(format), write(format, path), text()); any other option without a keyword fails
# keywords named after what they hold, not after the flag (compare's and run's)
KEYWORD_OF = {"--input": "inputs", "--range": "ranges", "--inputs": "inputs_dir", "--shape": "shapes",
              "--dim": "dims", "--provider-option": "provider_options", "--a-provider-option": "a_provider_options",
              "--b-provider-option": "b_provider_options", "--no-diagnose": None}
# functions built from the option table, and compare(), run() and generate() (wrappers over the
# same front door)
WALKED = ["inspect", "compare", "run", "generate"] + COMMANDS
# run(): options that only shape what is written are given with an output (-o / output=) in
# both; the others run in memory in Python and into a dump on the command line
RUN_WRITES = {"--output", "--force", "--json", "--quiet", "--fail-on-nonfinite", "--check-observer",
              "--capture-fused", "--inputs", "--samples", "--precision"}


def cli_error(args):
    r = run([BIN, *map(str, args)])
    lines = [l for l in r.stderr.splitlines() if l.startswith("onnxprobe: error: ")]
    return r.returncode, lines[-1][len("onnxprobe: error: "):] if lines else r.stderr


def test_every_option_of_every_command_gives_the_command_lines_message(tmp_path):
    """A bad or idle value for each option, given once as a flag and once as a keyword, on a model
    that does not exist: the same error, word for word, and the same exit code."""
    from onnxprobe import _onnxprobe
    from onnxprobe._commands import function_name, keyword_of
    missing = str(tmp_path / "missing.onnx")
    tables = {t["name"]: t for t in _onnxprobe.command_tables()}
    walked, unmapped = 0, []
    for name in WALKED:
        fn = getattr(onnxprobe, function_name(name))
        keywords = inspect.signature(fn).parameters
        any_keyword = any(p.kind == p.VAR_KEYWORD for p in keywords.values())  # generate's sessions
        positionals = [missing for p in tables[name]["positionals"]]  # A and B: past "one side given"
        for o in tables[name]["options"]:
            flag = o["name"]
            kw = KEYWORD_OF.get(flag, keyword_of(flag))
            if kw not in keywords and not any_keyword:
                rendered = (name == "compare" and o["section"] == "reports") or (name, flag) == ("inspect", "--json")
                if not rendered and flag not in KEYWORD_OF:
                    unmapped.append(f"{name} {flag}")
                continue
            if not o["value_name"]:
                argv, value = [flag], True
            elif o["bare_value"]:
                argv, value = [f"{flag}=x"], "x"
            else:
                argv, value = [flag, "x"], "x"
            given = {kw: value}
            if name == "run" and flag != "--output":
                argv += ["-o", tmp_path / "out.dump"]
                if flag in RUN_WRITES:
                    given["output"] = tmp_path / "out.dump"
            code, message = cli_error([*name.split(), *positionals, *argv])
            if code in (0, 1):  # an option that needs no model (lint --list-rules)
                assert fn(*positionals, **given).exit_code == code, f"{name} {flag}"
                continue
            with pytest.raises(onnxprobe.Error) as e:
                fn(*positionals, **given)
            assert (str(e.value), e.value.exit_code) == (message, code), f"{name} {flag} / {given}"
            walked += 1
    assert not unmapped, f"options without a keyword: {unmapped}"
    assert walked > 150, walked


def test_unknown_keywords_and_missing_sides_are_the_command_lines_messages(models):
    for name in WALKED:
        fn = getattr(onnxprobe, name.replace(" ", "_"))
        code, message = cli_error([*name.split(), models["good"], "--frobnicate"])
        with pytest.raises(onnxprobe.InvalidArgument) as e:
            fn(models["good"], frobnicate=True)
        assert (str(e.value), e.value.exit_code) == (message, code)
        code, message = cli_error(name.split())
        with pytest.raises(onnxprobe.InvalidArgument) as e:
            fn()
        assert (str(e.value), e.value.exit_code) == (message, code)


def test_compare_is_typed_and_marked_for_type_checkers():
    assert os.path.exists(os.path.join(os.path.dirname(onnxprobe.__file__), "py.typed"))
    params = inspect.signature(onnxprobe.compare).parameters
    assert "dims" in params and "Mapping[str, int]" in str(params["dims"].annotation)
    assert all(p.annotation is not p.empty for p in params.values())


def test_progress_phases_are_the_librarys_names(models, tmp_path):
    """The phases a callable sees are the library's (command.h Phase), whichever function runs."""
    seen = set()
    onnxprobe.run(models["good"], output=tmp_path / "d.dump", progress=lambda p, d, t: seen.add(p))
    assert seen == {"capture"}
    seen.clear()
    onnxprobe.compare(models["good"], b_opt_level="all", samples=2, progress=lambda p, d, t: seen.add(p))
    assert seen == {"compare", "sample"}
