#include "gpu_report.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "json_out.h"
#include "json_values.h"

namespace gvirtus::bench {
namespace {

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
      write_value(out, *n.find("bytes"));
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
  print_columns_header(out, r);
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
  write_runs_head(out, "gpu", r);
  out.key("device").value(string_at(r.native, "device"));
  write_runs(out, r);
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
