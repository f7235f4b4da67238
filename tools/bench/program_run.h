// A workload program run to the end by the whole-stack modes (gpu, frameworks), natively or
// through gvirtus-run: its exit status and what it printed, and the JSON object it reports.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"

namespace gvirtus::bench {

struct ProgramRun {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] a path) and collects its stdout (through a pipe) and stderr (through an
// unlinked file, so that neither stream can block the other). Blocks until the program exits.
ProgramRun run_program(const std::vector<std::string>& argv);

// The JSON object a successful run printed; Error{kFailed} with the program's stderr otherwise.
JsonValue workload_result(const ProgramRun& run, const std::string& what);

// The first line of `text`.
std::string first_line(const std::string& text);

}  // namespace gvirtus::bench
