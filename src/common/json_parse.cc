#include <cmath>
#include <cstdlib>

#include "onnxprobe/common/json.h"
#include "onnxprobe/common/json_value.h"

namespace onnxprobe {

const JsonValue* JsonValue::Find(const std::string& key) const {
  if (type_ != Type::kObject) return nullptr;
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->second;
}

class JsonParser {
 public:
  JsonParser(const std::string& s, const std::string& what) : s_(s), what_(what) {}

  Expected<JsonValue> ParseDocument() {
    JsonValue v;
    OP_RETURN_IF_ERROR(Parse(&v, 0));
    SkipSpace();
    if (i_ != s_.size()) return Error("unexpected trailing characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status Error(const std::string& m) const {
    return Corrupt(what_ + ": invalid JSON: " + m + " at byte " + std::to_string(i_));
  }
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool Literal(const char* lit) {
    size_t n = std::char_traits<char>::length(lit);
    if (s_.compare(i_, n, lit) != 0) return false;
    i_ += n;
    return true;
  }

  Status Parse(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return Error("nesting deeper than 64");
    SkipSpace();
    if (i_ >= s_.size()) return Error("unexpected end");
    char c = s_[i_];
    if (c == '{') return ParseObject(v, depth);
    if (c == '[') return ParseArray(v, depth);
    if (c == '"') {
      v->type_ = JsonValue::Type::kString;
      return ParseString(&v->string_);
    }
    if (Literal("true")) {
      v->type_ = JsonValue::Type::kBool;
      v->bool_ = true;
      return Status::Ok();
    }
    if (Literal("false")) {
      v->type_ = JsonValue::Type::kBool;
      return Status::Ok();
    }
    if (Literal("null")) return Status::Ok();
    return ParseNumber(v);
  }

  Status ParseNumber(JsonValue* v) {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-')) {
      ++i_;
    }
    std::string num = s_.substr(start, i_ - start);
    if (num.empty() || num == "-") return Error("expected a value");
    char* end = nullptr;
    double d = std::strtod(num.c_str(), &end);
    if (*end != '\0') return Error("bad number '" + num + "'");
    v->type_ = JsonValue::Type::kNumber;
    v->number_ = d;
    return Status::Ok();
  }

  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xc0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xe0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  Status Hex4(uint32_t* out) {
    if (i_ + 4 > s_.size()) return Error("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= uint32_t(h - 'A' + 10);
      else
        return Error("bad \\u escape");
    }
    *out = v;
    return Status::Ok();
  }

  Status ParseString(std::string* out) {
    ++i_;  // opening quote
    while (true) {
      if (i_ >= s_.size()) return Error("unterminated string");
      char c = s_[i_++];
      if (c == '"') return Status::Ok();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (i_ >= s_.size()) return Error("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp;
          OP_RETURN_IF_ERROR(Hex4(&cp));
          if (cp >= 0xd800 && cp < 0xdc00 && s_.compare(i_, 2, "\\u") == 0) {
            i_ += 2;
            uint32_t lo;
            OP_RETURN_IF_ERROR(Hex4(&lo));
            if (lo < 0xdc00 || lo > 0xdfff) return Error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Error(std::string("bad escape \\") + e);
      }
    }
  }

  Status ParseArray(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kArray;
    ++i_;
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return Status::Ok();
    }
    while (true) {
      v->array_.emplace_back();
      OP_RETURN_IF_ERROR(Parse(&v->array_.back(), depth + 1));
      SkipSpace();
      if (i_ >= s_.size()) return Error("unterminated array");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] == ']') {
        ++i_;
        return Status::Ok();
      }
      return Error("expected ',' or ']'");
    }
  }

  Status ParseObject(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kObject;
    ++i_;
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '"') return Error("expected a member name");
      std::string key;
      OP_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != ':') return Error("expected ':'");
      ++i_;
      JsonValue member;
      OP_RETURN_IF_ERROR(Parse(&member, depth + 1));
      v->object_[key] = std::move(member);
      SkipSpace();
      if (i_ >= s_.size()) return Error("unterminated object");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] == '}') {
        ++i_;
        return Status::Ok();
      }
      return Error("expected ',' or '}'");
    }
  }

  const std::string& s_;
  const std::string& what_;
  size_t i_ = 0;
};

Expected<JsonValue> ParseJson(const std::string& text, const std::string& what) {
  JsonParser p(text, what);
  return p.ParseDocument();
}

void WriteJsonValue(const JsonValue& v, JsonWriter* j) {
  switch (v.type()) {
    case JsonValue::Type::kNull:
      j->Null();
      return;
    case JsonValue::Type::kBool:
      j->Bool(v.as_bool());
      return;
    case JsonValue::Type::kNumber:
      j->Number(v.as_number());
      return;
    case JsonValue::Type::kString:
      j->String(v.as_string());
      return;
    case JsonValue::Type::kArray:
      j->BeginArray();
      for (const auto& x : v.items()) WriteJsonValue(x, j);
      j->EndArray();
      return;
    case JsonValue::Type::kObject:
      j->BeginObject();
      for (const auto& [k, x] : v.members()) {
        j->Key(k);
        WriteJsonValue(x, j);
      }
      j->EndObject();
      return;
  }
}

}  // namespace onnxprobe
