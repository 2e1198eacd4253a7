// onnxprobe run MODEL: capture intermediate tensors into a dump folder or .npz.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>

#include "cli.h"
#include "onnxprobe/backend.h"
#include "onnxprobe/dump.h"
#include "onnxprobe/format.h"
#include "onnxprobe/json.h"
#include "onnxprobe/model.h"

namespace onnxprobe::cli {
namespace {

constexpr const char* kHelp =
    "usage: onnxprobe run MODEL [options]\n"
    "output\n"
    "  -o, --output PATH        dump folder (one .npy per tensor + manifest.json) or FILE.npz\n"
    "                           (default: <model stem>.dump)\n"
    "  --json                   print the run summary as JSON\n"
    "  -q, --quiet              no progress and no summary\n"
    "what to capture (default: every intermediate tensor)\n"
    "  --tensors A,B            by exact tensor name\n"
    "  --op-types Conv,Gemm     outputs of nodes of these op types\n"
    "  --regex RE               tensor names matching RE\n"
    "inputs (default: seeded random)\n"
    "  --input FILE             .npy (name from stem, or NAME=FILE.npy), .npz, TensorProto .pb, "
    "or\n"
    "                           a dump from an earlier run (reuses its inputs)\n"
    "  --shape NAME:1x3x224x224 concrete shape for an input with symbolic dims\n"
    "  --dim NAME=N             value of a symbolic dimension everywhere\n"
    "  --range [NAME:]LO,HI     value range for random inputs\n"
    "  --seed N                 random seed (default 0)\n"
    "runtime\n"
    "  --provider NAME          execution provider: CPU (default), CUDA, TensorRT, ... never falls "
    "back\n"
    "  --provider-option K=V    provider option (repeatable)\n"
    "  --opt-level L            graph optimizations: disabled (default), basic, extended, all\n"
    "  --parallel               parallel execution mode (default sequential)\n"
    "  --intra-threads N, --inter-threads N\n"
    "  --ort-lib PATH           ONNX Runtime library to load\n"
    "  --ort-version X.Y.Z      an ONNX Runtime version installed by the bootstrap\n"
    "  --max-memory SIZE        captured bytes alive at once (e.g. 512M); splits into several "
    "runs\n"
    "  --check-observer         confirm graph outputs are identical with and without capture\n";

struct RunOptions {
  std::string model, output;
  SessionFlags session;
  bool json = false, quiet = false;
  TensorSelection selection;
  InputOptions inputs;
  CaptureOptions capture;
};

Status Parse(Args& args, RunOptions* o, bool* help) {
  Status st;
  while (!args.Done()) {
    if (args.Flag("--help") || args.Flag("-h")) {
      *help = true;
      return Status::Ok();
    }
    if (args.Flag("-o") || args.Flag("--output")) {
      OP_ASSIGN_OR_RETURN(o->output, args.Value());
    } else if (args.Flag("--json")) {
      o->json = true;
    } else if (args.Flag("-q") || args.Flag("--quiet")) {
      o->quiet = true;
    } else if (args.Flag("--tensors")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      for (auto& n : SplitList(v)) o->selection.names.push_back(n);
    } else if (args.Flag("--op-types")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      for (auto& n : SplitList(v)) o->selection.op_types.push_back(n);
    } else if (args.Flag("--regex")) {
      OP_ASSIGN_OR_RETURN(o->selection.regex, args.Value());
    } else if (ParseInputFlag(args, &o->inputs, &st) ||
               ParseSessionFlag(args, "", &o->session, &st)) {
      OP_RETURN_IF_ERROR(st);
    } else if (args.Flag("--max-memory")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(o->capture.max_memory, ParseBytes(v));
    } else if (args.Flag("--check-observer")) {
      o->capture.check_observer = true;
    } else if (!args.Peek().empty() && args.Peek()[0] == '-') {
      return InvalidArgument("run: unknown option '" + args.Peek() +
                             "' (see onnxprobe run --help)");
    } else if (o->model.empty()) {
      o->model = args.Next();
    } else {
      return InvalidArgument("run: unexpected argument '" + args.Peek() + "'");
    }
  }
  if (o->model.empty()) return InvalidArgument("run: no MODEL given");
  if (o->output.empty()) {
    o->output = std::filesystem::path(o->model).stem().string() + ".dump";
  }
  return Status::Ok();
}

}  // namespace

int RunRun(Args& args) {
  RunOptions o;
  bool help = false;
  Status st = Parse(args, &o, &help);
  if (!st.ok()) return Fail(st);
  if (help) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (o.capture.max_memory > 0) SetAllocationLimit(o.capture.max_memory);
  auto model = Model::Load(o.model);
  if (!model.ok()) return Fail(model.status());
  auto tensors = SelectTensors(*model, o.selection);
  if (!tensors.ok()) return Fail(tensors.status());
  auto inputs = PrepareInputs(*model, o.inputs);
  if (!inputs.ok()) return Fail(inputs.status());
  o.capture.session = o.session.session;
  auto lib = ResolveOrtLibrary(o.session);
  if (!lib.ok()) return Fail(lib.status());
  auto backend = LoadOrtBackend(*lib);
  if (!backend.ok()) return Fail(backend.status());
  // the model hash is for the manifest only: compute it on the other core while the model runs
  auto hashes = std::async(std::launch::async, [&] { return model->Hashes(false); });

  DumpMetadata meta;
  meta.model_path = o.model;
  meta.runtime = "onnxruntime " + (*backend)->version();
  meta.runtime_version = (*backend)->version();
  meta.provider = o.capture.session.provider;
  meta.optimization_level = o.capture.session.optimization_level;
  meta.seed = o.inputs.seed;
  auto writer = DumpWriter::Create(o.output, meta);
  if (!writer.ok()) return Fail(writer.status());
  for (const auto& in : *inputs) {
    st = (*writer)->AddInput(in);
    if (!st.ok()) return Fail(st);
  }
  ProgressLine progress(!o.quiet && isatty(STDERR_FILENO), "capturing");
  auto t0 = std::chrono::steady_clock::now();
  auto report = Capture(*model, **backend, *inputs, *tensors, o.capture, **writer,
                        [&](size_t d, size_t t) { progress.Update(d, t); });
  if (!report.ok()) return Fail(report.status());
  (*writer)->set_model_sha256(hashes.get().sha256);
  st = (*writer)->Finish(*report);
  if (!st.ok()) return Fail(st);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (o.json) {
    JsonWriter j;
    j.BeginObject().Key("output").String(o.output).Key("captured").UInt(report->captured);
    j.Key("runs").UInt(report->runs).Key("bytes").UInt((*writer)->bytes_written());
    j.Key("seconds").Number(secs).Key("runtime").String(meta.runtime);
    j.Key("skipped").BeginArray();
    for (const auto& s : report->skipped) j.String(s);
    j.EndArray();
    if (report->observer_checked) {
      j.Key("observer_identical").Bool(report->observer_identical);
      j.Key("observer_differences").BeginArray();
      for (const auto& d : report->observer_differences) {
        j.BeginObject().Key("name").String(d.name);
        if (d.layout_differs) j.Key("layout").String(d.layout);
        j.Key("elements").UInt(d.elements).Key("differing").UInt(d.differing);
        j.Key("max_abs").Number(d.max_abs).Key("max_rel").Number(d.max_rel).EndObject();
      }
      j.EndArray();
    }
    j.EndObject();
    std::printf("%s\n", j.str().c_str());
  } else if (!o.quiet) {
    std::printf("captured %zu tensors (%s) from %s in %zu run%s, %.2f s, %s %s\n", report->captured,
                HumanBytes((*writer)->bytes_written()).c_str(), o.model.c_str(), report->runs,
                report->runs == 1 ? "" : "s", secs, meta.runtime.c_str(), meta.provider.c_str());
    for (const auto& s : report->skipped) std::printf("skipped  %s\n", s.c_str());
    if (report->observer_checked) {
      if (report->observer_identical) {
        std::printf("observer check: graph outputs are bit-identical with and without capture\n");
      } else {
        std::printf("observer check: capturing CHANGED the graph outputs:\n");
        for (const auto& d : report->observer_differences) {
          if (d.layout_differs) {
            std::printf("  %s: %s\n", d.name.c_str(), d.layout.c_str());
          } else {
            std::printf("  %s: max abs difference %s, max rel %s (%llu of %llu elements differ)\n",
                        d.name.c_str(), FormatNumber(d.max_abs).c_str(),
                        FormatNumber(d.max_rel).c_str(), (unsigned long long)d.differing,
                        (unsigned long long)d.elements);
          }
        }
      }
    }
    std::printf("dump: %s\n", o.output.c_str());
  }
  if (report->observer_checked && !report->observer_identical) return kExitMismatch;
  return kExitOk;
}

}  // namespace onnxprobe::cli
