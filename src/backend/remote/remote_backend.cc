// A Backend whose sessions live in onnxprobe's platform worker under qemu-user (platform.h):
// every CreateSession and Run is one request over the worker's stdin/stdout
// (remote_protocol.h). The worker is started when the backend loads and ends with the last
// session or backend holding it; when it dies, every later call fails naming how it ended and
// the last lines it wrote.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "backend/ort/ort_api.h"
#include "backend/remote/remote_protocol.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/graph/graph.h"

extern char** environ;

namespace onnxprobe {

std::string PlatformWorkerPath(const std::string& arch) {
  const char* env = std::getenv("ONNXPROBE_WORKER_DIR");
  std::string dir = env != nullptr ? env : ONNXPROBE_WORKER_DIR;
  return dir.empty() ? "" : dir + "/" + arch + "/onnxprobe-worker";
}

namespace {

namespace fs = std::filesystem;

std::string WorkerPath(const Platform& p) { return PlatformWorkerPath(p.arch); }

// Finds `name` on PATH; "" when absent.
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t at = 0;
  while (at <= dirs.size()) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(at, end - at) + "/" + name;
    if (end > at && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return "";
}

// The worker process and the stream to it; shared by the backend and its sessions.
class Connection {
 public:
  static Expected<std::shared_ptr<Connection>> Start(const Platform& p, const std::string& library);
  static Expected<std::shared_ptr<Connection>> Spawn(const Platform& p,
                                                     std::vector<std::string> args,
                                                     bool synth_cpuinfo);
  ~Connection();

  // One request and its reply; the reply's Status is read here and returned when not ok.
  Expected<std::string> Call(remote::Op op, const std::string& payload);
  const Platform& platform() const { return platform_; }
  void set_arch(const std::string& arch) { platform_.arch = arch; }
  bool alive() {
    std::lock_guard<std::mutex> lock(mu_);
    return dead_.ok();
  }

 private:
  Connection() = default;
  Status Gone(const std::string& during);
  std::string StderrTail();

  Platform platform_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string stderr_path_;
  std::mutex mu_;
  Status dead_;
};

Expected<std::shared_ptr<Connection>> Connection::Start(const Platform& p,
                                                        const std::string& library) {
  if (!p.remote.empty()) return Spawn(p, {"/bin/sh", "-c", p.remote}, false);
  std::string qemu = OnPath(p.qemu);
  if (qemu.empty())
    return NotFound(p.qemu + " is not installed (Debian: apt-get install qemu-user); a side on " +
                    p.name + " runs under it");
  std::string worker = WorkerPath(p);
  if (worker.empty() || ::access(worker.c_str(), X_OK) != 0)
    return NotFound("no " + p.arch + " platform worker" +
                    (worker.empty() ? " in this build" : " at " + worker) +
                    " (built with the cross compiler: Debian g++-aarch64-linux-gnu for aarch64)");
  std::error_code ec;
  if (!fs::exists(library, ec))
    return NotFound("ONNX Runtime library for " + p.name + " not found: " + library);
  std::string sysroot = "/usr/" + p.arch + "-linux-gnu";
  std::vector<std::string> args = {qemu, "-cpu", p.cpu};
  if (p.arch == "aarch64") args.insert(args.end(), {"-L", sysroot});
  args.insert(args.end(), {worker, library});
  // qemu-user shows the guest this machine's /proc/cpuinfo: the worker answers it itself
  return Spawn(p, args, true);
}

Expected<std::shared_ptr<Connection>> Connection::Spawn(const Platform& p,
                                                        std::vector<std::string> args,
                                                        bool synth_cpuinfo) {
  auto c = std::shared_ptr<Connection>(new Connection());
  c->platform_ = p;
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp") + "/onnxprobe-worker-XXXXXX";
  int err = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (err < 0) return IoError(std::string("a file for the worker's messages: ") + strerror(errno));
  c->stderr_path_ = tmpl;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    ::close(err);
    return IoError(std::string("pipes to the worker: ") + strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err, 2);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "ONNXPROBE_WORKER_CPUINFO=", 25) != 0) env_strings.push_back(*e);
  }
  if (synth_cpuinfo) env_strings.push_back("ONNXPROBE_WORKER_CPUINFO=synth");
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  int rc = posix_spawn(&c->pid_, args[0].c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err);
  c->to_ = in[1];
  c->from_ = out[0];
  if (rc != 0) {
    c->pid_ = -1;
    return BackendError("cannot start " + args[0] + ": " + strerror(rc));
  }
  return c;
}

Connection::~Connection() {
  if (to_ >= 0) ::close(to_);  // the worker ends at the end of its input
  if (pid_ > 0) {
    int status = 0;
    for (int i = 0; i < 200; ++i) {  // 2 s, then it is killed
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      ::usleep(10000);
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  if (from_ >= 0) ::close(from_);
  if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
}

std::string Connection::StderrTail() {
  std::string text;
  int fd = ::open(stderr_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t from = size > 2000 ? size - 2000 : 0;
  text.resize(static_cast<size_t>(size - from));
  ssize_t k = ::pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(k > 0 ? static_cast<size_t>(k) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);  // its last line
}

Status Connection::Gone(const std::string& during) {
  std::string how = "closed its output";
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, 0) == pid_) {
      pid_ = -1;
      if (WIFSIGNALED(status))
        how = "killed by signal " + std::to_string(WTERMSIG(status)) + ", " +
              strsignal(WTERMSIG(status));
      if (WIFEXITED(status)) how = "exit status " + std::to_string(WEXITSTATUS(status));
    }
  }
  std::string tail = StderrTail();
  std::string who = platform_.remote.empty()
                        ? "the " + platform_.name + " worker (" + platform_.qemu + ")"
                        : "the remote worker (" + platform_.remote + ")";
  dead_ =
      BackendError(who + " ended " + during + " (" + how + ")" + (tail.empty() ? "" : ": " + tail));
  return dead_;
}

Expected<std::string> Connection::Call(remote::Op op, const std::string& payload) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dead_.ok()) return dead_;
  const char* what = op == remote::Op::kRun ? "while running a session" : "while serving a request";
  if (!remote::WriteFrame(to_, op, payload).ok()) return Gone(what);
  bool closed = false;
  auto reply = remote::ReadFrame(from_, &closed);
  if (closed) return Gone(what);
  if (!reply.ok()) return reply.status();
  if (reply->op != remote::Op::kReply) return Corrupt("the worker answered with a request");
  return std::move(reply->payload);
}

class RemoteSession : public BackendSession {
 public:
  RemoteSession(std::shared_ptr<Connection> c, uint64_t id, std::vector<std::string> in,
                std::vector<std::string> out)
      : c_(std::move(c)), id_(id), in_(std::move(in)), out_(std::move(out)) {}
  ~RemoteSession() override {
    wire::Writer w;
    w.U64(id_);
    (void)c_->Call(remote::Op::kRelease, w.bytes());
  }
  const std::vector<std::string>& input_names() const override { return in_; }
  const std::vector<std::string>& output_names() const override { return out_; }

  Expected<std::vector<RunOutput>> Run(
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) override {
    wire::Writer w;
    w.U64(id_);
    w.U64(inputs.size());
    for (const auto& [name, t] : inputs) {
      w.Str(name);
      remote::PutTensor(w, *t);
    }
    w.Strings(outputs);
    OP_ASSIGN_OR_RETURN(std::string reply, c_->Call(remote::Op::kRun, w.bytes()));
    wire::Reader r(reply);
    OP_RETURN_IF_ERROR(r.Stat());
    return remote::GetOutputs(r);
  }

  Status RunInto(const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                 const std::vector<std::string>& outputs,
                 std::vector<RunOutput>* results) override {
    OP_ASSIGN_OR_RETURN(*results, Run(inputs, outputs));
    return Status::Ok();
  }

  Expected<std::string> EndProfiling() override {
    wire::Writer w;
    w.U64(id_);
    OP_ASSIGN_OR_RETURN(std::string reply, c_->Call(remote::Op::kEndProfiling, w.bytes()));
    wire::Reader r(reply);
    OP_RETURN_IF_ERROR(r.Stat());
    std::string path = r.Str();
    OP_RETURN_IF_ERROR(r.Finish("the worker's profile"));
    return path;
  }

 private:
  std::shared_ptr<Connection> c_;
  uint64_t id_;
  std::vector<std::string> in_, out_;
};

class RemoteBackend : public Backend {
 public:
  RemoteBackend(std::shared_ptr<Connection> c, std::string name, std::string version,
                std::string library, std::vector<std::string> providers)
      : c_(std::move(c)),
        name_(std::move(name)),
        version_(std::move(version)),
        library_(std::move(library)),
        providers_(std::move(providers)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return version_; }
  std::string library_path() const override { return library_; }
  std::vector<std::string> available_providers() const override { return providers_; }
  std::string platform() const override { return c_->platform().Describe(); }
  bool alive() const { return c_->alive(); }
  Expected<SessionOptions> ResolveProvider(const SessionOptions& options) override {
    // the library lives on the worker's machine: its providers are known there only
    if (!options.provider_library.empty() && IsCpuProvider(options.provider)) {
      return InvalidArgument("provider library '" + options.provider_library + "' on " +
                             (platform().empty() ? "the worker's machine" : platform()) +
                             ": name its provider with --provider");
    }
    return options;
  }

  Expected<std::unique_ptr<BackendSession>> CreateSession(const std::string& model_bytes,
                                                          const std::string& model_dir,
                                                          const SessionOptions& options) override {
    // the worker holds no graph code: external data is located here for its runtime's version,
    // and a device, which cannot read this machine's files, gets it inside the model
    std::string located;
    if (!c_->platform().remote.empty()) {
      OP_ASSIGN_OR_RETURN(located, EmbedExternalData(model_bytes, model_dir));
    } else {
      OP_ASSIGN_OR_RETURN(located, LocateExternalData(model_bytes, model_dir, version_, options));
    }
    wire::Writer w;
    w.Str(located.empty() ? model_bytes : located);
    w.Str(model_dir);
    remote::PutOptions(w, options);
    OP_ASSIGN_OR_RETURN(std::string reply, c_->Call(remote::Op::kCreate, w.bytes()));
    wire::Reader r(reply);
    Status created = r.Stat();
    if (!created.ok())
      return Status(created.code(), created.message() + " (on " + platform() + ")");
    uint64_t id = r.U64();
    std::vector<std::string> in = r.Strings(), out = r.Strings();
    OP_RETURN_IF_ERROR(r.Finish("the worker's session"));
    return std::unique_ptr<BackendSession>(
        std::make_unique<RemoteSession>(c_, id, std::move(in), std::move(out)));
  }

  std::vector<std::string> TakeLog() override {
    auto reply = c_->Call(remote::Op::kTakeLog, "");
    if (!reply.ok()) return {};
    wire::Reader r(*reply);
    if (!r.Stat().ok()) return {};
    std::vector<std::string> lines = r.Strings();
    return r.ok() ? lines : std::vector<std::string>{};
  }

 private:
  std::shared_ptr<Connection> c_;
  std::string name_, version_, library_;
  std::vector<std::string> providers_;
};

Expected<std::shared_ptr<RemoteBackend>> LoadRemoteBackend(const Platform& p,
                                                           const std::string& library) {
  OP_ASSIGN_OR_RETURN(auto c, Connection::Start(p, library));
  OP_ASSIGN_OR_RETURN(std::string reply, c->Call(remote::Op::kHello, ""));
  wire::Reader r(reply);
  Status loaded = r.Stat();
  if (!loaded.ok()) {
    std::string where = p.remote.empty() ? p.Describe() : "the remote worker (" + p.remote + ")";
    return Status(loaded.code(), "on " + where + ": " + loaded.message());
  }
  uint32_t version = r.U32();
  if (version != remote::kProtocolVersion)
    return Unsupported("the " + p.arch + " worker speaks protocol " + std::to_string(version) +
                       ", this onnxprobe " + std::to_string(remote::kProtocolVersion) +
                       ": rebuild it with this onnxprobe");
  std::string name = r.Str(), runtime = r.Str(), lib = r.Str();
  std::vector<std::string> providers = r.Strings();
  std::string machine = r.Str();
  OP_RETURN_IF_ERROR(r.Finish("the worker's hello"));
  if (!p.remote.empty())
    c->set_arch(machine);
  else if (machine != p.arch)
    return BackendError("the " + p.name + " worker runs on " + machine + ", not " + p.arch);
  return std::make_shared<RemoteBackend>(c, name, runtime, lib, std::move(providers));
}

}  // namespace

Expected<std::shared_ptr<Backend>> LoadBackend(const std::string& locator) {
  std::string platform, library;
  if (!SplitPlatformLocator(locator, &platform, &library)) return LoadOrtBackend(locator);
  Platform p;
  if (platform == "remote") {
    p = RemotePlatform(library);
  } else {
    OP_ASSIGN_OR_RETURN(p, ParsePlatform(platform));
  }
  // one worker per locator while anything holds it: the sides, isolation and diagnosis of a
  // comparison share it (starting qemu and the runtime costs about half a second)
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<RemoteBackend>> workers;
  std::lock_guard<std::mutex> lock(mu);
  if (auto held = workers[locator].lock(); held != nullptr && held->alive())
    return std::shared_ptr<Backend>(held);
  OP_ASSIGN_OR_RETURN(auto backend, LoadRemoteBackend(p, library));
  workers[locator] = backend;
  return std::shared_ptr<Backend>(backend);
}

}  // namespace onnxprobe
