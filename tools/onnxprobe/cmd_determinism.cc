// onnxprobe determinism MODEL: is every tensor the same run after run?
#include <cstdio>

#include "cli.h"
#include "onnxprobe/determinism.h"

namespace onnxprobe::cli {
namespace {

constexpr const char* kHelp =
    "usage: onnxprobe determinism MODEL [options]\n"
    "Runs MODEL several times in one session and in a fresh one, and once with other thread\n"
    "settings; compares every intermediate tensor bitwise with the first run. Exit 1 when the\n"
    "graph outputs differ between runs with the same settings.\n"
    "  --runs N                 runs in the reference session (default 3)\n"
    "  --no-settings            skip the intra-op thread and execution-mode variations\n"
    "  --save-noise-floor FILE  per-tensor run-to-run differences, for compare --noise-floor\n"
    "  --json FILE              the report as JSON\n"
    "  --tensors, --op-types, --regex, --input, --shape, --dim, --range, --seed, --provider,\n"
    "  --provider-option, --opt-level, --intra-threads, --inter-threads, --parallel, --ort-lib,\n"
    "  --ort-version, --max-memory  as for run\n";

}  // namespace

int RunDeterminism(Args& args) {
  DeterminismRequest req;
  SessionFlags session;
  std::string noise_file, json_file;
  Status st;
  while (!args.Done()) {
    if (args.Flag("--help") || args.Flag("-h")) {
      std::fputs(kHelp, stdout);
      return kExitOk;
    }
    if (ParseInputFlag(args, &req.inputs, &st) || ParseSessionFlag(args, "", &session, &st)) {
      if (!st.ok()) return Fail(st);
    } else if (args.Flag("--runs")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      auto n = ParseInt(*v, "--runs");
      if (!n.ok()) return Fail(n.status());
      if (*n < 2 || *n > 1000) return Fail(InvalidArgument("--runs must be between 2 and 1000"));
      req.runs = static_cast<int>(*n);
    } else if (args.Flag("--no-settings")) {
      req.vary_threads = req.vary_execution = false;
    } else if (args.Flag("--save-noise-floor")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      noise_file = *v;
    } else if (args.Flag("--json")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      json_file = *v;
    } else if (args.Flag("--tensors")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      for (auto& n : SplitList(*v)) req.selection.names.push_back(n);
    } else if (args.Flag("--op-types")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      for (auto& n : SplitList(*v)) req.selection.op_types.push_back(n);
    } else if (args.Flag("--regex")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      req.selection.regex = *v;
    } else if (args.Flag("--max-memory")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      auto b = ParseBytes(*v);
      if (!b.ok()) return Fail(b.status());
      req.max_memory = *b;
    } else if (!args.Peek().empty() && args.Peek()[0] == '-') {
      return Fail(InvalidArgument("determinism: unknown option '" + args.Peek() + "'"));
    } else if (req.model.empty()) {
      req.model = args.Next();
    } else {
      return Fail(InvalidArgument("determinism: unexpected argument '" + args.Peek() + "'"));
    }
  }
  if (req.model.empty()) return Fail(InvalidArgument("determinism: no model given"));
  req.session = session.session;
  auto lib = ResolveOrtLibrary(session);
  if (!lib.ok()) return Fail(lib.status());
  req.ort_library = *lib;
  auto rep = CheckDeterminism(req);
  if (!rep.ok()) return Fail(rep.status());
  if (!json_file.empty()) {
    st = WriteDeterminismJson(*rep, json_file);
    if (!st.ok()) return Fail(st);
  }
  if (!noise_file.empty()) {
    st = WriteNoiseFloor(*rep, false, noise_file);
    if (!st.ok()) return Fail(st);
  }
  std::fputs(RenderDeterminismText(*rep).c_str(), stdout);
  return rep->outputs_reproducible ? kExitOk : kExitMismatch;
}

}  // namespace onnxprobe::cli
