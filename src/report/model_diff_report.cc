// Text, JSON (schema "onnxprobe-diff", docs/diff.md) and one-line renderings of a ModelDiff.
#include "onnxprobe/report/model_diff_report.h"

#include <cstdio>

#include "onnxprobe/common/json.h"
#include "onnxprobe/model/model_diff.h"

namespace onnxprobe {
namespace {

constexpr int kDiffSchemaVersion = 1;

std::string G(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Or(const std::string& s, const char* absent) { return s.empty() ? absent : s; }

std::string NodeText(const NodeDiff& n) {
  auto side = [](const std::string& name, const std::string& op, int index) {
    return (name.empty() ? "(unnamed)" : name) + " (" + op + " #" + std::to_string(index) + ")";
  };
  switch (n.kind) {
    case DiffKind::kAdded:
      return side(n.name_b, n.op_b, n.index_b) + " in B";
    case DiffKind::kRemoved:
      return side(n.name_a, n.op_a, n.index_a) + " in A";
    default:
      if (n.renamed)
        return side(n.name_a, n.op_a, n.index_a) + " -> " + side(n.name_b, n.op_b, n.index_b);
      return side(n.name_b, n.op_b, n.index_b);
  }
}

std::string TypeText(const std::string& dtype, const std::vector<int64_t>& shape) {
  return dtype + ShapeToString(shape);
}

// ", read by /features/features.3/Conv" (the first three, then how many more)
std::string ReadersText(const InitializerDiff& d) {
  if (d.readers.empty()) return "";
  std::string s = ", read by ";
  for (size_t i = 0; i < d.readers.size() && i < 3; ++i) s += (i ? ", " : "") + d.readers[i];
  if (d.readers.size() > 3) s += " and " + std::to_string(d.readers.size() - 3) + " more";
  return s;
}

// A weight's name, with the Constant node holding it where one does.
std::string WeightName(const std::string& name, const std::string& constant) {
  return constant.empty() ? name : name + " (Constant node " + constant + ")";
}

std::string InitText(const InitializerDiff& d) {
  const std::string a = WeightName(d.name_a, d.constant_a), b = WeightName(d.name_b, d.constant_b);
  switch (d.kind) {
    case DiffKind::kAdded:
      return b + " " + TypeText(d.dtype_b, d.shape_b) + " in B";
    case DiffKind::kRemoved:
      return a + " " + TypeText(d.dtype_a, d.shape_a) + " in A";
    case DiffKind::kRenamed:
      return a + " -> " + b + " " + TypeText(d.dtype_b, d.shape_b) + " (same bytes)";
    case DiffKind::kChanged:
      break;
  }
  std::string s =
      a + (d.name_a != d.name_b || d.constant_a != d.constant_b ? " -> " + b : "") + " ";
  if (d.dtype_a != d.dtype_b || d.shape_a != d.shape_b) {
    s += TypeText(d.dtype_a, d.shape_a) + " -> " + TypeText(d.dtype_b, d.shape_b);
  } else {
    s += TypeText(d.dtype_a, d.shape_a);
  }
  if (d.compared) {
    s += ": " + std::to_string(d.num_different) + " of " + std::to_string(d.num_elements) +
         " values differ" + (d.rounded_to.empty() ? "" : " once rounded to " + d.rounded_to) +
         ", max |a-b| " + G(d.max_abs_diff);
  }
  s += " (sha256 " + d.sha256_a.substr(0, 12) + " -> " + d.sha256_b.substr(0, 12) + ")";
  return s + ReadersText(d);
}

void StringOrNull(JsonWriter& j, const std::string& key, const std::string& v) {
  j.Key(key);
  if (v.empty())
    j.Null();
  else
    j.String(v);
}

}  // namespace

std::string RenderModelDiffText(const ModelDiff& d) {
  std::string s = "diff A " + d.path_a + "\n     B " + d.path_b + "\n";
  if (!d.fields.empty()) {
    s += "\nmodel\n";
    for (const FieldChange& f : d.fields)
      s += "  " + f.field + ": " + Or(f.a, "(none)") + " -> " + Or(f.b, "(none)") + "\n";
  }
  s += "\nnodes: " + std::to_string(d.nodes_a) + " in A, " + std::to_string(d.nodes_b) +
       " in B; matched " + std::to_string(d.nodes_matched_by_name) + " by name, " +
       std::to_string(d.nodes_matched_by_structure) + " by structure; " +
       std::to_string(d.nodes_unchanged) + " unchanged\n";
  for (const NodeDiff& n : d.nodes) {
    char kind[16];
    std::snprintf(kind, sizeof kind, "%-8s", DiffKindName(n.kind));
    s += "  " + std::string(kind) + " " + NodeText(n) + "\n";
    if (n.op_changed) s += "      op: " + n.op_a + " -> " + n.op_b + "\n";
    for (const auto& a : n.attributes)
      s += "      attribute " + a.name + ": " + Or(a.a, "(absent)") + " -> " + Or(a.b, "(absent)") +
           "\n";
    for (const auto& i : n.inputs)
      s += "      input " + std::to_string(i.slot) + ": " + Or(i.a, "(none)") + " -> " +
           Or(i.b, "(none)") + "\n";
  }
  s += "\ninitializers (and weights Constant nodes hold): " +
       std::to_string(d.initializers_unchanged) + " unchanged\n";
  for (const InitializerDiff& i : d.initializers) {
    char kind[16];
    std::snprintf(kind, sizeof kind, "%-8s", DiffKindName(i.kind));
    s += "  " + std::string(kind) + " " + InitText(i) + "\n";
  }
  s += "\n" + SummarizeModelDiff(d) + "\n";
  return s;
}

std::string RenderModelDiffJson(const ModelDiff& d) {
  JsonWriter j;
  j.BeginObject();
  j.Key("schema").String("onnxprobe-diff").Key("schema_version").Int(kDiffSchemaVersion);
  j.Key("a").String(d.path_a).Key("b").String(d.path_b);
  j.Key("identical").Bool(d.Identical()).Key("summary").String(SummarizeModelDiff(d));
  j.Key("counts").BeginObject();
  j.Key("nodes").BeginObject();
  j.Key("a").UInt(d.nodes_a).Key("b").UInt(d.nodes_b);
  j.Key("matched_by_name").UInt(d.nodes_matched_by_name);
  j.Key("matched_by_structure").UInt(d.nodes_matched_by_structure);
  j.Key("unchanged").UInt(d.nodes_unchanged);
  for (DiffKind k : {DiffKind::kChanged, DiffKind::kRenamed, DiffKind::kAdded, DiffKind::kRemoved})
    j.Key(DiffKindName(k)).UInt(d.CountNodes(k));
  j.EndObject();
  j.Key("initializers").BeginObject();
  j.Key("unchanged").UInt(d.initializers_unchanged);
  for (DiffKind k : {DiffKind::kChanged, DiffKind::kRenamed, DiffKind::kAdded, DiffKind::kRemoved})
    j.Key(DiffKindName(k)).UInt(d.CountInitializers(k));
  j.EndObject();
  j.EndObject();
  j.Key("fields").BeginArray();
  for (const FieldChange& f : d.fields) {
    j.BeginObject().Key("field").String(f.field);
    StringOrNull(j, "a", f.a);
    StringOrNull(j, "b", f.b);
    j.EndObject();
  }
  j.EndArray();
  j.Key("nodes").BeginArray();
  for (const NodeDiff& n : d.nodes) {
    j.BeginObject().Key("kind").String(DiffKindName(n.kind));
    const bool has_a = n.index_a >= 0, has_b = n.index_b >= 0;
    j.Key("name_a");
    has_a ? j.String(n.name_a) : j.Null();
    j.Key("name_b");
    has_b ? j.String(n.name_b) : j.Null();
    StringOrNull(j, "op_a", n.op_a);
    StringOrNull(j, "op_b", n.op_b);
    j.Key("index_a");
    has_a ? j.Int(n.index_a) : j.Null();
    j.Key("index_b");
    has_b ? j.Int(n.index_b) : j.Null();
    j.Key("renamed").Bool(n.renamed).Key("op_changed").Bool(n.op_changed);
    j.Key("attributes").BeginArray();
    for (const auto& a : n.attributes) {
      j.BeginObject().Key("name").String(a.name);
      StringOrNull(j, "a", a.a);
      StringOrNull(j, "b", a.b);
      j.EndObject();
    }
    j.EndArray().Key("inputs").BeginArray();
    for (const auto& i : n.inputs) {
      j.BeginObject().Key("slot").UInt(i.slot);
      StringOrNull(j, "a", i.a);
      StringOrNull(j, "b", i.b);
      j.EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray();
  j.Key("initializers").BeginArray();
  for (const InitializerDiff& i : d.initializers) {
    j.BeginObject().Key("kind").String(DiffKindName(i.kind));
    StringOrNull(j, "name_a", i.name_a);
    StringOrNull(j, "name_b", i.name_b);
    StringOrNull(j, "dtype_a", i.dtype_a);
    StringOrNull(j, "dtype_b", i.dtype_b);
    j.Key("shape_a");
    i.dtype_a.empty() ? j.Null() : j.IntArray(i.shape_a);
    j.Key("shape_b");
    i.dtype_b.empty() ? j.Null() : j.IntArray(i.shape_b);
    StringOrNull(j, "sha256_a", i.sha256_a);
    StringOrNull(j, "sha256_b", i.sha256_b);
    j.Key("compared").Bool(i.compared);
    j.Key("max_abs_diff");
    i.compared ? j.Number(i.max_abs_diff) : j.Null();
    j.Key("num_different");
    i.compared ? j.UInt(i.num_different) : j.Null();
    j.Key("num_elements");
    i.compared ? j.UInt(i.num_elements) : j.Null();
    StringOrNull(j, "rounded_to", i.rounded_to);
    j.Key("readers").BeginArray();
    for (const auto& r : i.readers) j.String(r);
    j.EndArray();
    StringOrNull(j, "constant_a", i.constant_a);
    StringOrNull(j, "constant_b", i.constant_b);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  return j.str() + "\n";
}

}  // namespace onnxprobe
