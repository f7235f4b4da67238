#include "run_info.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

namespace gvirtus::bench {
namespace {

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string git_commit() {
  if (const char* env = std::getenv("GVIRTUS_COMMIT"); env != nullptr && *env != '\0') return env;
  // Results are usually produced from a checkout; outside one, git fails and we say so.
  FILE* pipe = ::popen("git rev-parse --short HEAD 2>/dev/null", "r");
  if (pipe == nullptr) return "unknown";
  char line[128] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  const int status = ::pclose(pipe);
  const std::string sha = trim(line);
  return got && status == 0 && !sha.empty() ? sha : "unknown";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

RunInfo collect_run_info() {
  RunInfo info;
  info.commit = git_commit();
  info.date = utc_now();
  char host[256] = {};
  info.hostname = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  utsname names{};
  info.kernel = ::uname(&names) == 0 ? std::string(names.sysname) + " " + names.release : "unknown";
  info.cpu_model = cpu_model();
  info.cpus = std::thread::hardware_concurrency();
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  info.usable_cpus = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0
                         ? static_cast<unsigned>(CPU_COUNT(&allowed))
                         : info.cpus;
  return info;
}

void write_run_info(JsonWriter& out, const RunInfo& info) {
  out.key("commit").value(info.commit);
  out.key("date").value(info.date);
  out.key("host").begin_object(JsonWriter::kInline);
  out.key("name").value(info.hostname);
  out.key("kernel").value(info.kernel);
  out.key("cpu").value(info.cpu_model);
  out.key("cpus").value(static_cast<uint64_t>(info.cpus));
  out.key("usable_cpus").value(static_cast<uint64_t>(info.usable_cpus));
  out.end_object();
}

}  // namespace gvirtus::bench
