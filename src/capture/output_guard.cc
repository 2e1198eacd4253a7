// Output targets are checked by content, not by name: a file called r.json that holds someone's
// data is not ours to replace. (Here rather than in common/ because recognizing an .npz dump
// reads its archive, which is the dump module's business.)
#include "onnxprobe/capture/output_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/file_util.h"
#include "common/temp_registry.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/graph/fp16_graph.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

// The first `n` bytes of a file ("" when unreadable).
std::string Head(const fs::path& p, size_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return s;
}

}  // namespace

bool JsonOpensWith(const std::string& text, size_t pos, const std::string& key,
                   const std::string& value_prefix) {
  auto skip = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  auto take = [&](const std::string& token) {
    skip();
    if (text.compare(pos, token.size(), token) != 0) return false;
    pos += token.size();
    return true;
  };
  return take("{") && take("\"" + key + "\"") && take(":") && take("\"" + value_prefix);
}

// The HTML reporters embed their report's JSON in this element (src/report/html_page.inc).
bool HtmlEmbedsSchema(const std::string& head, const std::string& schema_prefix) {
  static const std::string kDataTag = "<script id=\"data\" type=\"application/json\">";
  size_t at = head.find(kDataTag);
  return head.rfind("<!DOCTYPE html>", 0) == 0 && at != std::string::npos &&
         JsonOpensWith(head, at + kDataTag.size(), "schema", schema_prefix);
}

namespace {

// A ModelProto serializes ir_version (field 1, varint) then producer_name (field 2, bytes):
// the converted model's first bytes are 08 <varint> 12 <length> "onnxprobe fp16".
bool IsConvertedModel(const std::string& head) {
  static const std::string kProducer = kFp16ProducerName;
  size_t pos = 0;
  if (head.empty() || head[pos++] != 0x08) return false;
  while (pos < head.size() && (static_cast<unsigned char>(head[pos]) & 0x80)) ++pos;
  ++pos;
  if (pos + 2 > head.size() || head[pos] != 0x12 ||
      static_cast<size_t>(head[pos + 1]) != kProducer.size())
    return false;
  return head.compare(pos + 2, kProducer.size(), kProducer) == 0;
}

bool IsOurs(const fs::path& p, OutputKind kind, bool is_dir) {
  std::error_code ec;
  switch (kind) {
    case OutputKind::kDump:
      if (is_dir) {
        std::string manifest = Head(p / "manifest.json", 4096);
        return manifest.find("\"onnxprobe-dump\"") != std::string::npos;
      }
      return p.extension() == ".npz" && IsDumpPath(p.string());
    case OutputKind::kReproBundle:
      return is_dir && fs::is_regular_file(p / "onnxprobe.json", ec);
    case OutputKind::kDeterminismJson:
      return !is_dir && JsonOpensWith(Head(p, 4096), 0, "schema", "onnxprobe-determinism\"");
    case OutputKind::kNoiseFloor:
      return !is_dir && JsonOpensWith(Head(p, 4096), 0, "format", "onnxprobe-noise-floor\"");
    case OutputKind::kFp16Json:
      return !is_dir && JsonOpensWith(Head(p, 4096), 0, "schema", "onnxprobe-fp16\"");
    case OutputKind::kFp16Model:
      return !is_dir && IsConvertedModel(Head(p, 64));
    case OutputKind::kBaseline:
      return is_dir &&
             JsonOpensWith(Head(p / "baseline.json", 4096), 0, "format", "onnxprobe-baseline\"");
    case OutputKind::kBaselineCheckJson:
      return !is_dir && JsonOpensWith(Head(p, 4096), 0, "schema", "onnxprobe-baseline-check\"");
    case OutputKind::kDumpSet:
      return is_dir &&
             JsonOpensWith(Head(p / "samples.json", 4096), 0, "format", "onnxprobe-dump-set\"");
    case OutputKind::kGeneration:
      return is_dir && JsonOpensWith(Head(p / "generation.json", 4096), 0, "format",
                                     "onnxprobe-generation\"");
    case OutputKind::kSweepJson:
      return !is_dir && JsonOpensWith(Head(p, 4096), 0, "schema", "onnxprobe-sweep\"");
    case OutputKind::kProfileTrace: {
      if (is_dir) return false;
      std::string head = Head(p, 4096);
      size_t at = head.find_first_not_of(" \t\r\n");
      return at != std::string::npos && head[at] == '[' && JsonOpensWith(head, at + 1, "cat", "");
    }
    case OutputKind::kCommandJson:
      return !is_dir && JsonOpensWith(Head(p, 4096), 0, "schema", "onnxprobe-");
    case OutputKind::kGenerateHtml:  // the data comes first in <head>
      return !is_dir && HtmlEmbedsSchema(Head(p, 256 * 1024), "onnxprobe-generate");
  }
  return false;
}

bool IsFolderKind(const fs::path& p, OutputKind kind) {
  return kind == OutputKind::kReproBundle || kind == OutputKind::kBaseline ||
         kind == OutputKind::kDumpSet || kind == OutputKind::kGeneration ||
         (kind == OutputKind::kDump && p.extension() != ".npz");
}

// `inner` is `outer` or lies inside it (after resolving symbolic links).
bool Contains(const fs::path& outer, const fs::path& inner) {
  std::error_code ec;
  fs::path o = fs::weakly_canonical(outer, ec);
  if (ec) return false;
  fs::path i = fs::weakly_canonical(inner, ec);
  if (ec) return false;
  auto mismatch = std::mismatch(o.begin(), o.end(), i.begin(), i.end());
  return mismatch.first == o.end();
}

}  // namespace

const char* OutputKindName(OutputKind kind) {
  switch (kind) {
    case OutputKind::kDump:
      return "dump";
    case OutputKind::kReproBundle:
      return "repro bundle";
    case OutputKind::kDeterminismJson:
      return "determinism report";
    case OutputKind::kNoiseFloor:
      return "noise floor file";
    case OutputKind::kFp16Json:
      return "float16 report";
    case OutputKind::kFp16Model:
      return "float16 model";
    case OutputKind::kBaseline:
      return "baseline";
    case OutputKind::kBaselineCheckJson:
      return "baseline check report";
    case OutputKind::kDumpSet:
      return "dump set";
    case OutputKind::kSweepJson:
      return "sweep report";
    case OutputKind::kProfileTrace:
      return "profiler trace";
    case OutputKind::kCommandJson:
      return "JSON output";
    case OutputKind::kGenerateHtml:
      return "generate HTML report";
    case OutputKind::kGeneration:
      return "saved generation";
  }
  return "output";
}

namespace {

// Outputs are written to a temporary sibling and renamed: the folder must let us create one. It is
// tried (then removed): access() answers for the real user id, and root passes it on a folder
// without write permission. Checked before any work, so one unwritable output does not fail after
// the others are written.
Status FolderTakesFiles(const std::string& path) {
  std::string probe = TempSiblingPath(path);  // what the real write creates first
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    UnregisterTemporary(probe);
    std::string parent = ParentFolder(path);
    return InvalidArgument(path + ": cannot write in folder " + (parent.empty() ? "." : parent) +
                           " (" + std::strerror(err) + ")");
  }
  ::close(fd);
  RemoveTemporary(probe);
  return Status::Ok();
}

Status CheckTarget(const std::string& path, const OutputArtifact& artifact,
                   const std::vector<std::string>& inputs, bool force);

bool IsFolder(const OutputArtifact& artifact, const std::string& path) {
  return artifact.folder && artifact.folder(path);
}

}  // namespace

std::string FileHead(const std::string& path, size_t n) { return Head(path, n); }

OutputArtifact ArtifactOf(OutputKind kind) {
  OutputArtifact a;
  a.name = OutputKindName(kind);
  a.folder = [kind](const std::string& path) { return IsFolderKind(fs::path(path), kind); };
  a.ours = [kind](const std::string& path, bool is_dir) { return IsOurs(path, kind, is_dir); };
  return a;
}

Status CheckOutputTarget(const std::string& path, OutputKind kind,
                         const std::vector<std::string>& inputs, bool force) {
  return CheckOutputTarget(path, ArtifactOf(kind), inputs, force);
}

Status CheckOutputTarget(const std::string& path, const OutputArtifact& artifact,
                         const std::vector<std::string>& inputs, bool force) {
  // a link is written through (its target checked as the output), a stream or device as it is
  const std::string target = OutputPath(path);
  if (IsStreamOutput(target)) {
    if (IsFolder(artifact, target))
      return InvalidArgument(path + ": is a stream or device; " + artifact.name +
                             " output is a folder");
    return Status::Ok();
  }
  RemoveStaleTemporaries(target);  // what a killed earlier run left beside it
  Status checked = CheckTarget(target, artifact, inputs, force);
  if (!checked.ok() && target != path)
    return Status(checked.code(), path + " (a link to " + target + "): " + checked.message());
  OP_RETURN_IF_ERROR(checked);
  return FolderTakesFiles(target);
}

namespace {

Status CheckTarget(const std::string& path, const OutputArtifact& artifact,
                   const std::vector<std::string>& inputs, bool force) {
  std::error_code ec;
  fs::path p(path);
  auto st = fs::symlink_status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return IoError(path + ": cannot check (" + ec.message() + ")");
  if (!fs::exists(st)) {
    // checked before any work: an output whose folder is missing would fail only at the end
    fs::path parent = ParentFolder(path);
    if (!parent.empty() && !fs::is_directory(parent, ec))
      return InvalidArgument(path + ": parent folder " + parent.string() + " does not exist");
    return Status::Ok();
  }
  for (const auto& in : inputs) {
    if (in.empty() || !fs::exists(in, ec)) continue;
    if (fs::equivalent(in, p, ec)) {
      return InvalidArgument(path + ": is an input of this run; refusing to write over it");
    }
    if (fs::is_directory(p, ec) && Contains(p, in)) {
      return InvalidArgument(path + ": holds " + in +
                             ", an input of this run; refusing to replace it");
    }
  }
  bool is_dir = fs::is_directory(p, ec);
  bool is_file = fs::is_regular_file(p, ec);
  if (is_dir && fs::is_empty(p, ec) && IsFolder(artifact, path)) return Status::Ok();
  if (is_file && fs::file_size(p, ec) == 0 && !ec) return Status::Ok();
  if ((is_dir || is_file) && artifact.ours && artifact.ours(path, is_dir)) return Status::Ok();
  std::string what = "an onnxprobe " + artifact.name;
  if (is_dir) {
    return InvalidArgument(path + ": exists and is a folder that is not " + what +
                           "; refusing to replace it (remove it first)");
  }
  if (force && is_file) return Status::Ok();
  return InvalidArgument(path + ": exists and is not " + what + "; refusing to replace it");
}

}  // namespace

Status WriteJsonOutput(const std::string& path, const std::string& text) {
  return WriteFileAtomic(path, text);
}

Status WriteOutputFile(const std::string& path, const std::string& text) {
  return WriteFileAtomic(path, text);
}

}  // namespace onnxprobe
