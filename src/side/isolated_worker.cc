// The worker end of an isolated side: an ordinary live side behind a socket.
#include "side/isolated_worker.h"

#include "model/model_impl.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/graph.h"
#include "side/live_info.h"

namespace onnxprobe::isolation {
namespace {

using wire::MsgType;

std::vector<wire::TensorItem> Items(const std::vector<RunOutput>& outputs) {
  std::vector<wire::TensorItem> items;
  items.reserve(outputs.size());
  for (const auto& o : outputs) items.push_back({&o.name, &o.tensor, &o.skipped});
  return items;
}

// Replies to a fetch or run: `st`, the regions `pool` dropped, then the tensors when st is ok,
// in `region` (null: one from the pool). Returns false when the reply could not be sent.
bool Reply(int sock, const Status& st, const std::vector<RunOutput>* outputs,
           wire::RegionPool* pool, wire::SharedRegion* region = nullptr,
           std::vector<uint64_t>* offsets = nullptr) {
  wire::Writer w;
  Status packed = st;
  int fd = -1;
  if (st.ok() && outputs != nullptr) {
    auto items = Items(*outputs);
    wire::SharedRegion nothing;  // when no tensor has bytes
    bool pooled = region == nullptr && wire::PackedSize(items) > 0;
    Expected<wire::SharedRegion*> place = region != nullptr ? region : &nothing;
    if (pooled) place = pool->Take(wire::PackedSize(items));
    wire::Writer tensors;
    Expected<int> sent_fd = place.ok() ? wire::PackTensors(items, *place, &tensors, offsets)
                                       : Expected<int>(place.status());
    if (!sent_fd.ok() && pooled && place.ok()) pool->Released({(*place)->generation()});
    if (sent_fd.ok()) {
      fd = *sent_fd;
      w.Stat(st);
      w.Ids(pool->TakeDropped());
      w.bytes().append(tensors.bytes());
      return wire::Send(sock, MsgType::kReply, w.bytes(), fd).ok();
    }
    packed = sent_fd.status().WithContext("child process");
  }
  w.Stat(packed);
  w.Ids(pool->TakeDropped());
  return wire::Send(sock, MsgType::kReply, w.bytes()).ok();
}

std::vector<NamedTensor> ToNamed(std::vector<RunOutput> outputs) {
  std::vector<NamedTensor> named;
  named.reserve(outputs.size());
  for (auto& o : outputs) named.push_back({std::move(o.name), std::move(o.tensor)});
  return named;
}

// Fetches of a side that keeps its session, run here rather than by the live side so that the
// runtime writes straight into the memory the parent has mapped: after the first run of a set of
// names its outputs are bound (I/O binding) to their places in the shared region, and nothing is
// copied. The same steps as the live side's fetch otherwise (mark outputs, one session, RunInto).
class SharedFetch {
 public:
  SharedFetch(std::shared_ptr<Backend> backend, const Model& model, const SessionOptions& options,
              wire::RegionPool* pool)
      : backend_(std::move(backend)), model_(model), options_(options), pool_(pool) {}

  // Runs and replies; false when the reply could not be sent.
  bool FetchAndReply(int sock, const std::vector<NamedTensor>* inputs,
                     const std::vector<std::string>& names) {
    Status st = Run(inputs, names);
    std::vector<uint64_t> offsets;
    bool sent = Reply(sock, st, st.ok() ? &results_ : nullptr, pool_, region_.get(), &offsets);
    if (!st.ok()) return sent;
    // the next run writes into the region itself
    for (size_t i = 0; i < results_.size(); ++i) {
      Tensor& t = results_[i].tensor;
      if (t.empty() || t.byte_size() == 0) continue;
      std::shared_ptr<uint8_t> place(region_->mapping(), region_->mapping().get() + offsets[i]);
      if (t.data() != place.get()) t = Tensor::Wrap(t.dtype(), t.shape(), std::move(place));
    }
    return sent;
  }

 private:
  Status Run(const std::vector<NamedTensor>* inputs, const std::vector<std::string>& names) {
    if (inputs == nullptr)
      return InvalidArgument("live side " + model_.path() + " has no inputs set");
    if (session_ == nullptr || names != names_) {
      session_.reset();
      results_.clear();
      if (region_->size() > 0) pool_->Dropped(region_->generation());
      region_ = std::make_unique<wire::SharedRegion>();
      OP_ASSIGN_OR_RETURN(
          session_, OpenMarkedSession(model_, *backend_, names, LiveSessionOptions(options_)));
      names_ = names;
    }
    std::vector<std::pair<std::string, const Tensor*>> refs;
    for (const auto& nt : *inputs) refs.emplace_back(nt.name, &nt.tensor);
    return session_->RunInto(refs, names, &results_).WithContext(model_.path());
  }

  std::shared_ptr<Backend> backend_;
  const Model& model_;
  SessionOptions options_;
  wire::RegionPool* pool_;
  std::unique_ptr<BackendSession> session_;
  std::vector<std::string> names_;
  std::vector<RunOutput> results_;
  std::unique_ptr<wire::SharedRegion> region_ = std::make_unique<wire::SharedRegion>();
};

}  // namespace

void PutSideTensors(wire::Writer* w, const std::vector<SideTensor>& tensors) {
  w->U64(tensors.size());
  for (const auto& t : tensors) {
    w->Str(t.name);
    w->Str(t.node);
    w->Str(t.op_type);
    w->I64(t.topo_index);
    w->U64(t.est_bytes);
    w->U8(t.is_graph_output ? 1 : 0);
    w->Str(t.module);
    w->Str(t.module_type);
    w->I64(t.call_index);
    w->I64(t.output_index);
  }
}

std::vector<SideTensor> GetSideTensors(wire::Reader* r) {
  uint64_t n = r->Count(8 * sizeof(uint64_t));
  std::vector<SideTensor> v(n);
  for (auto& t : v) {
    t.name = r->Str();
    t.node = r->Str();
    t.op_type = r->Str();
    t.topo_index = static_cast<int>(r->I64());
    t.est_bytes = r->U64();
    t.is_graph_output = r->U8() != 0;
    t.module = r->Str();
    t.module_type = r->Str();
    t.call_index = static_cast<int>(r->I64());
    t.output_index = static_cast<int>(r->I64());
  }
  return v;
}

Expected<Hello> ReadHello(Keeper* keeper, Worker* worker) {
  Hello h;
  OP_ASSIGN_OR_RETURN(wire::Message m, wire::Receive(worker->sock.get()));
  if (m.type == MsgType::kClosed) {
    h.died = true;
    OP_ASSIGN_OR_RETURN(h.exit, keeper->Reap(worker, false));
    return h;
  }
  wire::Reader r(m.payload);
  h.status = r.Stat();
  h.version = r.Str();
  h.library = r.Str();
  h.tensors = GetSideTensors(&r);
  if (m.type != MsgType::kHello) return Corrupt("the child process did not say hello");
  OP_RETURN_IF_ERROR(r.Finish("hello"));
  return h;
}

void ServeIsolatedSide(int sock, const Model& model, const SideSpec& spec) {
  wire::Writer hello;
  auto backend = LoadBackend(spec.ort_library);
  Expected<std::unique_ptr<Side>> side =
      backend.ok() ? OpenLiveSide(model, spec) : Expected<std::unique_ptr<Side>>(backend.status());
  // the exact reference learns at opening which float64 kernels the runtime lacks (a session
  // of it fails naming the node): a live side makes its first session only when fetching
  if (side.ok() && spec.session.exact_kernels) {
    auto bytes = MarkOutputs(model, {});
    Status made = bytes.ok() ? (*backend)->CreateSession(*bytes, model.dir(), spec.session).status()
                             : bytes.status();
    if (!made.ok()) side = made;
  }
  hello.Stat(side.status());
  hello.Str(backend.ok() ? (*backend)->version() : "");
  hello.Str(backend.ok() ? (*backend)->library_path() : "");
  PutSideTensors(&hello, side.ok() ? (*side)->tensors() : std::vector<SideTensor>());
  if (!wire::Send(sock, MsgType::kHello, hello.bytes()).ok() || !side.ok()) return;
  Side& live = **side;

  // LiveSide keeps a pointer to its inputs: they live here, at a stable address
  std::unique_ptr<std::vector<NamedTensor>> inputs;
  wire::RegionMap incoming;
  wire::RegionPool pool;  // for results: reused once the parent releases them
  SharedFetch kept(*backend, model, spec.session, &pool);
  const void* sent_model = &model.impl();  // the graph the parent knows the side by
  for (;;) {
    auto m = wire::Receive(sock);
    if (!m.ok() || m->type == MsgType::kClosed) return;
    wire::Reader r(m->payload);
    bool sent = false;
    switch (m->type) {
      case MsgType::kSetInputs: {
        auto got = incoming.Unpack(&r, std::move(m->fd), wire::Reuse::kOnce);
        Status st = got.ok() ? r.Finish("inputs") : got.status();
        auto next = std::make_unique<std::vector<NamedTensor>>();
        if (st.ok()) {
          *next = ToNamed(std::move(*got));
          st = live.SetInputs(*next);
        }
        if (st.ok()) inputs = std::move(next);
        wire::Writer w;
        w.Stat(st);
        PutSideTensors(&w, live.tensors());
        w.Strings(live.hidden());
        // If branches inlined, loops unrolled for these inputs: the parent gets the graph the side
        // now runs (its serialization, once per change) and what was done
        const Model* now = live.model();
        bool changed = now != nullptr && &now->impl() != sent_model;
        w.U8(changed ? 1 : 0);
        if (changed) {
          w.Str(now->impl().SerializedProto());
          w.Strings(live.info().inlined_ifs);
          w.Strings(live.info().unrolled_loops);
          w.Strings(live.info().notes);
          sent_model = &now->impl();
        }
        sent = wire::Send(sock, MsgType::kReply, w.bytes()).ok();
        break;
      }
      case MsgType::kFetch: {
        pool.Released(r.Ids());
        std::vector<std::string> names = r.Strings();
        Status st = r.Finish("fetch");
        if (st.ok() && spec.keep_session) {
          sent = kept.FetchAndReply(sock, inputs.get(), names);
        } else {
          Expected<std::vector<RunOutput>> out = st.ok() ? live.Fetch(names) : st;
          sent = Reply(sock, out.status(), out.ok() ? &*out : nullptr, &pool);
        }
        break;
      }
      case MsgType::kRunOther: {
        pool.Released(r.Ids());
        std::string bytes = r.Str(), dir = r.Str();
        std::vector<std::string> outputs = r.Strings();
        auto got = incoming.Unpack(&r, std::move(m->fd), wire::Reuse::kOnce);
        Status st = got.ok() ? r.Finish("run") : got.status();
        Expected<std::vector<RunOutput>> out = st;
        if (st.ok()) {
          std::vector<std::pair<std::string, const Tensor*>> refs;
          for (const auto& o : *got) refs.emplace_back(o.name, &o.tensor);
          out = live.RunOther(bytes, dir, refs, outputs);
        }
        sent = Reply(sock, out.status(), out.ok() ? &*out : nullptr, &pool);
        break;
      }
      case MsgType::kHash: {
        wire::Writer w;
        w.Stat(Status::Ok());
        w.Str(live.info().model_sha256);
        sent = wire::Send(sock, MsgType::kReply, w.bytes()).ok();
        break;
      }
      default:
        return;
    }
    if (!sent) return;
  }
}

}  // namespace onnxprobe::isolation
