// ImportPolygraphy: Polygraphy's JSON results (RunResults, and the inputs list) into a dump.
//
// Polygraphy writes each NumPy array as {"array": base64 of the .npy file, "polygraphy_class":
// "ndarray"}, inside {"values": ..., "polygraphy_class": "LazyArray"} in newer versions. The
// outputs file is {"lst": [[runner name, [iteration {"outputs": {name: array}, ...}, ...]], ...],
// "polygraphy_class": "RunResults"}; the inputs file a list of {name: array}, one per iteration.
#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>

#include "common/file_util.h"
#include "onnxprobe/capture/polygraphy.h"
#include "onnxprobe/common/json_value.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

// Standard base64 (RFC 4648, padding optional, no line breaks: what Python's b64encode writes).
Expected<std::string> DecodeBase64(const std::string& s, const std::string& what) {
  static const auto kTable = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
    return t;
  }();
  std::string out;
  out.reserve(s.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] != '='; ++i) {
    int v = kTable[static_cast<unsigned char>(s[i])];
    if (v < 0) return Corrupt(what + ": not base64 (byte " + std::to_string(i) + ")");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  for (; i < s.size(); ++i) {
    if (s[i] != '=') return Corrupt(what + ": data after base64 padding");
  }
  return out;
}

// The array a Polygraphy value holds: an ndarray, or a LazyArray wrapping one.
Expected<Tensor> DecodeArray(const JsonValue& v, const std::string& what) {
  const JsonValue* inner = v.Find("values");
  const JsonValue& array = inner != nullptr ? *inner : v;
  const JsonValue* data = array.Find("array");
  if (data == nullptr || !data->is_string()) {
    const JsonValue* cls = array.Find("polygraphy_class");
    std::string kind = cls != nullptr && cls->is_string() ? cls->as_string() : "not an array";
    return Corrupt(what + ": a " + kind + ", not a NumPy array (only arrays can be imported)");
  }
  OP_ASSIGN_OR_RETURN(std::string bytes, DecodeBase64(data->as_string(), what));
  return ParseNpy(bytes.data(), bytes.size(), what);
}

Expected<JsonValue> ReadJson(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return NotFound(path + ": no such file");
  OP_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJson(text, path);
}

}  // namespace

Expected<PolygraphyImportReport> ImportPolygraphy(const PolygraphyImportRequest& req) {
  OP_ASSIGN_OR_RETURN(JsonValue doc, ReadJson(req.outputs_file));
  const JsonValue* cls = doc.Find("polygraphy_class");
  const JsonValue* lst = doc.Find("lst");
  if (cls == nullptr || !cls->is_string() || cls->as_string() != "RunResults" || lst == nullptr ||
      !lst->is_array()) {
    return Corrupt(
        req.outputs_file +
        ": not Polygraphy results (expected an object with \"polygraphy_class\": "
        "\"RunResults\" and a \"lst\" array, as `polygraphy run --save-outputs` writes)");
  }
  PolygraphyImportReport rep;
  const JsonValue* iterations = nullptr;
  for (const auto& pair : lst->items()) {
    if (!pair.is_array() || pair.items().size() != 2 || !pair.items()[0].is_string() ||
        !pair.items()[1].is_array()) {
      return Corrupt(req.outputs_file + ": an entry of \"lst\" is not [runner name, iterations]");
    }
    const std::string& name = pair.items()[0].as_string();
    rep.runners.push_back(name);
    if (req.runner.empty() || req.runner == name) iterations = &pair.items()[1];
  }
  if (rep.runners.empty()) return Corrupt(req.outputs_file + ": holds no runner's results");
  if (req.runner.empty() && rep.runners.size() > 1) {
    std::string names;
    for (const auto& n : rep.runners) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgument(req.outputs_file + " holds the results of " +
                           std::to_string(rep.runners.size()) + " runners (" + names +
                           "): name one with --runner");
  }
  if (iterations == nullptr) {
    std::string names;
    for (const auto& n : rep.runners) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgument(req.outputs_file + ": no runner '" + req.runner + "' (it has " + names +
                           ")");
  }
  rep.runner = req.runner.empty() ? rep.runners.front() : req.runner;
  rep.iterations = iterations->items().size();
  if (req.iteration >= rep.iterations) {
    return InvalidArgument(req.outputs_file + ": runner '" + rep.runner + "' has " +
                           std::to_string(rep.iterations) + " iteration(s); --iteration " +
                           std::to_string(req.iteration) + " is out of range");
  }
  const JsonValue& it = iterations->items()[req.iteration];
  const JsonValue* outputs = it.Find("outputs");
  if (outputs == nullptr || !outputs->is_object())
    return Corrupt(req.outputs_file + ": iteration " + std::to_string(req.iteration) +
                   " of runner '" + rep.runner + "' has no \"outputs\" object");

  DumpMetadata meta;
  meta.source = "polygraphy";
  meta.runtime = "polygraphy " + rep.runner;
  std::optional<Model> model;
  if (!req.model_path.empty()) {
    OP_ASSIGN_OR_RETURN(Model m, Model::Load(req.model_path, LoadMode::kGraphOnly));
    meta.model_path = req.model_path;
    meta.model_sha256 = m.Hashes(false).sha256;
    model = std::move(m);
  }
  OP_ASSIGN_OR_RETURN(auto writer, DumpWriter::Create(req.output, meta));

  if (!req.inputs_file.empty()) {
    OP_ASSIGN_OR_RETURN(JsonValue inputs, ReadJson(req.inputs_file));
    if (!inputs.is_array() || req.iteration >= inputs.items().size() ||
        !inputs.items()[req.iteration].is_object()) {
      return Corrupt(req.inputs_file + ": not Polygraphy inputs with an iteration " +
                     std::to_string(req.iteration) +
                     " (expected a list of {name: array}, as --save-inputs writes)");
    }
    for (const auto& [name, value] : inputs.items()[req.iteration].members()) {
      OP_ASSIGN_OR_RETURN(Tensor t, DecodeArray(value, req.inputs_file + ": input '" + name + "'"));
      OP_RETURN_IF_ERROR(writer->AddInput({name, std::move(t)}));
      ++rep.inputs;
    }
  }
  // the JSON object's members come sorted by name: the file's order is lost, so without a model
  // the tensors keep name order (a model gives each its topological position)
  std::vector<CapturedTensor> tensors;
  for (const auto& [name, value] : outputs->members()) {
    CapturedTensor c;
    c.name = name;
    OP_ASSIGN_OR_RETURN(c.tensor, DecodeArray(value, req.outputs_file + ": tensor '" + name + "'"));
    c.topo_index = static_cast<int>(tensors.size());
    if (model) {
      const TensorEntry* e = model->index().Find(name);
      if (e != nullptr && e->producer >= 0) {
        const NodeInfo& n = model->index().nodes()[e->producer];
        c.topo_index = n.topo_index;
        c.node_name = n.name;
        c.op_type = n.op_type;
      } else {
        rep.not_in_model.push_back(name);
      }
    }
    tensors.push_back(std::move(c));
  }
  if (model) {
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const CapturedTensor& x, const CapturedTensor& y) {
                       return x.topo_index < y.topo_index;
                     });
  }
  for (auto& c : tensors) OP_RETURN_IF_ERROR(writer->Consume(std::move(c)));
  rep.tensors = tensors.size();
  CaptureReport cr;
  cr.captured = rep.tensors;
  OP_RETURN_IF_ERROR(writer->Finish(cr));
  rep.metadata = meta;
  return rep;
}

}  // namespace onnxprobe
