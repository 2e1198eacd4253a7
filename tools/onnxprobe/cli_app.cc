// The one translation unit that includes CLI11 (a heavy header-only library): builds the
// application from the commands' declarations, parses, and hands over to the chosen command.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "cli.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/common/version.h"

namespace onnxprobe::cli {
namespace {

// A Status raised from inside an option callback; carried out of CLI11's parse unchanged.
struct StatusError {
  Status status;
};

void Raise(const Status& s) {
  if (!s.ok()) throw StatusError{s};
}

struct PositionalSlot {
  std::string name;
  std::string* out;
  bool required;
};

// CLI11's layout with one blank line between sections, not two.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> opts) const override {
    std::string out = group + ":\n";
    for (const CLI::Option* opt : opts) out += make_option(opt, is_positional);
    return out;
  }
  std::string make_positionals(const CLI::App* app) const override {
    std::string p = CLI::Formatter::make_positionals(app);
    return p.empty() ? p : "\n" + p + "\n";
  }
  // "--json{-}" (a switch whose bare value is "-") is listed as "--json[=FILE]"
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    size_t open = name.find('{');
    size_t close = name.find('}', open);
    if (open != std::string::npos && close != std::string::npos) name.erase(open, close - open + 1);
    return name;
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_type_name().empty() && opt->get_type_name()[0] == '[')
      return opt->get_type_name();
    return CLI::Formatter::make_option_opts(opt);
  }
};

class Cli11Sink : public cmd::OptionSink {
 public:
  explicit Cli11Sink(CLI::App* app) : app_(app) {}

  void Section(const std::string& title) override { section_ = title; }

  void Add(const cmd::OptionSpec& spec, std::function<Status(const std::string&)> parse) override {
    std::string main_name = cmd::MainName(spec.names);
    for (size_t at = 0; at <= spec.names.size();) {
      size_t comma = std::min(spec.names.find(',', at), spec.names.size());
      if (!spec.repeatable) once_[spec.names.substr(at, comma - at)] = main_name;
      at = comma + 1;
    }
    CLI::Option* opt = nullptr;
    if (!spec.bare_value.empty()) {
      auto target = std::make_shared<std::string>();
      targets_.push_back(target);
      opt = app_->add_flag(spec.names + "{" + spec.bare_value + "}", *target, spec.help);
      auto seen = std::make_shared<int>(0);
      std::string flag = cmd::MainName(spec.names);
      bool repeatable = spec.repeatable;
      opt->each([parse, seen, flag, repeatable](const std::string& v) {
        if (++*seen > 1 && !repeatable) Raise(InvalidArgument(flag + " given twice"));
        Raise(parse(v));
      });
      opt->type_name("[=" + spec.value_name + "]");
      optional_value_names_.push_back(cmd::MainName(spec.names));
    } else if (spec.value_name.empty()) {
      opt = app_->add_flag_callback(
          spec.names, [parse] { Raise(parse("")); }, spec.help);
      if (!spec.repeatable) switches_.push_back(cmd::MainName(spec.names));
    } else {
      auto seen = std::make_shared<int>(0);
      std::string flag = cmd::MainName(spec.names);
      bool repeatable = spec.repeatable;
      opt = app_->add_option(
          spec.names,
          [parse, seen, flag, repeatable](const CLI::results_t& values) {
            if (++*seen > 1 && !repeatable) Raise(InvalidArgument(flag + " given twice"));
            for (const auto& v : values) Raise(parse(v));
            return true;
          },
          spec.help);
      // one value per occurrence, handled as it is parsed: repeated options keep their order
      opt->type_name(spec.value_name)->trigger_on_parse();
    }
    opt->group(spec.hidden ? "" : section_);
  }

  void Positional(const std::string& name, const std::string& help, std::string* out,
                  bool required) override {
    CLI::Option* opt = app_->add_option(name, *out, help)->type_name("");
    if (required) opt->required();
    slots_.push_back({name, out, required});
  }

  void Positionals(const std::string& name, const std::string& help,
                   std::vector<std::string>* out) override {
    app_->add_option(name, *out, help)->type_name("")->expected(-1);
    list_ = {name, out};
  }

  // Before parsing, the arguments after the command's name: an option that may be given once,
  // given twice (as "--json", "--json=FILE", "-o PATH": each occurrence of its name counts).
  Status Repeats(const std::vector<std::string>& args, size_t from) const {
    std::map<std::string, int> seen;
    for (size_t i = from; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--") break;  // what follows is no option
      if (a.size() < 2 || a[0] != '-') continue;
      auto it = once_.find(a.substr(0, a.find('=')));
      if (it != once_.end() && ++seen[it->second] > 1)
        return InvalidArgument(it->second + " given twice");
    }
    return Status::Ok();
  }

  // After parsing: a switch given twice, too few positionals, unknown options, surplus
  // arguments.
  Status Check(const std::string& command) const {
    for (const auto& name : switches_) {
      if (app_->count(name) > 1) return InvalidArgument(name + " given twice");
    }
    auto extras = app_->remaining();
    for (const auto& e : extras) {
      if (e.size() > 1 && e[0] == '-') {
        return InvalidArgument(command + ": unknown option '" + e + "' (see onnxprobe " + command +
                               " --help)");
      }
    }
    if (!extras.empty()) {
      std::string hint;
      for (const auto& name : optional_value_names_) {
        if (app_->count(name) > 0)
          hint = " (" + name + " takes a file only when attached: " + name + "=" + extras.front() +
                 ")";
      }
      return InvalidArgument(command + ": unexpected argument '" + extras.front() + "'" + hint);
    }
    if (list_.second != nullptr && list_.second->empty())
      return InvalidArgument(command + ": no " + list_.first + " given (usage: onnxprobe " +
                             command + " [OPTIONS] " + list_.first + "...)");
    for (const auto& s : slots_) {
      if (s.required && s.out->empty()) {
        std::string usage = "onnxprobe " + command + " [OPTIONS]";
        for (const auto& t : slots_) usage += t.required ? " " + t.name : " [" + t.name + "]";
        return InvalidArgument(command + ": no " + s.name + " given (usage: " + usage + ")");
      }
    }
    return Status::Ok();
  }

 private:
  CLI::App* app_;
  std::string section_ = "options";
  std::vector<PositionalSlot> slots_;
  std::pair<std::string, std::vector<std::string>*> list_{"", nullptr};
  std::vector<std::shared_ptr<std::string>> targets_;  // values of optional-value switches
  std::vector<std::string> optional_value_names_;
  std::vector<std::string> switches_;        // switches that may be given once
  std::map<std::string, std::string> once_;  // every name of an option given once -> main name
};

int PrintVersion() {
  std::printf("onnxprobe %s\n", Version());
  auto backend = LoadOrtBackend();
  if (backend.ok()) {
    std::printf("onnxruntime %s (%s)\n", (*backend)->version().c_str(),
                (*backend)->library_path().c_str());
    return kExitOk;
  }
  std::printf("onnxruntime not loaded: %s\n", backend.status().message().c_str());
  return ExitCodeFor(backend.status());
}

// Commands named "GROUP NAME" (e.g. "baseline save") are subcommands of GROUP.
const char* GroupSummary(const std::string& group) {
  if (group == "baseline")
    return "precision baseline for CI: save outputs, thresholds and "
           "environment, check a build against them";
  return "";
}

constexpr const char* kExitCodes =
    "exit codes: 0 ok, 1 mismatch, 2 bad input or usage, 3 runtime failure";

// The commands the parser knows, in the order they were added ("a, b or c"): the one list
// the unknown-command error quotes, so a command added later is never missing from it.
std::string CommandList(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace

int RunCli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "version") args[0] = "--version";
  if (!args.empty() && args[0] == "help") args[0] = "--help";

  CLI::App app("onnxprobe: which node made the numbers of an ONNX model wrong, and why",
               "onnxprobe");
  app.footer(std::string("onnxprobe COMMAND --help shows the options of a command.\n") +
             kExitCodes);
  app.formatter(std::make_shared<HelpFormatter>());
  app.allow_extras();
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "onnxprobe and ONNX Runtime versions");

  // in --help's order, the main job first, then the field commands (the library's one list)
  std::vector<std::unique_ptr<cmd::Command>> commands = cmd::MakeCommands();
  std::vector<std::pair<CLI::App*, std::unique_ptr<Cli11Sink>>> subs;
  std::map<std::string, CLI::App*> groups;
  for (auto& c : commands) {
    std::string name = c->name();
    CLI::App* parent = &app;
    auto space = name.find(' ');
    if (space != std::string::npos) {
      std::string group = name.substr(0, space);
      name = name.substr(space + 1);
      CLI::App*& g = groups[group];
      if (g == nullptr) {
        g = app.add_subcommand(group, GroupSummary(group));
        g->allow_extras();
        g->require_subcommand(1);
        g->footer(kExitCodes);
      }
      parent = g;
    }
    CLI::App* sub = parent->add_subcommand(name, c->summary());
    sub->allow_extras();
    std::string footer = c->footer();
    sub->footer(footer.empty() ? kExitCodes : footer + "\n" + kExitCodes);
    auto sink = std::make_unique<Cli11Sink>(sub);
    c->Declare(*sink);
    subs.emplace_back(sub, std::move(sink));
  }
  if (args.empty()) {
    std::fputs(app.help().c_str(), stderr);
    return kExitBadInput;
  }

  // an option given twice, found before CLI11 reads it (it would take `--json --json` as a
  // file named "--json")
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string name = commands[i]->name();
    std::vector<std::string> words;
    for (size_t at = 0, sp = 0; at <= name.size(); at = sp + 1) {
      sp = std::min(name.find(' ', at), name.size());
      words.push_back(name.substr(at, sp - at));
    }
    auto first = std::find(args.begin(), args.end(), words[0]);
    size_t k = static_cast<size_t>(first - args.begin());
    if (first == args.end() || k + words.size() > args.size() ||
        !std::equal(words.begin(), words.end(), args.begin() + k))
      continue;
    Status st = subs[i].second->Repeats(args, k + words.size());
    if (!st.ok()) return Fail(st);
    break;
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last to first
  try {
    app.parse(args);
  } catch (const CLI::RequiredError& e) {
    for (size_t i = 0; i < commands.size(); ++i) {  // a missing positional: say it our way
      if (!subs[i].first->parsed()) continue;
      Status st = subs[i].second->Check(commands[i]->name());
      if (!st.ok()) return Fail(st);
    }
    return Fail(InvalidArgument(e.what()));
  } catch (const CLI::CallForHelp&) {
    bool known = false;
    for (const auto& sub : subs) known = known || sub.first->parsed();
    if (!known && !app.remaining().empty()) {  // `onnxprobe frobnicate --help`
      return Fail(InvalidArgument("unknown command '" + app.remaining().front() + "' (" +
                                  CommandList(app) + "; see onnxprobe --help)"));
    }
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11's "--rtol: 1 required X missing" said as "--rtol needs a value (--rtol X)"
    std::string what = e.what();
    size_t colon = what.find(": 1 required "), missing = what.rfind(" missing");
    if (colon != std::string::npos && missing != std::string::npos && missing > colon + 13) {
      std::string flag = what.substr(0, colon);
      std::string value = what.substr(colon + 13, missing - colon - 13);
      return Fail(InvalidArgument(flag + " needs a value (" + flag + " " + value + ")"));
    }
    return Fail(InvalidArgument(what));
  } catch (const StatusError& e) {
    return Fail(e.status);
  }
  if (version) {
    for (const auto& e : app.remaining())  // `onnxprobe --version --nosuch`
      return Fail(InvalidArgument(
          (e.size() > 1 && e[0] == '-' ? "unknown option '" : "unexpected argument '") + e +
          "' with --version"));
    return PrintVersion();
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!subs[i].first->parsed()) continue;
    Status st = subs[i].second->Check(commands[i]->name());
    if (st.ok()) st = commands[i]->Validate();
    if (!st.ok()) return Fail(st);
    return RunLibraryCommand(*commands[i]);
  }
  std::string what = app.remaining().empty() ? "no command given"
                                             : "unknown command '" + app.remaining().front() + "'";
  return Fail(InvalidArgument(what + " (" + CommandList(app) + "; see onnxprobe --help)"));
}

}  // namespace onnxprobe::cli
