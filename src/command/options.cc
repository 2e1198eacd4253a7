// Options shared by commands: inputs, samples, selection, session settings, tolerances and the
// outputs' guards. Declared once, so every command spells and checks them alike.
#include "onnxprobe/command/options.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/report/formats.h"

namespace onnxprobe::cmd {
namespace {

// A value option that may be given once per KEY (e.g. --dim batch=1 --dim seq=8, not batch twice).
class KeyOnce {
 public:
  explicit KeyOnce(std::string flag) : flag_(std::move(flag)) {}
  Status Take(const std::string& key) {
    if (!seen_.insert(key).second) {
      return InvalidArgument(flag_ + " gives '" + key + "' twice");
    }
    return Status::Ok();
  }

 private:
  std::string flag_;
  std::set<std::string> seen_;
};

}  // namespace

void DeclareInputOptions(OptionSink& sink, InputFlags* f) {
  InputOptions* o = &f->options;
  sink.Section("inputs (default: seeded random)");
  sink.Add({"--input", "FILE",
            ".npy (bound by file stem, NAME=FILE.npy, or to the only input), .npz (keys are input "
            "names), TensorProto .pb, or a dump from an earlier run (reuses its inputs)",
            true},
           [f, o](const std::string& v) {
             f->given.push_back("--input");
             o->files.push_back(v);
             return Status::Ok();
           });
  auto shapes = std::make_shared<KeyOnce>("--shape");
  sink.Add({"--shape", "NAME:DIMS", "concrete shape for an input, e.g. input:1x3x224x224", true},
           [f, o, shapes](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(auto ns, ParseNamedShape(v));
             OP_RETURN_IF_ERROR(shapes->Take(ns.first));
             f->given.push_back("--shape");
             o->shapes[ns.first] = ns.second;
             return Status::Ok();
           });
  auto dims = std::make_shared<KeyOnce>("--dim");
  sink.Add({"--dim", "NAME=N", "value of a symbolic dimension in every input that has it", true},
           [f, o, dims](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, "--dim"));
             OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(kv.second, "--dim " + kv.first));
             if (n < 0) return InvalidArgument("--dim " + kv.first + " must not be negative");
             OP_RETURN_IF_ERROR(dims->Take(kv.first));
             f->given.push_back("--dim");
             o->dim_params[kv.first] = n;
             return Status::Ok();
           });
  auto ranges = std::make_shared<KeyOnce>("--range");
  sink.Add({"--range", "[NAME:]LO,HI", "value range of random inputs (one input, or all)", true},
           [f, o, ranges](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(auto r, ParseRange(v));
             OP_RETURN_IF_ERROR(ranges->Take(r.first));
             f->given.push_back("--range");
             o->ranges[r.first] = r.second;
             return Status::Ok();
           });
  sink.Add({"--seed", "N", "seed of random inputs (default 0)"},
           [o](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--seed"));
             o->seed = static_cast<uint64_t>(n);
             return Status::Ok();
           });
  DeclareSwitch(
      sink, "--allow-nonfinite-inputs", &o->allow_nonfinite,
      "run a given input that is NaN/Inf in every value (refused by default: NaN compares "
      "equal to NaN, so nothing computed from it can fail)");
}

std::vector<std::string> InputFilePaths(const InputFlags& flags) {
  std::vector<std::string> out;
  for (const auto& spec : flags.options.files) {
    out.push_back(spec);       // "NAME=FILE": the library takes the part after '=' unless the whole
    auto eq = spec.find('=');  // spec names a file; guard both
    if (eq != std::string::npos) out.push_back(spec.substr(eq + 1));
  }
  return out;
}

void DeclareSampleOptions(OptionSink& sink, SampleOptions* s) {
  DeclareString(sink, "--inputs", "DIR", &s->inputs_dir,
                "input samples: a folder of .npz files (keys = input names) and/or ONNX "
                "test_data_set_N/ folders (input_K.pb)");
  sink.Add({"--samples", "N", "N seeded random samples (seeds --seed, --seed+1, ...)"},
           [s](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--samples"));
             if (n < 1 || n > 100000)
               return InvalidArgument("--samples must be between 1 and 100000");
             s->count = static_cast<size_t>(n);
             return Status::Ok();
           });
}

void DeclareShardOption(OptionSink& sink, const std::string& which, SampleShard* shard,
                        bool* given) {
  sink.Add({"--shard", "I/N",
            which + ": only the samples at positions I, I+N, I+2N, ... (one job of an array; "
                    "join the --json reports with onnxprobe merge, docs/shard.md)"},
           [shard, given](const std::string& v) -> Status {
             auto s = ParseSampleShard(v);
             if (!s.ok()) return s.status().WithContext("--shard");
             *shard = *s;
             *given = true;
             return Status::Ok();
           });
}

void DeclareSelectionOptions(OptionSink& sink, TensorSelection* selection,
                             const std::string& restricts) {
  auto help = [&](const std::string& what) {
    return restricts.empty() ? what : "restrict " + restricts + " to " + what;
  };
  sink.Add(
      {"--tensors", "A,B", help(restricts.empty() ? "by exact tensor name" : "these names"), true},
      [selection](const std::string& v) {
        for (auto& n : SplitList(v)) selection->names.push_back(n);
        return Status::Ok();
      });
  sink.Add({"--op-types", "OP,OP", help("outputs of nodes of these op types"), true},
           [selection](const std::string& v) {
             for (auto& n : SplitList(v)) selection->op_types.push_back(n);
             return Status::Ok();
           });
  sink.Add({"--regex", "RE", help("tensor names matching RE (ECMAScript)")},
           [selection](const std::string& v) {
             selection->regex = v;
             return Status::Ok();
           });
}

void DeclareSwitch(OptionSink& sink, const std::string& flags, bool* on, const std::string& help) {
  sink.Add({flags, "", help}, [on](const std::string&) {
    *on = true;
    return Status::Ok();
  });
}

void DeclareString(OptionSink& sink, const std::string& flags, const std::string& value_name,
                   std::string* value, const std::string& help) {
  sink.Add({flags, value_name, help}, [value](const std::string& v) {
    *value = v;
    return Status::Ok();
  });
}

void DeclareMaxMemory(OptionSink& sink, uint64_t* bytes, const std::string& help) {
  sink.Add({"--max-memory", "SIZE", help}, [bytes](const std::string& v) -> Status {
    OP_ASSIGN_OR_RETURN(*bytes, ParseBytes(v, "--max-memory"));
    return Status::Ok();
  });
}

Status NameSampleFlag(const Status& s, const SampleOptions& o) {
  if (s.ok()) return s;
  if (!o.inputs_dir.empty() && s.message().rfind(o.inputs_dir, 0) == 0)
    return s.WithContext("--inputs");
  if (s.message().rfind("inputs given as files and as samples", 0) == 0) {
    return InvalidArgument("--input cannot be combined with --inputs or --samples (give one)");
  }
  return s;
}

void DeclareSessionOptions(OptionSink& sink, const std::string& prefix, SessionFlags* f) {
  bool hidden = !prefix.empty();
  auto name = [&](const char* n) { return "--" + prefix + n; };
  auto add = [&](const char* n, const char* value, const char* help, SessionField field,
                 std::function<Status(const std::string& flag, const std::string& v)> set,
                 bool repeatable = false) {
    std::string flag = name(n);
    sink.Add({flag, value, help, repeatable, hidden},
             [f, flag, field, set](const std::string& v) -> Status {
               OP_RETURN_IF_ERROR(set(flag, v));
               f->touched.insert(field);
               f->given.push_back(flag);
               return Status::Ok();
             });
  };
  auto threads = [](int* field) {
    return [field](const std::string& flag, const std::string& v) -> Status {
      OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, flag));
      if (n < 0 || n > 4096) return InvalidArgument(flag + " must be between 0 and 4096");
      *field = static_cast<int>(n);
      return Status::Ok();
    };
  };
  add("provider", "NAME",
      "execution provider: CPU (default), CUDA, TensorRT, ...; never falls back to another",
      SessionField::kProvider, [f](const std::string&, const std::string& v) {
        f->session.provider = v;
        return Status::Ok();
      });
  add("provider-library", "PATH",
      "plugin execution provider library to register (ONNX Runtime 1.22+); --provider names "
      "one of its providers when it has several (docs/providers.md)",
      SessionField::kProviderLibrary, [f](const std::string& flag, const std::string& v) -> Status {
        std::error_code ec;
        if (v.empty()) return InvalidArgument(flag + ": empty path");
        if (!std::filesystem::is_regular_file(v, ec))
          return NotFound(flag + " " + v + ": no such file");
        f->session.provider_library = v;
        return Status::Ok();
      });
  add("allow-fallback", "",
      "let the CPU provider run the nodes the provider does not take (listed in the report); "
      "refused by default",
      SessionField::kFallback, [f](const std::string&, const std::string&) {
        f->session.allow_fallback = true;
        return Status::Ok();
      });
  add(
      "provider-option", "K=V", "provider option (repeatable)", SessionField::kProviderOptions,
      [f](const std::string& flag, const std::string& v) -> Status {
        OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, flag));
        if (f->session.provider_options.count(kv.first))
          return InvalidArgument(flag + " gives '" + kv.first + "' twice");
        f->session.provider_options[kv.first] = kv.second;
        return Status::Ok();
      },
      true);
  add("opt-level", "LEVEL", "graph optimizations: disabled (default), basic, extended or all",
      SessionField::kOptLevel, [f](const std::string& flag, const std::string& v) -> Status {
        OP_ASSIGN_OR_RETURN(f->session.optimization_level, ParseOptLevel(v, flag));
        return Status::Ok();
      });
  add("intra-threads", "N", "threads within an operator (0: the runtime decides)",
      SessionField::kIntra, threads(&f->session.intra_op_threads));
  add("inter-threads", "N", "threads across operators (parallel mode)", SessionField::kInter,
      threads(&f->session.inter_op_threads));
  add("parallel", "", "parallel execution mode (default sequential)", SessionField::kParallel,
      [f](const std::string&, const std::string&) {
        f->session.sequential = false;
        return Status::Ok();
      });
  add("ort-lib", "PATH", "ONNX Runtime library to load", SessionField::kOrt,
      [f](const std::string&, const std::string& v) {
        f->ort_lib = v;
        return Status::Ok();
      });
  add("ort-version", "X.Y.Z", "an ONNX Runtime version installed by the bootstrap",
      SessionField::kOrt, [f](const std::string&, const std::string& v) {
        f->ort_version = v;
        return Status::Ok();
      });
  add("remote", "CMD",
      "run on a device: CMD starts onnxprobe's worker there, speaking on its stdin/stdout (e.g. "
      "'ssh board /opt/onnxprobe/run-worker.sh'; onnxprobe platform-bundle writes that folder; "
      "docs/platform.md)",
      SessionField::kOrt, [f](const std::string& flag, const std::string& v) -> Status {
        if (v.empty()) return InvalidArgument(flag + " needs a command");
        f->remote = v;
        return Status::Ok();
      });
  add("platform", "NAME",
      "run on another CPU under qemu-user: aarch64, aarch64:<qemu cpu> (e.g. cortex-a57), "
      "x86-64-v2 or x86-64-v3 (docs/platform.md)",
      SessionField::kOrt, [f](const std::string& flag, const std::string& v) -> Status {
        auto p = ParsePlatform(v);
        if (!p.ok()) return InvalidArgument(flag + ": " + p.status().message());
        f->platform = v;
        return Status::Ok();
      });
  add(
      "session-config", "K=V",
      "runtime session configuration entry, e.g. "
      "optimization.disable_specified_optimizers=ConvBNFusion (repeatable)",
      SessionField::kConfig,
      [f](const std::string& flag, const std::string& v) -> Status {
        OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, flag));
        if (f->session.config_entries.count(kv.first))
          return InvalidArgument(flag + " gives '" + kv.first + "' twice");
        f->session.config_entries[kv.first] = kv.second;
        return Status::Ok();
      },
      true);
  add(
      "custom-op-lib", "PATH", "shared library of custom operators to register (repeatable)",
      SessionField::kCustomOps,
      [f](const std::string& flag, const std::string& v) -> Status {
        std::error_code ec;
        if (v.empty()) return InvalidArgument(flag + ": empty path");
        // a bare name is looked up by the loader; a path must exist before any run starts
        if (v.find('/') != std::string::npos && !std::filesystem::is_regular_file(v, ec))
          return NotFound(flag + " " + v + ": no such file");
        f->session.custom_op_libraries.push_back(v);
        return Status::Ok();
      },
      true);
}

SessionFlags MergeSessionFlags(const SessionFlags& shared, const SessionFlags& side) {
  SessionFlags out = shared;
  for (SessionField t : side.touched) {
    switch (t) {
      case SessionField::kProvider:
        out.session.provider = side.session.provider;
        break;
      case SessionField::kProviderLibrary:
        out.session.provider_library = side.session.provider_library;
        break;
      case SessionField::kFallback:
        out.session.allow_fallback = side.session.allow_fallback;
        break;
      case SessionField::kProviderOptions:
        out.session.provider_options = side.session.provider_options;
        break;
      case SessionField::kOptLevel:
        out.session.optimization_level = side.session.optimization_level;
        break;
      case SessionField::kIntra:
        out.session.intra_op_threads = side.session.intra_op_threads;
        break;
      case SessionField::kInter:
        out.session.inter_op_threads = side.session.inter_op_threads;
        break;
      case SessionField::kParallel:
        out.session.sequential = false;
        break;
      case SessionField::kOrt:
        out.ort_lib = side.ort_lib;
        out.ort_version = side.ort_version;
        out.platform = side.platform;
        out.remote = side.remote;
        break;
      case SessionField::kCustomOps:
        out.session.custom_op_libraries = side.session.custom_op_libraries;
        break;
      case SessionField::kConfig:
        out.session.config_entries = side.session.config_entries;
        break;
    }
  }
  out.touched.insert(side.touched.begin(), side.touched.end());
  out.given.insert(out.given.end(), side.given.begin(), side.given.end());
  return out;
}

namespace {

bool NamesRuntime(const SessionFlags& f) {
  return !f.ort_lib.empty() || !f.ort_version.empty() || !f.platform.empty() || !f.remote.empty();
}

}  // namespace

Expected<std::string> PickRuntimeForProviders(const std::vector<SessionFlags*>& sides,
                                              const std::string& default_library) {
  std::string provider, version;
  for (SessionFlags* f : sides) {
    const SessionOptions& s = f->session;
    if (NamesRuntime(*f) || IsCpuProvider(s.provider) || !s.provider_library.empty()) continue;
    OP_ASSIGN_OR_RETURN(auto backend, LoadOrtBackend(default_library));
    auto have = backend->available_providers();
    if (std::find(have.begin(), have.end(), FullProviderName(s.provider)) != have.end()) continue;
    auto versions = InstalledOrtVersionsWith(s.provider);
    if (versions.empty()) continue;
    provider = FullProviderName(s.provider) + " (ONNX Runtime " + backend->version() + " has not)";
    version = versions[0];
    break;
  }
  if (version.empty()) return std::string();
  size_t moved = 0;
  for (SessionFlags* f : sides) {
    if (NamesRuntime(*f)) continue;
    f->ort_version = version;
    ++moved;
  }
  return std::string(moved > 1 ? "both sides run" : "the side runs") + " ONNX Runtime " + version +
         ", the installed runtime with " + provider + " (--ort-version " + version + ")";
}

Expected<std::string> ResolveOrtLibrary(const SessionFlags& flags,
                                        const std::string& default_library) {
  SessionFlags f = flags;
  if (f.ort_lib.empty() && f.ort_version.empty() && f.platform.empty() && f.remote.empty())
    f.ort_lib = default_library;
  if (!f.ort_lib.empty() && !f.ort_version.empty()) {
    return InvalidArgument("give --ort-lib or --ort-version, not both");
  }
  if (!f.remote.empty()) {
    if (!f.platform.empty() || !f.ort_lib.empty() || !f.ort_version.empty())
      return InvalidArgument(
          "--remote runs the runtime its worker was bundled with: give it without --platform, "
          "--ort-lib or --ort-version");
    return PlatformLocator(RemotePlatform(f.remote), f.remote);
  }
  if (!f.platform.empty()) {
    OP_ASSIGN_OR_RETURN(Platform p, ParsePlatform(f.platform));
    std::string library = f.ort_lib;  // a library given with a platform is that CPU's build
    if (library.empty()) {
      OP_ASSIGN_OR_RETURN(library, PlatformLibrary(p, f.ort_version, ""));
    }
    return PlatformLocator(p, library);
  }
  if (!f.ort_version.empty()) return OrtLibraryForVersion(f.ort_version);
  return f.ort_lib;
}

void ToleranceFlags::ApplyTo(TolerancePolicy* p) const {
  if (atol) p->global.atol = *atol;
  if (rtol) p->global.rtol = *rtol;
  if (rel_eps) p->rel_eps = *rel_eps;
  if (judge) p->judge = *judge;
  p->rules.insert(p->rules.end(), rules.begin(), rules.end());
  if (absolute_atol) {
    p->global.scale_atol = false;
    for (auto& r : p->rules) r.tolerance.scale_atol = false;
  }
}

void DeclareToleranceOptions(OptionSink& sink, ToleranceFlags* f) {
  sink.Section("tolerances (docs/metrics.md)");
  auto number = [](std::optional<double>* field, const char* flag) {
    return [field, flag](const std::string& v) -> Status {
      OP_ASSIGN_OR_RETURN(double x, ParseTolerance(v, flag));
      *field = x;
      return Status::Ok();
    };
  };
  sink.Add({"--atol", "X",
            "absolute tolerance (default 1e-5) per unit of the tensor's scale: "
            "atol * max(1, max|a|)"},
           number(&f->atol, "--atol"));
  sink.Add({"--rtol", "X", "relative tolerance (default 1e-3)"}, number(&f->rtol, "--rtol"));
  DeclareSwitch(sink, "--absolute-atol", &f->absolute_atol,
                "apply atol as given, not per unit of scale");
  sink.Add({"--tol", "REGEX=ATOL,RTOL", "override for tensors whose name matches", true},
           [f](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(auto r, ParseToleranceRule(v, false, "--tol"));
             f->rules.push_back(std::move(r));
             return Status::Ok();
           });
  sink.Add({"--op-tol", "OP=ATOL,RTOL", "override for outputs of an op type", true},
           [f](const std::string& v) -> Status {
             OP_ASSIGN_OR_RETURN(auto r, ParseToleranceRule(v, true, "--op-tol"));
             f->rules.push_back(std::move(r));
             return Status::Ok();
           });
  sink.Add({"--judge", "MODE", "elementwise (default), max, mean or p99"},
           [f](const std::string& v) -> Status {
             if (v == "elementwise")
               f->judge = JudgeBy::kElementwise;
             else if (v == "max")
               f->judge = JudgeBy::kMax;
             else if (v == "mean")
               f->judge = JudgeBy::kMean;
             else if (v == "p99")
               f->judge = JudgeBy::kP99;
             else
               return InvalidArgument("bad --judge '" + v + "' (elementwise, max, mean or p99)");
             return Status::Ok();
           });
  sink.Add({"--rel-eps", "X", "relative error is |b-a|/(|a|+X) (default: X = 1e-3 * max|a|)"},
           number(&f->rel_eps, "--rel-eps"));
}

OptionSpec JsonOption(const std::string& help) {
  OptionSpec spec{"--json", "FILE", help + "; --json=FILE writes it to FILE"};
  spec.bare_value = "-";
  return spec;
}

Status SetJsonOutput(const std::string& value, JsonOutput* out) {
  if (value.empty()) return InvalidArgument("--json=: no file name after '='");
  out->on = true;
  out->file = value == "-" ? "" : value;
  return Status::Ok();
}

Status CheckJsonOutput(const JsonOutput& out, const std::vector<std::string>& inputs, bool force) {
  if (!out.on || out.file.empty()) return Status::Ok();
  return CheckOutput("--json", out.file, OutputKind::kCommandJson, inputs, force);
}

Status SetJsonFile(const std::string& value, std::string* out) {
  return SetReportFile("--json", value, out);
}

Status SetReportFile(const std::string& flag, const std::string& value, std::string* out) {
  if (value.empty()) return InvalidArgument(flag + ": no file name given");
  if (value == "-") {
    return InvalidArgument(flag + " -: this command prints its console report on stdout; give " +
                           flag + " a FILE");
  }
  *out = value;
  return Status::Ok();
}

Expected<std::string> ConsoleWithJson(const JsonOutput& out, const std::string& text,
                                      const std::string& json) {
  if (!out.on) return text;
  if (!out.file.empty()) {
    OP_RETURN_IF_ERROR(WriteJsonOutput(out.file, json));
    return text;
  }
  return json.empty() || json.back() != '\n' ? json + "\n" : json;
}

std::string MainName(const std::string& names) {
  std::string best, cur;
  for (size_t i = 0; i <= names.size(); ++i) {
    if (i == names.size() || names[i] == ',') {
      if (cur.size() > best.size()) best = cur;
      cur.clear();
    } else {
      cur += names[i];
    }
  }
  return best;
}

Status CheckOutput(const std::string& flag, const std::string& path, OutputKind kind,
                   const std::vector<std::string>& inputs, bool force) {
  return CheckOutput(flag, path, ArtifactOf(kind), inputs, force);
}

Status CheckOutput(const std::string& flag, const std::string& path, const OutputArtifact& artifact,
                   const std::vector<std::string>& inputs, bool force) {
  Status st = CheckOutputTarget(path, artifact, inputs, force);
  if (st.ok()) return st;
  if (!force && CheckOutputTarget(path, artifact, inputs, true).ok()) {
    st = Status(st.code(), st.message() + "; --force replaces it");
  }
  return st.WithContext(flag);
}

OutputArtifact SinkArtifact(const std::string& format) {
  auto sink = FindCompareSink(format);
  return sink.ok() ? (*sink)->artifact : OutputArtifact{format, {}, {}};
}

Status NameInputFlag(const Status& s, InputField field) {
  if (s.message().rfind("--", 0) == 0) return s;  // the message names its flag already
  switch (field) {
    case InputField::kFiles:
      return s.WithContext("--input");
    case InputField::kShapes:
      return s.WithContext("--shape");
    case InputField::kDimParams:
      return s.WithContext("--dim");
    case InputField::kNone:
      break;
  }
  return s;
}

Status CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& flag_paths) {
  namespace fs = std::filesystem;
  for (size_t i = 0; i < flag_paths.size(); ++i) {
    for (size_t j = i + 1; j < flag_paths.size(); ++j) {
      const auto& [fa, pa] = flag_paths[i];
      const auto& [fb, pb] = flag_paths[j];
      if (pa.empty() || pb.empty()) continue;
      if (fs::path(pa).lexically_normal() == fs::path(pb).lexically_normal()) {
        return InvalidArgument(fa + " and " + fb + " name the same path '" + pa + "'");
      }
    }
  }
  return Status::Ok();
}

}  // namespace onnxprobe::cmd
