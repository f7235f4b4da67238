#include "frameworks_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "json_out.h"
#include "json_values.h"

namespace gvirtus::bench {
namespace {

constexpr const char* kFigures[] = {"first_tensor_s", "matmul_ms", "mlp_step_ms",
                                    "resnet18_step_ms"};

}  // namespace

double loss_curve_difference(const JsonValue& native, const JsonValue& remote) {
  const JsonValue* a = native.find("mlp_losses");
  const JsonValue* b = remote.find("mlp_losses");
  if (a == nullptr || b == nullptr || !a->is_array() || !b->is_array() || a->size() != b->size() ||
      a->size() == 0) {
    return kMissing;
  }
  double worst = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    if (!(*a)[i].is_number() || !(*b)[i].is_number()) return kMissing;
    const double n = (*a)[i].as_double(), r = (*b)[i].as_double();
    worst = std::max(worst, std::fabs(r - n) / std::max(std::fabs(n), 1e-6));
  }
  return worst;
}

void print_frameworks_summary(std::ostream& out, const FrameworksResults& r) {
  char line[256];
  std::snprintf(line, sizeof line, "gvirtus-bench frameworks (%s) on %s: %.1f s%s\n",
                string_at(r.native, "framework").c_str(), string_at(r.native, "device").c_str(),
                r.seconds, r.quick ? " (quick)" : "");
  out << line;
  print_columns_header(out, r);
  for (const char* figure : kFigures) {
    const double native = number_at(r.native, {figure});
    if (std::isnan(native)) {
      std::snprintf(line, sizeof line, "%-22s %12s", figure, "-");
    } else {
      std::snprintf(line, sizeof line, "%-22s %12.3f", figure, native);
    }
    out << line;
    for (const auto& [name, value] : r.remote) {
      const double remote = number_at(value, {figure});
      if (std::isnan(remote) || std::isnan(native)) {
        std::snprintf(line, sizeof line, " %12s %7s", "-", "-");  // not measured (no torchvision)
      } else {
        std::snprintf(line, sizeof line, " %12.3f %6.2fx", remote, ratio(remote, native));
      }
      out << line;
    }
    out << "\n";
  }
  std::snprintf(line, sizeof line, "%-22s %12s", "mlp loss, max rel diff", "-");
  out << line;
  for (const auto& [name, value] : r.remote) {
    std::snprintf(line, sizeof line, " %20.2e", loss_curve_difference(r.native, value));
    out << line;
  }
  out << "\n";
  for (const auto& [name, why] : r.failed) out << name << ": not measured: " << why << "\n";
}

std::string frameworks_json(const FrameworksResults& r) {
  JsonWriter out;
  out.begin_object();
  write_runs_head(out, "frameworks", r);
  out.key("framework").value(string_at(r.native, "framework"));
  out.key("device").value(string_at(r.native, "device"));
  write_runs(out, r);
  out.key("ratios").begin_object();
  for (const auto& [name, value] : r.remote) {
    out.key(name).begin_object(JsonWriter::kInline);
    for (const char* figure : kFigures) {
      out.key(figure).value(ratio(number_at(value, {figure}), number_at(r.native, {figure})));
    }
    out.key("mlp_loss_max_rel_diff").value(loss_curve_difference(r.native, value));
    out.end_object();
  }
  out.end_object();
  out.end_object();
  return out.str();
}

}  // namespace gvirtus::bench
