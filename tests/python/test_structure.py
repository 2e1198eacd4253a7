"""The library's module structure (src/README.md): a module's own headers under src/<module>/ are
private to it, except those of the foundation layers (common/, tensor/, model/) that every module
builds on; everything else crosses modules through include/onnxprobe/. The command line and the
Python module use the public headers only. Read from the sources, so a new include that breaks
a rule fails here."""
import os
import re

SRC = os.environ.get("ONNXPROBE_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
FOUNDATION = {"common", "tensor", "model"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_0-9]+)/([^"]+)"', re.M)


def _sources(folder):
    for root, _, files in os.walk(folder):
        for f in files:
            if f.endswith((".cc", ".h", ".inc")):
                yield os.path.join(root, f)


def _modules():
    src = os.path.join(SRC, "src")
    return sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))


def _private_includes():
    """(file, its module, the module whose private header it includes, the include)."""
    modules = set(_modules())
    for m in modules:
        for path in _sources(os.path.join(SRC, "src", m)):
            with open(path, encoding="utf-8", errors="replace") as f:
                for target, rest in INCLUDE.findall(f.read()):
                    if target in modules and target != m:
                        yield path, m, target, f"{target}/{rest}"


def test_private_headers_stay_in_their_module_or_the_foundation():
    wrong = [f"{os.path.relpath(p, SRC)} includes {inc}"
             for p, m, target, inc in _private_includes() if target not in FOUNDATION]
    assert not wrong, "private headers of another module (make them public in include/onnxprobe/):\n" + \
        "\n".join(wrong)


def test_the_foundation_layers_form_no_cycle():
    edges = {}
    for _, m, target, _ in _private_includes():
        if m in FOUNDATION:
            edges.setdefault(m, set()).add(target)

    def reaches(start, goal, seen):
        for n in edges.get(start, ()):
            if n == goal or (n not in seen and reaches(n, goal, seen | {n})):
                return True
        return False

    cycles = [m for m in FOUNDATION if reaches(m, m, {m})]
    assert not cycles, f"foundation modules include each other in a cycle: {cycles} ({edges})"


def _module_edges():
    """module -> {(module it includes, first file that does)}: public and private includes of the
    module's sources and of its public headers."""
    modules = set(_modules())
    any_include = re.compile(r'^\s*#\s*include\s+"(?:onnxprobe/)?([a-z_0-9]+)/[^"]+"', re.M)
    edges = {m: {} for m in modules}
    for m in modules:
        for base in (os.path.join(SRC, "src", m), os.path.join(SRC, "include", "onnxprobe", m)):
            for path in _sources(base) if os.path.isdir(base) else ():
                with open(path, encoding="utf-8", errors="replace") as f:
                    for target in any_include.findall(f.read()):
                        if target in modules and target != m:
                            edges[m].setdefault(target, os.path.relpath(path, SRC))
    return edges


def test_no_two_modules_include_each_other_through_any_chain():
    edges = _module_edges()

    def path_to(start, goal):
        todo, seen = [[start]], {start}
        while todo:
            chain = todo.pop()
            for n in edges[chain[-1]]:
                if n == goal:
                    return chain + [n]
                if n not in seen:
                    seen.add(n)
                    todo.append(chain + [n])
        return None

    cycles = []
    for m in sorted(edges):
        chain = path_to(m, m)
        if chain:
            cycles.append(" -> ".join(f"{a} ({edges[a][b]})" for a, b in zip(chain, chain[1:])))
    assert not cycles, "modules that include each other:\n" + "\n".join(cycles)


# src/README.md's layers, bottom up: a module uses only its own layer and those below
LAYERS = [
    {"common", "tensor", "model", "graph"},
    {"backend", "side", "capture"},
    {"compare", "engine"},
    {"localize", "quant", "align", "diagnose", "fp16", "lint", "profile", "preload"},
    {"pipeline", "baseline", "generate"},
    {"report"},
    {"command"},
]


def test_no_module_uses_a_higher_layer():
    layer = {m: k for k, names in enumerate(LAYERS) for m in names}
    edges = _module_edges()
    unknown = sorted(set(edges) - set(layer))
    assert not unknown, f"modules missing from LAYERS (and src/README.md's layers): {unknown}"
    upward = [f"{m} (layer {layer[m] + 1}) uses {t} (layer {layer[t] + 1}) in {f}"
              for m in sorted(edges) for t, f in sorted(edges[m].items()) if layer[t] > layer[m]]
    assert not upward, "a module using a higher layer:\n" + "\n".join(upward)


def test_the_command_line_and_python_use_public_headers_only():
    modules = set(_modules())
    wrong = []
    for folder in ("tools", os.path.join("python", "bindings")):
        for path in _sources(os.path.join(SRC, folder)):
            with open(path, encoding="utf-8", errors="replace") as f:
                for target, rest in INCLUDE.findall(f.read()):
                    if target in modules:
                        wrong.append(f"{os.path.relpath(path, SRC)} includes {target}/{rest}")
    assert not wrong, "\n".join(wrong)


PUBLIC = re.compile(r'^\s*#\s*include\s+"onnxprobe/([a-z_0-9]+)/', re.M)


def test_the_command_line_only_parses_calls_and_prints():
    """tools/onnxprobe holds no command of its own: it reaches the library through the commands'
    interface (command/) and the foundation's errors, version and cleanup, never a computing
    module, so every command's request, call and report live in the library, shared with Python."""
    allowed = {"command", "common", "backend"}  # backend: `onnxprobe --version` names the runtime
    wrong = []
    for path in _sources(os.path.join(SRC, "tools", "onnxprobe")):
        with open(path, encoding="utf-8", errors="replace") as f:
            wrong += [f"{os.path.relpath(path, SRC)} includes onnxprobe/{m}/"
                      for m in PUBLIC.findall(f.read()) if m not in allowed]
    assert not wrong, "\n".join(wrong)
    assert os.path.isfile(os.path.join(SRC, "tools", "onnxprobe", "cli_app.cc"))


def test_the_rules_see_the_tree():
    # the checks above pass vacuously on an empty tree: the modules they walk must be there
    assert {"engine", "pipeline", "localize", "side", "common"} <= set(_modules())
    assert any(m in FOUNDATION for _, _, m, _ in _private_includes())


def _core_objects():
    """{module: [object files]} of the library as built (the folder of ONNXPROBE_BIN, the build
    this suite tests)."""
    binary = os.environ.get("ONNXPROBE_BIN")
    assert binary, "ONNXPROBE_BIN names the build whose objects are checked"
    root = os.path.join(os.path.dirname(binary), "CMakeFiles", "onnxprobe_core.dir", "src")
    objects = {}
    for m in _modules():
        folder = os.path.join(root, m)
        objects[m] = [os.path.join(r, f) for r, _, fs in os.walk(folder) for f in fs if f.endswith(".o")]
    return objects


def _symbols(objects):
    """(defined {symbol: file}, used [(symbol, file)]) of external symbols, read with nm."""
    import subprocess
    defined, used = {}, []
    out = subprocess.run(["nm", "-A", "--extern-only", *objects], capture_output=True, text=True, check=True).stdout
    entry = re.compile(r"^(.*?\.o):\s*[0-9a-f]*\s+([A-Za-z])\s+(\S+)$")
    for line in out.splitlines():
        m = entry.match(line)
        if not m:
            continue
        where, kind, symbol = m.groups()
        if kind == "U":
            used.append((symbol, where))
        elif kind in "TDBR":  # code and data the object defines (not weak: inline copies)
            defined.setdefault(symbol, where)
    return defined, used


def test_no_module_calls_a_function_a_higher_layer_defines():
    """What the include checks cannot see: a function declared in a lower module's header and
    defined in a higher one, called from the lower layer (it links, and the layering is a lie).
    Read from the built objects: every undefined symbol of a module's objects, resolved to the
    module whose objects define it."""
    layer = {m: k for k, names in enumerate(LAYERS) for m in names}
    objects = _core_objects()
    module_of = {f: m for m, fs in objects.items() for f in fs}
    assert sum(len(fs) for fs in objects.values()) > 100, "the library's objects are not where expected"
    defined, used = _symbols([f for fs in objects.values() for f in fs])
    upward = set()
    for symbol, where in used:
        target = defined.get(symbol)
        if target is None:
            continue  # the runtime, the standard library, a third party
        m, t = module_of[where], module_of[target]
        if layer[t] > layer[m]:
            upward.add(f"{os.path.relpath(where, SRC) if where.startswith(SRC) else os.path.basename(where)} "
                       f"({m}, layer {layer[m] + 1}) calls {symbol} defined in {t} (layer {layer[t] + 1})")
    if upward:  # readable names
        import subprocess
        upward = subprocess.run(["c++filt"], input="\n".join(sorted(upward)), capture_output=True,
                                text=True).stdout.splitlines()
    assert not upward, "calls into a higher layer:\n" + "\n".join(upward)
