#include "plugins/cuda/backend/graph_calls.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/unique_fd.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

// cuGraphInstantiateWithParams (common/driver_wire.h).
void instantiate_with_params(WireReader& in, WireWriter& out, CUresult& result) {
  const auto graph = marshal::get_value<CUgraph>(in);
  CUDA_GRAPH_INSTANTIATE_PARAMS params{};
  params.flags = in.get<uint64_t>();
  params.hUploadStream = marshal::get_value<CUstream>(in);
  in.expect_end();
  result = vet(graph);
  if (result == CUDA_SUCCESS) result = vet(params.hUploadStream);
  if (result == CUDA_SUCCESS && real().cuGraphInstantiateWithParams == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  CUgraphExec executable = nullptr;
  if (result == CUDA_SUCCESS) {
    result = real().cuGraphInstantiateWithParams(&executable, graph, &params);
    if (result == CUDA_SUCCESS) {
      adopt(executable);
      note_instantiated(graph);
    }
  } else {
    params.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  }
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? executable : nullptr);
  out.put<int32_t>(params.result_out);
  marshal::put_value(out, params.hErrNode_out);
}

// The contents of a file the driver wrote, at most kMaxDotBytes; CUDA_ERROR_OPERATING_SYSTEM when
// it cannot be read, or is larger.
CUresult read_written(int fd, std::vector<char>& text) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 0 || static_cast<uint64_t>(st.st_size) > kMaxDotBytes) {
    return CUDA_ERROR_OPERATING_SYSTEM;
  }
  text.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n <= 0) return CUDA_ERROR_OPERATING_SYSTEM;
    got += static_cast<size_t>(n);
  }
  return CUDA_SUCCESS;
}

// cuGraphDebugDotPrint (common/driver_wire.h): into a file only this process can name, removed
// before the reply.
void debug_dot_print(WireReader& in, WireWriter& out, CUresult& result) {
  const auto graph = marshal::get_value<CUgraph>(in);
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  result = vet(graph);
  if (result == CUDA_SUCCESS && real().cuGraphDebugDotPrint == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  std::vector<char> text;
  if (result == CUDA_SUCCESS) {
    const char* tmp = std::getenv("TMPDIR");
    std::string path =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gvirtus-graph-XXXXXX.dot";
    const UniqueFd created(::mkstemps(path.data(), 4));
    if (!created.valid()) {
      result = CUDA_ERROR_OPERATING_SYSTEM;
    } else {
      result = real().cuGraphDebugDotPrint(graph, path.c_str(), flags);
      // Opened again: the driver may have replaced the file rather than written into it.
      const UniqueFd written(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      if (result == CUDA_SUCCESS) {
        result = written.valid() ? read_written(written.get(), text) : CUDA_ERROR_OPERATING_SYSTEM;
      }
      ::unlink(path.c_str());
    }
  }
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) text.clear();
  out.put_blob(text.data(), text.size());
}

}  // namespace

bool run_graph_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuGraphInstantiateWithParams:
      instantiate_with_params(in, out, result);
      return true;
    case Fn::cuGraphDebugDotPrint:
      debug_dot_print(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
