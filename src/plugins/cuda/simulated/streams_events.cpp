// Streams and events of the simulated device: everything completes when it is issued, so every
// stream is always idle and an event is complete once recorded.
#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>

#include "plugins/cuda/common/driver_wire.h"
#include "state.h"

namespace sim = gvirtus::simulated;

CUresult sim::create_stream(State& s, CUstream* stream, unsigned flags, int priority) {
  if (stream == nullptr || (flags & ~unsigned{CU_STREAM_NON_BLOCKING}) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const uint32_t number = s.next_stream++;
  // A handle of ours that is never dereferenced: the stream's number, in an address no
  // allocation has, at a base drawn once per process as a real driver's heap is placed (ASLR),
  // so that two backends of a client's pool do not give the same handles (docs/cluster.md).
  static const uintptr_t base =
      uintptr_t{0x5100000000} + (uintptr_t{std::random_device{}() & 0xffff} << 24);
  const auto handle = reinterpret_cast<CUstream>(base + number * 16);
  s.streams.emplace(handle, number);
  // A priority outside the range is clamped into it, as the driver clamps it.
  s.stream_properties[handle] = {
      flags, std::clamp(priority, sim::kGreatestStreamPriority, sim::kLeastStreamPriority)};
  sim::own(s, handle);
  *stream = handle;
  return CUDA_SUCCESS;
}

namespace {

sim::Event* event(sim::State& s, CUevent e) {
  const auto it = s.events.find(e);
  return it != s.events.end() ? it->second.get() : nullptr;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return sim::guarded([&](sim::State& s) {
    if (const CUresult r = sim::needs_context(); r != CUDA_SUCCESS) return r;
    return sim::create_stream(s, phStream, Flags);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags,
                                                             int priority) {
  return sim::guarded([&](sim::State& s) {
    if (const CUresult r = sim::needs_context(); r != CUDA_SUCCESS) return r;
    return sim::create_stream(s, phStream, flags,
                              priority);  // one queue: the priority is kept only
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    // A capture in progress ends with its stream, and the streams that joined it leave it.
    if (const auto capture = s.capturing.find(hStream);
        capture != s.capturing.end() && capture->second.origin == hStream) {
      sim::leave_capture(s, capture->second.id, hStream);
    }
    s.capturing.erase(hStream);
    s.invalidated_captures.erase(hStream);
    s.stream_attributes.erase(hStream);
    s.stream_properties.erase(hStream);
    s.green_streams.erase(hStream);
    sim::disown(s, hStream);
    return s.streams.erase(hStream) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

// Stream attributes are kept as set and read back (zero until set); they change nothing here.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr,
                                                       const CUstreamAttrValue* value) {
  return sim::guarded([&](sim::State& s) {
    if (value == nullptr || !gvirtus::cuda::stream_attribute(attr)) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    s.stream_attributes[hStream][attr] = *value;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr,
                                                       CUstreamAttrValue* value_out) {
  return sim::guarded([&](sim::State& s) {
    if (value_out == nullptr || !gvirtus::cuda::stream_attribute(attr))
      return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto& set = s.stream_attributes[hStream];
    const auto it = set.find(attr);
    *value_out = it != set.end() ? it->second : CUstreamAttrValue{};
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamCopyAttributes(CUstream dst, CUstream src) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_stream(s, dst) || !sim::known_stream(s, src)) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    s.stream_attributes[dst] = s.stream_attributes[src];
    return CUDA_SUCCESS;
  });
}

// Waiting for a capturing stream is illegal: the driver refuses it (and ends the capture).
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return sim::waited_for(s, hStream);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamQuery(CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return sim::waited_for(s, hStream);  // a capturing stream cannot be asked
  });
}

// Waiting for an event recorded in a capture that goes on joins the capture (fork and join): the
// stream's next work depends on what the event's stream had captured when it was recorded.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
                                                    unsigned int Flags) {
  return sim::guarded([&](sim::State& s) {
    const sim::Event* e = event(s, hEvent);
    if (!sim::known_stream(s, hStream) || e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (Flags > CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    if (!e->in_capture) return CUDA_SUCCESS;
    const sim::Event::InCapture& recorded = *e->in_capture;
    const auto origin = s.capturing.find(recorded.origin);
    if (origin == s.capturing.end() || origin->second.id != recorded.id) {
      return CUDA_SUCCESS;  // that capture has ended
    }
    const auto waiting = s.capturing.find(hStream);
    if (waiting == s.capturing.end()) {
      if (hStream == nullptr || hStream == CU_STREAM_LEGACY) {
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;  // the legacy stream joins no capture
      }
      sim::Capture joined;
      joined.graph = origin->second.graph;
      joined.dependencies = recorded.nodes;
      joined.origin = recorded.origin;
      joined.id = recorded.id;
      s.capturing.emplace(hStream, std::move(joined));
      return CUDA_SUCCESS;
    }
    if (waiting->second.id != recorded.id) return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    std::vector<sim::Node*>& present = waiting->second.dependencies;
    for (sim::Node* node : recorded.nodes) {
      if (std::find(present.begin(), present.end(), node) == present.end()) present.push_back(node);
    }
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetPriority(CUstream hStream, int* priority) {
  return sim::guarded([&](sim::State& s) {
    if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto it = s.stream_properties.find(hStream);  // the predefined streams: 0 and no flags
    *priority = it != s.stream_properties.end() ? it->second.second : 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto it = s.stream_properties.find(hStream);
    *flags = it != s.stream_properties.end() ? it->second.first : 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return sim::guarded([&](sim::State& s) {
    if (phEvent == nullptr || (Flags & ~0xfu) != 0) return CUDA_ERROR_INVALID_VALUE;
    auto created = std::make_unique<sim::Event>();
    const auto handle = reinterpret_cast<CUevent>(created.get());
    s.events.emplace(handle, std::move(created));
    sim::own(s, handle);
    *phEvent = handle;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    sim::disown(s, hEvent);
    return s.events.erase(hEvent) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  return sim::guarded([&](sim::State& s) {
    sim::Event* e = event(s, hEvent);
    if (e == nullptr || !sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    if (const auto capture = s.capturing.find(hStream); capture != s.capturing.end()) {
      e->in_capture = sim::Event::InCapture{capture->second.origin, capture->second.id,
                                            capture->second.dependencies};
      return CUDA_SUCCESS;
    }
    e->in_capture.reset();
    e->recorded = true;
    return CUDA_SUCCESS;
  });
}

// A context's work, recorded into an event or waited on: the simulated streams have none left.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    sim::Event* e = event(s, hEvent);
    if (!sim::known_context(s, hCtx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    e->recorded = true;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_context(s, hCtx)) return CUDA_ERROR_INVALID_CONTEXT;
    return event(s, hEvent) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    return event(s, hEvent) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuEventQuery(CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    return event(s, hEvent) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

// Elapsed time between two recorded events: 0, since nothing takes time here.
GVIRTUS_SIMULATED_EXPORT CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart,
                                                        CUevent hEnd) {
  return sim::guarded([&](sim::State& s) {
    if (pMilliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const sim::Event* start = event(s, hStart);
    const sim::Event* end = event(s, hEnd);
    if (start == nullptr || end == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (!start->recorded || !end->recorded) return CUDA_ERROR_NOT_READY;
    *pMilliseconds = 0.0f;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
                                                         unsigned int flags) {
  if ((flags & ~unsigned{CU_EVENT_RECORD_EXTERNAL}) != 0) return CUDA_ERROR_INVALID_VALUE;
  return cuEventRecord(hEvent, hStream);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetDevice(CUstream hStream, CUdevice* device) {
  return sim::guarded([&](sim::State& s) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    // Streams are the shared state's, not a device's: the calling thread's device.
    const CUdevice dev = sim::context_device(s, sim::effective_context());
    if (dev < 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *device = dev;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  return sim::guarded([&](sim::State& s) {
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    // A green context's stream: the context made for it; the rest are the shared state's, the
    // thread's context.
    const auto green = s.green_streams.find(hStream);
    *pctx = green != s.green_streams.end() ? s.green_contexts.at(green->second).context
                                           : sim::effective_context();
    return CUDA_SUCCESS;
  });
}

// Ids: the null and predefined streams' own small numbers, then the creation order.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  return sim::guarded([&](sim::State& s) {
    if (streamId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto it = s.streams.find(hStream);
    *streamId = it != s.streams.end() ? 100 + it->second
                                      : reinterpret_cast<uintptr_t>(hStream);  // 0, 1 or 2
    return CUDA_SUCCESS;
  });
}

// Capturing from cuStreamBeginCapture to cuStreamEndCapture (graphs.cpp), invalidated once the
// stream was waited for (waited_for).
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamIsCapturing(CUstream hStream,
                                                      CUstreamCaptureStatus* captureStatus) {
  return sim::guarded([&](sim::State& s) {
    if (captureStatus == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    *captureStatus = s.capturing.count(hStream) == 0 ? CU_STREAM_CAPTURE_STATUS_NONE
                     : s.invalidated_captures.count(hStream) != 0
                         ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                         : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  if (mode == nullptr || *mode < CU_STREAM_CAPTURE_MODE_GLOBAL ||
      *mode > CU_STREAM_CAPTURE_MODE_RELAXED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  thread_local CUstreamCaptureMode current = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::swap(current, *mode);
  return CUDA_SUCCESS;
}
