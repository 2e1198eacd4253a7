// A small streaming JSON writer (no DOM, no dependency). Non-finite numbers are written as null.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnxprobe {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  // An array written on one line, with whatever it holds (histograms, per-channel rows): a
  // pretty document stays readable without a line per number.
  JsonWriter& BeginFlatArray();
  JsonWriter& EndArray();
  JsonWriter& Key(const std::string& k);
  JsonWriter& String(const std::string& s);
  JsonWriter& Number(double v);
  JsonWriter& Int(int64_t v);
  JsonWriter& UInt(uint64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  JsonWriter& IntArray(const std::vector<int64_t>& v);
  // A complete JSON value from another writer, inserted as is (a trailing newline dropped).
  JsonWriter& Raw(const std::string& json);
  const std::string& str() const { return out_; }

 private:
  void Separate();
  void Newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  size_t flat_depth_ = 0;    // open containers from the outermost flat array inward (0: none)
  bool after_key_ = false;
  bool pretty_;
};

std::string JsonEscape(const std::string& s);

}  // namespace onnxprobe
