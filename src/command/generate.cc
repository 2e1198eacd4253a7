// generate A B: two decoders generating from one prompt, step by step with their cache.
#include "onnxprobe/generate/generate.h"

#include "command/commands.h"
#include "onnxprobe/command/generate_plan.h"
#include "onnxprobe/pipeline/options.h"
#include "onnxprobe/report/generate_report.h"

namespace onnxprobe::cmd {
namespace {

constexpr const char* kFooter =
    "Both sides generate greedily from the prompt. Free-running: where their tokens part.\n"
    "Teacher-forced: side B is fed side A's tokens (each side keeps its own cache), so a\n"
    "divergence does not compound; per step the logits and the cache positions the step adds\n"
    "are judged under the tolerances, the first failing step is where the error is born, and\n"
    "that step is compared tensor by tensor with side A's exact cache (the node). Examples:\n"
    "  onnxprobe generate decoder.onnx --b-opt-level all --steps 32\n"
    "  onnxprobe generate fp32.onnx int4.onnx --prompt ids.npy --json gen.json --html gen.html";

class GenerateCommand : public Command {
 public:
  const char* name() const override { return "generate"; }
  const char* summary() const override {
    return "compare two decoders over a generation (free-running and teacher-forced, with their "
           "key/value cache) and name the step, layer and node where error is born";
  }
  std::string footer() const override { return kFooter; }

  void Declare(OptionSink& sink) override {
    sink.Positional("A", "reference decoder (.onnx with past key/value inputs)", &a_, true);
    sink.Positional("B", "decoder under test (default: A)", &b_, false);
    sink.Section("runtime of both sides (--a-... / --b-...: one side)");
    DeclareSessionOptions(sink, "", &shared_);
    DeclareSessionOptions(sink, "a-", &side_a_);
    DeclareSessionOptions(sink, "b-", &side_b_);
    sink.Section("generation");
    sink.Add({"--prompt", "FILE.npy", "prompt token ids, integer [n] or [1, n]"},
             [this](const std::string& v) {
               prompt_file_ = v;
               return Status::Ok();
             });
    sink.Add({"--prompt-ids", "LIST", "prompt token ids given inline: 1,2,3"},
             [this](const std::string& v) -> Status {
               for (const auto& x : SplitList(v)) {
                 OP_ASSIGN_OR_RETURN(int64_t id, ParseInt(x, "--prompt-ids"));
                 if (id < 0) return InvalidArgument("--prompt-ids: token ids are 0 or more");
                 req_.prompt.push_back(id);
               }
               if (req_.prompt.empty()) return InvalidArgument("--prompt-ids: no ids given");
               return Status::Ok();
             });
    sink.Add({"--prompt-length", "N", "without a prompt: N seeded random ids (default 8)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--prompt-length"));
               if (n < 1 || n > 1 << 20)
                 return InvalidArgument("--prompt-length must be between 1 and 1048576");
               req_.prompt_length = static_cast<int>(n);
               length_given_ = true;
               return Status::Ok();
             });
    sink.Add({"--seed", "N", "seed of the random prompt (default 0)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--seed"));
               req_.seed = static_cast<uint64_t>(n);
               seed_given_ = true;
               return Status::Ok();
             });
    sink.Add({"--pad-left", "N",
              "N padding tokens before the prompt, masked out (attention mask 0), as in a "
              "left-padded batch"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--pad-left"));
               if (n < 0 || n > 1 << 20)
                 return InvalidArgument("--pad-left must be between 0 and 1048576");
               req_.pad_left = static_cast<int>(n);
               return Status::Ok();
             });
    sink.Add({"--pad-id", "ID", "the padding token (default 0)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(req_.pad_id, ParseInt(v, "--pad-id"));
               pad_id_given_ = true;
               return Status::Ok();
             });
    sink.Add({"--steps", "N", "tokens to generate (default 16; the prompt's step is step 1)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--steps"));
               if (n < 1 || n > 1 << 20)
                 return InvalidArgument("--steps must be between 1 and 1048576");
               req_.steps = static_cast<int>(n);
               return Status::Ok();
             });
    sink.Add({"--top-k", "K", "top-k agreement of the logits (default 5)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--top-k"));
               if (n < 1 || n > 1 << 20) return InvalidArgument("--top-k must be at least 1");
               req_.top_k = static_cast<int>(n);
               return Status::Ok();
             });
    sink.Add({"--io", "ROLE=NAME",
              "map an input/output discovery cannot: input_ids|attention_mask|position_ids|"
              "logits=NAME, or PAST=PRESENT (both sides; --a-io/--b-io: one side)",
              true},
             [this](const std::string& v) { return AddIo(v, "--io", &io_both_); });
    sink.Add({"--a-io", "ROLE=NAME", "", true, true},
             [this](const std::string& v) { return AddIo(v, "--a-io", &req_.a.io); });
    sink.Add({"--b-io", "ROLE=NAME", "", true, true},
             [this](const std::string& v) { return AddIo(v, "--b-io", &req_.b.io); });
    DeclareToleranceOptions(sink, &tolerance_);
    DeclareMaxMemory(sink, &req_.job.max_memory,
                     "the sides' caches at the last step (refused up front when larger) and the "
                     "born step's comparison (e.g. 512M)");
    sink.Add({"--isolate", "WHICH",
              "at the born step, run candidates alone on side B's runtime with side A's inputs: "
              "frontier (default), failing, all or none"},
             [this](const std::string& v) -> Status {
               auto c = ParseIsolate(v);
               if (!c.ok()) return c.status().WithContext("--isolate");
               req_.localize = c->isolate;
               req_.localize_options.candidates = c->candidates;
               return Status::Ok();
             });
    sink.Add({"--quant", "MODE",
              "auto (default): a quantized side B against a float side A is judged by SQNR, as "
              "compare judges it; off: by the tolerances"},
             [this](const std::string& v) -> Status {
               auto m = ParseQuantMode(v);
               if (!m.ok()) return m.status().WithContext("--quant");
               req_.quant.mode = *m;
               return Status::Ok();
             });
    sink.Add({"--quant-min-sqnr", "DB", "a quantized step passes at this SQNR or above (20 dB)"},
             [this](const std::string& v) -> Status {
               auto d = ParseSqnrDb(v);
               if (!d.ok()) return d.status().WithContext("--quant-min-sqnr");
               req_.quant.min_sqnr_db = *d;
               return Status::Ok();
             });
    sink.Section("reports");
    sink.Add({"--json", "FILE", "versioned JSON report (docs/generate.md)"},
             [this](const std::string& v) { return SetJsonFile(v, &json_); });
    DeclareString(sink, "--save-a", "DIR", &req_.save_a,
                  "save side A's generation (logits and cache per step) as a folder a later "
                  "generate takes as side A");
    DeclareString(sink, "--html", "FILE", &html_,
                  "self-contained HTML page: per-step chart, cache heat map");
    DeclareSwitch(sink, "--force", &force_,
                  "replace existing files that are not onnxprobe reports");
    DeclareSwitch(sink, "-q,--quiet", &console_.quiet, "summary lines only");
    sink.Add({"--rows", "N", "at most N step rows (default 40)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--rows"));
               if (n < 1) return InvalidArgument("--rows must be at least 1");
               console_.max_rows = static_cast<size_t>(n);
               return Status::Ok();
             });
    sink.Add({"--color", "", "color the output (default: on a terminal without NO_COLOR)"},
             [this](const std::string&) {
               console_.color = true;
               color_forced_ = true;
               return Status::Ok();
             });
    sink.Add({"--no-color", "", "plain output"}, [this](const std::string&) {
      console_.color = false;
      color_forced_ = true;
      return Status::Ok();
    });
  }

  Status AddIo(const std::string& v, const std::string& flag, DecoderIoHints* out) {
    OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, flag));
    out->push_back(kv);
    return Status::Ok();
  }

  Status Validate() override {
    if (b_.empty()) {
      b_ = a_;
      if (side_a_.touched.empty() && side_b_.touched.empty()) {
        return InvalidArgument(
            "generate: one side given and no --a-/--b- option to tell the sides apart (e.g. "
            "--b-opt-level all)");
      }
    }
    if (!prompt_file_.empty() && !req_.prompt.empty())
      return InvalidArgument("--prompt and --prompt-ids: give one");
    bool prompt_given = !prompt_file_.empty() || !req_.prompt.empty();
    if (prompt_given && (length_given_ || seed_given_)) {
      return InvalidArgument(std::string(length_given_ ? "--prompt-length" : "--seed") +
                             " does nothing with a prompt given");
    }
    if (pad_id_given_ && req_.pad_left == 0)
      return InvalidArgument("--pad-id does nothing without --pad-left");
    tolerance_.ApplyTo(&req_.job.policy);
    std::vector<std::string> inputs{a_, b_};
    if (!prompt_file_.empty()) inputs.push_back(prompt_file_);
    OP_RETURN_IF_ERROR(
        CheckDistinctOutputs({{"--json", json_}, {"--html", html_}, {"--save-a", req_.save_a}}));
    if (!req_.save_a.empty()) {
      OP_RETURN_IF_ERROR(
          CheckOutput("--save-a", req_.save_a, OutputKind::kGeneration, inputs, force_));
    }
    if (!json_.empty())
      OP_RETURN_IF_ERROR(CheckOutput("--json", json_, OutputKind::kCommandJson, inputs, force_));
    if (!html_.empty())
      OP_RETURN_IF_ERROR(CheckOutput("--html", html_, OutputKind::kGenerateHtml, inputs, force_));
    return Status::Ok();
  }

  // The typed request of the options applied (after Validate()).
  Expected<GenerateRequest> Plan() const {
    GenerateRequest req = req_;
    if (!prompt_file_.empty()) {
      OP_ASSIGN_OR_RETURN(req.prompt, ReadPromptIds(prompt_file_));
    }
    auto side = [&](const std::string& path, const SessionFlags& own, GenerateSide* out) -> Status {
      SessionFlags f = MergeSessionFlags(shared_, own);
      OP_ASSIGN_OR_RETURN(out->ort_library, ResolveOrtLibrary(f, default_ort_library_));
      out->path = path;
      out->session = f.session;
      out->io.insert(out->io.begin(), io_both_.begin(), io_both_.end());
      return Status::Ok();
    };
    OP_RETURN_IF_ERROR(side(a_, side_a_, &req.a));
    OP_RETURN_IF_ERROR(side(b_, side_b_, &req.b));
    return req;
  }

  void SetDefaultRuntime(std::string library) { default_ort_library_ = std::move(library); }

  Expected<CommandOutput> Execute(const CommandContext& context) override {
    if (!color_forced_) console_.color = context.color;
    OP_ASSIGN_OR_RETURN(GenerateRequest req, Plan());
    if (context.progress && !console_.quiet) {
      req.on_step = [&context](const std::string&, int step) {
        context.progress({Phase::kGenerate, static_cast<size_t>(step), 0, ""});
      };
    }
    auto r = CompareGeneration(req);
    if (!r.ok()) return r.status();
    CommandOutput out;
    out.documents["json"] = RenderGenerateJson(*r);
    out.documents["html"] = RenderGenerateHtml(*r);
    if (!json_.empty()) OP_RETURN_IF_ERROR(WriteGenerateJson(*r, json_));
    if (!html_.empty()) OP_RETURN_IF_ERROR(WriteGenerateHtml(*r, html_));
    out.text = RenderGenerateConsole(*r, console_);
    if (!json_.empty()) out.text += "JSON report: " + json_ + "\n";
    if (!html_.empty()) out.text += "HTML report: " + html_ + "\n";
    out.exit_code = r->passed() ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  std::string a_, b_, prompt_file_, json_, html_, default_ort_library_;
  SessionFlags shared_, side_a_, side_b_;
  DecoderIoHints io_both_;
  ToleranceFlags tolerance_;
  GenerateRequest req_;
  ConsoleOptions console_;
  bool force_ = false, color_forced_ = false, length_given_ = false, seed_given_ = false,
       pad_id_given_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeGenerateCommand() { return std::make_unique<GenerateCommand>(); }

Expected<GenerateRequest> PlanGenerate(
    const std::vector<std::string>& positionals,
    const std::vector<std::pair<std::string, std::string>>& options,
    const std::string& default_ort_library) {
  GenerateCommand command;
  command.SetDefaultRuntime(default_ort_library);
  OP_RETURN_IF_ERROR(ApplyArguments(command, positionals, options));
  return command.Plan();
}

}  // namespace onnxprobe::cmd
