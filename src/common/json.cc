#include "onnxprobe/common/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace onnxprobe {

std::string JsonEscape(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\r':
        o += "\\r";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

void JsonWriter::Newline() {
  if (!pretty_ || flat_depth_ > 0) return;
  out_ += '\n';
  out_.append(first_.size() * 2, ' ');
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += (pretty_ && flat_depth_ > 0) ? ", " : ",";
  first_.back() = false;
  Newline();
}

JsonWriter& JsonWriter::Raw(const std::string& json) {
  Separate();
  size_t n = json.size();
  while (n > 0 && (json[n - 1] == '\n' || json[n - 1] == ' ')) --n;
  out_.append(json, 0, n);
  return *this;
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  first_.push_back(true);
  if (flat_depth_ > 0) ++flat_depth_;
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  bool empty = first_.back();
  first_.pop_back();
  bool flat = flat_depth_ > 0;
  if (flat) --flat_depth_;
  if (!empty && !flat) Newline();
  out_ += '}';
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  first_.push_back(true);
  if (flat_depth_ > 0) ++flat_depth_;
  return *this;
}
JsonWriter& JsonWriter::BeginFlatArray() {
  BeginArray();
  if (flat_depth_ == 0) flat_depth_ = 1;
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  bool empty = first_.back();
  first_.pop_back();
  bool flat = flat_depth_ > 0;
  if (flat) --flat_depth_;
  if (!empty && !flat) Newline();
  out_ += ']';
  return *this;
}
JsonWriter& JsonWriter::Key(const std::string& k) {
  Separate();
  out_ += JsonEscape(k);
  out_ += pretty_ ? ": " : ":";
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::String(const std::string& s) {
  Separate();
  out_ += JsonEscape(s);
  return *this;
}
JsonWriter& JsonWriter::Number(double v) {
  Separate();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back exactly
  out_.append(buf, r.ptr);
  return *this;
}
JsonWriter& JsonWriter::Int(int64_t v) {
  Separate();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::UInt(uint64_t v) {
  Separate();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::IntArray(const std::vector<int64_t>& v) {
  Separate();
  out_ += '[';
  for (size_t i = 0; i < v.size(); ++i) out_ += (i ? ", " : "") + std::to_string(v[i]);
  out_ += ']';
  return *this;
}

}  // namespace onnxprobe
