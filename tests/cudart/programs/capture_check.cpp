// What the stub does with copies on a capturing stream (capture_test.cpp runs it through
// gvirtus-run, over a backend with the capturing and accepting devices, the latter keeping what
// is copied): a device-to-device copy is forwarded and captured; a copy into or from pageable
// memory is captured staged (frontend/host_staging.h: one node of the capture's graph, a host
// function of the stub's and a copy of a staging block on the backend, as natively one copy node),
// so each launch of the graph reads the program's memory as it
// is then - after the program's own host function captured before it changed it - and writes
// the program's memory back; a copy between host memory is captured as a node too (the stub's
// host function alone), copying the memory as it is at each launch, 1D, 2D and 3D; copies between
// a CUDA array and pageable memory (2D forms and 3D) are staged nodes too. Waiting for a
// capturing stream is refused with cudaErrorStreamCaptureUnsupported, which invalidates the
// capture, so cudaStreamEndCapture then answers cudaErrorStreamCaptureInvalidated. A capture
// without it ends in a graph. The graph a
// capture builds, handed out by cudaStreamGetCaptureInfo, cannot be destroyed while the capture
// lasts, is the graph its end hands over, and goes with an invalidated capture. A stream that
// joined a capture (it waited for an event recorded in it) has its copies of pageable memory
// staged too, and so is a 3D copy of pitched pageable memory. Prints "ok" and exits 0 when
// everything answered so.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void expect(cudaError_t got, cudaError_t want, const char* what) {
  if (got == want) return;
  std::printf("FAILED: %s: %d, expected %d\n", what, static_cast<int>(got), static_cast<int>(want));
  ++failures;
}

void check(bool ok, const char* what) {
  if (ok) return;
  std::printf("FAILED: %s\n", what);
  ++failures;
}

// The program's own host function, captured before the copy up: one more in every byte.
void CUDART_CB bump(void* data) {
  for (char& c : *static_cast<std::vector<char>*>(data)) c = static_cast<char>(c + 1);
}

}  // namespace

int main() {
  constexpr size_t kBytes = 1 << 20;
  cudaStream_t stream = nullptr;
  expect(cudaStreamCreate(&stream), cudaSuccess, "cudaStreamCreate");
  void* a = nullptr;
  void* b = nullptr;
  expect(cudaMalloc(&a, kBytes), cudaSuccess, "cudaMalloc a");
  expect(cudaMalloc(&b, kBytes), cudaSuccess, "cudaMalloc b");
  std::vector<char> pageable(kBytes, 'x');
  std::vector<char> back(kBytes, 0);

  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture");
  expect(cudaLaunchHostFunc(stream, bump, &pageable), cudaSuccess, "a host function captured");
  expect(cudaMemcpyAsync(a, pageable.data(), kBytes, cudaMemcpyHostToDevice, stream), cudaSuccess,
         "host-to-device copy in a capture");
  expect(cudaMemcpyAsync(b, a, kBytes, cudaMemcpyDeviceToDevice, stream), cudaSuccess,
         "device-to-device copy in a capture");
  expect(cudaMemcpyAsync(back.data(), b, kBytes, cudaMemcpyDefault, stream), cudaSuccess,
         "device-to-host copy in a capture");
  // The graph the capture builds is the program's to name, not to destroy, until the end hands
  // it over.
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t building = nullptr;
  expect(cudaStreamGetCaptureInfo(stream, &status, nullptr, &building, nullptr, nullptr, nullptr),
         cudaSuccess, "cudaStreamGetCaptureInfo");
  check(status == cudaStreamCaptureStatusActive && building != nullptr, "the capture's graph");
  expect(cudaGraphDestroy(building), cudaErrorInvalidValue, "destroying the capture's graph");
  (void)cudaGetLastError();
  cudaGraph_t graph = nullptr;
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture");
  check(graph == building, "the capture's end hands its graph over");
  size_t nodes = 0;
  expect(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess, "cudaGraphGetNodes");
  check(nodes == 4, "one node per captured operation, as natively");
  check(back[0] == 0 && pageable[0] == 'x', "nothing ran at capture");
  cudaGraphExec_t exec = nullptr;
  expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate");
  for (int launch = 0; launch < 3; ++launch) {
    std::fill(pageable.begin(), pageable.end(), static_cast<char>('a' + 3 * launch));
    std::fill(back.begin(), back.end(), 0);
    expect(cudaGraphLaunch(exec, stream), cudaSuccess, "cudaGraphLaunch");
    expect(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize");
    check(pageable[0] == 'a' + 3 * launch + 1, "the host function ran before the copy up");
    check(back == pageable, "the copy back holds what the copy up read at this launch");
  }
  expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");

  // Copies between host memory, captured: one node each, copying at each launch - 1D, 2D into a
  // wider buffer (the gaps stay), 3D between pitched volumes.
  constexpr size_t kHostRow = 100, kHostPitch = 160, kHostRows = 8, kHostSlices = 2;
  std::vector<char> host_source(kBytes, 'z'), host_to(kBytes, 0),
      host_wide(kHostPitch * kHostRows, '.'),
      host_volume(kHostPitch * kHostRows * kHostSlices, '.');
  cudaMemcpy3DParms host_3d{};
  host_3d.srcPtr = cudaPitchedPtr{host_source.data(), kHostRow, kHostRow, kHostRows};
  host_3d.dstPtr = cudaPitchedPtr{host_volume.data(), kHostPitch, kHostRow, kHostRows};
  host_3d.extent = cudaExtent{kHostRow, kHostRows, kHostSlices};
  host_3d.kind = cudaMemcpyHostToHost;
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture for copies between host memory");
  expect(cudaMemcpyAsync(host_to.data(), host_source.data(), kBytes, cudaMemcpyHostToHost, stream),
         cudaSuccess, "host-to-host copy in a capture");
  expect(cudaMemcpy2DAsync(host_wide.data(), kHostPitch, host_source.data(), kHostRow, kHostRow,
                           kHostRows, cudaMemcpyDefault, stream),
         cudaSuccess, "a 2D host-to-host copy in a capture");
  expect(cudaMemcpy3DAsync(&host_3d, stream), cudaSuccess, "a 3D host-to-host copy in a capture");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture host copies");
  check(host_to[0] == 0 && host_wide[0] == '.' && host_volume[0] == '.',
        "nothing copied between host memory at capture");
  nodes = 0;
  expect(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess, "cudaGraphGetNodes host copies");
  check(nodes == 3, "one node per captured host copy");
  cudaGraphNode_t host_nodes[3] = {};
  nodes = 3;
  expect(cudaGraphGetNodes(graph, host_nodes, &nodes), cudaSuccess, "the host copies' nodes");
  cudaGraphNodeType host_type = cudaGraphNodeTypeEmpty;
  expect(cudaGraphNodeGetType(host_nodes[0], &host_type), cudaSuccess, "a host copy's type");
  check(host_type == cudaGraphNodeTypeMemcpy, "a captured host copy is a copy node");
  expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate host copies");
  for (int launch = 0; launch < 2; ++launch) {
    for (size_t i = 0; i < kBytes; ++i) host_source[i] = static_cast<char>('a' + (i + launch) % 19);
    expect(cudaGraphLaunch(exec, stream), cudaSuccess, "cudaGraphLaunch host copies");
    expect(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize host copies");
    check(host_to == host_source, "the captured host copy ran at this launch");
    bool wide_right = true, volume_right_here = true;
    for (size_t i = 0; i < host_wide.size(); ++i) {
      const size_t row = i / kHostPitch, x = i % kHostPitch;
      wide_right =
          wide_right && host_wide[i] == (x < kHostRow ? host_source[row * kHostRow + x] : '.');
    }
    for (size_t i = 0; i < host_volume.size(); ++i) {
      const size_t row = i / kHostPitch, x = i % kHostPitch;  // rows of both slices, in order
      volume_right_here = volume_right_here &&
                          host_volume[i] == (x < kHostRow ? host_source[row * kHostRow + x] : '.');
    }
    check(wide_right, "the captured 2D host copy ran at this launch, the gaps kept");
    check(volume_right_here, "the captured 3D host copy ran at this launch, the gaps kept");
  }
  expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy host copies");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy host copies");

  // Copies between a CUDA array and pageable memory, captured: a 2D copy into the array (its byte
  // offset and width in floats) and one back into rows 96 bytes apart, and a 3D copy out of the
  // array's second row, one staged node each, copying at each launch.
  const cudaChannelFormatDesc floats =
      cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaArray_t array = nullptr;
  expect(cudaMallocArray(&array, &floats, 16, 4), cudaSuccess, "cudaMallocArray");
  std::vector<float> texels(16 * 4), texels_back(24 * 4, -1.0f), second_row(16, -1.0f);
  cudaMemcpy3DParms row_out{};
  row_out.srcArray = array;
  row_out.srcPos = cudaPos{0, 1, 0};
  row_out.dstPtr = cudaPitchedPtr{second_row.data(), 16 * sizeof(float), 16, 1};
  row_out.extent = cudaExtent{16, 1, 1};
  row_out.kind = cudaMemcpyDeviceToHost;
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture for array copies");
  expect(cudaMemcpy2DToArrayAsync(array, 0, 0, texels.data(), 16 * sizeof(float),
                                  16 * sizeof(float), 4, cudaMemcpyHostToDevice, stream),
         cudaSuccess, "a 2D copy into an array in a capture");
  expect(cudaMemcpy2DFromArrayAsync(texels_back.data(), 24 * sizeof(float), array, 0, 0,
                                    16 * sizeof(float), 4, cudaMemcpyDefault, stream),
         cudaSuccess, "a 2D copy out of an array in a capture");
  expect(cudaMemcpy3DAsync(&row_out, stream), cudaSuccess, "a 3D copy out of an array captured");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture arrays");
  nodes = 0;
  expect(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess, "cudaGraphGetNodes arrays");
  check(nodes == 3, "one node per captured array copy");
  check(texels_back[0] == -1.0f && second_row[0] == -1.0f, "nothing copied at capture");
  expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate arrays");
  for (int launch = 0; launch < 2; ++launch) {
    for (size_t i = 0; i < texels.size(); ++i) texels[i] = static_cast<float>(i * 3 + launch);
    expect(cudaGraphLaunch(exec, stream), cudaSuccess, "cudaGraphLaunch arrays");
    expect(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize arrays");
    bool right = true;
    for (size_t i = 0; i < texels_back.size(); ++i) {
      const size_t row = i / 24, x = i % 24;
      right = right && texels_back[i] == (x < 16 ? texels[row * 16 + x] : -1.0f);
    }
    for (size_t x = 0; x < 16; ++x) right = right && second_row[x] == texels[16 + x];
    check(right, "the captured array copies ran at this launch, the gaps kept");
  }
  expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy arrays");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy arrays");
  // The 1D form's offset runs on in the array's row order, which no copy node describes: refused,
  // the capture invalidated.
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture for a 1D array copy");
  expect(cudaMemcpyToArrayAsync(array, 0, 0, texels.data(), 64, cudaMemcpyHostToDevice, stream),
         cudaErrorStreamCaptureUnsupported, "a 1D copy into an array in a capture");
  (void)cudaGetLastError();
  graph = nullptr;
  expect(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated,
         "cudaStreamEndCapture after the 1D array copy");
  (void)cudaGetLastError();
  check(graph == nullptr, "no graph from the invalidated capture");
  expect(cudaFreeArray(array), cudaSuccess, "cudaFreeArray");

  // Waiting for a capturing stream cannot be captured: refused, the capture invalidated.
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture again");
  expect(cudaStreamSynchronize(stream), cudaErrorStreamCaptureUnsupported,
         "waiting for a capturing stream");
  expect(cudaGetLastError(), cudaErrorStreamCaptureUnsupported, "the last error");
  expect(cudaStreamGetCaptureInfo(stream, &status, nullptr, &building, nullptr, nullptr, nullptr),
         cudaSuccess, "cudaStreamGetCaptureInfo of an invalidated capture");
  graph = reinterpret_cast<cudaGraph_t>(1);
  expect(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated,
         "cudaStreamEndCapture of an invalidated capture");
  expect(cudaGraphDestroy(building), cudaErrorInvalidResourceHandle,
         "the graph of an invalidated capture, gone with it");
  (void)cudaGetLastError();
  if (graph != nullptr) {
    std::printf("FAILED: an invalidated capture gave a graph\n");
    ++failures;
  }

  // Outside a capture, the same copies are copies.
  expect(cudaMemcpyAsync(back.data(), b, kBytes, cudaMemcpyDeviceToHost, stream), cudaSuccess,
         "device-to-host copy after the capture");

  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaSuccess,
         "cudaStreamBeginCapture a third time");
  expect(cudaMemcpyAsync(a, b, kBytes, cudaMemcpyDeviceToDevice, stream), cudaSuccess,
         "device-to-device copy in the third capture");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");
  expect(cudaGraphDestroy(graph), cudaErrorInvalidResourceHandle, "cudaGraphDestroy again");

  // A 2D copy back into a wider pageable buffer, captured: a staged copy node too; its rows land
  // at the launch, the gaps between them stay.
  constexpr size_t kRow = 256, kPitch = 512, kRows = 16;
  std::vector<char> wide(kPitch * kRows, '.');
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture a fourth time");
  expect(
      cudaMemcpy2DAsync(wide.data(), kPitch, b, kRow, kRow, kRows, cudaMemcpyDeviceToHost, stream),
      cudaSuccess, "a 2D copy back in a capture");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture");
  check(wide[0] == '.', "nothing copied at capture");
  expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate");
  expect(cudaGraphLaunch(exec, stream), cudaSuccess, "cudaGraphLaunch");
  expect(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize");
  bool rows_right = true;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t x = 0; x < kPitch; ++x) {
      rows_right = rows_right && wide[r * kPitch + x] == (x < kRow ? pageable[0] : '.');
    }
  }
  check(rows_right, "the rows copied back, the gaps between them kept");
  expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");
  // A 3D copy of pitched pageable memory up and one back, captured: a staged copy node each, the
  // host volume read and the other written at the launch, the gaps between rows kept.
  constexpr size_t kVolumeRow = 200, kVolumePitch = 256, kVolumeHeight = 4, kVolumeDepth = 3;
  std::vector<char> volume(kVolumePitch * kVolumeHeight * kVolumeDepth),
      volume_back(volume.size(), '.');
  for (size_t i = 0; i < volume.size(); ++i) volume[i] = static_cast<char>('a' + i % 23);
  cudaMemcpy3DParms volume_up{};
  volume_up.srcPtr = cudaPitchedPtr{volume.data(), kVolumePitch, kVolumeRow, kVolumeHeight};
  volume_up.dstPtr = cudaPitchedPtr{a, kVolumeRow, kVolumeRow, kVolumeHeight};
  volume_up.extent = cudaExtent{kVolumeRow, kVolumeHeight, kVolumeDepth};
  volume_up.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3DParms volume_down = volume_up;
  volume_down.srcPtr = volume_up.dstPtr;
  volume_down.dstPtr = cudaPitchedPtr{volume_back.data(), kVolumePitch, kVolumeRow, kVolumeHeight};
  volume_down.kind = cudaMemcpyDeviceToHost;
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture for 3D copies");
  expect(cudaMemcpy3DAsync(&volume_up, stream), cudaSuccess, "a 3D copy up in a capture");
  expect(cudaMemcpy3DAsync(&volume_down, stream), cudaSuccess, "a 3D copy back in a capture");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture 3D");
  check(volume_back[0] == '.', "nothing copied at capture in 3D");
  nodes = 0;
  expect(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess, "cudaGraphGetNodes 3D");
  check(nodes == 2, "one node per captured 3D copy");
  expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate 3D");
  expect(cudaGraphLaunch(exec, stream), cudaSuccess, "cudaGraphLaunch 3D");
  expect(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize 3D");
  bool volume_right = true;
  for (size_t i = 0; i < volume.size(); ++i) {
    volume_right =
        volume_right && volume_back[i] == (i % kVolumePitch < kVolumeRow ? volume[i] : '.');
  }
  check(volume_right, "the 3D copies ran at the launch, the gaps between rows kept");
  expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy 3D");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy 3D");

  // Fork and join: a second stream joins the capture by waiting for an event recorded in it; its
  // copies of pageable memory are staged as the capturing stream's own, read and written at each
  // launch.
  cudaStream_t side = nullptr;
  cudaEvent_t forked = nullptr, rejoined = nullptr;
  expect(cudaStreamCreate(&side), cudaSuccess, "cudaStreamCreate side");
  expect(cudaEventCreate(&forked), cudaSuccess, "cudaEventCreate forked");
  expect(cudaEventCreate(&rejoined), cudaSuccess, "cudaEventCreate rejoined");
  std::vector<char> side_source(kBytes, 's'), side_back(kBytes, 0);
  expect(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess,
         "cudaStreamBeginCapture a fifth time");
  expect(cudaEventRecord(forked, stream), cudaSuccess, "cudaEventRecord in the capture");
  expect(cudaStreamWaitEvent(side, forked, 0), cudaSuccess, "the side stream joins");
  expect(cudaMemcpyAsync(a, side_source.data(), kBytes, cudaMemcpyHostToDevice, side), cudaSuccess,
         "host-to-device copy on the joined stream");
  expect(cudaMemcpyAsync(side_back.data(), a, kBytes, cudaMemcpyDeviceToHost, side), cudaSuccess,
         "device-to-host copy on the joined stream");
  expect(cudaEventRecord(rejoined, side), cudaSuccess, "cudaEventRecord on the joined stream");
  expect(cudaStreamWaitEvent(stream, rejoined, 0), cudaSuccess, "the capture waits for it");
  expect(cudaStreamEndCapture(stream, &graph), cudaSuccess, "cudaStreamEndCapture fork and join");
  check(side_back[0] == 0, "nothing copied at capture on the joined stream");
  expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate");
  for (int launch = 0; launch < 3; ++launch) {
    std::fill(side_source.begin(), side_source.end(), static_cast<char>('A' + launch));
    std::fill(side_back.begin(), side_back.end(), 0);
    expect(cudaGraphLaunch(exec, stream), cudaSuccess, "cudaGraphLaunch fork and join");
    expect(cudaStreamSynchronize(stream), cudaSuccess, "cudaStreamSynchronize");
    check(side_back == side_source, "the joined stream's copies ran at this launch");
  }
  expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy fork and join");
  expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy fork and join");
  expect(cudaEventDestroy(rejoined), cudaSuccess, "cudaEventDestroy rejoined");
  expect(cudaEventDestroy(forked), cudaSuccess, "cudaEventDestroy forked");
  expect(cudaStreamDestroy(side), cudaSuccess, "cudaStreamDestroy side");

  expect(cudaStreamDestroy(stream), cudaSuccess, "cudaStreamDestroy");
  if (failures != 0) return 1;
  std::printf("ok\n");
  return 0;
}
