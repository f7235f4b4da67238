// Reading the JSON objects workload programs report (gpu_workloads, the framework workloads) and
// writing them back into a mode's result file.
#pragma once

#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "common/json.h"
#include "json_out.h"

namespace gvirtus::bench {

inline constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

// The number at a path of object members, or NaN when any step is missing (an older or failed
// workload's output must not stop the report).
double number_at(const JsonValue& root, std::initializer_list<std::string_view> path);

// The string member `key`, or "" when it is missing or not a string.
std::string string_at(const JsonValue& root, std::string_view key);

// remote / native, NaN when native is not positive.
double ratio(double remote, double native);

// Writes a parsed value back out; flat objects stay on one line, like the other modes' points.
void write_value(JsonWriter& out, const JsonValue& v);

}  // namespace gvirtus::bench
