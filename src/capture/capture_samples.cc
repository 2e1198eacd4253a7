// `onnxprobe run` over several input samples: a folder of dumps, one per sample, built in a
// temporary sibling and moved into place when complete.
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/capture/samples.h"
#include "onnxprobe/common/json.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

constexpr const char* kIndex = "samples.json";

Status Publish(const std::string& tmp, const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec)) {
    bool ours = fs::is_regular_file(fs::path(path) / kIndex, ec);
    if (!ours && !(fs::is_directory(path, ec) && fs::is_empty(path, ec))) {
      return InvalidArgument(path +
                             ": exists and is not an onnxprobe dump set; refusing to "
                             "replace it");
    }
    fs::remove_all(path, ec);
    if (ec) return IoError(path + ": cannot remove the old dump set (" + ec.message() + ")");
  }
  ec = RenameTemporary(tmp, path);
  if (ec) return IoError(path + ": cannot move the dump set into place (" + ec.message() + ")");
  return Status::Ok();
}

}  // namespace

Expected<std::vector<SampleDump>> CaptureSamplesToDumps(const DumpRequest& request,
                                                        const std::vector<InputSample>& samples) {
  std::string tmp = TempSiblingPath(OutputPath(request.output));
  std::vector<SampleDump> out;
  Status st;
  std::error_code ec;
  fs::create_directories(tmp, ec);
  if (ec) st = IoError(tmp + ": cannot create (" + ec.message() + ")");
  for (size_t i = 0; st.ok() && i < samples.size(); ++i) {
    SampleDump d;
    d.name = samples[i].name;
    d.dump = DumpFileName(i, d.name);
    d.dump.resize(d.dump.size() - 4);  // DumpFileName ends in ".npy"
    DumpRequest r = request;
    r.inputs = samples[i].inputs;
    r.output = (fs::path(tmp) / d.dump).string();
    auto done = CaptureToDump(r);
    if (!done.ok()) {
      st = done.status().WithContext("sample '" + d.name + "'");
      break;
    }
    d.report = std::move(*done);
    out.push_back(std::move(d));
  }
  if (st.ok()) {
    JsonWriter j;
    j.BeginObject().Key("format").String("onnxprobe-dump-set").Key("version").Int(1);
    j.Key("model").String(request.model_path).Key("samples").BeginArray();
    for (const auto& d : out)
      j.BeginObject().Key("name").String(d.name).Key("dump").String(d.dump).EndObject();
    j.EndArray().EndObject();
    st = WriteFileAtomic((fs::path(tmp) / kIndex).string(), j.str() + "\n");
  }
  if (st.ok()) st = Publish(tmp, OutputPath(request.output));
  if (!st.ok()) {
    RemoveTemporary(tmp);
    return st;
  }
  return out;
}

}  // namespace onnxprobe
