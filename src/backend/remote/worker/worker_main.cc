// onnxprobe-worker: ONNX Runtime sessions for a host on another CPU (architecture or feature
// level), run where the model ships: under qemu-user here, or on a device behind a command prefix.
// It holds no graph logic: the host prepares every model (marked outputs, isolated subgraphs,
// resolved external data) and this process creates sessions and runs them, speaking
// remote_protocol.h on stdin/stdout. Usage: onnxprobe-worker LIBONNXRUNTIME
#include <sys/utsname.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>

#include "backend/remote/remote_protocol.h"
#include "onnxprobe/backend/backend.h"

namespace onnxprobe::remote {
namespace {

std::string Machine() {
  struct utsname u;
  return uname(&u) == 0 ? u.machine : "unknown";
}

class Worker {
 public:
  explicit Worker(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {}

  // Answers one request into `w` (after its Status); false when the request is malformed.
  Status Serve(const Frame& f, wire::Writer* w) {
    wire::Reader r(f.payload);
    switch (f.op) {
      case Op::kHello: {
        OP_RETURN_IF_ERROR(r.Finish("hello"));
        w->Stat(Status::Ok());
        w->U32(kProtocolVersion);
        w->Str(backend_->name());
        w->Str(backend_->version());
        w->Str(backend_->library_path());
        w->Strings(backend_->available_providers());
        w->Str(Machine());
        return Status::Ok();
      }
      case Op::kCreate: {
        std::string bytes = r.Str(), dir = r.Str();
        SessionOptions o = GetOptions(r);
        OP_RETURN_IF_ERROR(r.Finish("create"));
        auto s = backend_->CreateSession(bytes, dir, o);
        w->Stat(s.status());
        if (!s.ok()) return Status::Ok();
        uint64_t id = ++next_;
        w->U64(id);
        w->Strings((*s)->input_names());
        w->Strings((*s)->output_names());
        sessions_[id] = std::move(*s);
        return Status::Ok();
      }
      case Op::kRun: {
        uint64_t id = r.U64();
        std::vector<std::pair<std::string, Tensor>> inputs(r.Count(16));
        for (auto& [name, t] : inputs) {
          name = r.Str();
          OP_ASSIGN_OR_RETURN(t, GetTensor(r));
        }
        std::vector<std::string> names = r.Strings();
        OP_RETURN_IF_ERROR(r.Finish("run"));
        auto it = sessions_.find(id);
        if (it == sessions_.end()) return Corrupt("run of an unknown session");
        std::vector<std::pair<std::string, const Tensor*>> feed;
        for (const auto& [name, t] : inputs) feed.emplace_back(name, &t);
        auto out = it->second->Run(feed, names);
        w->Stat(out.status());
        if (out.ok()) PutOutputs(*w, *out);
        return Status::Ok();
      }
      case Op::kRelease: {
        uint64_t id = r.U64();
        OP_RETURN_IF_ERROR(r.Finish("release"));
        sessions_.erase(id);
        w->Stat(Status::Ok());
        return Status::Ok();
      }
      case Op::kTakeLog: {
        OP_RETURN_IF_ERROR(r.Finish("log"));
        w->Stat(Status::Ok());
        w->Strings(backend_->TakeLog());
        return Status::Ok();
      }
      case Op::kEndProfiling: {
        uint64_t id = r.U64();
        OP_RETURN_IF_ERROR(r.Finish("end profiling"));
        auto it = sessions_.find(id);
        if (it == sessions_.end()) return Corrupt("profiling of an unknown session");
        auto path = it->second->EndProfiling();
        w->Stat(path.status());
        if (path.ok()) w->Str(*path);
        return Status::Ok();
      }
      case Op::kReply:
        break;
    }
    return Corrupt("a request of unknown type");
  }

 private:
  std::shared_ptr<Backend> backend_;
  std::map<uint64_t, std::unique_ptr<BackendSession>> sessions_;
  uint64_t next_ = 0;
};

int Main(int argc, char** argv) {
  if (argc != 2) {
    static const char kUsage[] =
        "usage: onnxprobe-worker LIBONNXRUNTIME (speaks on stdin/stdout)\n";
    (void)!::write(2, kUsage, sizeof kUsage - 1);
    return 2;
  }
  // stdout carries frames only: anything a library prints goes to stderr
  int out = ::dup(1);
  ::dup2(2, 1);
  auto backend = LoadOrtBackend(argv[1]);
  std::unique_ptr<Worker> worker;
  if (backend.ok()) worker = std::make_unique<Worker>(*backend);
  for (;;) {
    bool closed = false;
    auto f = ReadFrame(0, &closed);
    if (closed) return 0;
    if (!f.ok()) return 3;
    wire::Writer w;
    if (worker == nullptr) {
      w.Stat(backend.status());  // every request learns why the runtime did not load
    } else {
      Status s = worker->Serve(*f, &w);
      if (!s.ok()) {
        w = wire::Writer();
        w.Stat(s);
      }
    }
    if (!WriteFrame(out, Op::kReply, w.bytes()).ok()) return 3;
  }
}

}  // namespace
}  // namespace onnxprobe::remote

int main(int argc, char** argv) { return onnxprobe::remote::Main(argc, argv); }
