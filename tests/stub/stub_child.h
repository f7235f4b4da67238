// Runs test code against the stub libcudart.so.13 in a child process, as an application would
// load it (dlopen), configured for a backend nobody listens on; the child's stderr is captured.
#pragma once

#include <functional>
#include <string>

namespace gvirtus::testing {

struct ChildResult {
  int exit_code = -1;
  std::string err;  // everything the child wrote to stderr
};

// Runs `body` in the child with the stub loaded; `body` returns the child's exit code.
ChildResult run_with_stub(const std::function<int(void* stub)>& body);

}  // namespace gvirtus::testing
