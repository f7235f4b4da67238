#include "json_values.h"

namespace gvirtus::bench {

double number_at(const JsonValue& root, std::initializer_list<std::string_view> path) {
  const JsonValue* v = &root;
  for (std::string_view key : path) {
    v = v->find(key);
    if (v == nullptr) return kMissing;
  }
  return v->is_number() ? v->as_double() : kMissing;
}

std::string string_at(const JsonValue& root, std::string_view key) {
  const JsonValue* v = root.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

namespace {

bool all_scalars(const JsonValue& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_array() || v[i].is_object()) return false;
  }
  return true;
}

}  // namespace

double ratio(double remote, double native) {
  return native > 0 ? remote / native : kMissing;
}

void write_value(JsonWriter& out, const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull:
      out.null();
      break;
    case JsonValue::Kind::kBool:
      out.value(v.as_bool());
      break;
    case JsonValue::Kind::kNumber:
      if (const auto u = v.as_uint64(); v.is_integer() && u) {
        out.value(*u);
      } else {
        out.value(v.as_double());
      }
      break;
    case JsonValue::Kind::kString:
      out.value(v.as_string());
      break;
    case JsonValue::Kind::kArray:
      out.begin_array();
      for (size_t i = 0; i < v.size(); ++i) write_value(out, v[i]);
      out.end_array();
      break;
    case JsonValue::Kind::kObject:
      out.begin_object(all_scalars(v) ? JsonWriter::kInline : JsonWriter::kIndented);
      for (size_t i = 0; i < v.size(); ++i) {
        out.key(v.key(i));
        write_value(out, v[i]);
      }
      out.end_object();
      break;
  }
}

}  // namespace gvirtus::bench
