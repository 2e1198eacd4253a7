#include "onnxprobe/capture/capture.h"
#include "onnxprobe/common/json.h"

namespace onnxprobe {

void WriteSkipped(const std::vector<SkippedTensor>& skipped, JsonWriter& j) {
  j.Key("skipped").BeginArray();
  for (const auto& s : skipped) j.String(s.ToString());
  j.EndArray();
  j.Key("skipped_tensors").BeginArray();
  for (const auto& s : skipped) {
    j.BeginObject().Key("name").String(s.name).Key("kind").String(SkipKindName(s.reason.kind));
    j.Key("reason").String(s.reason.detail).EndObject();
  }
  j.EndArray();
}

}  // namespace onnxprobe
