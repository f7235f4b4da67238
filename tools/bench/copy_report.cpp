#include "copy_report.h"

#include <cmath>
#include <cstdio>

#include "bench_args.h"
#include "common/error.h"
#include "common/json.h"
#include "json_out.h"
#include "json_values.h"

namespace gvirtus::bench {
namespace {

double at_size(const Bandwidths& bandwidths, uint64_t bytes) {
  const auto it = bandwidths.find(bytes);
  return it == bandwidths.end() ? kMissing : it->second;
}

// The native run's point for the same copy, NaN when there is none.
double native_mbps(const CopyResults& results, const CopyPoint& p) {
  if (!results.native) return kMissing;
  for (const CopyPoint& n : *results.native) {
    if (n.direction == p.direction && n.memory == p.memory && n.bytes == p.bytes) return n.mbps;
  }
  return kMissing;
}

// Opens the point's object and writes its members; the caller may add more, then closes it.
void write_point(JsonWriter& out, const CopyPoint& p) {
  out.begin_object(JsonWriter::kInline)
      .key("direction")
      .value(p.direction)
      .key("memory")
      .value(p.memory)
      .key("bytes")
      .value(p.bytes)
      .key("mbps")
      .value(p.mbps)
      .key("mbps_max")
      .value(p.mbps_max)
      .key("copies")
      .value(p.copies);
}

void write_bandwidths(JsonWriter& out, const Bandwidths& bandwidths) {
  out.begin_array();
  for (const auto& [bytes, mbps] : bandwidths) {
    out.begin_object(JsonWriter::kInline).key("bytes").value(bytes).key("mbps").value(mbps);
    out.end_object();
  }
  out.end_array();
}

std::string cell(double value, const char* format) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

std::vector<CopyPoint> parse_copy_points(const std::string& workload_output) {
  const JsonValue root = parse_json(workload_output, "the copy workload's output");
  const JsonValue* points = root.find("points");
  if (points == nullptr || !points->is_array() || points->size() == 0) {
    raise(ErrorKind::kInvalidInput, "the copy workload reported no points");
  }
  std::vector<CopyPoint> out;
  for (size_t i = 0; i < points->size(); ++i) {
    const JsonValue& p = (*points)[i];
    const auto bytes = p.find("bytes") != nullptr ? p.find("bytes")->as_uint64() : std::nullopt;
    const auto copies = p.find("copies") != nullptr ? p.find("copies")->as_uint64() : std::nullopt;
    if (!bytes || !copies || string_at(p, "direction").empty() || string_at(p, "memory").empty()) {
      raise(ErrorKind::kInvalidInput, "the copy workload's point " + std::to_string(i) +
                                          " lacks its direction, memory, bytes or copies");
    }
    out.push_back(CopyPoint{string_at(p, "direction"), string_at(p, "memory"), *bytes,
                            number_at(p, {"mbps"}), number_at(p, {"mbps_max"}), *copies});
  }
  return out;
}

void print_copy_summary(std::ostream& out, const CopyResults& results) {
  out << "cudaMemcpy bandwidth (MB/s = 1e6 B/s, median of 3 batches; through gvirtus and raw: "
      << "median of " << results.rounds << " interleaved round" << (results.rounds == 1 ? "" : "s")
      << "), "
      << (results.gpu ? "on the GPU"
                      : "backend with the accepting device in " + results.accepting +
                            " mode (no GPU: not GPU evidence)")
      << "\n";
  if (!results.native) out << "native: " << results.native_error << "\n";
  for (const CopyTransport& t : results.transports) {
    out << "\nover " << t.name << ":\n";
    if (!t.error.empty()) {
      out << "  failed: " << t.error << "\n";
      continue;
    }
    char line[256];
    std::snprintf(line, sizeof line, "%10s %4s %-9s %10s %10s %6s %10s %7s %10s %7s\n", "size",
                  "dir", "memory", "MB/s", "raw MB/s", "/raw", "memcpy", "/memcpy", "native",
                  "/native");
    out << line;
    for (const CopyPoint& p : t.points) {
      const double raw = at_size(t.raw, p.bytes);
      const double memcpy = at_size(results.memcpy, p.bytes);
      const double native = native_mbps(results, p);
      std::snprintf(line, sizeof line, "%10s %4s %-9s %10.0f %10s %6s %10s %7s %10s %7s\n",
                    format_bytes(p.bytes).c_str(), p.direction.c_str(), p.memory.c_str(), p.mbps,
                    cell(raw, "%.0f").c_str(), cell(ratio(p.mbps, raw), "%.2f").c_str(),
                    cell(memcpy, "%.0f").c_str(), cell(ratio(p.mbps, memcpy), "%.2f").c_str(),
                    cell(native, "%.0f").c_str(), cell(ratio(p.mbps, native), "%.2f").c_str());
      out << line;
    }
  }
}

std::string copy_json(const CopyResults& results) {
  JsonWriter out;
  out.begin_object().key("mode").value("copy");
  write_run_info(out, results.run);
  out.key("quick").value(results.quick).key("seconds").value(results.seconds);
  out.key("rounds").value(results.rounds);
  out.key("device").value(results.gpu ? "gpu" : "accepting device");
  out.key("gpu_evidence").value(results.gpu);
  if (!results.gpu) out.key("accepting").value(results.accepting);
  out.key("memcpy_mbps");
  write_bandwidths(out, results.memcpy);
  out.key("native");
  if (results.native) {
    out.begin_array();
    for (const CopyPoint& p : *results.native) {
      write_point(out, p);
      out.end_object();
    }
    out.end_array();
  } else {
    out.begin_object(JsonWriter::kInline).key("error").value(results.native_error).end_object();
  }
  out.key("transports").begin_object();
  for (const CopyTransport& t : results.transports) {
    out.key(t.name).begin_object();
    if (!t.error.empty()) {
      out.key("error").value(t.error).end_object();
      continue;
    }
    out.key("raw_mbps");
    write_bandwidths(out, t.raw);
    out.key("points").begin_array();
    for (const CopyPoint& p : t.points) {
      write_point(out, p);
      out.key("raw_ratio").value(ratio(p.mbps, at_size(t.raw, p.bytes)));
      out.key("memcpy_ratio").value(ratio(p.mbps, at_size(results.memcpy, p.bytes)));
      out.key("native_ratio").value(ratio(p.mbps, native_mbps(results, p)));
      out.end_object();
    }
    out.end_array().end_object();
  }
  out.end_object().end_object();
  return out.str();
}

}  // namespace gvirtus::bench
