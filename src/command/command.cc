// The registry of library commands, their option tables, and arguments given as values.
#include "onnxprobe/command/command.h"

#include <map>
#include <set>

#include "command/commands.h"

namespace onnxprobe::cmd {
namespace {

// Records declarations: the table, and each option's parser for ApplyArguments.
class RecordingSink : public OptionSink {
 public:
  struct Slot {
    std::string* out;
    bool required;
  };
  void Section(const std::string& title) override { section_ = title; }
  void Add(const OptionSpec& spec, std::function<Status(const std::string&)> parse) override {
    info.options.push_back({spec, section_, MainName(spec.names)});
    parsers.push_back(std::move(parse));
  }
  void Positional(const std::string& name, const std::string& help, std::string* out,
                  bool required) override {
    info.positionals.push_back({name, help, required, false});
    slots.push_back({out, required});
  }
  void Positionals(const std::string& name, const std::string& help,
                   std::vector<std::string>* out) override {
    info.positionals.push_back({name, help, true, true});
    rest = out;
  }

  CommandInfo info;
  std::vector<std::function<Status(const std::string&)>> parsers;
  std::vector<Slot> slots;
  std::vector<std::string>* rest = nullptr;

 private:
  std::string section_ = "options";
};

// The option declared under `name` ("-o" or "--output"), or -1.
int FindOption(const CommandInfo& info, const std::string& name) {
  for (size_t i = 0; i < info.options.size(); ++i) {
    const std::string& names = info.options[i].spec.names;
    size_t start = 0;
    while (start <= names.size()) {
      size_t comma = names.find(',', start);
      if (comma == std::string::npos) comma = names.size();
      if (names.compare(start, comma - start, name) == 0 && comma - start == name.size())
        return static_cast<int>(i);
      start = comma + 1;
    }
  }
  return -1;
}

std::string Usage(const CommandInfo& info) {
  std::string usage = "onnxprobe " + info.name + " [OPTIONS]";
  for (const auto& p : info.positionals)
    usage += p.many ? " " + p.name + "..." : p.required ? " " + p.name : " [" + p.name + "]";
  return usage;
}

}  // namespace

std::vector<std::unique_ptr<Command>> MakeCommands() {
  std::vector<std::unique_ptr<Command>> out;
  out.push_back(MakeInspectCommand());
  out.push_back(MakeRunCommand());
  out.push_back(MakeCompareCommand());
  out.push_back(MakeReplayCommand());
  out.push_back(MakeMergeCommand());
  out.push_back(MakeImportPolygraphyCommand());
  out.push_back(MakeGenerateCommand());
  out.push_back(MakeDeterminismCommand());
  out.push_back(MakeLintCommand());
  out.push_back(MakeDiffCommand());
  out.push_back(MakeFp16Command());
  out.push_back(MakeBaselineSaveCommand());
  out.push_back(MakeBaselineCheckCommand());
  out.push_back(MakeProfileCommand());
  out.push_back(MakePlatformBundleCommand());
  return out;
}

Expected<std::unique_ptr<Command>> MakeCommand(const std::string& name) {
  std::string known;
  for (auto& c : MakeCommands()) {
    if (c->name() == name) return std::move(c);
    known += (known.empty() ? "" : ", ") + std::string(c->name());
  }
  return NotFound("no command '" + name + "' (" + known + ")");
}

CommandInfo DescribeCommand(Command& command) {
  RecordingSink sink;
  command.Declare(sink);
  sink.info.name = command.name();
  sink.info.summary = command.summary();
  sink.info.footer = command.footer();
  return sink.info;
}

Status ApplyArguments(Command& command, const std::vector<std::string>& positionals,
                      const std::vector<std::pair<std::string, std::string>>& options) {
  RecordingSink sink;
  command.Declare(sink);
  sink.info.name = command.name();
  const std::string& name = sink.info.name;
  std::map<int, int> seen;
  for (const auto& [option, value] : options) {
    int i = FindOption(sink.info, option);
    if (i < 0) {
      return InvalidArgument(name + ": unknown option '" + option + "' (see onnxprobe " + name +
                             " --help)");
    }
    const OptionSpec& spec = sink.info.options[i].spec;
    bool takes_value = !spec.value_name.empty() && spec.bare_value.empty();
    if (takes_value && ++seen[i] > 1 && !spec.repeatable)
      return InvalidArgument(sink.info.options[i].name + " given twice");
    std::string v = value;
    if (!spec.bare_value.empty() && v.empty()) v = spec.bare_value;
    if (spec.value_name.empty() && !v.empty())
      return InvalidArgument(sink.info.options[i].name + " takes no value (got '" + v + "')");
    OP_RETURN_IF_ERROR(sink.parsers[i](v));
  }
  size_t next = 0;
  for (const auto& slot : sink.slots) {
    if (next < positionals.size()) *slot.out = positionals[next++];
  }
  if (sink.rest != nullptr) {
    while (next < positionals.size()) sink.rest->push_back(positionals[next++]);
  }
  if (next < positionals.size())
    return InvalidArgument(name + ": unexpected argument '" + positionals[next] + "'");
  for (size_t i = 0; i < sink.slots.size(); ++i) {
    if (sink.slots[i].required && sink.slots[i].out->empty()) {
      size_t k = 0;
      for (const auto& p : sink.info.positionals) {
        if (p.many) continue;
        if (k++ == i)
          return InvalidArgument(name + ": no " + p.name + " given (usage: " + Usage(sink.info) +
                                 ")");
      }
    }
  }
  if (sink.rest != nullptr && sink.rest->empty()) {
    return InvalidArgument(name + ": no " + sink.info.positionals.back().name +
                           " given (usage: " + Usage(sink.info) + ")");
  }
  return command.Validate();
}

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kCompare:
      return "compare";
    case Phase::kIsolate:
      return "isolate";
    case Phase::kSample:
      return "sample";
    case Phase::kCapture:
      return "capture";
    case Phase::kGenerate:
      return "generate";
  }
  return "";
}

int ExitCodeFor(const Status& s) {
  if (s.ok()) return kExitOk;
  return s.code() == ErrorCode::kBackend ? kExitRuntime : kExitBadInput;
}

const char* NoteKindName(NoteKind kind) {
  switch (kind) {
    case NoteKind::kNote:
      return "note";
    case NoteKind::kWarning:
      return "warning";
    case NoteKind::kNonfinite:
      return "nonfinite";
  }
  return "note";
}

std::string CommandNote::Line() const { return std::string(NoteKindName(kind)) + ": " + text; }

std::vector<std::string> DistinctNotes(const std::vector<CommandNote>& notes) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& n : notes) {
    std::string line = n.Line();
    if (seen.insert(line).second) out.push_back(std::move(line));
  }
  return out;
}

}  // namespace onnxprobe::cmd
