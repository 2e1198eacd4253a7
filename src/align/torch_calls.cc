#include "align/torch_calls.h"

#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "common/file_util.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/tensor/npy.h"

namespace fs = std::filesystem;

namespace onnxprobe::align {
namespace {

bool IsNumeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Expected<std::string> ReadManifest(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return ReadFile((fs::path(path) / "manifest.json").string(), 256ull << 20);
  }
  OP_ASSIGN_OR_RETURN(auto z, NpzReader::Open(path));
  return z->ReadRaw("manifest.json");
}

Status ParseRef(const JsonValue& v, const std::string& where, TorchRef* r) {
  if (v.type() == JsonValue::Type::kNull) return Status::Ok();
  if (!v.is_object()) return Corrupt(where + " is neither null nor an object");
  if (const JsonValue* in = v.Find("input"); in != nullptr && in->is_string()) {
    r->kind = TorchRef::Kind::kInput;
    r->name = in->as_string();
  } else if (const JsonValue* t = v.Find("tensor"); t != nullptr && t->is_string()) {
    r->kind = TorchRef::Kind::kTensor;
    r->name = t->as_string();
  } else {
    return Corrupt(where + " names neither an \"input\" nor a \"tensor\"");
  }
  return Status::Ok();
}

Status ParseCall(const JsonValue& v, const std::string& where, size_t index, TorchCall* c) {
  if (!v.is_object()) return Corrupt(where + " is not an object");
  auto str = [&](const char* key, std::string* out) -> Status {
    const JsonValue* f = v.Find(key);
    if (f == nullptr || !f->is_string())
      return Corrupt(where + ": \"" + key + "\" is not a string");
    *out = f->as_string();
    return Status::Ok();
  };
  auto num = [&](const char* key, double lo, double hi, int* out) -> Status {
    const JsonValue* f = v.Find(key);
    if (f == nullptr || !f->is_number() || f->as_number() < lo || f->as_number() > hi)
      return Corrupt(where + ": \"" + key + "\" is not a number in range");
    *out = static_cast<int>(f->as_number());
    return Status::Ok();
  };
  OP_RETURN_IF_ERROR(str("module", &c->module));
  OP_RETURN_IF_ERROR(str("type", &c->type));
  OP_RETURN_IF_ERROR(str("scope", &c->scope));
  OP_RETURN_IF_ERROR(num("call_index", 0, 1e9, &c->call_index));
  OP_RETURN_IF_ERROR(num("scope_ordinal", 0, 1e9, &c->scope_ordinal));
  OP_RETURN_IF_ERROR(num("parent", -1, static_cast<double>(index) - 1, &c->parent));
  const JsonValue* bn = v.Find("batchnorm");
  c->batchnorm = bn != nullptr && bn->type() == JsonValue::Type::kBool && bn->as_bool();
  if (const JsonValue* ps = v.Find("params"); ps != nullptr && ps->is_array()) {
    for (const auto& p : ps->items()) {
      std::vector<std::string> names;
      for (const auto& n : p.items()) {
        if (n.is_string()) names.push_back(n.as_string());
      }
      c->params.push_back(std::move(names));
    }
  }
  if (const JsonValue* bs = v.Find("buffers"); bs != nullptr && bs->is_array()) {
    for (const auto& b : bs->items()) {
      if (b.is_string()) c->buffers.push_back(b.as_string());
    }
  }
  if (const JsonValue* e = v.Find("eps"); e != nullptr && e->is_number()) c->eps = e->as_number();
  if (const JsonValue* src = v.Find("source"); src != nullptr && src->is_string())
    c->source = src->as_string();
  const JsonValue* rng = v.Find("rng_draws");
  c->rng_draws = rng != nullptr && rng->type() == JsonValue::Type::kBool && rng->as_bool();
  if (const JsonValue* bw = v.Find("buffers_written"); bw != nullptr && bw->is_array()) {
    for (const auto& b : bw->items()) {
      if (b.is_string()) c->buffers_written.push_back(b.as_string());
    }
  }
  const JsonValue* ins = v.Find("inputs");
  const JsonValue* outs = v.Find("outputs");
  if (ins == nullptr || !ins->is_array() || outs == nullptr || !outs->is_array())
    return Corrupt(where + ": \"inputs\" and \"outputs\" must be arrays");
  for (size_t i = 0; i < ins->items().size(); ++i) {
    TorchRef r;
    OP_RETURN_IF_ERROR(ParseRef(ins->items()[i], where + ".inputs[" + std::to_string(i) + "]", &r));
    c->inputs.push_back(r);
  }
  for (size_t i = 0; i < outs->items().size(); ++i) {
    const JsonValue& o = outs->items()[i];
    std::string w = where + ".outputs[" + std::to_string(i) + "]";
    const JsonValue* t = o.Find("tensor");
    if (t == nullptr || !t->is_string()) return Corrupt(w + ": \"tensor\" is not a string");
    TorchOutput out;
    out.tensor = t->as_string();
    if (const JsonValue* s = o.Find("same_as"); s != nullptr)
      OP_RETURN_IF_ERROR(ParseRef(*s, w + ".same_as", &out.same_as));
    c->outputs.push_back(std::move(out));
  }
  return Status::Ok();
}

}  // namespace

std::string UnqualifiedName(const std::string& module_path) {
  std::vector<std::string> atoms;
  std::string cur;
  for (char ch : module_path) {
    if (ch == '.') {
      atoms.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  atoms.push_back(cur);
  for (size_t i = atoms.size(); i-- > 0;) {
    if (IsNumeric(atoms[i])) continue;
    std::string out = atoms[i];
    for (size_t j = i + 1; j < atoms.size(); ++j) out += "." + atoms[j];
    return out;
  }
  return module_path;
}

TorchCalls RebuildTorchCalls(const std::vector<SideTensor>& tensors) {
  TorchCalls tc;
  std::map<std::pair<std::string, int>, int> call_of;
  for (const auto& t : tensors) {
    auto key = std::make_pair(t.module, t.call_index);
    auto it = call_of.find(key);
    if (it == call_of.end()) {
      TorchCall c;
      c.module = t.module;
      c.type = t.module_type;
      c.call_index = t.call_index;
      it = call_of.emplace(key, static_cast<int>(tc.calls.size())).first;
      tc.calls.push_back(std::move(c));
    }
    TorchTensorMeta m;
    m.name = t.name;
    m.call = it->second;
    m.output = t.output_index;
    tc.calls[it->second].outputs.push_back({t.name, {}});
    tc.tensors.push_back(std::move(m));
  }
  // calls are in completion order: a call's parent is the first later call of its parent module
  const int n = static_cast<int>(tc.calls.size());
  std::map<std::string, int> calls_per_module;
  for (const auto& c : tc.calls) ++calls_per_module[c.module];
  int root = -1;
  if (n > 0 && tc.calls[n - 1].module.find('.') == std::string::npos &&
      calls_per_module[tc.calls[n - 1].module] == 1) {
    root = n - 1;
  }
  for (int i = 0; i < n; ++i) {
    if (i == root) continue;
    std::string m = tc.calls[i].module;
    int parent = root;
    for (auto dot = m.rfind('.'); dot != std::string::npos && parent == root;
         dot = m.rfind('.', dot == 0 ? 0 : dot - 1)) {
      std::string prefix = m.substr(0, dot);
      for (int j = i + 1; j < n; ++j) {
        if (tc.calls[j].module == prefix) {
          parent = j;
          break;
        }
      }
      if (dot == 0) break;
    }
    tc.calls[i].parent = parent;
  }
  // scopes from the parent chain, ordinals in call order
  std::vector<int> done(n, 0);
  std::function<void(int)> scope = [&](int i) {
    if (done[i]) return;
    done[i] = 1;
    TorchCall& c = tc.calls[i];
    if (i == root) {
      c.scope = "";
    } else if (c.parent < 0) {
      c.scope = "/" + UnqualifiedName(c.module);
    } else {
      scope(c.parent);
      c.scope = tc.calls[c.parent].scope + "/" + UnqualifiedName(c.module);
    }
  };
  std::map<std::string, int> ordinal;
  for (int i = 0; i < n; ++i) scope(i);
  for (int i = 0; i < n; ++i) tc.calls[i].scope_ordinal = ordinal[tc.calls[i].scope]++;
  return tc;
}

Expected<TorchCalls> ReadTorchCalls(const std::string& dump_path,
                                    const std::vector<SideTensor>& tensors) {
  OP_ASSIGN_OR_RETURN(std::string text, ReadManifest(dump_path));
  std::string what = dump_path + ": manifest.json";
  OP_ASSIGN_OR_RETURN(JsonValue m, ParseJson(text, what));
  const JsonValue* section = m.Find("torch");
  if (section == nullptr) return RebuildTorchCalls(tensors);
  const JsonValue* calls = section->Find("calls");
  if (calls == nullptr || !calls->is_array())
    return Corrupt(what + ": \"torch\".\"calls\" is not an array");
  TorchCalls tc;
  tc.dataflow = true;
  for (size_t i = 0; i < calls->items().size(); ++i) {
    TorchCall c;
    OP_RETURN_IF_ERROR(
        ParseCall(calls->items()[i], what + ": torch.calls[" + std::to_string(i) + "]", i, &c));
    tc.calls.push_back(std::move(c));
  }
  if (const JsonValue* ps = section->Find("params"); ps != nullptr && ps->is_array()) {
    for (size_t i = 0; i < ps->items().size(); ++i) {
      const JsonValue& e = ps->items()[i];
      std::string w = what + ": torch.params[" + std::to_string(i) + "]";
      TorchParam p;
      const JsonValue* names = e.Find("names");
      const JsonValue* file = e.Find("file");
      const JsonValue* key = e.Find("key");
      const JsonValue* dtype = e.Find("dtype");
      const JsonValue* shape = e.Find("shape");
      if (names == nullptr || !names->is_array() || file == nullptr || !file->is_string() ||
          key == nullptr || !key->is_string() || dtype == nullptr || !dtype->is_string() ||
          shape == nullptr || !shape->is_array())
        return Corrupt(w + ": needs names, file, key, dtype and shape");
      for (const auto& n : names->items()) {
        if (n.is_string()) p.names.push_back(n.as_string());
      }
      p.file = file->as_string();
      p.key = key->as_string();
      fs::path f(p.file);
      if (f.is_absolute() || p.file.find("..") != std::string::npos)
        return Corrupt(w + ": file '" + p.file + "' leaves the capture");
      auto dt = DTypeFromName(dtype->as_string());
      if (!dt.ok()) return Corrupt(w + ": " + dt.status().message());
      p.dtype = *dt;
      for (const auto& d : shape->items()) {
        if (!d.is_number() || d.as_number() < 0) return Corrupt(w + ": bad shape");
        p.shape.push_back(static_cast<int64_t>(d.as_number()));
      }
      tc.params.push_back(std::move(p));
    }
  }
  std::set<std::string> call_input_names;
  if (const JsonValue* ci = section->Find("call_inputs"); ci != nullptr && ci->is_array()) {
    for (size_t i = 0; i < ci->items().size(); ++i) {
      const JsonValue& e = ci->items()[i];
      const JsonValue* call = e.Find("call");
      const JsonValue* input = e.Find("input");
      const JsonValue* tensor = e.Find("tensor");
      if (call == nullptr || !call->is_number() || input == nullptr || !input->is_number() ||
          tensor == nullptr || !tensor->is_string() || call->as_number() < 0 ||
          call->as_number() >= static_cast<double>(tc.calls.size()) || input->as_number() < 0)
        return Corrupt(what + ": torch.call_inputs[" + std::to_string(i) +
                       "] needs a call (index of a call), an input position and a tensor name");
      TorchCallInput x;
      x.call = static_cast<int>(call->as_number());
      x.input = static_cast<int>(input->as_number());
      x.tensor = tensor->as_string();
      call_input_names.insert(x.tensor);
      tc.call_inputs.push_back(std::move(x));
    }
  }
  if (const JsonValue* st = section->Find("settings"); st != nullptr) {
    if (const JsonValue* ac = st->Find("autocast"); ac != nullptr && ac->is_object()) {
      for (const auto& [device, dtype] : ac->members()) {
        if (dtype.is_string()) tc.autocast[device] = dtype.as_string();
      }
    }
  }
  std::map<std::string, size_t> functional_of;
  if (const JsonValue* rec = section->Find("functional_recorded"); rec != nullptr && rec->is_bool())
    tc.functional_recorded = rec->as_bool();
  if (const JsonValue* fs = section->Find("functional"); fs != nullptr && fs->is_array()) {
    for (size_t i = 0; i < fs->items().size(); ++i) {
      const JsonValue& e = fs->items()[i];
      const JsonValue* call = e.Find("call");
      const JsonValue* fn = e.Find("function");
      const JsonValue* ordinal = e.Find("ordinal");
      const JsonValue* tensor = e.Find("tensor");
      if (call == nullptr || !call->is_number() || call->as_number() < 0 ||
          call->as_number() >= static_cast<double>(tc.calls.size()) || fn == nullptr ||
          !fn->is_string() || ordinal == nullptr || !ordinal->is_number() ||
          ordinal->as_number() < 0 || tensor == nullptr || !tensor->is_string())
        return Corrupt(
            what + ": torch.functional[" + std::to_string(i) +
            "] needs a call (index of a call), a function, an ordinal and a tensor name");
      TorchFunctional f;
      f.call = static_cast<int>(call->as_number());
      f.function = fn->as_string();
      f.ordinal = static_cast<int>(ordinal->as_number());
      f.tensor = tensor->as_string();
      if (const JsonValue* in = e.Find("input"); in != nullptr && in->is_number())
        f.input =
            in->as_number() >= 0 && in->as_number() < 1e6 ? static_cast<int>(in->as_number()) : -1;
      functional_of[f.tensor] = tc.functional.size();
      tc.functional.push_back(std::move(f));
    }
  }
  // tensor metadata from the manifest's tensor list, producers from the calls
  std::map<std::string, std::pair<int, int>> producer;
  for (size_t i = 0; i < tc.calls.size(); ++i) {
    for (size_t j = 0; j < tc.calls[i].outputs.size(); ++j)
      producer[tc.calls[i].outputs[j].tensor] = {static_cast<int>(i), static_cast<int>(j)};
  }
  const JsonValue* entries = m.Find("tensors");
  if (entries == nullptr || !entries->is_array()) return Corrupt(what + ": no \"tensors\" array");
  for (const auto& e : entries->items()) {
    const JsonValue* kind = e.Find("kind");
    const JsonValue* name = e.Find("name");
    if (kind == nullptr || !kind->is_string() || kind->as_string() != "tensor" || name == nullptr ||
        !name->is_string())
      continue;
    if (const JsonValue* td = e.Find("torch_dtype"); td != nullptr && td->is_string())
      tc.torch_dtypes[name->as_string()] = td->as_string();
    if (call_input_names.count(name->as_string())) continue;
    if (auto f = functional_of.find(name->as_string()); f != functional_of.end()) {
      TorchFunctional& fn = tc.functional[f->second];
      const JsonValue* dtype = e.Find("dtype");
      const JsonValue* shape = e.Find("shape");
      if (dtype != nullptr && dtype->is_string() && shape != nullptr && shape->is_array()) {
        auto dt = DTypeFromName(dtype->as_string());
        fn.known_type = dt.ok();
        if (dt.ok()) fn.dtype = *dt;
        for (const auto& d : shape->items()) {
          if (!d.is_number()) fn.known_type = false;
          fn.shape.push_back(d.is_number() ? static_cast<int64_t>(d.as_number()) : -1);
        }
      }
      continue;
    }
    auto p = producer.find(name->as_string());
    if (p == producer.end())
      return Corrupt(what + ": tensor '" + name->as_string() + "' belongs to no module call");
    TorchTensorMeta meta;
    meta.name = name->as_string();
    meta.call = p->second.first;
    meta.output = p->second.second;
    const JsonValue* dtype = e.Find("dtype");
    const JsonValue* shape = e.Find("shape");
    if (dtype != nullptr && dtype->is_string() && shape != nullptr && shape->is_array()) {
      auto dt = DTypeFromName(dtype->as_string());
      if (dt.ok()) {
        meta.dtype = *dt;
        meta.known_type = true;
        for (const auto& d : shape->items()) {
          if (!d.is_number()) meta.known_type = false;
          meta.shape.push_back(d.is_number() ? static_cast<int64_t>(d.as_number()) : -1);
        }
      }
    }
    tc.tensors.push_back(std::move(meta));
  }
  return tc;
}

Expected<Tensor> LoadTorchParam(const std::string& dump_path, const TorchParam& p) {
  std::error_code ec;
  Expected<Tensor> t = Status();
  if (fs::is_directory(dump_path, ec)) {
    t = ReadNpy((fs::path(dump_path) / p.file).string());
  } else {
    OP_ASSIGN_OR_RETURN(auto z, NpzReader::Open(dump_path));
    t = z->Read(p.key);
  }
  if (!t.ok()) return t.status();
  if (t->dtype() != p.dtype || t->shape() != p.shape) {
    return Corrupt(dump_path + ": parameter '" + p.names.front() + "' is " + DTypeName(t->dtype()) +
                   ShapeToString(t->shape()) + " on disk but the manifest says " +
                   DTypeName(p.dtype) + ShapeToString(p.shape));
  }
  return t;
}

AlignmentRow CallRow(const TorchCall& call, const std::string& torch_name, int output_index) {
  AlignmentRow row;
  row.torch_name = torch_name;
  row.module = call.module;
  row.module_type = call.type;
  row.call_index = call.call_index;
  row.output_index = output_index;
  return row;
}

}  // namespace onnxprobe::align
