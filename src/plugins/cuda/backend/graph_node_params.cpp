// Graph nodes' parameters from and to the wire (graph_node_params.h).
#include "plugins/cuda/backend/graph_node_params.h"

#include <cstring>
#include <string>

#include "backend/services/session_services.h"
#include "common/call_marshal.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/array_boxes.h"
#include "plugins/cuda/backend/param_layouts.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;
using Wide = unsigned __int128;

// The code a kernel node runs - its function, else its kernel - and whether it was named as a
// library's kernel (param_layout's word for a handle the session does not hold).
CUfunction code_of(CUfunction function, CUkernel kernel, bool& is_kernel) {
  is_kernel = function == nullptr;
  return is_kernel ? reinterpret_cast<CUfunction>(kernel) : function;
}

// An enum field set from the wire's bits without forming an out-of-range enum value in our code
// (the driver judges the value).
template <typename E>
void set_bits(E& field, uint32_t bits) {
  static_assert(sizeof(E) == sizeof bits);
  std::memcpy(&field, &bits, sizeof bits);
}

template <typename E>
uint32_t bits_of(const E& field) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  uint32_t bits;
  std::memcpy(&bits, &field, sizeof bits);
  return bits;
}

}  // namespace

void get_kernel_params(WireReader& in, KernelNodeArguments& arguments, CUresult& vetted) {
  const auto record = get_record<KernelNodeRecord>(in);
  const auto bytes = in.get_blob(kMaxParamBytes);
  CUDA_KERNEL_NODE_PARAMS& p = arguments.params;
  p = CUDA_KERNEL_NODE_PARAMS{};
  p.func = record.function, p.kern = record.kernel, p.ctx = record.context;
  p.gridDimX = record.grid_x, p.gridDimY = record.grid_y, p.gridDimZ = record.grid_z;
  p.blockDimX = record.block_x, p.blockDimY = record.block_y, p.blockDimZ = record.block_z;
  p.sharedMemBytes = record.shared_bytes;
  vetted =
      first_failure(CUDA_SUCCESS, vet(record.function), vet(record.kernel), vet(record.context));
  if (vetted == CUDA_SUCCESS && record.function == nullptr && record.kernel == nullptr) {
    vetted = CUDA_ERROR_INVALID_VALUE;  // no code to run: the driver's answer
  }
  if (vetted != CUDA_SUCCESS) return;
  bool is_kernel = false;
  const CUfunction code = code_of(record.function, record.kernel, is_kernel);
  std::shared_ptr<const ParamLayout> layout;
  vetted = param_layout(code, is_kernel, layout);
  if (vetted != CUDA_SUCCESS) return;
  if (bytes.size() != layout->bytes) {
    vetted = static_cast<CUresult>(
        services::refuse(CUDA_ERROR_INVALID_VALUE, "cuda", "kernel node's parameter buffer", code,
                         ("of " + std::to_string(bytes.size()) + " bytes for a kernel that takes " +
                          std::to_string(layout->bytes))
                             .c_str()));
    return;
  }
  arguments.buffer.assign((bytes.size() + 7) / 8, 0);
  if (!bytes.empty()) std::memcpy(arguments.buffer.data(), bytes.data(), bytes.size());
  auto* base = reinterpret_cast<std::byte*>(arguments.buffer.data());
  arguments.pointers.clear();
  for (const auto& [offset, size] : layout->params) arguments.pointers.push_back(base + offset);
  p.kernelParams = arguments.pointers.empty() ? nullptr : arguments.pointers.data();
}

CUresult pack_kernel_params(const CUDA_KERNEL_NODE_PARAMS& p, PackedKernelNode& packed) {
  packed.record =
      KernelNodeRecord{p.func,     p.kern,      p.ctx,       p.gridDimX,  p.gridDimY,
                       p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ, p.sharedMemBytes};
  bool is_kernel = false;
  const CUfunction code = code_of(p.func, p.kern, is_kernel);
  if (code == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<const ParamLayout> layout;
  if (const CUresult r = param_layout(code, is_kernel, layout); r != CUDA_SUCCESS) return r;
  packed.arguments.assign(layout->bytes, std::byte{0});
  if (p.kernelParams != nullptr) {
    for (size_t i = 0; i < layout->params.size(); ++i) {
      const auto [offset, size] = layout->params[i];
      if (p.kernelParams[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(packed.arguments.data() + offset, p.kernelParams[i], size);
    }
    return CUDA_SUCCESS;
  }
  // The `extra` form: a buffer and its size, to CU_LAUNCH_PARAM_END.
  const void* buffer = nullptr;
  size_t bytes = 0;
  for (size_t i = 0; p.extra != nullptr && i < 64 && p.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = p.extra[i + 1];
    if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && p.extra[i + 1] != nullptr) {
      std::memcpy(&bytes, p.extra[i + 1], sizeof bytes);
    }
  }
  if (buffer == nullptr) return layout->bytes == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  if (bytes != layout->bytes) return CUDA_ERROR_INVALID_VALUE;
  if (bytes != 0) std::memcpy(packed.arguments.data(), buffer, bytes);
  return CUDA_SUCCESS;
}

void put_kernel_node(WireWriter& out, const PackedKernelNode& packed) {
  put_record(out, packed.record);
  out.put_blob(packed.arguments.data(), packed.arguments.size());
}

CUDA_MEMSET_NODE_PARAMS get_memset_params(WireReader& in, CUcontext& context, CUresult& vetted) {
  const auto record = get_record<MemsetNodeRecord>(in);
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = record.dst, p.pitch = record.pitch, p.value = record.value;
  p.elementSize = record.element_size, p.width = record.width, p.height = record.height;
  context = record.context;
  vetted = vet(record.context);
  if (vetted != CUDA_SUCCESS) return p;
  const uint32_t size = record.element_size;
  if ((size != 1 && size != 2 && size != 4) || record.width == 0 || record.height == 0) {
    vetted = CUDA_ERROR_INVALID_VALUE;
    return p;
  }
  // Rows of width elements, pitch bytes apart: all of it the session's memory.
  const Wide row = Wide{record.width} * size;
  if (record.height > 1 && Wide{record.pitch} < row) {
    vetted = CUDA_ERROR_INVALID_VALUE;
    return p;
  }
  const Wide extent = Wide{record.height - 1} * record.pitch + row;
  if (Wide{record.dst} + extent > UINT64_MAX) {
    vetted = CUDA_ERROR_INVALID_VALUE;
    return p;
  }
  vetted = vet_device_pointer(record.dst, static_cast<uint64_t>(extent));
  return p;
}

void put_memset_params(WireWriter& out, const CUDA_MEMSET_NODE_PARAMS& p) {
  put_record(out,
             MemsetNodeRecord{p.dst, p.pitch, p.value, p.elementSize, p.width, p.height, nullptr});
}

CUDA_MEMCPY3D get_memcpy_params(WireReader& in, CUcontext& context, CUresult& vetted) {
  const auto request = get_record<ArrayBoxRequest>(in);
  context = marshal::get_value<CUcontext>(in);
  CUDA_MEMCPY3D copy{};
  vetted = first_failure(CUDA_SUCCESS, node_box(request, copy), vet(context));
  return copy;
}

namespace {

// One side of a CUDA_MEMCPY3D as a box side: the memory the driver names (a host side, which
// nodes made through gvirtus never have, travels as a packed host side at 0).
void put_side(uint32_t type, CUdeviceptr device, CUarray array, uint32_t& kind,
              CUdeviceptr& device_out, CUarray& array_out) {
  switch (type) {
    case CU_MEMORYTYPE_DEVICE:
      kind = static_cast<uint32_t>(BoxSide::kDevice), device_out = device;
      break;
    case CU_MEMORYTYPE_UNIFIED:
      kind = static_cast<uint32_t>(BoxSide::kUnified), device_out = device;
      break;
    case CU_MEMORYTYPE_ARRAY:
      kind = static_cast<uint32_t>(BoxSide::kArray), array_out = array;
      break;
    default:
      kind = static_cast<uint32_t>(BoxSide::kHost);
      break;
  }
}

}  // namespace

void put_memcpy_params(WireWriter& out, const CUDA_MEMCPY3D& c) {
  ArrayBoxRequest r{};
  put_side(bits_of(c.srcMemoryType), c.srcDevice, c.srcArray, r.src_side, r.src_device,
           r.src_array);
  put_side(bits_of(c.dstMemoryType), c.dstDevice, c.dstArray, r.dst_side, r.dst_device,
           r.dst_array);
  r.src_x = c.srcXInBytes, r.src_y = c.srcY, r.src_z = c.srcZ;
  r.src_pitch = c.srcPitch, r.src_height = c.srcHeight;
  r.dst_x = c.dstXInBytes, r.dst_y = c.dstY, r.dst_z = c.dstZ;
  r.dst_pitch = c.dstPitch, r.dst_height = c.dstHeight;
  r.width = c.WidthInBytes, r.height = c.Height, r.depth = c.Depth;
  put_record(out, r);
  marshal::put_value(out, CUcontext{nullptr});
}

CUDA_MEM_ALLOC_NODE_PARAMS get_alloc_params(WireReader& in, std::vector<CUmemAccessDesc>& access,
                                            CUresult& vetted) {
  const auto record = get_record<MemAllocNodeRecord>(in);
  const auto n = in.get<uint32_t>();
  if (n > kMaxAccessDescs) {
    raise(ErrorKind::kInvalidInput,
          "an allocation node with " + std::to_string(n) + " access descriptors");
  }
  access.resize(n);
  if (n > 0) {
    std::memcpy(access.data(), in.get_raw(n * sizeof(CUmemAccessDesc)).data(),
                n * sizeof(CUmemAccessDesc));
  }
  CUDA_MEM_ALLOC_NODE_PARAMS p{};
  set_bits(p.poolProps.allocType, record.alloc_type);
  set_bits(p.poolProps.handleTypes, record.handle_types);
  set_bits(p.poolProps.location.type, record.location_type);
  p.poolProps.location.id = record.location_id;
  p.accessDescs = access.empty() ? nullptr : access.data();
  p.accessDescCount = access.size();
  p.bytesize = record.bytes;
  // An exportable handle would be the backend machine's, of no use to the client.
  vetted = record.handle_types == 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
  return p;
}

void put_alloc_params(WireWriter& out, const CUDA_MEM_ALLOC_NODE_PARAMS& p) {
  put_record(out, MemAllocNodeRecord{
                      bits_of(p.poolProps.allocType), bits_of(p.poolProps.handleTypes),
                      bits_of(p.poolProps.location.type), p.poolProps.location.id, p.bytesize});
  const size_t n = p.accessDescs != nullptr ? p.accessDescCount : 0;
  out.put<uint32_t>(static_cast<uint32_t>(n));
  if (n > 0) out.put_raw(p.accessDescs, n * sizeof(CUmemAccessDesc));
}

}  // namespace gvirtus::cuda
