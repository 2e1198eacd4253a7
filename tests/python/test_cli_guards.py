"""What the command line refuses before doing any work: writing over inputs or foreign files
(defect 1 of issue 16), and options that would silently do nothing (exit 2, one line naming the
flag)."""
import json
import os
import re
import subprocess

import numpy as np
import pytest

import models
from conftest import run
from dumps import write_dump

SRC = os.environ.get("ONNXPROBE_SRC", "")
DEMO = os.path.join(SRC, "tests", "data", "demo", "demo_cnn.onnx")
FAULTY = os.path.join(SRC, "tests", "data", "demo", "demo_cnn_faulty.onnx")


def one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("onnxprobe: error: "), lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def chain(tmp_path):
    path = tmp_path / "chain.onnx"
    models.chain_model(path, symbolic=False)
    return path


def compare_chain(onnxprobe, chain, *args):
    return run([onnxprobe, "compare", chain, "--b-opt-level", "all", *args])


# --- outputs never replace inputs -------------------------------------------------------------

@pytest.mark.parametrize("flag", ["--html", "--json"])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_report_never_replaces_the_model(onnxprobe, chain, flag, force):
    before = chain.read_bytes()
    r = compare_chain(onnxprobe, chain, flag, chain, *force)
    one_line_error(r, flag, "chain.onnx", "input of this run")
    assert chain.read_bytes() == before


def test_dump_never_replaces_the_model_or_its_folder(onnxprobe, chain, tmp_path):
    before = chain.read_bytes()
    one_line_error(run([onnxprobe, "run", chain, "-o", chain, "--force"]), "-o", "input of this run")
    one_line_error(run([onnxprobe, "run", chain, "-o", tmp_path, "--force"]), "-o", "holds", "chain.onnx")
    assert chain.read_bytes() == before


def test_dump_never_replaces_an_input_file(onnxprobe, chain, tmp_path):
    x = tmp_path / "X.npz"
    np.savez(x, X=np.zeros((2, 3), np.float32))
    before = x.read_bytes()
    r = run([onnxprobe, "run", chain, "--input", x, "-o", x, "--force"])
    one_line_error(r, "-o", "X.npz", "input of this run")
    assert x.read_bytes() == before


def test_repro_never_replaces_the_folder_of_a_side(onnxprobe):
    r = run([onnxprobe, "compare", DEMO, FAULTY, "--dim", "batch=1", "--repro", os.path.dirname(DEMO)])
    one_line_error(r, "--repro", "holds", "demo_cnn")


def test_two_outputs_on_one_path(onnxprobe, chain, tmp_path):
    r = compare_chain(onnxprobe, chain, "--json", tmp_path / "r.out", "--html", tmp_path / "r.out")
    one_line_error(r, "--json", "--html", "same path")


# --- outputs replace only onnxprobe outputs of the same kind ----------------------------------

def test_npz_that_is_not_a_dump_is_kept(onnxprobe, chain, tmp_path):
    foreign = tmp_path / "x.npz"
    np.savez(foreign, weights=np.arange(5.0))
    before = foreign.read_bytes()
    r = run([onnxprobe, "run", chain, "-o", foreign])
    one_line_error(r, "-o", "x.npz", "not an onnxprobe dump", "--force")
    assert foreign.read_bytes() == before
    r = run([onnxprobe, "run", chain, "-o", foreign, "--force"])
    assert r.returncode == 0, r.stderr
    with np.load(foreign) as z:
        assert "manifest.json" in z.files and "weights" not in z.files


@pytest.mark.parametrize("out", ["d.npz", "d"])
def test_an_earlier_dump_is_replaced(onnxprobe, chain, tmp_path, out):
    target = tmp_path / out
    for seed in ("1", "2"):
        r = run([onnxprobe, "run", chain, "--seed", seed, "-o", target])
        assert r.returncode == 0, r.stderr
    if out.endswith(".npz"):
        y = np.load(target)["Y"]
    else:
        m = json.loads((target / "manifest.json").read_text())
        y = np.load(target / [t for t in m["tensors"] if t["name"] == "Y"][0]["file"])
    assert run([onnxprobe, "run", chain, "--seed", "2", "-o", tmp_path / "ref.npz"]).returncode == 0
    np.testing.assert_array_equal(y, np.load(tmp_path / "ref.npz")["Y"])  # the second run's


def test_folder_that_is_not_a_dump_is_kept_even_with_force(onnxprobe, chain, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep me")
    for force in ([], ["--force"]):
        r = run([onnxprobe, "run", chain, "-o", folder, *force])
        one_line_error(r, "-o", "notes", "not an onnxprobe dump")
    assert (folder / "keep.txt").read_text() == "keep me"


@pytest.mark.parametrize("flag,name", [("--json", "r.json"), ("--html", "r.html")])
def test_report_replaces_only_its_own_kind(onnxprobe, chain, tmp_path, flag, name):
    target = tmp_path / name
    target.write_text("my notes\n")
    r = compare_chain(onnxprobe, chain, flag, target)
    one_line_error(r, flag, name, "not an onnxprobe", "--force")
    assert target.read_text() == "my notes\n"
    r = compare_chain(onnxprobe, chain, flag, target, "--force")
    assert r.returncode == 0, r.stderr
    assert target.read_text() != "my notes\n"
    r = compare_chain(onnxprobe, chain, flag, target)  # now ours: replaced without --force
    assert r.returncode == 0, r.stderr


def test_json_report_is_not_an_html_report(onnxprobe, chain, tmp_path):
    assert compare_chain(onnxprobe, chain, "--json", tmp_path / "r.json").returncode == 0
    r = compare_chain(onnxprobe, chain, "--html", tmp_path / "r.json")
    one_line_error(r, "--html", "not an onnxprobe HTML report")
    json.loads((tmp_path / "r.json").read_text())


def test_empty_file_is_replaced(onnxprobe, chain, tmp_path):
    (tmp_path / "r.json").write_text("")
    assert compare_chain(onnxprobe, chain, "--json", tmp_path / "r.json").returncode == 0
    assert json.loads((tmp_path / "r.json").read_text())["schema"] == "onnxprobe-compare"


def test_repro_replaces_a_bundle_but_not_a_foreign_folder(onnxprobe, tmp_path):
    repro = tmp_path / "repro"
    args = [onnxprobe, "compare", DEMO, FAULTY, "--dim", "batch=1", "--repro", repro]
    assert run(args).returncode == 1
    assert (repro / "onnxprobe.json").exists()
    assert run(args).returncode == 1  # an earlier bundle is replaced
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("keep me")
    r = run(args[:-1] + [other, "--force"])
    one_line_error(r, "--repro", "not an onnxprobe repro bundle")
    assert (other / "keep.txt").read_text() == "keep me"


# --- options that do nothing ------------------------------------------------------------------

@pytest.fixture
def demo_dump(onnxprobe, tmp_path):
    d = tmp_path / "a.dump"
    assert run([onnxprobe, "run", DEMO, "--dim", "batch=1", "-o", d]).returncode == 0
    return d


def test_session_option_on_a_dump_side(onnxprobe, demo_dump):
    r = run([onnxprobe, "compare", DEMO, demo_dump, "--b-opt-level", "all"])
    one_line_error(r, "--b-opt-level", "does nothing", "side B", "dump")
    r = run([onnxprobe, "compare", demo_dump, DEMO, "--a-provider", "CPU"])
    one_line_error(r, "--a-provider", "does nothing", "side A")
    r = run([onnxprobe, "compare", demo_dump, demo_dump, "--intra-threads", "2"])
    one_line_error(r, "--intra-threads", "both sides are dumps")


def test_repro_that_cannot_be_written(onnxprobe, demo_dump, tmp_path):
    r = run([onnxprobe, "compare", DEMO, FAULTY, "--dim", "batch=1", "--isolate", "none", "--repro", tmp_path / "r"])
    one_line_error(r, "--repro", "--isolate none")
    r = run([onnxprobe, "compare", demo_dump, demo_dump, "--repro", tmp_path / "r"])
    one_line_error(r, "--repro", "dump")
    assert not (tmp_path / "r").exists()


def test_dim_that_names_no_dimension(onnxprobe):
    r = run([onnxprobe, "compare", DEMO, "--b-opt-level", "all", "--dim", "batch=1", "--dim", "height=4"])
    # (run names the flag too; Compare() returns only a Status, so compare gives the library's words)
    one_line_error(r, "dimension named 'height'", "named dimensions: batch")


def test_mapping_entry_that_pairs_nothing(onnxprobe, tmp_path):
    x = np.arange(6, dtype=np.float32)
    write_dump(tmp_path / "A", [("conv", x), ("relu", x)])
    write_dump(tmp_path / "B", [("conv", x), ("relu_renamed", x)])
    (tmp_path / "map.txt").write_text("relu relu_renamed\nrelux relu_renamed2\n")
    r = run([onnxprobe, "compare", tmp_path / "A", tmp_path / "B", "--map", tmp_path / "map.txt"])
    one_line_error(r, "'relux'", "'relu_renamed2'", "pairs nothing")
    (tmp_path / "map.txt").write_text("relu relu_typo\n")
    r = run([onnxprobe, "compare", tmp_path / "A", tmp_path / "B", "--map", tmp_path / "map.txt"])
    one_line_error(r, "side B has no tensor 'relu_typo'")


@pytest.mark.parametrize("args,needles", [
    (["--atol", "1e-3", "--atol", "1e-4"], ["--atol given twice"]),
    (["--dim", "batch=1", "--dim", "batch=2"], ["--dim", "'batch' twice"]),
    (["--b-opt-level", "basic"], ["--b-opt-level given twice"]),
])
def test_option_given_twice(onnxprobe, args, needles):
    base = [onnxprobe, "compare", DEMO, "--b-opt-level", "all"] + ([] if "--dim" in args else ["--dim", "batch=1"])
    one_line_error(run(base + args), *needles)


def test_same_input_twice_in_compare(onnxprobe, tmp_path):
    x = np.zeros((1, 3, 32, 32), np.float32)
    np.save(tmp_path / "input.npy", x)
    r = run([onnxprobe, "compare", DEMO, "--b-opt-level", "all", "--input", tmp_path / "input.npy",
             "--input", f"input={tmp_path / 'input.npy'}"])
    one_line_error(r, "input 'input'", "given twice")


def test_repro_into_a_new_folder_with_a_trailing_slash_is_written(onnxprobe, tmp_path):
    """The README's `--repro repro/`: a folder that does not exist yet, named with a trailing
    slash, in a folder that does."""
    demo = os.path.join(os.environ["ONNXPROBE_SRC"], "tests", "data", "demo")
    r = subprocess.run([onnxprobe, "compare", os.path.join(demo, "demo_cnn.onnx"), os.path.join(demo, "demo_cnn_faulty.onnx"),
                        "--dim", "batch=2", "--repro", "repro/", "-q"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert (tmp_path / "repro" / "model.onnx").is_file() and (tmp_path / "repro" / "onnxprobe.json").is_file()
    assert "not written" not in r.stdout + r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["repro"]  # no temporary left beside it


def test_an_output_whose_folder_is_missing_is_refused_before_any_work(onnxprobe, tmp_path):
    demo = os.path.join(os.environ["ONNXPROBE_SRC"], "tests", "data", "demo")
    args = [onnxprobe, "compare", os.path.join(demo, "demo_cnn.onnx"), os.path.join(demo, "demo_cnn_faulty.onnx"),
            "--dim", "batch=2"]
    for flag in ("--repro", "--json", "--html"):
        target = tmp_path / "missing" / "out"
        r = subprocess.run(args + ["--json", tmp_path / "r.json", flag, target] if flag != "--json" else args + [flag, target],
                           capture_output=True, text=True)
        assert r.returncode == 2, (flag, r.stdout + r.stderr)
        assert r.stderr.count("\n") == 1 and flag in r.stderr and "missing" in r.stderr and "does not exist" in r.stderr
        assert not (tmp_path / "missing").exists() and not (tmp_path / "r.json").exists()


def test_repro_on_a_pass_says_why_nothing_was_written(onnxprobe, tmp_path):
    demo = os.path.join(os.environ["ONNXPROBE_SRC"], "tests", "data", "demo", "demo_cnn.onnx")
    r = subprocess.run([onnxprobe, "compare", demo, demo, "--dim", "batch=2", "--repro", tmp_path / "repro", "-q"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no repro bundle written" in r.stdout and not (tmp_path / "repro").exists()


def _demo():
    return os.path.join(os.environ["ONNXPROBE_SRC"], "tests", "data", "demo", "demo_cnn.onnx")


def test_an_unknown_command_lists_every_command_even_with_help(onnxprobe):
    for extra in ([], ["--help"]):
        r = subprocess.run([onnxprobe, "frobnicate", *extra], capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == "", (extra, r.stdout[:300])
        # the list is the parser's own: every command its --help shows is in it
        helptext = subprocess.run([onnxprobe, "--help"], capture_output=True, text=True).stdout
        for name in ("inspect", "run", "compare", "replay", "determinism", "lint", "diff", "fp16", "baseline",
                     "profile"):
            assert name in helptext and re.search(rf"\b{name}\b", r.stderr), (name, r.stderr)


@pytest.mark.parametrize("value", ["0", "-5", "lots", ""])
def test_a_bad_memory_budget_names_the_option(onnxprobe, tmp_path, value):
    r = subprocess.run([onnxprobe, "run", _demo(), "--dim", "batch=1", "--max-memory", value, "-o", tmp_path / "d.dump"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--max-memory" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_a_budget_smaller_than_a_tensor_names_the_option(onnxprobe, tmp_path):
    r = subprocess.run([onnxprobe, "run", _demo(), "--dim", "batch=1", "--max-memory", "100", "-o", tmp_path / "d.dump"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--max-memory" in r.stderr, r.stderr
    assert not (tmp_path / "d.dump").exists()


def test_a_runtime_or_custom_op_library_that_is_no_library_is_bad_input(onnxprobe, tmp_path):
    (tmp_path / "not_a_lib.so").write_text("hello")
    cases = [["--ort-lib", "/etc/passwd"], ["--ort-lib", tmp_path / "not_a_lib.so"],
             ["--custom-op-lib", tmp_path / "missing.so"], ["--custom-op-lib", ""]]
    for extra in cases:
        r = subprocess.run([onnxprobe, "run", _demo(), "--dim", "batch=1", *extra, "-o", tmp_path / "d.dump"],
                           capture_output=True, text=True)
        assert r.returncode == 2, (extra, r.stderr)
        assert str(extra[1]) in r.stderr and extra[0] in r.stderr + "--ort-lib" and r.stderr.count("\n") == 1, r.stderr
        assert not (tmp_path / "d.dump").exists()


def test_run_says_where_it_writes_without_o_and_refuses_an_empty_o(onnxprobe, tmp_path):
    r = subprocess.run([onnxprobe, "run", _demo(), "--dim", "batch=1", "-o", ""], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode == 2 and "-o: empty path" in r.stderr and list(tmp_path.iterdir()) == []
    r = subprocess.run([onnxprobe, "run", _demo(), "--dim", "batch=1"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "no -o given: writing demo_cnn.dump in the current folder" in r.stderr
    assert (tmp_path / "demo_cnn.dump" / "manifest.json").is_file()


def test_determinism_says_where_it_saved_the_noise_floor(onnxprobe, tmp_path):
    r = subprocess.run([onnxprobe, "determinism", _demo(), "--dim", "batch=1", "--save-noise-floor",
                        tmp_path / "floor.json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"noise floor: {tmp_path / 'floor.json'}" in r.stdout
    assert json.loads((tmp_path / "floor.json").read_text())


# ---- --json: one convention (--json=FILE writes a file in every command) -----------------------

@pytest.mark.parametrize("args", [["inspect", DEMO], ["lint", DEMO], ["diff", DEMO, FAULTY]])
def test_json_equals_file_writes_what_the_bare_switch_prints(onnxprobe, tmp_path, args):
    bare = run([onnxprobe, *args, "--json"])
    assert bare.returncode in (0, 1), bare.stderr
    out = tmp_path / "out.json"
    r = run([onnxprobe, *args, f"--json={out}"])
    assert r.returncode == bare.returncode, r.stderr
    assert json.loads(out.read_text()) == json.loads(bare.stdout)
    assert json.loads(out.read_text())["schema"].startswith("onnxprobe-")
    assert r.stdout.strip() and not r.stdout.lstrip().startswith("{")  # the console report stays
    again = run([onnxprobe, *args, f"--json={out}"])  # its own earlier output is replaced
    assert again.returncode == bare.returncode, again.stderr


def test_json_equals_file_in_run_and_a_file_in_compare(onnxprobe, tmp_path):
    r = run([onnxprobe, "run", DEMO, "-o", tmp_path / "d.dump", f"--json={tmp_path / 'run.json'}"])
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["schema"] == "onnxprobe-run" and summary["output"] == str(tmp_path / "d.dump")
    c = run([onnxprobe, "compare", DEMO, DEMO, f"--json={tmp_path / 'c.json'}"])
    assert c.returncode == 0, c.stderr
    assert json.loads((tmp_path / "c.json").read_text())["schema"] == "onnxprobe-compare"


def test_a_separate_argument_after_a_bare_json_is_not_its_file(onnxprobe, tmp_path):
    r = run([onnxprobe, "inspect", "--json", DEMO])  # the model stays the positional
    assert r.returncode == 0 and json.loads(r.stdout)["model"] == DEMO
    r = run([onnxprobe, "inspect", DEMO, "--json", tmp_path / "x.json"])
    one_line_error(r, "unexpected argument", "--json=")
    assert not (tmp_path / "x.json").exists()


def test_json_file_never_replaces_a_users_file_or_an_input(onnxprobe, tmp_path):
    mine = tmp_path / "notes.json"
    mine.write_text('{"mine": true}')
    r = run([onnxprobe, "lint", DEMO, f"--json={mine}"])
    one_line_error(r, "--json", "notes.json")
    assert mine.read_text() == '{"mine": true}'
    r = run([onnxprobe, "inspect", DEMO, f"--json={DEMO}"])
    one_line_error(r, "--json", "demo_cnn.onnx")


@pytest.mark.parametrize("command", [["compare", DEMO, DEMO], ["determinism", DEMO]])
def test_json_stdout_is_refused_where_the_console_report_holds_stdout(onnxprobe, tmp_path, command):
    r = run([onnxprobe, *command, "--json", "-"], cwd=tmp_path)
    one_line_error(r, "--json -", "FILE")
    assert not (tmp_path / "-").exists()


# --- a symbolic link as an output is written through, never replaced (issue 43) ---------------

def test_a_link_to_an_earlier_report_is_written_through(onnxprobe, chain, tmp_path):
    target = tmp_path / "reports" / "r.json"
    target.parent.mkdir()
    r = compare_chain(onnxprobe, chain, "--json", target)
    assert r.returncode == 0, r.stderr
    target.write_text(target.read_text().replace('"verdict"', '"verdict" ', 1))  # still ours
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    r = compare_chain(onnxprobe, chain, "--json", link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["verdict"] == "PASS"
    assert '"verdict" ' not in target.read_text()  # the target holds the new report
    assert not list(tmp_path.glob("latest.json.tmp-*")) and not list(target.parent.glob("*.tmp-*"))


@pytest.mark.parametrize("flag", ["--json", "--html"])
def test_a_link_to_a_foreign_file_is_refused(onnxprobe, chain, tmp_path, flag):
    target = tmp_path / "notes.txt"
    target.write_text("my notes\n")
    link = tmp_path / "report"
    link.symlink_to(target)
    r = compare_chain(onnxprobe, chain, flag, link)
    one_line_error(r, "a link to", "notes.txt", "refusing to replace it")
    assert link.is_symlink() and target.read_text() == "my notes\n"


def test_a_link_to_a_standard_stream_is_written_to_it(onnxprobe, chain, tmp_path):
    """What `--json /dev/stdout` does with stdout redirected to a file: the link (here a private
    one to the same place, /proc/self/fd/1) stays, and the report lands in the file after what
    was printed before it."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        f.write("before\n")
        f.flush()
        r = subprocess.run([str(onnxprobe), "compare", str(chain), "--b-opt-level", "all", "-q",
                            "--json", str(link)], stdout=f, stderr=subprocess.PIPE, text=True,
                           timeout=600)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    text = out.read_text()
    assert text.startswith("before\n")
    start = text.index("\n{") + 1  # the report, before or after the console's lines
    report, _ = json.JSONDecoder().raw_decode(text, start)
    assert report["verdict"] == "PASS"


def test_a_dump_through_a_link_replaces_the_earlier_dump(onnxprobe, chain, tmp_path):
    first = tmp_path / "first.dump"
    r = run([onnxprobe, "run", chain, "-o", first])
    assert r.returncode == 0, r.stderr
    link = tmp_path / "current.dump"
    link.symlink_to(first)
    r = run([onnxprobe, "run", chain, "-o", link, "--seed", "7"])
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and first.is_dir()
    assert json.loads((first / "manifest.json").read_text())["seed"] == 7


def test_a_device_output_is_written_not_replaced(onnxprobe, chain):
    r = compare_chain(onnxprobe, chain, "--json", "/dev/null")
    assert r.returncode == 0, r.stderr
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


# --- the command line's own slips (issue 43) ---------------------------------------------------

@pytest.mark.parametrize("args,message", [
    (["--json", "--json"], "--json given twice"),
    (["--json", "-q", "--json"], "--json given twice"),
    (["--json=a.json", "--json=b.json"], "--json given twice"),
    (["--force", "--force"], "--force given twice"),
    (["--rtol", "1e-3", "--rtol", "1e-2"], "--rtol given twice"),
    (["--rtol"], "--rtol needs a value (--rtol X)"),
])
def test_slips_are_one_line_errors(onnxprobe, chain, tmp_path, args, message):
    r = run([onnxprobe, "compare", chain, "--b-opt-level", "all", *args], cwd=tmp_path)
    one_line_error(r, message)
    assert list(tmp_path.iterdir()) == [p for p in tmp_path.iterdir() if p.name == "chain.onnx"]


def test_repeatable_options_may_repeat(onnxprobe, chain, tmp_path):
    r = compare_chain(onnxprobe, chain, "--tensors", "added", "--tensors", "Y", "-q")
    assert r.returncode == 0, r.stderr


def test_version_with_an_unknown_option(onnxprobe):
    one_line_error(run([onnxprobe, "--version", "--nosuch"]), "unknown option '--nosuch'")


def test_a_dump_of_another_model_is_said(onnxprobe, chain, tmp_path):
    dump = tmp_path / "chain.dump"
    assert run([onnxprobe, "run", chain, "-o", dump]).returncode == 0
    other = tmp_path / "other.onnx"
    models.chain_model(other, shuffle=True, symbolic=False)  # same computation, another file
    r = run([onnxprobe, "compare", dump, other])
    assert r.returncode == 0, r.stderr
    assert "was captured from a model with SHA-256" in r.stderr and "other.onnx" in r.stderr
    r = run([onnxprobe, "compare", dump, chain])
    assert r.returncode == 0 and "captured from a model" not in r.stderr + r.stdout


def test_what_a_killed_run_left_is_removed_by_the_next(onnxprobe, chain, tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid names no process now
    stale = tmp_path / f"d.dump.tmp-{dead.pid}-0"
    (stale / "inputs").mkdir(parents=True)
    (stale / "00001_x.npy").write_bytes(b"\0" * 1024)
    alive = tmp_path / f"d.dump.tmp-{os.getpid()}-0"  # a live process's: left alone
    alive.mkdir()
    r = run([onnxprobe, "run", chain, "-o", tmp_path / "d.dump"])
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and alive.exists() and (tmp_path / "d.dump" / "manifest.json").exists()


@pytest.mark.parametrize("given", ["--shape", "--input"])
def test_a_dim_that_another_option_contradicts_is_refused(onnxprobe, tmp_path, given):
    """--dim used to be ignored for an input that --shape or --input sets."""
    model = tmp_path / "chain.onnx"
    models.chain_model(model)  # X: float32[batch, 3]
    np.save(tmp_path / "X.npy", np.zeros((2, 3), np.float32))
    value = "X:2x3" if given == "--shape" else f"X={tmp_path / 'X.npy'}"
    r = run([onnxprobe, "run", model, given, value, "--dim", "batch=4", "-o", tmp_path / "d"])
    one_line_error(r, "dimension 'batch' the size 2", "--dim batch=4")
    r = run([onnxprobe, "run", model, given, value, "--dim", "batch=2", "-o", tmp_path / "d"])
    assert r.returncode == 0, r.stderr  # agreeing options are fine
