#include "comm_report.h"

#include <cstdio>

#include "bench_args.h"
#include "json_out.h"

namespace gvirtus::bench {
namespace {

// The baseline point for the same size; the runs measure the same size list, so indices match
// unless a baseline is missing.
const Point* same_size(const std::vector<Point>& points, size_t index, size_t bytes) {
  if (index < points.size() && points[index].bytes == bytes) return &points[index];
  return nullptr;
}

// At least three significant digits, so that 0.012 MB/s at 1 B and 42000 us at 64 MiB both read.
std::string number(double value) {
  char text[32];
  const char* format = value < 10 ? "%.3f" : value < 100 ? "%.2f" : value < 1000 ? "%.1f" : "%.0f";
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string ratio(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

void write_points(JsonWriter& out, const std::vector<Point>& points) {
  out.begin_array();
  for (const Point& p : points) {
    out.begin_object(JsonWriter::kInline);
    out.key("bytes").value(static_cast<uint64_t>(p.bytes));
    out.key("rtt_us").value(p.rtt_us);
    out.key("MBps").value(p.mbps);
    out.key("rtt_min_us").value(p.rtt_min_us);
    out.key("MBps_max").value(p.mbps_max);
    out.key("iterations").value(p.round_trips);
    out.key("stream_messages").value(p.stream_messages);
    out.key("stream_seconds").value(p.stream_seconds);
    out.end_object();
  }
  out.end_array();
}

}  // namespace

void print_comm_table(std::ostream& out, const CommResults& r) {
  const std::string& t = r.transport;
  char line[256];
  out << "gvirtus-bench comm: transport " << t << ", commit " << r.run.commit << ", " << r.run.date
      << ", " << r.run.cpus << " CPUs (" << r.run.cpu_model << ")\n"
      << "rtt = median ping-pong round trip (us); MB/s = one-way streaming bandwidth (1e6 B/s);\n"
      << "ratios are " << t << " / raw_tcp: rtt > 1 and MB/s < 1 mean " << t
      << " costs more than bare sockets.\n\n";
  std::snprintf(line, sizeof line, "%10s %10s %10s %10s %7s | %9s %9s %9s %7s\n", "size",
                (t + " rtt").c_str(), "raw rtt", "unix rtt", "ratio", (t + " MB/s").c_str(),
                "raw MB/s", "unix MB/s", "ratio");
  out << line;
  for (size_t i = 0; i < r.points.size(); ++i) {
    const Point& p = r.points[i];
    const Point* raw = same_size(r.raw_tcp, i, p.bytes);
    const Point* unix_socket = same_size(r.unix_socket, i, p.bytes);
    std::snprintf(line, sizeof line, "%10s %10s %10s %10s %7s | %9s %9s %9s %7s\n",
                  format_bytes(p.bytes).c_str(), number(p.rtt_us).c_str(),
                  raw ? number(raw->rtt_us).c_str() : "-",
                  unix_socket ? number(unix_socket->rtt_us).c_str() : "-",
                  raw ? ratio(p.rtt_us / raw->rtt_us).c_str() : "-", number(p.mbps).c_str(),
                  raw ? number(raw->mbps).c_str() : "-",
                  unix_socket ? number(unix_socket->mbps).c_str() : "-",
                  raw ? ratio(p.mbps / raw->mbps).c_str() : "-");
    out << line;
  }
  std::snprintf(line, sizeof line, "\nmemcpy (one core, %s): %.0f MB/s.   run took %.1f s\n",
                format_bytes(r.memcpy_bytes).c_str(), r.memcpy_mbps, r.seconds);
  out << line;
}

std::string comm_json(const CommResults& r) {
  JsonWriter out;
  out.begin_object();
  out.key("mode").value("comm");
  out.key("transport").value(r.transport);
  write_run_info(out, r.run);
  out.key("quick").value(r.quick);
  out.key("seconds").value(r.seconds);
  out.key("points");
  write_points(out, r.points);
  out.key("baselines").begin_object();
  out.key("raw_tcp").begin_object().key("points");
  write_points(out, r.raw_tcp);
  out.end_object();
  out.key("unix_socket").begin_object().key("points");
  write_points(out, r.unix_socket);
  out.end_object();
  out.key("memcpy_MBps").value(r.memcpy_mbps);
  out.key("memcpy_bytes").value(static_cast<uint64_t>(r.memcpy_bytes));
  out.end_object();
  out.end_object();
  return out.str();
}

}  // namespace gvirtus::bench
