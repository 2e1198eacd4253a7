#include "generation_writer.h"

#include <cstdio>
#include <filesystem>

#include "common/file_util.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

namespace fs = std::filesystem;

std::string StepFile(int step) {
  char name[32];
  std::snprintf(name, sizeof name, "steps/%05d.npz", step);
  return name;
}

const char* KindName(char k) { return k == 'k' ? "key" : k == 'v' ? "value" : "kv"; }

}  // namespace

Expected<std::unique_ptr<GenerationWriter>> GenerationWriter::Open(const std::string& user_path) {
  const std::string path = OutputPath(user_path);  // through a link, never replacing it
  std::unique_ptr<GenerationWriter> w(new GenerationWriter());
  w->path_ = path;
  w->tmp_ = TempSiblingPath(path);
  std::error_code ec;
  fs::create_directories(fs::path(w->tmp_) / "steps", ec);
  if (ec) return IoError(path + ": cannot create its folder (" + ec.message() + ")");
  return w;
}

GenerationWriter::~GenerationWriter() {
  if (!done_) RemoveTemporary(tmp_);
}

Status GenerationWriter::AddStep(const Tensor& logits, const DecoderIo& io,
                                 const std::vector<Tensor>& added) {
  ++steps_;
  NpzWriter npz;
  std::string file = (fs::path(tmp_) / StepFile(steps_)).string();
  Status st = npz.Open(file);
  if (st.ok()) st = npz.Add(io.logits, logits);
  for (size_t i = 0; st.ok() && i < added.size(); ++i) st = npz.Add(io.cache[i].present, added[i]);
  if (st.ok()) st = npz.Finish();
  return st.WithContext(path_);
}

Status GenerationWriter::Finish(const std::string& runtime, const DecoderIo& io,
                                const std::vector<int64_t>& prompt,
                                const std::vector<int64_t>& tokens,
                                const std::vector<Tensor>& empty_cache) {
  JsonWriter j;
  j.BeginObject().Key("format").String("onnxprobe-generation").Key("format_version").Int(1);
  j.Key("runtime").String(runtime).Key("prompt").IntArray(prompt).Key("tokens").IntArray(tokens);
  j.Key("logits").String(io.logits).Key("cache").BeginArray();
  for (size_t i = 0; i < io.cache.size(); ++i) {
    const CacheSlot& c = io.cache[i];
    j.BeginObject().Key("name").String(c.present).Key("past").String(c.past);
    j.Key("layer")
        .Int(c.layer)
        .Key("kind")
        .String(KindName(c.kind))
        .Key("seq_axis")
        .Int(c.seq_axis);
    j.Key("empty_shape").IntArray(empty_cache[i].shape());
    j.Key("dtype").String(DTypeName(empty_cache[i].dtype())).EndObject();
  }
  j.EndArray().Key("steps").BeginArray();
  for (int s = 1; s <= steps_; ++s)
    j.BeginObject().Key("step").Int(s).Key("file").String(StepFile(s)).EndObject();
  j.EndArray().EndObject();
  OP_RETURN_IF_ERROR(WriteFileAtomic((fs::path(tmp_) / "generation.json").string(), j.str()));
  std::error_code ec;
  if (fs::is_directory(path_, ec)) fs::remove_all(path_, ec);  // an earlier saved generation
  ec = RenameTemporary(tmp_, path_);
  if (ec)
    return IoError(path_ + ": cannot move the saved generation into place (" + ec.message() + ")");
  done_ = true;
  return Status::Ok();
}

}  // namespace onnxprobe
