// Input samples from a folder (.npz files, ONNX test_data_set_N/ folders) or from seeds.
#include "onnxprobe/capture/samples.h"

#include <algorithm>
#include <filesystem>

#include "common/decimal.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

// input_0.pb, input_1.pb, ... in numeric order (input_10 after input_9).
Expected<std::vector<std::string>> TestDataInputs(const fs::path& dir) {
  std::vector<std::pair<long, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("input_", 0) != 0 || e.path().extension() != ".pb") continue;
    std::string digits = n.substr(6, n.size() - 6 - 3);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    uint64_t k = 0;
    if (!ParseDecimal(digits, INT64_MAX, &k)) {
      return InvalidArgument(e.path().string() + ": input number " + digits + " is out of range");
    }
    found.emplace_back(static_cast<long>(k), e.path().string());
  }
  if (ec) return IoError(dir.string() + ": cannot list (" + ec.message() + ")");
  if (found.empty()) return InvalidArgument(dir.string() + ": holds no input_K.pb file");
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto& f : found) files.push_back(f.second);
  return files;
}

Status FolderSamples(const SampleOptions& o, std::vector<InputSample>* out) {
  std::error_code ec;
  fs::path dir(o.inputs_dir);
  if (!fs::is_directory(dir, ec)) return NotFound(o.inputs_dir + ": no such folder of samples");
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  if (ec) return IoError(o.inputs_dir + ": cannot list (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end());
  for (const auto& p : entries) {
    InputSample s;
    s.source = SampleSource::kFiles;
    s.inputs = o.base;
    if (fs::is_directory(p, ec) && p.filename().string().rfind("test_data_set_", 0) == 0) {
      OP_ASSIGN_OR_RETURN(s.inputs.files, TestDataInputs(p));
      s.name = p.filename().string();
    } else if (fs::is_regular_file(p, ec) && p.extension() == ".npz") {
      s.inputs.files = {p.string()};
      s.name = p.stem().string();
    } else {
      continue;
    }
    out->push_back(std::move(s));
  }
  if (out->empty()) {
    return InvalidArgument(o.inputs_dir +
                           ": holds no sample (.npz files or test_data_set_N/ folders)");
  }
  return Status::Ok();
}

}  // namespace

const char* SampleSourceName(SampleSource s) {
  return s == SampleSource::kFiles ? "files" : "seed";
}

Expected<std::vector<InputSample>> ListInputSamples(const SampleOptions& o) {
  std::vector<InputSample> samples;
  bool files = !o.base.files.empty() || !o.base.tensors.empty();
  if (files && (!o.inputs_dir.empty() || o.count > 0)) {
    return InvalidArgument(
        "inputs given as files and as samples (a folder or a count): give one or the other");
  }
  if (!o.inputs_dir.empty()) OP_RETURN_IF_ERROR(FolderSamples(o, &samples));
  size_t seeded = o.count;
  if (samples.empty() && seeded == 0) {
    if (files) {
      InputSample s;
      s.source = SampleSource::kFiles;
      s.inputs = o.base;
      s.name = o.base.files.empty() ? "inputs" : fs::path(o.base.files.front()).stem().string();
      samples.push_back(std::move(s));
      return samples;
    }
    seeded = 1;
  }
  for (size_t i = 0; i < seeded; ++i) {
    InputSample s;
    s.source = SampleSource::kSeed;
    s.inputs = o.base;
    s.inputs.seed = o.base.seed + i;
    s.name = "seed-" + std::to_string(s.inputs.seed);
    samples.push_back(std::move(s));
  }
  return samples;
}

Expected<SampleShard> ParseSampleShard(const std::string& text) {
  auto bad = [&]() {
    return InvalidArgument("shard '" + text + "': expected I/N with 0 <= I < N (e.g. 0/4)");
  };
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return bad();
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  std::string i = text.substr(0, slash), n = text.substr(slash + 1);
  if (!digits(i) || !digits(n)) return bad();
  SampleShard s{std::stoul(i), std::stoul(n)};
  if (s.count == 0 || s.index >= s.count) return bad();
  return s;
}

Expected<std::vector<size_t>> ShardPositions(size_t total, const SampleShard& shard,
                                             const std::string& whose) {
  std::string name = "shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count);
  if (shard.count == 0 || shard.index >= shard.count)
    return InvalidArgument(name + ": I must be below N");
  std::vector<size_t> out;
  for (size_t k = shard.index; k < total; k += shard.count) out.push_back(k);
  if (out.empty()) {
    return InvalidArgument(name + " holds no sample " +
                           (whose.empty() ? "(" + std::to_string(total) + " samples in all)"
                                          : "of " + whose + " " + std::to_string(total)));
  }
  return out;
}

}  // namespace onnxprobe
