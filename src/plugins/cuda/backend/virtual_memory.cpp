// The backend's handlers of virtual memory management (wire: common/driver_wire.h's
// VirtualMemoryRequest). The session's reservations, mappings and physical allocations are kept
// here (one session per worker process), and every request is vetted against them before the
// driver sees it: a map must fall inside a reservation of the session and name a physical
// allocation of the session; an access setting must cover mapped memory only; a free must name a
// whole reservation with nothing mapped. What is mapped is device memory of the session's for
// every other call: each reservation's mapped runs are recorded in the allocation ledger, owned by
// the reservation, so copies and memsets may span adjacent mappings, as on the driver.
//
// Shareable handles (rows 292-293; the scheme: src/common/shareable_token.h): a physical
// allocation of the session's exported as a POSIX descriptor stays with this session, which
// answers a token for it and its size (services/shareable_handles.h); an import fetches both, and
// the allocation becomes the session's, of that size. A fabric handle's bytes travel as they are;
// importing one is refused (CUDA_ERROR_NOT_SUPPORTED): its size, which the session's mappings are
// vetted against, cannot be learnt. A Windows security attribute pointer is never passed on.
#include <cuda.h>

#include <cstring>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backend/services/session_services.h"
#include "backend/services/shareable_handles.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "cuda_real.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/backend/virtual_memory.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/virtual_ranges.h"

namespace gvirtus::cuda {
namespace {

// A physical allocation of the session's: its size, and the references the session holds (one
// from cuMemCreate, one per cuMemRetainAllocationHandle, each given back by a cuMemRelease). An
// allocation released to none is kept at none: its mappings may still be retained again, and
// nothing else may name it.
struct Physical {
  uint64_t bytes;
  uint64_t references;
  bool multicast = false;  // a multicast object (cuMulticastCreate)
};

struct Session {
  std::mutex mutex;
  VirtualRanges ranges;
  std::map<uint64_t, Physical> physical;  // by CUmemGenericAllocationHandle
};

// The session's physical allocation `handle` while it holds a reference to it, else null.
Physical* held(Session& s, uint64_t handle) {
  const auto it = s.physical.find(handle);
  return it != s.physical.end() && it->second.references > 0 ? &it->second : nullptr;
}

Session& session() {
  static Session s;  // one session per worker process
  return s;
}

// Re-records a reservation's mapped runs in the ledger, owned by the reservation.
void publish_runs(Session& s, uint64_t reservation) {
  auto& ledger = services::session_services().allocations;
  const auto* owner = reinterpret_cast<const void*>(static_cast<uintptr_t>(reservation));
  ledger.owner_gone(owner);
  for (const auto& [start, bytes] : s.ranges.runs(reservation)) {
    ledger.owned(owner, reinterpret_cast<const void*>(static_cast<uintptr_t>(start)), bytes);
  }
}

// A CUmemAllocationProp from the wire, made safe for the driver: its Windows pointer cleared,
// and of the shareable handle types only those gvirtus shares (a POSIX descriptor, a fabric
// handle; a Windows one: CUDA_ERROR_NOT_SUPPORTED).
CUresult allocation_prop(WireReader& in, CUmemAllocationProp& prop) {
  const auto bytes = in.get_blob(sizeof prop);
  if (bytes.size() != sizeof prop) {
    raise(ErrorKind::kInvalidInput,
          "a CUmemAllocationProp of " + std::to_string(bytes.size()) + " bytes");
  }
  std::memcpy(&prop, bytes.data(), sizeof prop);
  prop.win32HandleMetaData = nullptr;
  return (prop.requestedHandleTypes & ~(kHandlePosixFd | kHandleFabric)) == 0
             ? CUDA_SUCCESS
             : CUDA_ERROR_NOT_SUPPORTED;
}

// cuMemExportToShareableHandle: a physical allocation the session holds, with its size.
void export_physical(Session& s, WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<ShareableRequest>(in);
  in.expect_end();
  if (shareable_blob_bytes(request.type) == 0) {
    raise(ErrorKind::kInvalidInput, "an export of handle type " + std::to_string(request.type));
  }
  const Physical* physical = held(s, request.handle);
  result =
      physical != nullptr ? lacks(real().cuMemExportToShareableHandle) : CUDA_ERROR_INVALID_VALUE;
  alignas(8) std::byte handle[kFabricHandleBytes] = {};
  if (result == CUDA_SUCCESS) {
    result = real().cuMemExportToShareableHandle(
        handle, request.handle, static_cast<CUmemAllocationHandleType>(request.type),
        request.flags);
  }
  result = services::reply_export(out, result, CUDA_ERROR_OPERATING_SYSTEM, request.type, handle,
                                  physical != nullptr ? physical->bytes : 0,
                                  "cuMemExportToShareableHandle");
}

// cuMemImportFromShareableHandle: the descriptor and size fetched from the exporting session; the
// allocation becomes the session's, one reference held.
void import_physical(Session& s, WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<ShareableRequest>(in);
  const auto blob = in.get_blob(kFabricHandleBytes);
  in.expect_end();
  services::ImportSource source;
  result = lacks(real().cuMemImportFromShareableHandle);
  if (result == CUDA_SUCCESS && request.type == kHandleFabric) {
    GVIRTUS_LOG(kWarning) << "cuMemImportFromShareableHandle: a fabric handle's size cannot be "
                             "learnt, and the session's mappings are vetted against it";
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  if (result == CUDA_SUCCESS) {
    result = services::fetch_import(request.type, blob, source, CUDA_ERROR_INVALID_VALUE,
                                    "cuMemImportFromShareableHandle");
  }
  CUmemGenericAllocationHandle handle = 0;
  if (result == CUDA_SUCCESS) {
    result = real().cuMemImportFromShareableHandle(
        &handle, source.os_handle(), static_cast<CUmemAllocationHandleType>(request.type));
  }
  if (result == CUDA_SUCCESS) {
    Physical& physical = s.physical[handle];  // a handle the session released may come again
    physical.bytes = source.bytes;
    ++physical.references;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? handle : 0);
}

}  // namespace

namespace {

// The multicast calls (rows 305-309), vetted against the session's allocations and mappings:
// request a VirtualMemoryRequest - create: the properties' blob after it; add device: handle,
// flags the device; bind memory: address the object's offset, bytes, alignment the memory's
// offset, handle, flags, then u64 the memory's handle; bind an address: address the memory's
// address, bytes, alignment the object's offset, handle, flags; unbind: address the object's
// offset, bytes, handle, flags the device. A create's reply brings u64 the object.
bool run_multicast(Session& s, Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto r = get_record<VirtualMemoryRequest>(in);
  const Physical* object = fn == Fn::cuMulticastCreate ? nullptr : held(s, r.handle);
  const bool vetted = object != nullptr && object->multicast;
  // [offset, offset + bytes) within the object.
  const auto within = [&](uint64_t offset, uint64_t bytes) {
    return vetted && offset <= object->bytes && bytes <= object->bytes - offset;
  };
  uint64_t answer = 0;
  switch (fn) {
    case Fn::cuMulticastCreate: {
      CUmulticastObjectProp prop{};
      const auto bytes = in.get_blob(sizeof prop);
      in.expect_end();
      if (bytes.size() != sizeof prop) {
        raise(ErrorKind::kInvalidInput,
              "a CUmulticastObjectProp of " + std::to_string(bytes.size()) + " bytes");
      }
      std::memcpy(&prop, bytes.data(), sizeof prop);
      result = (prop.handleTypes & ~uint64_t{kHandlePosixFd | kHandleFabric}) == 0
                   ? lacks(real().cuMulticastCreate)
                   : CUDA_ERROR_NOT_SUPPORTED;
      CUmemGenericAllocationHandle handle = 0;
      if (result == CUDA_SUCCESS) result = real().cuMulticastCreate(&handle, &prop);
      if (result == CUDA_SUCCESS) {
        s.physical[handle] = Physical{prop.size, 1, true};
        answer = handle;
      }
      break;
    }
    case Fn::cuMulticastAddDevice:
      in.expect_end();
      result = vetted ? lacks(real().cuMulticastAddDevice) : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result = real().cuMulticastAddDevice(r.handle, static_cast<CUdevice>(r.flags));
      }
      break;
    case Fn::cuMulticastBindMem: {
      const auto memory_handle = in.get<uint64_t>();
      in.expect_end();
      const Physical* memory = held(s, memory_handle);
      result = within(r.address, r.bytes) && memory != nullptr && !memory->multicast &&
                       r.alignment <= memory->bytes && r.bytes <= memory->bytes - r.alignment
                   ? lacks(real().cuMulticastBindMem)
                   : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result = real().cuMulticastBindMem(r.handle, r.address, memory_handle, r.alignment, r.bytes,
                                           r.flags);
      }
      break;
    }
    case Fn::cuMulticastBindAddr:
      in.expect_end();
      result = within(r.alignment, r.bytes) && s.ranges.mapped(r.address, r.bytes)
                   ? lacks(real().cuMulticastBindAddr)
                   : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result = real().cuMulticastBindAddr(r.handle, r.alignment, r.address, r.bytes, r.flags);
      }
      break;
    default:  // cuMulticastUnbind
      in.expect_end();
      result =
          within(r.address, r.bytes) ? lacks(real().cuMulticastUnbind) : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result =
            real().cuMulticastUnbind(r.handle, static_cast<CUdevice>(r.flags), r.address, r.bytes);
      }
      break;
  }
  out.put<int32_t>(result);
  if (fn == Fn::cuMulticastCreate) out.put<uint64_t>(result == CUDA_SUCCESS ? answer : 0);
  return true;
}

}  // namespace

bool run_virtual_memory(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuMulticastCreate:
    case Fn::cuMulticastAddDevice:
    case Fn::cuMulticastBindMem:
    case Fn::cuMulticastBindAddr:
    case Fn::cuMulticastUnbind: {
      Session& s = session();
      std::lock_guard lock(s.mutex);
      return run_multicast(s, fn, in, out, result);
    }
    default:
      break;
  }
  if (fn == Fn::cuMemExportToShareableHandle || fn == Fn::cuMemImportFromShareableHandle) {
    Session& s = session();
    std::lock_guard lock(s.mutex);
    if (fn == Fn::cuMemExportToShareableHandle) {
      export_physical(s, in, out, result);
    } else {
      import_physical(s, in, out, result);
    }
    return true;
  }
  switch (fn) {
    case Fn::cuMemAddressReserve:
    case Fn::cuMemAddressFree:
    case Fn::cuMemCreate:
    case Fn::cuMemRelease:
    case Fn::cuMemMap:
    case Fn::cuMemUnmap:
    case Fn::cuMemSetAccess:
    case Fn::cuMemGetAllocationGranularity:
    case Fn::cuMemGetAccess:
    case Fn::cuMemGetAllocationPropertiesFromHandle:
    case Fn::cuMemRetainAllocationHandle:
      break;
    default:
      return false;
  }
  const auto r = get_record<VirtualMemoryRequest>(in);
  Session& s = session();
  std::lock_guard lock(s.mutex);
  uint64_t answer = 0;  // the address, handle or granularity some calls reply with
  switch (fn) {
    case Fn::cuMemAddressReserve: {
      in.expect_end();
      result = lacks(real().cuMemAddressReserve);
      CUdeviceptr address = 0;
      if (result == CUDA_SUCCESS) {
        result = real().cuMemAddressReserve(&address, r.bytes, r.alignment, r.address, r.flags);
      }
      if (result == CUDA_SUCCESS && !s.ranges.reserve(address, r.bytes)) {
        real().cuMemAddressFree(address, r.bytes);  // the driver's answer overlaps our records
        result = CUDA_ERROR_INVALID_VALUE;
      }
      if (result == CUDA_SUCCESS) answer = address;
      break;
    }
    case Fn::cuMemAddressFree:
      in.expect_end();
      result = s.ranges.reservation_of(r.address, r.bytes) == r.address
                   ? lacks(real().cuMemAddressFree)
                   : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) result = real().cuMemAddressFree(r.address, r.bytes);
      if (result == CUDA_SUCCESS && !s.ranges.release(r.address, r.bytes)) {
        result = CUDA_ERROR_INVALID_VALUE;  // not as reserved, or still mapped
      }
      break;
    case Fn::cuMemCreate: {
      CUmemAllocationProp prop{};
      result = allocation_prop(in, prop);
      in.expect_end();
      if (result == CUDA_SUCCESS) result = lacks(real().cuMemCreate);
      CUmemGenericAllocationHandle handle = 0;
      if (result == CUDA_SUCCESS) result = real().cuMemCreate(&handle, r.bytes, &prop, r.flags);
      if (result == CUDA_SUCCESS) {
        s.physical[handle] = Physical{r.bytes, 1};
        answer = handle;
      }
      break;
    }
    case Fn::cuMemRelease:
      in.expect_end();
      result = held(s, r.handle) != nullptr ? lacks(real().cuMemRelease) : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) result = real().cuMemRelease(r.handle);
      if (result == CUDA_SUCCESS) --s.physical[r.handle].references;
      break;
    case Fn::cuMemRetainAllocationHandle: {
      // A mapped address of the session's: its allocation is one of the session's.
      in.expect_end();
      result = s.ranges.mapped(r.address, 1) ? lacks(real().cuMemRetainAllocationHandle)
                                             : CUDA_ERROR_INVALID_VALUE;
      CUmemGenericAllocationHandle handle = 0;
      if (result == CUDA_SUCCESS) {
        result = real().cuMemRetainAllocationHandle(
            &handle, reinterpret_cast<void*>(static_cast<uintptr_t>(r.address)));
      }
      if (result != CUDA_SUCCESS) break;
      const auto physical = s.physical.find(handle);
      if (physical == s.physical.end()) {
        real().cuMemRelease(handle);  // not the session's after all: the reference goes back
        result = CUDA_ERROR_INVALID_VALUE;
        break;
      }
      ++physical->second.references;
      answer = handle;
      break;
    }
    case Fn::cuMemMap: {
      in.expect_end();
      const auto reservation = s.ranges.reservation_of(r.address, r.bytes);
      const Physical* physical = held(s, r.handle);
      result = reservation && physical != nullptr && r.alignment <= physical->bytes &&
                       r.bytes <= physical->bytes - r.alignment && !s.ranges.mapped(r.address, 1)
                   ? lacks(real().cuMemMap)
                   : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result = real().cuMemMap(r.address, r.bytes, r.alignment, r.handle, r.flags);
      }
      if (result == CUDA_SUCCESS) {
        if (!s.ranges.map(r.address, r.bytes)) {
          real().cuMemUnmap(r.address, r.bytes);  // it overlaps a mapping of ours
          result = CUDA_ERROR_INVALID_VALUE;
        } else {
          publish_runs(s, *reservation);
        }
      }
      break;
    }
    case Fn::cuMemUnmap: {
      in.expect_end();
      const auto reservation = s.ranges.reservation_of(r.address, r.bytes);
      result = reservation && s.ranges.mapped(r.address, 1) ? lacks(real().cuMemUnmap)
                                                            : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) result = real().cuMemUnmap(r.address, r.bytes);
      if (result == CUDA_SUCCESS) {
        s.ranges.unmap(r.address, r.bytes);
        publish_runs(s, *reservation);
      }
      break;
    }
    case Fn::cuMemSetAccess: {
      const auto blob = in.get_blob(kMaxAccessDescriptors * sizeof(CUmemAccessDesc));
      in.expect_end();
      if (blob.size() % sizeof(CUmemAccessDesc) != 0) {
        raise(ErrorKind::kInvalidInput,
              "access descriptors of " + std::to_string(blob.size()) + " bytes");
      }
      std::vector<CUmemAccessDesc> descriptors(blob.size() / sizeof(CUmemAccessDesc));
      if (!blob.empty()) std::memcpy(descriptors.data(), blob.data(), blob.size());
      result = s.ranges.mapped(r.address, r.bytes) ? lacks(real().cuMemSetAccess)
                                                   : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result = real().cuMemSetAccess(r.address, r.bytes,
                                       descriptors.empty() ? nullptr : descriptors.data(),
                                       descriptors.size());
      }
      break;
    }
    case Fn::cuMemGetAllocationGranularity: {
      CUmemAllocationProp prop{};
      allocation_prop(in, prop);  // a shareable handle type is a fair question here
      in.expect_end();
      result = lacks(real().cuMemGetAllocationGranularity);
      size_t granularity = 0;
      if (result == CUDA_SUCCESS) {
        result = real().cuMemGetAllocationGranularity(
            &granularity, &prop, static_cast<CUmemAllocationGranularity_flags>(r.flags & 1));
      }
      if (result == CUDA_SUCCESS) answer = granularity;
      break;
    }
    case Fn::cuMemGetAccess: {
      // A mapped address of the session's, for a location the driver judges.
      CUmemLocation location{};
      const auto bytes = in.get_blob(sizeof location);
      if (bytes.size() != sizeof location) {
        raise(ErrorKind::kInvalidInput,
              "a CUmemLocation of " + std::to_string(bytes.size()) + " bytes");
      }
      std::memcpy(&location, bytes.data(), sizeof location);
      in.expect_end();
      result =
          s.ranges.mapped(r.address, 1) ? lacks(real().cuMemGetAccess) : CUDA_ERROR_INVALID_VALUE;
      unsigned long long flags = 0;
      if (result == CUDA_SUCCESS) result = real().cuMemGetAccess(&flags, &location, r.address);
      if (result == CUDA_SUCCESS) answer = flags;
      break;
    }
    case Fn::cuMemGetAllocationPropertiesFromHandle: {
      in.expect_end();
      CUmemAllocationProp prop{};
      result = held(s, r.handle) != nullptr ? lacks(real().cuMemGetAllocationPropertiesFromHandle)
                                            : CUDA_ERROR_INVALID_VALUE;
      if (result == CUDA_SUCCESS) {
        result = real().cuMemGetAllocationPropertiesFromHandle(&prop, r.handle);
      }
      out.put<int32_t>(result);
      prop.win32HandleMetaData = nullptr;  // the backend's pointer means nothing to the client
      if (result == CUDA_SUCCESS) out.put_blob(&prop, sizeof prop);
      return true;
    }
    default:
      break;
  }
  out.put<int32_t>(result);
  if (fn == Fn::cuMemAddressReserve || fn == Fn::cuMemCreate ||
      fn == Fn::cuMemGetAllocationGranularity || fn == Fn::cuMemGetAccess ||
      fn == Fn::cuMemRetainAllocationHandle) {
    out.put<uint64_t>(result == CUDA_SUCCESS ? answer : 0);
  }
  return true;
}

}  // namespace gvirtus::cuda
