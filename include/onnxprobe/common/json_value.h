// A small JSON reader for manifests and mapping files. Input is untrusted: depth and size are
// bounded and every error names the byte offset.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }
  const std::vector<JsonValue>& items() const { return array_; }
  const std::map<std::string, JsonValue>& members() const { return object_; }
  // Null when absent or not an object.
  const JsonValue* Find(const std::string& key) const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue> object_;
};

// Parses `text`; `what` names the source in errors ("dump/manifest.json: ... at byte 17").
Expected<JsonValue> ParseJson(const std::string& text, const std::string& what);

// Writes `v` (objects' members in key order) into `j`: a parsed document written again.
void WriteJsonValue(const JsonValue& v, class JsonWriter* j);

}  // namespace onnxprobe
