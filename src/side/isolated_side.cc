// A live side whose runtime runs in a worker process (see isolated_side.h and child_process.h).
#include "onnxprobe/side/isolated_side.h"

#include <link.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>

#include "side/child_process.h"
#include "side/crash_search.h"
#include "side/isolated_worker.h"
#include "side/live_info.h"

namespace onnxprobe {
namespace {

using isolation::Keeper;
using isolation::Worker;
using isolation::WorkerExit;
using wire::MsgType;

// The first ONNX Runtime library mapped into this process, or "".
std::string LoadedRuntime() {
  std::string found;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        const char* name = info->dlpi_name;
        if (name != nullptr && (std::strstr(name, "libonnxruntime.so") != nullptr ||
                                std::strstr(name, "onnxruntime_pybind11_state") != nullptr)) {
          *static_cast<std::string*>(data) = name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

std::vector<wire::TensorItem> InputItems(const std::vector<NamedTensor>& inputs) {
  std::vector<wire::TensorItem> items;
  items.reserve(inputs.size());
  for (const auto& in : inputs) items.push_back({&in.name, &in.tensor, nullptr});
  return items;
}

class IsolatedSide : public Side {
 public:
  IsolatedSide(Model model, SideSpec spec, IsolationOptions options, std::unique_ptr<Keeper> k)
      : original_(model),
        model_(std::move(model)),
        spec_(std::move(spec)),
        options_(options),
        keeper_(std::move(k)) {}

  ~IsolatedSide() override {
    if (worker_.pid > 0) (void)keeper_->Reap(&worker_, true);
  }

  Status Start() {
    OP_ASSIGN_OR_RETURN(worker_, keeper_->Spawn(false));
    auto hello = isolation::ReadHello(keeper_.get(), &worker_);
    if (!hello.ok()) return hello.status().WithContext(model_.path());
    if (hello->died) {
      return BackendError(
          model_.path() + ": ONNX Runtime " +
          (spec_.ort_library.empty() ? DefaultOrtLibraryPath() : spec_.ort_library) + " crashed (" +
          isolation::DescribeExit(hello->exit) + ") in a child process while loading");
    }
    if (!hello->status.ok()) {
      (void)keeper_->Reap(&worker_, true);
      return hello->status;
    }
    info_ = LiveSideInfo(model_.path(), hello->version, hello->library, spec_.session);
    tensors_ = std::move(hello->tensors);
    return Status::Ok();
  }

  const SideInfo& info() const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (info_.model_sha256.empty()) {
      // the worker's live side hashes the model on another core from the start: ask it
      std::string sha;
      auto m = failed_.ok() ? wire::Exchange(worker_.sock.get(), MsgType::kHash, std::string())
                            : Expected<wire::Message>(failed_);
      if (m.ok() && m->type == MsgType::kReply) {
        wire::Reader r(m->payload);
        Status st = r.Stat();
        sha = r.Str();
        if (!st.ok() || !r.done()) sha.clear();
      }
      info_.model_sha256 = sha.empty() ? model_.Hashes(false).sha256 : sha;
    }
    return info_;
  }
  const std::vector<SideTensor>& tensors() const override { return tensors_; }
  const Model* model() const override { return &model_; }
  Expected<std::vector<NamedTensor>> RecordedInputs() const override {
    return std::vector<NamedTensor>();
  }
  size_t runs() const override { return runs_; }
  SessionOptions session_options() const override { return spec_.session; }
  const std::vector<std::string>& hidden() const override { return hidden_; }
  const RuntimeCrash* crash() const { return crash_ ? &*crash_ : nullptr; }

  Status SetInputs(const std::vector<NamedTensor>& inputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    OP_RETURN_IF_ERROR(failed_);
    wire::Writer w;
    wire::SharedRegion region;
    OP_ASSIGN_OR_RETURN(int fd, wire::PackTensors(InputItems(inputs), &region, &w));
    OP_ASSIGN_OR_RETURN(wire::Message m, Call(MsgType::kSetInputs, w.bytes(), fd,
                                              "setting " + std::to_string(inputs.size()) +
                                                  (inputs.size() == 1 ? " input" : " inputs"),
                                              false));
    wire::Reader r(m.payload);
    Status st = r.Stat();
    std::vector<SideTensor> tensors = isolation::GetSideTensors(&r);
    std::vector<std::string> hidden = r.Strings();
    bool changed = r.U8() != 0;
    std::string bytes;
    std::vector<std::string> inlined, unrolled, notes;
    if (changed) {
      bytes = r.Str();
      inlined = r.Strings();
      unrolled = r.Strings();
      notes = r.Strings();
    }
    OP_RETURN_IF_ERROR(r.Finish("inputs"));
    if (changed) {
      // the graph the worker's side runs now (If branches inlined, loops unrolled), so that
      // localization finds the nodes making the tensors it lists
      OP_ASSIGN_OR_RETURN(model_, Model::Derived(original_, std::move(bytes)));
      info_.inlined_ifs = std::move(inlined);
      info_.unrolled_loops = std::move(unrolled);
      info_.notes = std::move(notes);
    }
    tensors_ = std::move(tensors);
    hidden_ = std::move(hidden);
    if (st.ok()) {
      inputs_ = &inputs;
      last_topo_ = last_node_ = -1;  // what ran before ran with other inputs
    }
    return st;
  }

  Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) override {
    std::lock_guard<std::mutex> lock(mu_);
    OP_RETURN_IF_ERROR(failed_);
    ++runs_;
    wire::Writer w;
    w.Ids(regions_.TakeReleased());
    w.Strings(names);
    OP_ASSIGN_OR_RETURN(wire::Message m, Call(MsgType::kFetch, w.bytes(), -1,
                                              "fetching " + std::to_string(names.size()) +
                                                  (names.size() == 1 ? " tensor" : " tensors"),
                                              true));
    wire::Reader r(m.payload);
    Status st = r.Stat();
    regions_.Forget(r.Ids());
    OP_RETURN_IF_ERROR(st);
    OP_ASSIGN_OR_RETURN(auto out, regions_.Unpack(&r, std::move(m.fd),
                                                  spec_.keep_session ? wire::Reuse::kOverwritten
                                                                     : wire::Reuse::kPooled));
    OP_RETURN_IF_ERROR(r.Finish("fetch"));
    NoteDelivered(names);
    return out;
  }

  Expected<std::vector<RunOutput>> RunOther(
      const std::string& model_bytes, const std::string& model_dir,
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    OP_RETURN_IF_ERROR(failed_);
    wire::Writer w;
    w.Ids(regions_.TakeReleased());
    w.Str(model_bytes);
    w.Str(model_dir);
    w.Strings(outputs);
    std::vector<wire::TensorItem> items;
    items.reserve(inputs.size());
    for (const auto& [name, t] : inputs) items.push_back({&name, t, nullptr});
    wire::SharedRegion region;
    OP_ASSIGN_OR_RETURN(int fd, wire::PackTensors(items, &region, &w));
    OP_ASSIGN_OR_RETURN(wire::Message m,
                        Call(MsgType::kRunOther, w.bytes(), fd,
                             "running another model (" + std::to_string(outputs.size()) +
                                 (outputs.size() == 1 ? " output)" : " outputs)"),
                             false));
    wire::Reader r(m.payload);
    Status st = r.Stat();
    regions_.Forget(r.Ids());
    OP_RETURN_IF_ERROR(st);
    OP_ASSIGN_OR_RETURN(auto out, regions_.Unpack(&r, std::move(m.fd), wire::Reuse::kPooled));
    OP_RETURN_IF_ERROR(r.Finish("run"));
    return out;
  }

 private:
  // A request whose failure leaves the side failed: the worker died (a crash, reported with what
  // is known about where) or the conversation broke.
  Expected<wire::Message> Call(MsgType type, const std::string& payload, int fd,
                               const std::string& operation, bool search) {
    auto m = wire::Exchange(worker_.sock.get(), type, payload, fd);
    if (m.ok() && m->type == MsgType::kReply) return m;
    bool died = m.ok() && m->type == MsgType::kClosed;
    auto exit = keeper_->Reap(&worker_, !died);
    if (!died || !exit.ok()) {
      Status why = !m.ok()      ? m.status()
                   : !exit.ok() ? exit.status()
                                : BackendError("unexpected reply");
      failed_ = BackendError(model_.path() + ": lost the child process running ONNX Runtime (" +
                             why.message() + ")");
      return failed_;
    }
    RuntimeCrash c;
    c.signal = exit->signal;
    c.exit_code = exit->exit_code;
    c.exit_name = isolation::ShortExitName(*exit);
    c.operation = operation;
    if (last_topo_ >= 0) {
      const NodeInfo& n = model_.index().nodes()[last_node_];
      c.last_node = n.name;
      c.last_op_type = n.op_type;
    }
    if (search && options_.find_crashing_node && inputs_ != nullptr) {
      isolation::SearchCrash(model_, *inputs_, keeper_.get(), options_.max_search_runs, &c);
    }
    std::string msg = model_.path() + ": " + info_.runtime + " crashed (" +
                      isolation::DescribeExit(*exit) + ") in its child process while " + operation;
    msg += isolation::DescribeSearch(c);
    msg += c.last_node.empty()
               ? "; no node of this side is known to have run before"
               : "; last node known to have run: '" + c.last_node + "' (" + c.last_op_type + ")";
    crash_ = c;
    failed_ = BackendError(msg);
    return failed_;
  }

  // The last node (in topological order) whose outputs this side has delivered.
  void NoteDelivered(const std::vector<std::string>& names) {
    const GraphIndex& idx = model_.index();
    for (const auto& n : names) {
      const TensorEntry* e = idx.Find(n);
      if (e == nullptr || e->producer < 0) continue;
      int topo = idx.nodes()[e->producer].topo_index;
      if (topo > last_topo_) {
        last_topo_ = topo;
        last_node_ = e->producer;
      }
    }
  }

  Model original_;  // the file's model
  Model model_;     // the graph the worker runs now (If branches inlined for the inputs)
  SideSpec spec_;
  IsolationOptions options_;
  std::unique_ptr<Keeper> keeper_;
  mutable Worker worker_;
  mutable std::mutex mu_;
  mutable SideInfo info_;
  std::vector<SideTensor> tensors_;
  std::vector<std::string> hidden_;
  const std::vector<NamedTensor>* inputs_ = nullptr;
  wire::RegionMap regions_;
  size_t runs_ = 0;
  int last_topo_ = -1, last_node_ = -1;
  Status failed_;
  std::optional<RuntimeCrash> crash_;
};

}  // namespace

Expected<std::unique_ptr<Side>> OpenIsolatedLiveSide(const Model& model, const SideSpec& spec) {
  return OpenIsolatedLiveSide(model, spec, IsolationOptions());
}

Expected<std::unique_ptr<Side>> OpenIsolatedLiveSide(const Model& model, const SideSpec& spec,
                                                     const IsolationOptions& options) {
  std::string loaded = LoadedRuntime();
  if (!loaded.empty()) {
    return Unsupported(
        "cannot run " + model.path() + " in a child process: ONNX Runtime (" + loaded +
        ") is already loaded in this process, and a process with runtime threads cannot be "
        "forked safely; open isolated sides before anything loads ONNX Runtime");
  }
  OP_ASSIGN_OR_RETURN(auto keeper, Keeper::Start([model, spec](int sock) {
                        isolation::ServeIsolatedSide(sock, model, spec);
                      }));
  auto side = std::make_unique<IsolatedSide>(model, spec, options, std::move(keeper));
  OP_RETURN_IF_ERROR(side->Start());
  return std::unique_ptr<Side>(std::move(side));
}

const RuntimeCrash* FindRuntimeCrash(const Side& side) {
  auto* isolated = dynamic_cast<const IsolatedSide*>(&side);
  return isolated != nullptr ? isolated->crash() : nullptr;
}

}  // namespace onnxprobe
