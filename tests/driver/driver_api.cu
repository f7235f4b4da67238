// Driver API calls the stub answers in its own way, printed call by call: modules from files on
// the client's machine (cuModuleLoad, cuLibraryLoadFromFile: read by the stub and sent, since the
// backend's machine has no such file), contexts of one's own (cuCtxCreate pushes, cuCtxDestroy
// pops), a module's functions enumerated with their names, and the occupancy search with a callback
// of the caller's (run in this process). argv[1]: a fatbinary with saxpy.
#include <cuda.h>

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "show_calls.h"

// The driver's earlier names (after main: cuda.h's names are undefined there).
void earlier_names(CUcontext context);

// The dynamic shared memory a block of `threads` needs: 16 bytes a thread.
size_t shared_for(int threads) {
  return static_cast<size_t>(threads) * 16;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  CUdevice device = 0;
  const CUcontext context = show_primary_context(device);
  CUmodule module = nullptr;
  SHOW(cuModuleLoad(&module, "/nonexistent/saxpy.fatbin"));
  SHOW(cuModuleLoad(&module, argv[1]));
  CUfunction function;
  SHOW(cuModuleGetFunction(&function, module, "_Z5saxpyifPKfPf"));
  // The deprecated shared memory bank size, remoted as it is.
  CUsharedconfig bank = CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE;
  SHOW(cuCtxGetSharedMemConfig(&bank));
  std::printf("bank size config %d\n", static_cast<int>(bank));
  SHOW(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE));
  SHOW(cuFuncSetSharedMemConfig(function, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
  // Multicast needs NVSwitch: a device without it answers CUDA_ERROR_NOT_SUPPORTED.
  CUmulticastObjectProp multicast{};
  multicast.numDevices = 1;
  multicast.size = 2 << 20;
  size_t multicast_granularity = 0;
  SHOW(cuMulticastGetGranularity(&multicast_granularity, &multicast,
                                 CU_MULTICAST_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle multicast_object = 0;
  SHOW(cuMulticastCreate(&multicast_object, &multicast));
  // A whole context's work into an event, and waited on (CUDA 12.5); its flags set (12.1).
  CUevent context_event = nullptr;
  SHOW(cuEventCreate(&context_event, 0));
  SHOW(cuCtxRecordEvent(context, context_event));
  SHOW(cuCtxWaitEvent(context, context_event));
  SHOW(cuEventSynchronize(context_event));
  SHOW(cuEventDestroy(context_event));
  SHOW(cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC));
  unsigned int context_flags = 0;
  SHOW(cuCtxGetFlags(&context_flags));
  std::printf("context flags now %u\n", context_flags);
  SHOW(cuCtxSetFlags(0));
  // CUDA 13's pools by location.
  CUmemLocation pool_location{};
  pool_location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  pool_location.id = device;
  CUmemoryPool by_location = nullptr, device_default = nullptr;
  SHOW(cuMemGetDefaultMemPool(&by_location, &pool_location, CU_MEM_ALLOCATION_TYPE_PINNED));
  SHOW(cuDeviceGetDefaultMemPool(&device_default, device));
  std::printf("the location's default pool is the device's: %s\n",
              by_location == device_default ? "yes" : "no");
  SHOW(cuMemSetMemPool(&pool_location, CU_MEM_ALLOCATION_TYPE_PINNED, by_location));
  SHOW(cuMemGetMemPool(&by_location, &pool_location, CU_MEM_ALLOCATION_TYPE_PINNED));
  pool_location.type = CU_MEM_LOCATION_TYPE_HOST;
  SHOW(cuMemGetMemPool(&by_location, &pool_location, CU_MEM_ALLOCATION_TYPE_PINNED));
  // The module's functions enumerated: one, the same handle, its name, module and state.
  unsigned count = 0;
  SHOW(cuModuleGetFunctionCount(&count, module));
  CUfunction listed[4] = {};
  SHOW(cuModuleEnumerateFunctions(listed, 4, module));
  const char* name = nullptr;
  SHOW(cuFuncGetName(&name, listed[0]));
  CUmodule owner = nullptr;
  SHOW(cuFuncGetModule(&owner, listed[0]));
  CUfunctionLoadingState loaded = CU_FUNCTION_LOADING_STATE_UNLOADED;
  SHOW(cuFuncIsLoaded(&loaded, listed[0]));
  std::printf("enumerated: %u, same handle %s, name %s, module %s, loaded %s\n", count,
              listed[0] == function ? "yes" : "no", name != nullptr ? name : "(none)",
              owner == module ? "yes" : "no",
              loaded == CU_FUNCTION_LOADING_STATE_LOADED ? "yes" : "no");
  int grid = 0, block = 0;
  SHOW(cuOccupancyMaxPotentialBlockSize(&grid, &block, function, shared_for, 0, 0));
  std::printf("occupancy: grid %d block %d\n", grid, block);
  SHOW(cuOccupancyMaxPotentialBlockSize(&grid, &block, function, nullptr, 0, 128));
  std::printf("limited: grid %d block %d\n", grid, block);
  // A graph of two launches captured on a stream: its one root, a clone with both nodes, and the
  // flags it was instantiated with.
  CUstream capture_stream = nullptr;
  SHOW(cuStreamCreate(&capture_stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr xs = 0, ys = 0;
  SHOW(cuMemAlloc(&xs, 256 * sizeof(float)));
  SHOW(cuMemAlloc(&ys, 256 * sizeof(float)));
  int elements = 256;
  float scale = 2.0f;
  void* saxpy_args[] = {&elements, &scale, &xs, &ys};
  SHOW(cuStreamBeginCapture(capture_stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  SHOW(cuLaunchKernel(function, 1, 1, 1, 256, 1, 1, 0, capture_stream, saxpy_args, nullptr));
  SHOW(cuLaunchKernel(function, 1, 1, 1, 256, 1, 1, 0, capture_stream, saxpy_args, nullptr));
  CUgraph captured = nullptr, cloned = nullptr;
  SHOW(cuStreamEndCapture(capture_stream, &captured));
  size_t roots = 0, cloned_nodes = 0;
  SHOW(cuGraphGetRootNodes(captured, nullptr, &roots));
  CUgraphNode root[2] = {};
  size_t root_capacity = 2;
  SHOW(cuGraphGetRootNodes(captured, root, &root_capacity));
  SHOW(cuGraphClone(&cloned, captured));
  SHOW(cuGraphGetNodes(cloned, nullptr, &cloned_nodes));
  std::printf("graph: %zu root, %zu written, second slot %s; clone of %zu nodes\n", roots,
              root_capacity, root[1] == nullptr ? "null" : "set", cloned_nodes);
  CUgraphExec executable = nullptr;
  SHOW(cuGraphInstantiateWithFlags(&executable, cloned,
                                   CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
  cuuint64_t instantiated_with = 0;
  SHOW(cuGraphExecGetFlags(executable, &instantiated_with));
  std::printf("instantiated with flags %llu\n", static_cast<unsigned long long>(instantiated_with));
  // Instantiated with parameters (an upload stream the session holds), updated from its clone,
  // and described in DOT at a path of this machine. (Handles the session does not hold are
  // undefined natively: hostile_driver_test.cpp's.)
  CUDA_GRAPH_INSTANTIATE_PARAMS with_params{};
  with_params.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  with_params.hUploadStream = capture_stream;
  with_params.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  CUgraphExec from_params = nullptr;
  SHOW(cuGraphInstantiateWithParams(&from_params, captured, &with_params));
  std::printf("instantiated with parameters: result %d\n",
              static_cast<int>(with_params.result_out));
  CUgraphExecUpdateResultInfo update{};
  SHOW(cuGraphExecUpdate(from_params, cloned, &update));
  std::printf("update result %d\n", static_cast<int>(update.result));
  char dot_path[64];
  std::snprintf(dot_path, sizeof dot_path, "/tmp/gvirtus-driver-api-%d.dot",
                static_cast<int>(getpid()));
  SHOW(cuGraphDebugDotPrint(captured, dot_path, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
  char dot_head[8] = {};
  if (std::FILE* dot = std::fopen(dot_path, "rb")) {
    if (std::fread(dot_head, 1, 7, dot) != 7) dot_head[0] = '\0';
    std::fclose(dot);
  }
  std::remove(dot_path);
  std::printf("dot file: %s\n", std::strcmp(dot_head, "digraph") == 0 ? "digraph" : "missing");
  SHOW(cuGraphDebugDotPrint(captured, "/nonexistent/graph.dot", 0));
  SHOW(cuGraphExecDestroy(from_params));
  SHOW(cuGraphExecDestroy(executable));
  SHOW(cuGraphDestroy(cloned));
  SHOW(cuGraphDestroy(captured));
  SHOW(cuStreamDestroy(capture_stream));
  // Tensor maps: a 2D tile of floats over device memory, its address replaced by another
  // allocation's; refused over memory that is not the device's, of rank 0 and of an unknown type.
  CUtensorMap tile{};
  const cuuint64_t dims[2] = {16, 16};
  const cuuint64_t row_stride[1] = {16 * sizeof(float)};
  const cuuint32_t tile_box[2] = {8, 8};
  const cuuint32_t unit[2] = {1, 1};
  SHOW(cuTensorMapEncodeTiled(&tile, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                              reinterpret_cast<void*>(xs), dims, row_stride, tile_box, unit,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  const CUtensorMap encoded = tile;
  SHOW(cuTensorMapReplaceAddress(&tile, reinterpret_cast<void*>(ys)));
  std::printf("tensor map: encoded %s, replaced address %s\n",
              encoded.opaque[0] != 0 || encoded.opaque[1] != 0 ? "yes" : "no",
              std::memcmp(&encoded, &tile, sizeof tile) != 0 ? "changed it" : "changed nothing");
  alignas(16) static float host_tile[256];
  SHOW(cuTensorMapEncodeTiled(&tile, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, host_tile, dims,
                              row_stride, tile_box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  SHOW(cuTensorMapEncodeTiled(&tile, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0,
                              reinterpret_cast<void*>(xs), dims, row_stride, tile_box, unit,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  SHOW(cuTensorMapEncodeTiled(&tile, static_cast<CUtensorMapDataType>(99), 2,
                              reinterpret_cast<void*>(xs), dims, row_stride, tile_box, unit,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  // An im2col map of an NHWC tensor (8 channels, 8 x 8 pixels, 2 images) of halves.
  CUtensorMap im2col{};
  const cuuint64_t nhwc[4] = {8, 8, 8, 2};
  const cuuint64_t nhwc_strides[3] = {8 * 2, 8 * 8 * 2, 8 * 8 * 8 * 2};
  const int lower[2] = {0, 0}, upper[2] = {0, 0};
  const cuuint32_t ones[4] = {1, 1, 1, 1};
  SHOW(cuTensorMapEncodeIm2col(&im2col, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                               reinterpret_cast<void*>(xs), nhwc, nhwc_strides, lower, upper, 8, 64,
                               ones, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  SHOW(cuTensorMapEncodeIm2colWide(
      &im2col, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, reinterpret_cast<void*>(xs), nhwc, nhwc_strides,
      0, 0, 8, 64, ones, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  SHOW(cuMemFree(xs));
  SHOW(cuMemFree(ys));
  // Device queries: the widest 1D texture over linear memory, atomics with the host, graph memory.
  size_t linear_width = 0;
  SHOW(cuDeviceGetTexture1DLinearMaxWidth(&linear_width, CU_AD_FORMAT_FLOAT, 4, device));
  std::printf("1d linear texture: %s\n", linear_width > 0 ? "wide" : "none");
  const CUatomicOperation operations[2] = {CU_ATOMIC_OPERATION_INTEGER_ADD,
                                           CU_ATOMIC_OPERATION_CAS};
  unsigned capabilities[2] = {0xdead, 0xdead};
  SHOW(cuDeviceGetHostAtomicCapabilities(capabilities, operations, 2, device));
  std::printf("host atomics answered: %s\n",
              capabilities[0] != 0xdead && capabilities[1] != 0xdead ? "yes" : "no");
  SHOW(cuDeviceGetP2PAtomicCapabilities(capabilities, operations, 2, device, device));
  SHOW(cuDeviceGraphMemTrim(device));
  // Execution affinity and a flush of GPUDirect RDMA writes into the current context.
  int affinity_supported = -1;
  SHOW(cuDeviceGetExecAffinitySupport(&affinity_supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, device));
  CUexecAffinityParam sm_affinity{};
  sm_affinity.param.smCount.val = 0xdead;
  if (affinity_supported == 1) {
    SHOW(cuCtxGetExecAffinity(&sm_affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
    std::printf("sm count answered: %s\n",
                sm_affinity.param.smCount.val != 0xdead && sm_affinity.param.smCount.val > 0
                    ? "yes"
                    : "no");
  }
  SHOW(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                  CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
  SHOW(cuModuleUnload(module));
  // A 3D box of 100 x 4 x 3 bytes up into pitched device memory and back into a host box of
  // another pitch (cuMemcpy3D: slices as 2D copies).
  CUdeviceptr box = 0;
  size_t pitch = 0;
  SHOW(cuMemAllocPitch(&box, &pitch, 100, 4 * 3, 4));
  unsigned char up[128 * 4 * 3], down[112 * 4 * 3] = {};
  for (size_t i = 0; i < sizeof up; ++i) up[i] = static_cast<unsigned char>(i * 7);
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = up;
  copy.srcPitch = 128;
  copy.srcHeight = 4;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = box;
  copy.dstPitch = pitch;
  copy.dstHeight = 4;
  copy.WidthInBytes = 100;
  copy.Height = 4;
  copy.Depth = 3;
  SHOW(cuMemcpy3D(&copy));
  CUDA_MEMCPY3D back = copy;
  back.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  back.srcDevice = box;
  back.srcPitch = pitch;
  back.dstMemoryType = CU_MEMORYTYPE_HOST;
  back.dstHost = down;
  back.dstPitch = 112;
  SHOW(cuMemcpy3D(&back));
  bool same = true;
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 100; ++x)
        same = same && down[(z * 4 + y) * 112 + x] == up[(z * 4 + y) * 128 + x];
  std::printf("3d round trip: %s\n", same ? "ok" : "FAILED");
  // A 16-bit 2D memset of 50 values in each of the box's first 4 rows.
  SHOW(cuMemsetD2D16(box, pitch, 0x1234, 50, 4));
  unsigned short row[50] = {};
  SHOW(cuMemcpyDtoH(row, box + 3 * pitch, sizeof row));
  bool filled = true;
  for (unsigned short v : row) filled = filled && v == 0x1234;
  std::printf("2d memset of 16 bits: %s\n", filled ? "ok" : "FAILED");
  SHOW(cuMemFree(box));
  // Batches of copies (cuMemcpyBatchAsync): two host buffers up in one batch, across and down in
  // another (copies within a batch are unordered, so none depends on another); CUDA 12.8's form,
  // which says which copy failed; batches the driver refuses.
  CUstream batch_stream = nullptr;
  SHOW(cuStreamCreate(&batch_stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr batch_a = 0, batch_b = 0, batch_c = 0;
  SHOW(cuMemAlloc(&batch_a, 4096));
  SHOW(cuMemAlloc(&batch_b, 4096));
  SHOW(cuMemAlloc(&batch_c, 4096));
  std::vector<unsigned char> first_up(4096), second_up(4096), from_b(4096), from_c(4096);
  for (size_t i = 0; i < 4096; ++i) {
    first_up[i] = static_cast<unsigned char>(i * 3);
    second_up[i] = static_cast<unsigned char>(i * 5 + 1);
  }
  CUdeviceptr up_dsts[2] = {batch_a, batch_c};
  CUdeviceptr up_srcs[2] = {reinterpret_cast<CUdeviceptr>(first_up.data()),
                            reinterpret_cast<CUdeviceptr>(second_up.data())};
  size_t sizes[2] = {4096, 4096};
  CUmemcpyAttributes attributes[2] = {};
  attributes[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attributes[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  size_t attribute_starts[2] = {0, 1};
  SHOW(cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, attributes, attribute_starts, 1,
                          batch_stream));
  CUdeviceptr across_dsts[2] = {batch_b, reinterpret_cast<CUdeviceptr>(from_c.data())};
  CUdeviceptr across_srcs[2] = {batch_a, batch_c};
  SHOW(cuMemcpyBatchAsync(across_dsts, across_srcs, sizes, 2, attributes, attribute_starts, 2,
                          batch_stream));
  SHOW(cuStreamSynchronize(batch_stream));
  SHOW(cuMemcpyDtoH(from_b.data(), batch_b, 4096));
  std::printf("batch round trips: %s\n",
              from_b == first_up && from_c == second_up ? "ok" : "FAILED");
  // CUDA 12.8's form, as a runtime built for it asks for it: its second copy's source is an
  // address nobody mapped, so it fails and says so.
  using Batch12080 = CUresult (*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t, CUmemcpyAttributes*,
                                  size_t*, size_t, size_t*, CUstream);
  void* legacy_entry = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  SHOW(cuGetProcAddress("cuMemcpyBatchAsync", &legacy_entry, 12080, CU_GET_PROC_ADDRESS_DEFAULT,
                        &found));
  if (legacy_entry != nullptr) {
    const auto legacy = reinterpret_cast<Batch12080>(legacy_entry);
    size_t fail_index = 7;
    SHOW(legacy(up_dsts, up_srcs, sizes, 2, attributes, attribute_starts, 1, &fail_index,
                batch_stream));
    std::printf("legacy batch: fail index %s\n", fail_index == SIZE_MAX ? "none" : "set");
    CUdeviceptr unmapped_srcs[2] = {up_srcs[0], CUdeviceptr{0x10}};
    SHOW(legacy(up_dsts, unmapped_srcs, sizes, 2, attributes, attribute_starts, 1, &fail_index,
                batch_stream));
    std::printf("legacy batch failed at copy %zu\n", fail_index);
  }
  // Refused as the driver refuses them: attributes that do not start at the first copy, an access
  // order nobody defined, a flag nobody defined, the legacy default stream, no copies.
  size_t late_start[1] = {1};
  SHOW(cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, attributes, late_start, 1, batch_stream));
  CUmemcpyAttributes odd = attributes[0];
  odd.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(9);
  SHOW(cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, &odd, attribute_starts, 1, batch_stream));
  odd = attributes[0];
  odd.flags = 0x100;
  SHOW(cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, &odd, attribute_starts, 1, batch_stream));
  SHOW(cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, attributes, attribute_starts, 1, nullptr));
  SHOW(cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 0, attributes, attribute_starts, 1,
                          batch_stream));
  SHOW(cuMemFree(batch_a));
  SHOW(cuMemFree(batch_b));
  SHOW(cuMemFree(batch_c));
  SHOW(cuStreamDestroy(batch_stream));
  // Stream memory operations and the device pool's attributes.
  CUdeviceptr word = 0;
  SHOW(cuMemAlloc(&word, 8));
  SHOW(cuStreamWriteValue32(nullptr, word, 7, 0));
  SHOW(cuStreamWaitValue32(nullptr, word, 7, CU_STREAM_WAIT_VALUE_EQ));
  SHOW(cuStreamWriteValue64(nullptr, word, 0x100000002ull, 0));
  unsigned long long written = 0;
  SHOW(cuMemcpyDtoH(&written, word, sizeof written));
  std::printf("written: %llx\n", written);
  // The same as one batch (cuStreamBatchMemOp): two writes, a wait on the first, a barrier; an
  // operation nobody defined is refused before anything is sent.
  CUstreamBatchMemOpParams memops[4] = {};
  memops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  memops[0].writeValue.address = word;
  memops[0].writeValue.value = 11;
  memops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  memops[1].waitValue.address = word;
  memops[1].waitValue.value = 11;
  memops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  memops[2].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  memops[2].writeValue.address = word;
  memops[2].writeValue.value64 = 0x300000004ull;
  memops[3].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
  memops[3].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
  SHOW(cuStreamBatchMemOp(nullptr, 4, memops, 0));
  SHOW(cuMemcpyDtoH(&written, word, sizeof written));
  std::printf("batch written: %llx\n", written);
  memops[3].operation = static_cast<CUstreamBatchMemOpType>(42);
  SHOW(cuStreamBatchMemOp(nullptr, 4, memops, 0));
  SHOW(cuMemFree(word));
  CUmemoryPool pool;
  SHOW(cuDeviceGetDefaultMemPool(&pool, device));
  cuuint64_t threshold = 1 << 20, read_back = 0;
  SHOW(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  SHOW(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &read_back));
  int opportunistic = 0;
  SHOW(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &opportunistic));
  std::printf("pool: threshold %llu, opportunistic %d\n", (unsigned long long)read_back,
              opportunistic);
  // CUDA arrays: 16 x 4 floats up by offset, array to array, to device memory and back, the
  // descriptors, a copy past the end refused, a 3D array described.
  CUDA_ARRAY_DESCRIPTOR flat{};
  flat.Width = 16;
  flat.Height = 4;
  flat.Format = CU_AD_FORMAT_FLOAT;
  flat.NumChannels = 1;
  CUarray one = nullptr, two = nullptr;
  SHOW(cuArrayCreate(&one, &flat));
  SHOW(cuArrayCreate(&two, &flat));
  float texels[64], through_device[64] = {}, back_from_array[64] = {};
  for (int i = 0; i < 64; ++i) texels[i] = 0.5f * static_cast<float>(i);
  SHOW(cuMemcpyHtoA(one, 0, texels, sizeof texels));
  SHOW(cuMemcpyAtoA(two, 0, one, 0, sizeof texels));
  CUdeviceptr linear = 0;
  SHOW(cuMemAlloc(&linear, sizeof texels));
  SHOW(cuMemcpyAtoD(linear, two, 0, sizeof texels));
  SHOW(cuMemcpyDtoH(through_device, linear, sizeof texels));
  SHOW(cuMemcpyDtoA(one, 128, linear, 128));
  SHOW(cuMemcpyAtoHAsync(back_from_array, one, 0, sizeof texels, nullptr));
  SHOW(cuStreamSynchronize(nullptr));
  bool arrays_ok = true;
  for (int i = 0; i < 64; ++i) {
    arrays_ok = arrays_ok && through_device[i] == texels[i] &&
                back_from_array[i] == (i < 32 ? texels[i] : texels[i - 32]);
  }
  std::printf("array round trips: %s\n", arrays_ok ? "ok" : "FAILED");
  CUDA_ARRAY_DESCRIPTOR described{};
  SHOW(cuArrayGetDescriptor(&described, two));
  std::printf("array described: %zu x %zu, format %d\n", described.Width, described.Height,
              static_cast<int>(described.Format));
  SHOW(cuMemcpyHtoA(one, 200, texels, sizeof texels));
  SHOW(cuMemFree(linear));
  SHOW(cuArrayDestroy(one));
  SHOW(cuArrayDestroy(two));
  CUDA_ARRAY3D_DESCRIPTOR volume{};
  volume.Width = 8;
  volume.Height = 8;
  volume.Depth = 8;
  volume.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  volume.NumChannels = 4;
  CUarray cube = nullptr;
  SHOW(cuArray3DCreate(&cube, &volume));
  CUDA_ARRAY3D_DESCRIPTOR volume_back{};
  SHOW(cuArray3DGetDescriptor(&volume_back, cube));
  std::printf("3d array described: depth %zu, channels %u\n", volume_back.Depth,
              volume_back.NumChannels);
  SHOW(cuArrayDestroy(cube));
  SHOW(cuArrayDestroy(cube));
  // A box of 16 x 8 x 4 floats at a position of a wider host buffer (40 x 10 x 6 floats) into a
  // 3D array and back into another such buffer: every float of the box, nothing outside it.
  CUDA_ARRAY3D_DESCRIPTOR floats{};
  floats.Width = 16;
  floats.Height = 8;
  floats.Depth = 4;
  floats.Format = CU_AD_FORMAT_FLOAT;
  floats.NumChannels = 1;
  CUarray float_volume = nullptr;
  SHOW(cuArray3DCreate(&float_volume, &floats));
  std::vector<float> box_in(40 * 10 * 6), box_out(40 * 10 * 6, -1.0f);
  for (size_t i = 0; i < box_in.size(); ++i) box_in[i] = 0.25f * static_cast<float>(i);
  CUDA_MEMCPY3D into{};
  into.srcMemoryType = CU_MEMORYTYPE_HOST;
  into.srcHost = box_in.data();
  into.srcXInBytes = 3 * sizeof(float);
  into.srcY = 1;
  into.srcZ = 2;
  into.srcPitch = 40 * sizeof(float);
  into.srcHeight = 10;
  into.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  into.dstArray = float_volume;
  into.WidthInBytes = 16 * sizeof(float);
  into.Height = 8;
  into.Depth = 4;
  SHOW(cuMemcpy3D(&into));
  CUDA_MEMCPY3D out_of{};
  out_of.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  out_of.srcArray = float_volume;
  out_of.dstMemoryType = CU_MEMORYTYPE_HOST;
  out_of.dstHost = box_out.data();
  out_of.dstXInBytes = into.srcXInBytes;
  out_of.dstY = 1;
  out_of.dstZ = 2;
  out_of.dstPitch = into.srcPitch;
  out_of.dstHeight = 10;
  out_of.WidthInBytes = into.WidthInBytes;
  out_of.Height = 8;
  out_of.Depth = 4;
  SHOW(cuMemcpy3D(&out_of));
  size_t box_wrong = 0, outside_touched = 0;
  for (size_t z = 0; z < 6; ++z)
    for (size_t y = 0; y < 10; ++y)
      for (size_t x = 0; x < 40; ++x) {
        const size_t i = (z * 10 + y) * 40 + x;
        const bool inside = z >= 2 && z < 6 && y >= 1 && y < 9 && x >= 3 && x < 19;
        if (inside && box_out[i] != box_in[i]) ++box_wrong;
        if (!inside && box_out[i] != -1.0f) ++outside_touched;
      }
  std::printf("3d array box: %zu wrong inside, %zu touched outside\n", box_wrong, outside_touched);
  // A batch of 3D copies (cuMemcpy3DBatchAsync): the same box from the host buffer into the
  // array, then the array's whole volume into packed device memory, read back; CUDA 12.8's form
  // says which operation it refused (a row length shorter than the extent).
  CUstream batch3d_stream = nullptr;
  SHOW(cuStreamCreate(&batch3d_stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr packed_volume = 0;
  SHOW(cuMemAlloc(&packed_volume, 16 * 8 * 4 * sizeof(float)));
  CUDA_MEMCPY3D_BATCH_OP ops[2] = {};
  ops[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  ops[0].src.op.ptr.ptr = reinterpret_cast<CUdeviceptr>(box_in.data() + (2 * 10 + 1) * 40 + 3);
  ops[0].src.op.ptr.rowLength = 40;  // elements: floats, the array's
  ops[0].src.op.ptr.layerHeight = 10;
  ops[0].dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  ops[0].dst.op.array.array = float_volume;
  ops[0].extent = {16, 8, 4};
  ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
  ops[1].src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  ops[1].src.op.array.array = float_volume;
  ops[1].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  ops[1].dst.op.ptr.ptr = packed_volume;
  ops[1].extent = {16, 8, 4};
  ops[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  SHOW(cuMemcpy3DBatchAsync(1, &ops[0], 0, batch3d_stream));
  SHOW(cuMemcpy3DBatchAsync(1, &ops[1], 0, batch3d_stream));
  SHOW(cuStreamSynchronize(batch3d_stream));
  std::vector<float> batch_back(16 * 8 * 4, -1.0f);
  SHOW(cuMemcpyDtoH(batch_back.data(), packed_volume, batch_back.size() * sizeof(float)));
  size_t volume_wrong = 0;
  for (size_t z = 0; z < 4; ++z)
    for (size_t y = 0; y < 8; ++y)
      for (size_t x = 0; x < 16; ++x) {
        if (batch_back[(z * 8 + y) * 16 + x] != box_in[((z + 2) * 10 + y + 1) * 40 + x + 3]) {
          ++volume_wrong;
        }
      }
  std::printf("3d batch: %zu wrong\n", volume_wrong);
  using Batch3d12080 =
      CUresult (*)(size_t, CUDA_MEMCPY3D_BATCH_OP*, size_t*, unsigned long long, CUstream);
  void* legacy_3d = nullptr;
  SHOW(cuGetProcAddress("cuMemcpy3DBatchAsync", &legacy_3d, 12080, CU_GET_PROC_ADDRESS_DEFAULT,
                        &found));
  if (legacy_3d != nullptr) {
    ops[1].dst.op.ptr.rowLength = 8;  // shorter than the extent's 16
    size_t refused_at = 7;
    SHOW(reinterpret_cast<Batch3d12080>(legacy_3d)(2, ops, &refused_at, 0, batch3d_stream));
    std::printf("3d batch refused at operation %zu\n", refused_at);
  }
  SHOW(cuMemcpy3DBatchAsync(2, ops, 1, batch3d_stream));
  SHOW(cuMemFree(packed_volume));
  SHOW(cuStreamDestroy(batch3d_stream));
  SHOW(cuArrayDestroy(float_volume));
  // Stream attributes: a priority and a synchronisation policy set, read back and copied to
  // another stream; an attribute for launches only is refused.
  CUstream first = nullptr, second = nullptr;
  SHOW(cuStreamCreate(&first, CU_STREAM_NON_BLOCKING));
  SHOW(cuStreamCreate(&second, CU_STREAM_NON_BLOCKING));
  CUstreamAttrValue value{};
  value.syncPolicy = CU_SYNC_POLICY_YIELD;
  SHOW(cuStreamSetAttribute(first, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &value));
  SHOW(cuStreamCopyAttributes(second, first));
  CUstreamAttrValue copied{};
  SHOW(cuStreamGetAttribute(second, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &copied));
  std::printf("stream attribute copied: %s\n",
              copied.syncPolicy == CU_SYNC_POLICY_YIELD ? "yes" : "no");
  SHOW(cuStreamSetAttribute(first, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, &value));
  SHOW(cuStreamDestroy(first));
  SHOW(cuStreamDestroy(second));
  // A pool of one's own: access, an allocation from it, the device's current pool, destroyed.
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool own_pool = nullptr;
  SHOW(cuMemPoolCreate(&own_pool, &props));
  CUmemAccessDesc access{};
  access.location = props.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SHOW(cuMemPoolSetAccess(own_pool, &access, 1));
  CUmemAccess_flags granted = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CUmemLocation where = props.location;
  SHOW(cuMemPoolGetAccess(&granted, own_pool, &where));
  CUdeviceptr pooled = 0;
  SHOW(cuMemAllocFromPoolAsync(&pooled, 4096, own_pool, nullptr));
  SHOW(cuMemFreeAsync(pooled, nullptr));
  SHOW(cuDeviceSetMemPool(device, own_pool));
  CUmemoryPool now = nullptr;
  SHOW(cuDeviceGetMemPool(&now, device));
  std::printf("own pool: read-write %s, current %s\n",
              granted == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "yes" : "no",
              now == own_pool ? "yes" : "no");
  SHOW(cuDeviceSetMemPool(device, pool));
  SHOW(cuMemPoolDestroy(own_pool));
  SHOW(cuMemPoolDestroy(own_pool));
  props.handleTypes = CU_MEM_HANDLE_TYPE_WIN32;  // a Windows handle: none on Linux
  SHOW(cuMemPoolCreate(&own_pool, &props));
  CUcontext own = nullptr, current = nullptr;
  SHOW(cuCtxCreate(&own, nullptr, 0, device));
  SHOW(cuCtxGetCurrent(&current));
  std::printf("own context current: %s\n", current == own && own != context ? "yes" : "no");
  CUdeviceptr memory = 0;
  SHOW(cuMemAlloc(&memory, 4096));
  SHOW(cuMemFree(memory));
  SHOW(cuCtxDestroy(own));
  SHOW(cuCtxGetCurrent(&current));
  std::printf("primary current again: %s\n", current == context ? "yes" : "no");
  CUexecAffinityParam affinity{};
  affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  affinity.param.smCount.val = 8;
  CUctxCreateParams params{&affinity, 1, nullptr};
  SHOW(cuCtxCreate(&own, &params, 0, device));
  CUlibrary library;
  CUlibraryOption preserve = CU_LIBRARY_BINARY_IS_PRESERVED;
  SHOW(cuLibraryLoadFromFile(&library, argv[1], nullptr, nullptr, 0, &preserve, nullptr, 1));
  SHOW(cuLibraryLoadFromFile(&library, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel;
  SHOW(cuLibraryGetKernel(&kernel, library, "_Z5saxpyifPKfPf"));
  // The kernel's library is the handle the application was given.
  CUlibrary of_kernel = nullptr;
  SHOW(cuKernelGetLibrary(&of_kernel, kernel));
  std::printf("the kernel's library: %s\n", of_kernel == library ? "its own" : "another");
  SHOW(cuLibraryUnload(library));
  SHOW(cuKernelGetLibrary(&of_kernel, kernel));
  // A library is loaded when first used: one never used is unloaded without the backend, and a
  // handle unloaded is gone; one whose fatbinary is damaged inside (an entry claims more bytes
  // than it has) loads "successfully" and its first use reports the damage.
  CUlibrary unused = nullptr;
  SHOW(cuLibraryLoadFromFile(&unused, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
  SHOW(cuLibraryUnload(unused));
  SHOW(cuLibraryUnload(unused));
  std::vector<unsigned char> image;
  if (FILE* file = std::fopen(argv[1], "rb")) {
    unsigned char chunk[4096];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) {
      image.insert(image.end(), chunk, chunk + n);
    }
    std::fclose(file);
  }
  if (image.size() > 64) {
    uint64_t payload;  // the first entry's payload size, at 8 in its header (after 16 bytes)
    std::memcpy(&payload, image.data() + 16 + 8, sizeof payload);
    payload += 1 << 20;
    std::memcpy(image.data() + 16 + 8, &payload, sizeof payload);
  }
  CUlibrary damaged = nullptr;
  SHOW(cuLibraryLoadData(&damaged, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  SHOW(cuLibraryGetKernel(&kernel, damaged, "_Z5saxpyifPKfPf"));
  SHOW(cuLibraryUnload(damaged));

  earlier_names(context);
  return 0;
}

// The driver's earlier names of functions it has under new ones (cuda.h's macros would call the
// new ones): called by their old symbols, as a program built against an older cuda.h does.
#undef cuStreamBeginCapture
#undef cuEventElapsedTime
#undef cuEventDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuStreamDestroy
extern "C" CUresult cuStreamBeginCapture(CUstream hStream);
extern "C" CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd);
extern "C" CUresult cuEventDestroy(CUevent hEvent);
extern "C" CUresult cuCtxPushCurrent(CUcontext ctx);
extern "C" CUresult cuCtxPopCurrent(CUcontext* pctx);
extern "C" CUresult cuStreamDestroy(CUstream hStream);

// A capture begun without a mode, the stream's context with no green one, events timed and
// destroyed, a context pushed and popped, a stream destroyed.
void earlier_names(CUcontext context) {
  CUstream legacy_stream = nullptr;
  SHOW(cuStreamCreate(&legacy_stream, CU_STREAM_NON_BLOCKING));
  SHOW(cuStreamBeginCapture(legacy_stream));
  CUgraph legacy_graph = nullptr;
  SHOW(cuStreamEndCapture(legacy_stream, &legacy_graph));
  SHOW(cuGraphDestroy(legacy_graph));
  CUcontext stream_context = nullptr;
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(uintptr_t{1});
  SHOW(cuStreamGetCtx_v2(legacy_stream, &stream_context, &green));
  std::printf("stream context: %s, green context: %s\n",
              stream_context == context ? "the primary" : "another",
              green == nullptr ? "none" : "some");
  CUevent start = nullptr, end = nullptr;
  SHOW(cuEventCreate(&start, CU_EVENT_DEFAULT));
  SHOW(cuEventCreate(&end, CU_EVENT_DEFAULT));
  SHOW(cuEventRecord(start, legacy_stream));
  SHOW(cuEventRecord(end, legacy_stream));
  SHOW(cuEventSynchronize(end));
  float elapsed = -1;
  SHOW(cuEventElapsedTime(&elapsed, start, end));
  SHOW(cuEventDestroy(start));
  SHOW(cuEventDestroy(end));
  SHOW(cuCtxPushCurrent(context));
  CUcontext popped = nullptr;
  SHOW(cuCtxPopCurrent(&popped));
  std::printf("popped the pushed context: %s\n", popped == context ? "yes" : "no");
  SHOW(cuStreamDestroy(legacy_stream));
}
