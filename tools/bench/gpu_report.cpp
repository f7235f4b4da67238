#include "gpu_report.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "json_out.h"

namespace gvirtus::bench {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

// The number at a path of object members, or NaN when any step is missing (an older or failed
// gpu_workloads output must not stop the report).
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

bool all_scalars(const JsonValue& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_array() || v[i].is_object()) return false;
  }
  return true;
}

// Writes a parsed value back out; flat objects stay on one line, like the other modes' points.
void echo(JsonWriter& out, const JsonValue& v) {
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
      for (size_t i = 0; i < v.size(); ++i) echo(out, v[i]);
      out.end_array();
      break;
    case JsonValue::Kind::kObject:
      out.begin_object(all_scalars(v) ? JsonWriter::kInline : JsonWriter::kIndented);
      for (size_t i = 0; i < v.size(); ++i) {
        out.key(v.key(i));
        echo(out, v[i]);
      }
      out.end_object();
      break;
  }
}

struct Ratio {
  const char* name;
  const char* section;
  const char* field;
};
constexpr Ratio kRatios[] = {
    {"saxpy_host_ms", "saxpy", "host_ms"},
    {"saxpy_kernel_ms", "saxpy", "kernel_ms"},
    {"matrixMul_host_ms", "matrixMul", "host_ms"},
    {"matrixMul_kernel_ms", "matrixMul", "kernel_ms"},
    {"launches_per_s", "launch", "launches_per_s"},
};

double ratio(double remote, double native) {
  return native > 0 ? remote / native : kMissing;
}

// The memcpy point of `remote` that matches `point` of the native run, or nullptr.
const JsonValue* same_memcpy_point(const JsonValue& remote, const JsonValue& point) {
  const JsonValue* points = remote.find("memcpy");
  if (points == nullptr || !points->is_array()) return nullptr;
  for (size_t i = 0; i < points->size(); ++i) {
    const JsonValue& p = (*points)[i];
    if (p.find("bytes") != nullptr && number_at(p, {"bytes"}) == number_at(point, {"bytes"}) &&
        string_at(p, "direction") == string_at(point, "direction") &&
        string_at(p, "memory") == string_at(point, "memory")) {
      return &p;
    }
  }
  return nullptr;
}

void write_ratios(JsonWriter& out, const JsonValue& native, const JsonValue& remote) {
  out.begin_object();
  for (const Ratio& r : kRatios) {
    out.key(r.name).value(
        ratio(number_at(remote, {r.section, r.field}), number_at(native, {r.section, r.field})));
  }
  out.key("memcpy_GBps").begin_array();
  if (const JsonValue* points = native.find("memcpy"); points != nullptr && points->is_array()) {
    for (size_t i = 0; i < points->size(); ++i) {
      const JsonValue& n = (*points)[i];
      if (n.find("bytes") == nullptr) continue;
      const JsonValue* m = same_memcpy_point(remote, n);
      out.begin_object(JsonWriter::kInline);
      out.key("bytes");
      echo(out, *n.find("bytes"));
      out.key("direction").value(string_at(n, "direction"));
      out.key("memory").value(string_at(n, "memory"));
      out.key("ratio").value(m ? ratio(number_at(*m, {"GBps"}), number_at(n, {"GBps"})) : kMissing);
      out.end_object();
    }
  }
  out.end_array();
  out.end_object();
}

}  // namespace

void print_gpu_summary(std::ostream& out, const GpuResults& r) {
  char line[256];
  std::snprintf(line, sizeof line, "gvirtus-bench gpu on %s: %.1f s%s\n",
                string_at(r.native, "device").c_str(), r.seconds, r.quick ? " (quick)" : "");
  out << line;
  std::snprintf(line, sizeof line, "%-22s %12s", "figure", "native");
  out << line;
  for (const auto& [name, value] : r.remote) {
    std::snprintf(line, sizeof line, " %12s %7s", name.c_str(), "ratio");
    out << line;
  }
  out << "\n";
  for (const Ratio& ratio_row : kRatios) {
    const double native = number_at(r.native, {ratio_row.section, ratio_row.field});
    std::snprintf(line, sizeof line, "%-22s %12.3f", ratio_row.name, native);
    out << line;
    for (const auto& [name, value] : r.remote) {
      const double remote = number_at(value, {ratio_row.section, ratio_row.field});
      std::snprintf(line, sizeof line, " %12.3f %6.2fx", remote, ratio(remote, native));
      out << line;
    }
    out << "\n";
  }
  for (const auto& [name, why] : r.failed) out << name << ": not measured: " << why << "\n";
}

std::string gpu_json(const GpuResults& r) {
  JsonWriter out;
  out.begin_object();
  out.key("mode").value("gpu");
  write_run_info(out, r.run);
  out.key("quick").value(r.quick);
  out.key("seconds").value(r.seconds);
  out.key("device").value(string_at(r.native, "device"));
  out.key("native");
  echo(out, r.native);
  out.key("remote").begin_object();
  for (const auto& [name, value] : r.remote) {
    out.key(name);
    echo(out, value);
  }
  for (const auto& [name, why] : r.failed) {
    out.key(name).begin_object(JsonWriter::kInline).key("error").value(why).end_object();
  }
  out.end_object();
  out.key("ratios").begin_object();
  for (const auto& [name, value] : r.remote) {
    out.key(name);
    write_ratios(out, r.native, value);
  }
  out.end_object();
  out.end_object();
  return out.str();
}

}  // namespace gvirtus::bench
