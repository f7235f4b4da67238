// Graph copies of the program's own (pageable) memory, which CUDA reads and writes each time the
// graph runs, when the copy runs (as NVIDIA's cuda-samples simpleCudaGraphs, jacobiCudaGraphs,
// conjugateGradientCudaGraphs and graphMemoryNodes do):
//   - copy nodes to and from pageable memory, the bytes read at each launch (the host changes
//     them between launches) and written back at each launch;
//   - a pitched copy node back into a wider host buffer leaves the gaps between its rows alone;
//   - the node is a copy node to the program (its type, its parameters), in the graph and in a
//     clone of it; new parameters in the executable graph and in the graph take effect;
//   - copies captured from a stream, after a host function that writes the source in stream
//     order: the copy reads what the function wrote, at each launch; one node each, as natively;
//   - a 2D copy back captured: its rows land, the gaps between them stay;
//   - copies captured on a stream that joined the capture (it waited for an event recorded in
//     it: fork and join) are staged too, read and written at each launch;
//   - 3D copies of pitched pageable memory captured: one node each, as natively, their slices
//     read and written at each launch, the gaps between rows kept;
//   - copies to and from a __device__ variable captured (cudaMemcpyToSymbolAsync and
//     FromSymbolAsync): staged like any copy of pageable memory;
//   - copy nodes between pageable memory (both sides the program's): they copy when the graph
//     runs, after the nodes before them, with new parameters in the graph, in its clone and in
//     the executable graph, and in an executable graph updated from the graph; captured copies
//     between pageable memory (1D, 2D, 3D) are one node each, copying at each launch, the gaps
//     between rows kept.
// Every check is about copies and memsets, so a device that runs no kernels (the simulated one)
// passes them too; without a device the program checks nothing.
#include <algorithm>
#include <vector>

#include "check.h"

__device__ int symbol_words[256];

namespace {

constexpr size_t kWords = 1 << 18;  // 1 MiB of ints
constexpr size_t kBytes = kWords * sizeof(int);

bool all_equal(const std::vector<int>& a, const std::vector<int>& b) {
  return a == b;
}

void fill(std::vector<int>& v, int seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i * 7 + seed);
}

void CUDART_CB write_source(void* data) {
  auto* source = static_cast<std::vector<int>*>(data);
  for (int& word : *source) word += 1;
}

void CUDART_CB bump_bytes(void* data) {
  for (unsigned char& byte : *static_cast<std::vector<unsigned char>*>(data)) byte += 1;
}

cudaMemcpy3DParms linear(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), bytes, bytes, 1);
  p.dstPtr = make_cudaPitchedPtr(dst, bytes, bytes, 1);
  p.extent = make_cudaExtent(bytes, 1, 1);
  p.kind = kind;
  return p;
}

}  // namespace

int main() {
  int* device_a = nullptr;
  int* device_b = nullptr;
  cudaStream_t stream = nullptr;
  const bool working = OK(cudaMalloc(&device_a, kBytes)) && OK(cudaMalloc(&device_b, kBytes)) &&
                       OK(cudaStreamCreate(&stream));
  if (!working) return 0;

  std::vector<int> source(kWords), back(kWords), expected(kWords);

  // Up, across, back down: three copy nodes, two of them of pageable memory.
  cudaGraph_t graph = nullptr;
  SHOW(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t up = nullptr, across = nullptr, down = nullptr;
  const cudaMemcpy3DParms up_params =
      linear(device_a, source.data(), kBytes, cudaMemcpyHostToDevice);
  SHOW(cudaGraphAddMemcpyNode(&up, graph, nullptr, 0, &up_params));
  SHOW(cudaGraphAddMemcpyNode1D(&across, graph, &up, 1, device_b, device_a, kBytes,
                                cudaMemcpyDeviceToDevice));
  SHOW(cudaGraphAddMemcpyNode1D(&down, graph, &across, 1, back.data(), device_b, kBytes,
                                cudaMemcpyDefault));
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  SHOW(cudaGraphNodeGetType(up, &type));
  EXPECT(type == cudaGraphNodeTypeMemcpy);
  SHOW(cudaGraphNodeGetType(down, &type));
  EXPECT(type == cudaGraphNodeTypeMemcpy);
  cudaMemcpy3DParms read_back = {};
  SHOW(cudaGraphMemcpyNodeGetParams(up, &read_back));
  EXPECT(read_back.srcPtr.ptr == source.data() && read_back.dstPtr.ptr == device_a &&
         read_back.extent.width == kBytes && read_back.kind == cudaMemcpyHostToDevice);
  size_t nodes = 0;
  SHOW(cudaGraphGetNodes(graph, nullptr, &nodes));
  std::printf("nodes: %zu\n", nodes);

  cudaGraphExec_t exec = nullptr;
  SHOW(cudaGraphInstantiate(&exec, graph, 0));
  bool each_launch = true;
  for (int launch = 0; launch < 3; ++launch) {
    fill(source, launch * 1000);  // new bytes before each launch: read when the copy runs
    std::fill(back.begin(), back.end(), -1);
    SHOW(cudaGraphLaunch(exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    each_launch = each_launch && all_equal(back, source);
  }
  EXPECT(each_launch);

  // A clone runs the same copies, and its nodes are copy nodes too.
  cudaGraph_t clone = nullptr;
  SHOW(cudaGraphClone(&clone, graph));
  cudaGraphNode_t cloned_down = nullptr;
  SHOW(cudaGraphNodeFindInClone(&cloned_down, down, clone));
  SHOW(cudaGraphNodeGetType(cloned_down, &type));
  EXPECT(type == cudaGraphNodeTypeMemcpy);
  cudaGraphExec_t clone_exec = nullptr;
  SHOW(cudaGraphInstantiate(&clone_exec, clone, 0));
  fill(source, 42);
  std::fill(back.begin(), back.end(), -1);
  SHOW(cudaGraphLaunch(clone_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT(all_equal(back, source));

  // New parameters in the executable graph: the copy back lands in another buffer. In the
  // direction the node was given (cudaMemcpyDefault): an executable graph's new parameters may
  // not change a copy node's memory types.
  std::vector<int> other(kWords, -1);
  SHOW(cudaGraphExecMemcpyNodeSetParams1D(exec, down, other.data(), device_b, kBytes,
                                          cudaMemcpyDefault));
  fill(source, 7);
  SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT(all_equal(other, source));

  // New parameters in the graph, for the next instantiation: half the bytes into a third buffer.
  std::vector<int> half(kWords, -1);
  SHOW(cudaGraphMemcpyNodeSetParams1D(down, half.data(), device_b, kBytes / 2,
                                      cudaMemcpyDeviceToHost));
  SHOW(cudaGraphMemcpyNodeGetParams(down, &read_back));
  EXPECT(read_back.dstPtr.ptr == half.data() && read_back.extent.width == kBytes / 2);
  cudaGraphExec_t exec_half = nullptr;
  SHOW(cudaGraphInstantiate(&exec_half, graph, 0));
  fill(source, 9);
  SHOW(cudaGraphLaunch(exec_half, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT(std::equal(half.begin(), half.begin() + kWords / 2, source.begin()) &&
         half[kWords / 2] == -1);

  // A pitched copy back into a wider buffer: 64 rows of 256 bytes, 512 bytes apart.
  constexpr size_t kRow = 256, kPitch = 512, kRows = 64;
  std::vector<unsigned char> wide(kPitch * kRows, 0xee);
  cudaGraph_t pitched = nullptr;
  SHOW(cudaGraphCreate(&pitched, 0));
  cudaMemcpy3DParms rows = {};
  rows.srcPtr = make_cudaPitchedPtr(device_a, kRow, kRow, kRows);
  rows.dstPtr = make_cudaPitchedPtr(wide.data(), kPitch, kRow, kRows);
  rows.extent = make_cudaExtent(kRow, kRows, 1);
  rows.kind = cudaMemcpyDeviceToHost;
  cudaGraphNode_t rows_node = nullptr;
  SHOW(cudaGraphAddMemcpyNode(&rows_node, pitched, nullptr, 0, &rows));
  cudaGraphExec_t pitched_exec = nullptr;
  SHOW(cudaGraphInstantiate(&pitched_exec, pitched, 0));
  SHOW(cudaMemset(device_a, 0x5a, kRow * kRows));
  SHOW(cudaGraphLaunch(pitched_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  bool rows_right = true, gaps_kept = true;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t x = 0; x < kPitch; ++x) {
      const unsigned char byte = wide[r * kPitch + x];
      if (x < kRow) rows_right = rows_right && byte == 0x5a;
      if (x >= kRow) gaps_kept = gaps_kept && byte == 0xee;
    }
  }
  EXPECT(rows_right);
  EXPECT(gaps_kept);

  // Captured: a host function writes the source, the copy up reads it, a memset changes the
  // first word on the device, the copy down brings it back - at each launch.
  cudaGraph_t captured = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  SHOW(cudaLaunchHostFunc(stream, write_source, &source));
  SHOW(cudaMemcpyAsync(device_a, source.data(), kBytes, cudaMemcpyDefault, stream));
  SHOW(cudaMemsetAsync(device_a, 0, sizeof(int), stream));
  SHOW(cudaMemcpyAsync(back.data(), device_a, kBytes, cudaMemcpyDeviceToHost, stream));
  SHOW(cudaStreamEndCapture(stream, &captured));
  size_t captured_nodes = 0;
  SHOW(cudaGraphGetNodes(captured, nullptr, &captured_nodes));
  EXPECT(captured_nodes == 4);  // one per captured operation
  cudaGraphExec_t captured_exec = nullptr;
  SHOW(cudaGraphInstantiate(&captured_exec, captured, 0));
  fill(source, 100);
  bool captured_right = true;
  for (int launch = 0; launch < 3; ++launch) {
    std::fill(back.begin(), back.end(), -1);
    SHOW(cudaGraphLaunch(captured_exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    expected = source;  // the host function ran: one more than before the launch
    expected[0] = 0;
    captured_right =
        captured_right && all_equal(back, expected) && source[1] == 7 + 100 + launch + 1;
  }
  EXPECT(captured_right);

  // A 2D copy back into a wider buffer, captured: its rows land at each launch, the gaps stay.
  std::vector<unsigned char> wide_again(kPitch * kRows, 0xee);
  cudaGraph_t captured_rows = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  SHOW(cudaMemsetAsync(device_a, 0x33, kRow * kRows, stream));
  SHOW(cudaMemcpy2DAsync(wide_again.data(), kPitch, device_a, kRow, kRow, kRows,
                         cudaMemcpyDeviceToHost, stream));
  SHOW(cudaStreamEndCapture(stream, &captured_rows));
  cudaGraphExec_t rows_exec = nullptr;
  SHOW(cudaGraphInstantiate(&rows_exec, captured_rows, 0));
  SHOW(cudaGraphLaunch(rows_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  bool captured_rows_right = true;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t x = 0; x < kPitch; ++x) {
      captured_rows_right =
          captured_rows_right && wide_again[r * kPitch + x] == (x < kRow ? 0x33 : 0xee);
    }
  }
  EXPECT(captured_rows_right);
  SHOW(cudaGraphExecDestroy(rows_exec));
  SHOW(cudaGraphDestroy(captured_rows));

  // Fork and join: a second stream joins the capture by waiting for an event recorded in it, and
  // the copies of pageable memory it takes are staged as the capturing stream's own.
  cudaStream_t side = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  SHOW(cudaStreamCreate(&side));
  SHOW(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  SHOW(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
  std::vector<int> side_source(kWords), side_back(kWords);
  cudaGraph_t fork_join = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  SHOW(cudaEventRecord(forked, stream));
  SHOW(cudaStreamWaitEvent(side, forked, 0));
  cudaStreamCaptureStatus side_status = cudaStreamCaptureStatusNone;
  SHOW(cudaStreamIsCapturing(side, &side_status));
  EXPECT(side_status == cudaStreamCaptureStatusActive);
  SHOW(cudaMemcpyAsync(device_b, side_source.data(), kBytes, cudaMemcpyHostToDevice, side));
  SHOW(cudaMemcpyAsync(side_back.data(), device_b, kBytes, cudaMemcpyDeviceToHost, side));
  SHOW(cudaEventRecord(joined, side));
  SHOW(cudaStreamWaitEvent(stream, joined, 0));
  SHOW(cudaStreamEndCapture(stream, &fork_join));
  SHOW(cudaStreamIsCapturing(side, &side_status));
  EXPECT(side_status == cudaStreamCaptureStatusNone);  // it left with the capture
  cudaGraphExec_t fork_join_exec = nullptr;
  SHOW(cudaGraphInstantiate(&fork_join_exec, fork_join, 0));
  bool fork_join_right = fork_join_exec != nullptr;
  for (int launch = 0; launch < 3 && fork_join_right; ++launch) {
    fill(side_source, 1000 + launch);
    std::fill(side_back.begin(), side_back.end(), -1);
    SHOW(cudaGraphLaunch(fork_join_exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    fork_join_right = all_equal(side_back, side_source);
  }
  EXPECT(fork_join_right);
  SHOW(cudaGraphExecDestroy(fork_join_exec));
  SHOW(cudaGraphDestroy(fork_join));
  SHOW(cudaEventDestroy(joined));
  SHOW(cudaEventDestroy(forked));
  SHOW(cudaStreamDestroy(side));

  // 3D copies of pitched pageable memory, captured: up into a pitched device volume and back
  // into another pitched host volume whose gaps stay.
  constexpr size_t kRowBytes = 200, kHostPitch = 256, kHeight = 4, kDepth = 3;
  std::vector<unsigned char> volume(kHostPitch * kHeight * kDepth),
      volume_back(kHostPitch * kHeight * kDepth);
  cudaPitchedPtr device_volume{};
  SHOW(cudaMalloc3D(&device_volume, make_cudaExtent(kRowBytes, kHeight, kDepth)));
  cudaMemcpy3DParms volume_up = {};
  volume_up.srcPtr = make_cudaPitchedPtr(volume.data(), kHostPitch, kRowBytes, kHeight);
  volume_up.dstPtr = device_volume;
  volume_up.extent = make_cudaExtent(kRowBytes, kHeight, kDepth);
  volume_up.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3DParms volume_down = volume_up;
  volume_down.srcPtr = device_volume;
  volume_down.dstPtr = make_cudaPitchedPtr(volume_back.data(), kHostPitch, kRowBytes, kHeight);
  volume_down.kind = cudaMemcpyDeviceToHost;
  cudaGraph_t volumes = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  SHOW(cudaMemcpy3DAsync(&volume_up, stream));
  SHOW(cudaMemcpy3DAsync(&volume_down, stream));
  SHOW(cudaStreamEndCapture(stream, &volumes));
  size_t volume_nodes = 0;
  SHOW(cudaGraphGetNodes(volumes, nullptr, &volume_nodes));
  EXPECT(volume_nodes == 2);  // one per captured copy, as natively
  cudaGraphExec_t volumes_exec = nullptr;
  SHOW(cudaGraphInstantiate(&volumes_exec, volumes, 0));
  bool volumes_right = volumes_exec != nullptr;
  for (int launch = 0; launch < 2 && volumes_right; ++launch) {
    for (size_t i = 0; i < volume.size(); ++i) volume[i] = static_cast<unsigned char>(i + launch);
    std::fill(volume_back.begin(), volume_back.end(), 0xee);
    SHOW(cudaGraphLaunch(volumes_exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    for (size_t i = 0; i < volume.size(); ++i) {
      const bool in_row = i % kHostPitch < kRowBytes;
      volumes_right = volumes_right && volume_back[i] == (in_row ? volume[i] : 0xee);
    }
  }
  EXPECT(volumes_right);
  SHOW(cudaGraphExecDestroy(volumes_exec));
  SHOW(cudaGraphDestroy(volumes));
  SHOW(cudaFree(device_volume.ptr));

  // Copies to and from a __device__ variable, captured: the variable's bytes come from the
  // program's memory and go back to it at each launch.
  std::vector<int> to_symbol(256), from_symbol(256);
  cudaGraph_t symbols = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  SHOW(cudaMemcpyToSymbolAsync(symbol_words, to_symbol.data(), sizeof(int) * 256, 0,
                               cudaMemcpyHostToDevice, stream));
  SHOW(cudaMemcpyFromSymbolAsync(from_symbol.data(), symbol_words, sizeof(int) * 256, 0,
                                 cudaMemcpyDeviceToHost, stream));
  SHOW(cudaStreamEndCapture(stream, &symbols));
  cudaGraphExec_t symbols_exec = nullptr;
  SHOW(cudaGraphInstantiate(&symbols_exec, symbols, 0));
  bool symbols_right = symbols_exec != nullptr;
  for (int launch = 0; launch < 2 && symbols_right; ++launch) {
    fill(to_symbol, 5000 + launch);
    std::fill(from_symbol.begin(), from_symbol.end(), -1);
    SHOW(cudaGraphLaunch(symbols_exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    symbols_right = all_equal(from_symbol, to_symbol);
  }
  EXPECT(symbols_right);
  SHOW(cudaGraphExecDestroy(symbols_exec));
  SHOW(cudaGraphDestroy(symbols));

  // Copy nodes between pageable memory: after a copy down from the device into `back`, a node
  // copies `back` on into `host_to` - the bytes the launch brought down, not those at launch.
  std::vector<int> host_to(kWords, -1), host_other(kWords, -1);
  cudaGraph_t on_host = nullptr;
  SHOW(cudaGraphCreate(&on_host, 0));
  cudaGraphNode_t host_down = nullptr, host_on = nullptr;
  SHOW(cudaGraphAddMemcpyNode1D(&host_down, on_host, nullptr, 0, back.data(), device_a, kBytes,
                                cudaMemcpyDeviceToHost));
  SHOW(cudaGraphAddMemcpyNode1D(&host_on, on_host, &host_down, 1, host_to.data(), back.data(),
                                kBytes, cudaMemcpyHostToHost));
  SHOW(cudaGraphNodeGetType(host_on, &type));
  EXPECT(type == cudaGraphNodeTypeMemcpy);
  SHOW(cudaGraphMemcpyNodeGetParams(host_on, &read_back));
  EXPECT(read_back.srcPtr.ptr == back.data() && read_back.dstPtr.ptr == host_to.data() &&
         read_back.kind == cudaMemcpyHostToHost);
  cudaGraphExec_t on_host_exec = nullptr;
  SHOW(cudaGraphInstantiate(&on_host_exec, on_host, 0));
  bool host_nodes_right = on_host_exec != nullptr;
  for (int launch = 0; launch < 2 && host_nodes_right; ++launch) {
    fill(source, 300 + launch);
    SHOW(cudaMemcpy(device_a, source.data(), kBytes, cudaMemcpyHostToDevice));
    std::fill(back.begin(), back.end(), -1);
    std::fill(host_to.begin(), host_to.end(), -1);
    SHOW(cudaGraphLaunch(on_host_exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    host_nodes_right = all_equal(host_to, source);
  }
  EXPECT(host_nodes_right);
  // New parameters in the executable graph: into another buffer.
  SHOW(cudaGraphExecMemcpyNodeSetParams1D(on_host_exec, host_on, host_other.data(), back.data(),
                                          kBytes, cudaMemcpyHostToHost));
  fill(source, 400);
  SHOW(cudaMemcpy(device_a, source.data(), kBytes, cudaMemcpyHostToDevice));
  SHOW(cudaGraphLaunch(on_host_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT(all_equal(host_other, source));
  // New parameters in the graph: half the bytes, taken by a clone and its instantiation.
  std::vector<int> host_half(kWords, -1);
  SHOW(cudaGraphMemcpyNodeSetParams1D(host_on, host_half.data(), back.data(), kBytes / 2,
                                      cudaMemcpyDefault));
  cudaGraph_t on_host_clone = nullptr;
  SHOW(cudaGraphClone(&on_host_clone, on_host));
  cudaGraphNode_t cloned_on = nullptr;
  SHOW(cudaGraphNodeFindInClone(&cloned_on, host_on, on_host_clone));
  SHOW(cudaGraphNodeGetType(cloned_on, &type));
  EXPECT(type == cudaGraphNodeTypeMemcpy);
  cudaGraphExec_t on_host_clone_exec = nullptr;
  SHOW(cudaGraphInstantiate(&on_host_clone_exec, on_host_clone, 0));
  fill(source, 500);
  SHOW(cudaMemcpy(device_a, source.data(), kBytes, cudaMemcpyHostToDevice));
  SHOW(cudaGraphLaunch(on_host_clone_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT(std::equal(host_half.begin(), host_half.begin() + kWords / 2, source.begin()) &&
         host_half[kWords / 2] == -1);
  SHOW(cudaGraphExecDestroy(on_host_clone_exec));
  // The first executable graph updated from the graph: its node copies as the graph's does now.
  std::fill(host_half.begin(), host_half.end(), -1);
  std::fill(host_other.begin(), host_other.end(), -1);
  cudaGraphExecUpdateResultInfo update_info = {};
  SHOW(cudaGraphExecUpdate(on_host_exec, on_host, &update_info));
  EXPECT(update_info.result == cudaGraphExecUpdateSuccess);
  fill(source, 600);
  SHOW(cudaMemcpy(device_a, source.data(), kBytes, cudaMemcpyHostToDevice));
  SHOW(cudaGraphLaunch(on_host_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT(std::equal(host_half.begin(), host_half.begin() + kWords / 2, source.begin()) &&
         host_half[kWords / 2] == -1 && host_other[0] == -1);
  SHOW(cudaGraphDestroy(on_host_clone));
  SHOW(cudaGraphExecDestroy(on_host_exec));
  SHOW(cudaGraphDestroy(on_host));

  // Copies between pageable memory captured, after a host function that writes their source: 1D,
  // 2D into a wider buffer and 3D between pitched volumes, one node each, at each launch.
  constexpr size_t kHostRow = 100, kHostRowPitch = 160, kHostRows = 8, kHostSlices = 2;
  std::vector<unsigned char> bytes_from(kHostRow * kHostRows * kHostSlices, 1),
      bytes_to(bytes_from.size(), 0), wide_to(kHostRowPitch * kHostRows, 0xee),
      volume_to(kHostRowPitch * kHostRows * kHostSlices, 0xee);
  cudaMemcpy3DParms host_volume = {};
  host_volume.srcPtr = make_cudaPitchedPtr(bytes_from.data(), kHostRow, kHostRow, kHostRows);
  host_volume.dstPtr = make_cudaPitchedPtr(volume_to.data(), kHostRowPitch, kHostRow, kHostRows);
  host_volume.extent = make_cudaExtent(kHostRow, kHostRows, kHostSlices);
  host_volume.kind = cudaMemcpyHostToHost;
  cudaGraph_t host_captured = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  SHOW(cudaLaunchHostFunc(stream, bump_bytes, &bytes_from));
  SHOW(cudaMemcpyAsync(bytes_to.data(), bytes_from.data(), bytes_from.size(), cudaMemcpyHostToHost,
                       stream));
  SHOW(cudaMemcpy2DAsync(wide_to.data(), kHostRowPitch, bytes_from.data(), kHostRow, kHostRow,
                         kHostRows, cudaMemcpyDefault, stream));
  SHOW(cudaMemcpy3DAsync(&host_volume, stream));
  SHOW(cudaStreamEndCapture(stream, &host_captured));
  size_t host_captured_nodes = 0;
  SHOW(cudaGraphGetNodes(host_captured, nullptr, &host_captured_nodes));
  EXPECT(host_captured_nodes == 4);  // one per captured operation
  EXPECT(bytes_to[0] == 0 && wide_to[0] == 0xee && volume_to[0] == 0xee);  // none ran yet
  cudaGraphExec_t host_captured_exec = nullptr;
  SHOW(cudaGraphInstantiate(&host_captured_exec, host_captured, 0));
  bool host_captured_right = host_captured_exec != nullptr;
  for (int launch = 0; launch < 2 && host_captured_right; ++launch) {
    SHOW(cudaGraphLaunch(host_captured_exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    host_captured_right = bytes_from[0] == 2 + launch && bytes_to == bytes_from;
    for (size_t i = 0; i < wide_to.size(); ++i) {  // rows of 100 bytes, 160 apart
      const size_t x = i % kHostRowPitch;
      host_captured_right = host_captured_right && wide_to[i] == (x < kHostRow ? 2 + launch : 0xee);
    }
    for (size_t i = 0; i < volume_to.size(); ++i) {
      const size_t x = i % kHostRowPitch;
      host_captured_right =
          host_captured_right && volume_to[i] == (x < kHostRow ? 2 + launch : 0xee);
    }
  }
  EXPECT(host_captured_right);
  SHOW(cudaGraphExecDestroy(host_captured_exec));
  SHOW(cudaGraphDestroy(host_captured));

  SHOW(cudaGraphExecDestroy(captured_exec));
  SHOW(cudaGraphDestroy(captured));
  SHOW(cudaGraphExecDestroy(pitched_exec));
  SHOW(cudaGraphDestroy(pitched));
  SHOW(cudaGraphExecDestroy(exec_half));
  SHOW(cudaGraphExecDestroy(clone_exec));
  SHOW(cudaGraphDestroy(clone));
  SHOW(cudaGraphExecDestroy(exec));
  SHOW(cudaGraphDestroy(graph));
  SHOW(cudaStreamDestroy(stream));
  SHOW(cudaFree(device_a));
  SHOW(cudaFree(device_b));
  return 0;
}
