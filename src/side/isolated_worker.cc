// The worker end of an isolated side: an ordinary live side behind a socket.
#include "side/isolated_worker.h"

namespace onnxprobe::isolation {
namespace {

using wire::MsgType;

std::vector<wire::TensorItem> Items(const std::vector<RunOutput>& outputs) {
  std::vector<wire::TensorItem> items;
  for (const auto& o : outputs) items.push_back({&o.name, &o.tensor, &o.skipped});
  return items;
}

// Replies with `st`, then the tensors when there are any and st is ok.
bool Reply(int sock, const Status& st, const std::vector<RunOutput>* outputs,
           wire::SharedRegion* region) {
  wire::Writer w;
  w.Stat(st);
  int fd = -1;
  if (st.ok() && outputs != nullptr) {
    auto packed = wire::PackTensors(Items(*outputs), region, &w);
    if (!packed.ok()) {
      wire::Writer failed;
      failed.Stat(packed.status().WithContext("child process"));
      return wire::Send(sock, MsgType::kReply, failed.bytes()).ok();
    }
    fd = *packed;
  }
  return wire::Send(sock, MsgType::kReply, w.bytes(), fd).ok();
}

std::vector<NamedTensor> ToNamed(std::vector<RunOutput> outputs) {
  std::vector<NamedTensor> named;
  for (auto& o : outputs) named.push_back({std::move(o.name), std::move(o.tensor)});
  return named;
}

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
  auto backend = LoadOrtBackend(spec.ort_library);
  Expected<std::unique_ptr<Side>> side =
      backend.ok() ? OpenLiveSide(model, spec) : Expected<std::unique_ptr<Side>>(backend.status());
  hello.Stat(side.status());
  hello.Str(backend.ok() ? (*backend)->version() : "");
  hello.Str(backend.ok() ? (*backend)->library_path() : "");
  PutSideTensors(&hello, side.ok() ? (*side)->tensors() : std::vector<SideTensor>());
  if (!wire::Send(sock, MsgType::kHello, hello.bytes()).ok() || !side.ok()) return;
  Side& live = **side;

  // LiveSide keeps a pointer to its inputs: they live here, at a stable address
  std::unique_ptr<std::vector<NamedTensor>> inputs;
  wire::RegionMap incoming;
  auto kept = std::make_unique<wire::SharedRegion>();  // fetches of a side that keeps its session
  std::vector<std::string> kept_names;
  for (;;) {
    auto m = wire::Receive(sock);
    if (!m.ok() || m->type == MsgType::kClosed) return;
    wire::Reader r(m->payload);
    bool sent = false;
    switch (m->type) {
      case MsgType::kSetInputs: {
        auto got = incoming.Unpack(&r, std::move(m->fd), false);
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
        sent = wire::Send(sock, MsgType::kReply, w.bytes()).ok();
        break;
      }
      case MsgType::kFetch: {
        std::vector<std::string> names = r.Strings();
        Status st = r.Finish("fetch");
        Expected<std::vector<RunOutput>> out = st.ok() ? live.Fetch(names) : st;
        if (spec.keep_session) {
          // the same names again: overwrite the region the parent has mapped, as a live side
          // that keeps its session overwrites the tensors it handed out
          if (names != kept_names) {
            kept = std::make_unique<wire::SharedRegion>();
            kept_names = names;
          }
          sent = Reply(sock, out.status(), out.ok() ? &*out : nullptr, kept.get());
        } else {
          wire::SharedRegion once;
          sent = Reply(sock, out.status(), out.ok() ? &*out : nullptr, &once);
        }
        break;
      }
      case MsgType::kRunOther: {
        std::string bytes = r.Str(), dir = r.Str();
        std::vector<std::string> outputs = r.Strings();
        auto got = incoming.Unpack(&r, std::move(m->fd), false);
        Status st = got.ok() ? r.Finish("run") : got.status();
        Expected<std::vector<RunOutput>> out = st;
        if (st.ok()) {
          std::vector<std::pair<std::string, const Tensor*>> refs;
          for (const auto& o : *got) refs.emplace_back(o.name, &o.tensor);
          out = live.RunOther(bytes, dir, refs, outputs);
        }
        wire::SharedRegion once;
        sent = Reply(sock, out.status(), out.ok() ? &*out : nullptr, &once);
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
