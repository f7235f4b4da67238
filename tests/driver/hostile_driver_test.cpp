// A client that speaks the cuda (driver) table but sends what no stub would, against a backend on
// the simulated device: module images that lie about their sizes, parameter buffers shorter than
// the kernel's layout, handles and device pointers the session never got, malformed records. A
// bad argument is answered with the driver's own error and the session goes on; a malformed
// request ends only its own session. The daemon and other sessions always go on.
#include <arpa/inet.h>
#include <cuda.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/call_marshal.h"
#include "common/content_hash.h"
#include "common/log_dump_wire.h"
#include "common/managed_batch_wire.h"
#include "common/shareable_token.h"
#include "common/wire.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "frontend/client.h"
#include "hostile_driver.h"
#include "plugins/cuda/common/driver_wire.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

TEST_F(HostileDriver, a_fatbinary_claiming_more_bytes_than_arrived_is_an_invalid_image) {
  const auto owned = client();
  Client& c = *owned;
  std::vector<std::byte> image = file(GVIRTUS_SAXPY_FATBIN);
  ASSERT_GT(image.size(), 64u);
  uint64_t files_size;
  std::memcpy(&files_size, image.data() + 8, sizeof files_size);
  files_size += 4096;  // the header now claims 4 KiB more than follows
  std::memcpy(image.data() + 8, &files_size, sizeof files_size);
  int32_t status = 0;
  EXPECT_EQ(load(c, image, status), nullptr);
  EXPECT_EQ(status, CUDA_ERROR_INVALID_IMAGE);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, a_fatbinary_whose_entries_lie_about_their_sizes_is_an_invalid_image) {
  const auto owned = client();
  Client& c = *owned;
  std::vector<std::byte> image = file(GVIRTUS_SAXPY_FATBIN);
  // The first entry's header (after the 16-byte fatbin header): its payload size at offset 8.
  uint64_t payload;
  std::memcpy(&payload, image.data() + 16 + 8, sizeof payload);
  payload += 1u << 20;
  std::memcpy(image.data() + 16 + 8, &payload, sizeof payload);
  int32_t status = 0;
  EXPECT_EQ(load(c, image, status), nullptr);
  EXPECT_EQ(status, CUDA_ERROR_INVALID_IMAGE);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, a_cubin_whose_sections_lie_past_its_end_is_an_invalid_image) {
  const auto owned = client();
  Client& c = *owned;
  std::vector<std::byte> image = file(GVIRTUS_SAXPY_CUBIN);
  image.resize(image.size() / 2);  // the section table now lies past the end
  int32_t status = 0;
  EXPECT_EQ(load(c, image, status), nullptr);
  EXPECT_EQ(status, CUDA_ERROR_INVALID_IMAGE);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, a_parameter_buffer_shorter_than_the_kernels_layout_is_refused) {
  const auto owned = client();
  Client& c = *owned;
  const CUfunction f = saxpy(c);
  ASSERT_NE(f, nullptr);
  for (const size_t bytes : {size_t{0}, size_t{16}, size_t{23}, size_t{32}}) {
    const std::vector<std::byte> params(bytes);
    const Reply r = call(c, cu::Fn::cuLaunchKernel, [&](WireWriter& w) {
      put_record(w, cu::LaunchRequest{f, 1, 1, 1, 32, 1, 1, 0, nullptr});
      w.put_blob(params.data(), params.size());
    });
    EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE) << bytes << " bytes";
  }
  const std::vector<std::byte> exact(24);
  const Reply r = call(c, cu::Fn::cuLaunchKernel, [&](WireWriter& w) {
    put_record(w, cu::LaunchRequest{f, 1, 1, 1, 32, 1, 1, 0, nullptr});
    w.put_blob(exact.data(), exact.size());
  });
  EXPECT_EQ(r.status, CUDA_SUCCESS) << "the kernel's own layout launches";
  EXPECT_TRUE(backend_.logged("rejected parameter buffer")) << backend_.log();
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, handles_the_session_never_got_are_refused_as_invalid) {
  const auto owned = client();
  Client& c = *owned;
  const auto bogus_function = reinterpret_cast<CUfunction>(uintptr_t{0x1000});
  const std::vector<std::byte> params(24);
  Reply r = call(c, cu::Fn::cuLaunchKernel, [&](WireWriter& w) {
    put_record(w, cu::LaunchRequest{bogus_function, 1, 1, 1, 1, 1, 1, 0, nullptr});
    w.put_blob(params.data(), params.size());
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  CUfunction out = nullptr;
  r = call(c, cu::Fn::cuModuleGetFunction, [&](WireWriter& w) {
    mr::put_output(w, &out);
    mr::put_value(w, reinterpret_cast<CUmodule>(uintptr_t{0x2000}));
    mr::put_c_string(w, "_Z5saxpyifPKfPf");
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  r = call(c, cu::Fn::cuStreamSynchronize,
           [](WireWriter& w) { mr::put_value(w, reinterpret_cast<CUstream>(uintptr_t{0x3000})); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(backend_.logged("not a handle this session holds")) << backend_.log();
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, device_pointers_the_session_never_allocated_are_refused) {
  const auto owned = client();
  Client& c = *owned;
  // A copy out of memory of the backend process that is no allocation of this session.
  Reply r = call(c, cu::Fn::cuMemcpyDtoH_v2, [](WireWriter& w) {
    put_record(w, cu::CopyRequest{CUdeviceptr{0x7fff0000}, 64, nullptr});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(r.rest.empty()) << "no bytes after a failure";
  r = call(c, cu::Fn::cuMemFree_v2, [](WireWriter& w) { mr::put_value(w, CUdeviceptr{0x1234}); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  // A range that starts inside an allocation and runs past its end.
  CUdeviceptr dptr = 0;
  r = call(c, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
    mr::put_output(w, &dptr);
    mr::put_value(w, size_t{256});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&dptr, r.rest.data() + 1, sizeof dptr);
  r = call(c, cu::Fn::cuMemsetD8_v2, [&](WireWriter& w) {
    mr::put_value(w, dptr + 128);
    mr::put_value(w, static_cast<unsigned char>(1));
    mr::put_value(w, size_t{256});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, a_truncated_launch_record_ends_only_its_session) {
  const auto owned = client();
  Client& c = *owned;
  const Reply r = call(c, cu::Fn::cuLaunchKernel, [](WireWriter& w) { w.put<uint64_t>(1); });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

TEST_F(HostileDriver, a_copy_chunk_over_the_limit_ends_only_its_session) {
  const auto owned = client();
  Client& c = *owned;
  const Reply r = call(c, cu::Fn::cuMemcpyDtoH_v2, [](WireWriter& w) {
    put_record(w, cu::CopyRequest{CUdeviceptr{0x1000}, cu::kCopyChunkBytes + 1, nullptr});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// A load may name its image by hash (driver_wire.h): the backend answers from its module cache, or
// asks for the bytes; bytes that loaded are kept, and an entry altered on disk is refused (its
// bytes are asked for again) and removed. Nothing the client claims - hash, size - is trusted.
TEST_F(HostileDriver, a_module_named_by_hash_loads_from_the_cache_or_its_bytes_are_asked_for) {
  const auto owned = client();
  Client& c = *owned;
  const auto image = file(GVIRTUS_SAXPY_FATBIN);
  const ContentHash hash = content_hash(image);
  const auto by_hash = [&](const ContentHash& h, uint64_t size) {
    return call(c, cu::Fn::cuModuleLoadData, [&](WireWriter& w) {
      w.put<uint8_t>(cu::kImageByHash);
      put_record(w, cu::ImageByHash{h, size});
    });
  };
  const auto asked_for_bytes = [](const Reply& r) {
    return r.status == CUDA_SUCCESS && r.rest.size() == 1 &&
           r.rest[0] == std::byte{cu::kImageUnknown};
  };
  const auto loaded = [](const Reply& r) {
    CUmodule module = nullptr;
    if (r.status == CUDA_SUCCESS && r.rest.size() == 1 + sizeof module &&
        r.rest[0] == std::byte{cu::kImageLoaded}) {
      std::memcpy(&module, r.rest.data() + 1, sizeof module);
    }
    return module;
  };
  EXPECT_TRUE(asked_for_bytes(by_hash(hash, image.size()))) << "not in the cache yet";
  int32_t status = -1;
  ASSERT_NE(load(c, image, status), nullptr);  // the bytes: validated, loaded, kept
  const std::string entry = backend_.module_cache_dir() + "/" + to_hex(hash);
  ASSERT_TRUE(std::ifstream(entry).good()) << entry;
  const CUmodule from_cache = loaded(by_hash(hash, image.size()));
  EXPECT_NE(from_cache, nullptr) << "loaded from the cache, no bytes sent";
  EXPECT_EQ(get_saxpy(c, from_cache).status, CUDA_SUCCESS) << "the module is whole";
  EXPECT_TRUE(asked_for_bytes(by_hash(hash, image.size() + 1))) << "not the entry's size";
  ContentHash other = hash;
  other[0] ^= std::byte{1};
  EXPECT_TRUE(asked_for_bytes(by_hash(other, image.size())));
  {  // altered on disk: no longer what its name says
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  EXPECT_TRUE(asked_for_bytes(by_hash(hash, image.size())));
  EXPECT_FALSE(std::ifstream(entry).good()) << "the altered entry was removed";
  EXPECT_TRUE(backend_.logged("does not hold what its name says")) << backend_.log();
  ASSERT_NE(load(c, image, status), nullptr);  // sent again, kept again
  EXPECT_NE(loaded(by_hash(hash, image.size())), nullptr);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver,
       a_load_with_an_unknown_image_form_or_an_impossible_size_ends_only_its_session) {
  const ContentHash hash{};
  for (const uint64_t size : {uint64_t{0}, cu::kMaxModuleImageBytes + 1}) {
    const auto owned = client();
    Client& c = *owned;
    const Reply r = call(c, cu::Fn::cuModuleLoadData, [&](WireWriter& w) {
      w.put<uint8_t>(cu::kImageByHash);
      put_record(w, cu::ImageByHash{hash, size});
    });
    EXPECT_EQ(r.error, ErrorKind::kDisconnected) << size;
    expect_session_ended_alone(c);
  }
  const auto owned = client();
  Client& c = *owned;
  const Reply r = call(c, cu::Fn::cuLibraryLoadData, [&](WireWriter& w) {
    w.put<uint8_t>(7);  // neither bytes nor a hash
    w.put<uint32_t>(0);
    w.put<uint32_t>(0);
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

TEST_F(HostileDriver, jit_options_naming_host_memory_end_only_their_session) {
  const auto owned = client();
  Client& c = *owned;
  const std::vector<std::byte> image = file(GVIRTUS_SAXPY_FATBIN);
  const Reply r = call(c, cu::Fn::cuModuleLoadDataEx, [&](WireWriter& w) {
    w.put<uint8_t>(cu::kImageBytes);
    w.put_blob(image.data(), image.size());
    w.put<uint32_t>(1);
    w.put<uint32_t>(CU_JIT_GLOBAL_SYMBOL_ADDRESSES);  // addresses in the client's memory
    w.put<uint64_t>(0x1000);
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// cuLaunchKernelEx's attributes: events the session never got and the graphs-only node (which
// would have the driver write into the client's memory) are refused with the driver's errors; an
// attribute blob that is not whole attributes ends only its session.
TEST_F(HostileDriver, launch_attributes_are_vetted_before_the_driver_sees_them) {
  const auto owned = client();
  Client& c = *owned;
  const CUfunction f = saxpy(c);
  ASSERT_NE(f, nullptr);
  const std::vector<std::byte> params(24);
  const auto launch_with = [&](const CUlaunchAttribute& a) {
    return call(c, cu::Fn::cuLaunchKernelEx, [&](WireWriter& w) {
      put_record(w, cu::LaunchRequest{f, 1, 1, 1, 32, 1, 1, 0, nullptr});
      w.put_blob(&a, sizeof a);
      w.put_blob(params.data(), params.size());
    });
  };
  CUlaunchAttribute event{};
  event.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
  event.value.launchCompletionEvent.event = reinterpret_cast<CUevent>(uintptr_t{0x4000});
  EXPECT_EQ(launch_with(event).status, CUDA_ERROR_INVALID_HANDLE);
  CUlaunchAttribute node{};
  node.id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
  node.value.deviceUpdatableKernelNode.deviceUpdatable = 1;
  EXPECT_EQ(launch_with(node).status, CUDA_ERROR_INVALID_VALUE);
  CUlaunchAttribute cooperative{};
  cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  cooperative.value.cooperative = 1;
  EXPECT_EQ(launch_with(cooperative).status, CUDA_SUCCESS) << backend_.log();
  EXPECT_TRUE(backend_.logged("\"cooperative\":true")) << backend_.log();
  expect_session_goes_on(c);
  const Reply r = call(c, cu::Fn::cuLaunchKernelEx, [&](WireWriter& w) {
    put_record(w, cu::LaunchRequest{f, 1, 1, 1, 32, 1, 1, 0, nullptr});
    const std::vector<std::byte> partial(sizeof(CUlaunchAttribute) - 1);
    w.put_blob(partial.data(), partial.size());  // not a whole attribute
    w.put_blob(params.data(), params.size());
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

TEST_F(HostileDriver, max_active_clusters_of_a_function_the_session_never_got_is_refused) {
  const auto owned = client();
  Client& c = *owned;
  const Reply r = call(c, cu::Fn::cuOccupancyMaxActiveClusters, [](WireWriter& w) {
    put_record(w, cu::LaunchRequest{reinterpret_cast<CUfunction>(uintptr_t{0x1000}), 2, 1, 1, 32, 1,
                                    1, 0, nullptr});
    w.put_blob(nullptr, 0);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(r.rest.size(), sizeof(int32_t)) << "the count follows, 0, as the stub reads it";
  expect_session_goes_on(c);
}

// 2D copies: every device row range must be the session's; a direction that is none of the
// three, or host rows over a chunk, is malformed and ends only its session.
TEST_F(HostileDriver, two_dimensional_copies_are_vetted_row_range_and_direction) {
  const auto owned = client();
  Client& c = *owned;
  CUdeviceptr dptr = 0;
  Reply r = call(c, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
    mr::put_output(w, &dptr);
    mr::put_value(w, size_t{4096});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&dptr, r.rest.data() + 1, sizeof dptr);
  const auto device_to_host = [&](uint64_t pitch, uint64_t width, uint64_t height) {
    return call(c, cu::Fn::cuMemcpy2D_v2, [&](WireWriter& w) {
      put_record(w, cu::Copy2DRequest{static_cast<uint32_t>(cu::Copy2DDirection::kDeviceToHost), 0,
                                      0, dptr, pitch, width, height, nullptr});
    });
  };
  r = device_to_host(512, 256, 8);
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(r.rest.size(), sizeof(uint64_t) + 256 * 8) << "the rows, packed";
  EXPECT_EQ(device_to_host(512, 256, 9).status, CUDA_ERROR_INVALID_VALUE)
      << "the ninth row lies past the allocation";
  EXPECT_EQ(device_to_host(128, 256, 2).status, CUDA_ERROR_INVALID_VALUE) << "pitch under width";
  r = call(c, cu::Fn::cuMemcpy2D_v2, [&](WireWriter& w) {
    put_record(w, cu::Copy2DRequest{3, dptr, 64, CUdeviceptr{0x7fff0000}, 64, 64, 4, nullptr});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE) << "a source the session never allocated";
  expect_session_goes_on(c);
  r = call(c, cu::Fn::cuMemcpy2D_v2, [&](WireWriter& w) {
    put_record(w, cu::Copy2DRequest{7, dptr, 64, dptr, 64, 64, 4, nullptr});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

TEST_F(HostileDriver, two_dimensional_rows_over_a_chunk_end_only_their_session) {
  const auto owned = client();
  Client& c = *owned;
  const Reply r = call(c, cu::Fn::cuMemcpy2D_v2, [](WireWriter& w) {
    put_record(w, cu::Copy2DRequest{static_cast<uint32_t>(cu::Copy2DDirection::kDeviceToHost), 0, 0,
                                    CUdeviceptr{0x1000}, 1 << 20, 1 << 20, 64, nullptr});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// Virtual memory: a map must fall in a reservation of the session and name a physical allocation
// of the session; access goes to mapped memory only; reserved but unmapped memory is no device
// memory; Windows handles are refused; a malformed allocation property ends the session.
TEST_F(HostileDriver, virtual_memory_is_vetted_against_the_sessions_own_ranges) {
  const auto owned = client();
  Client& c = *owned;
  const auto vm = [&](cu::Fn fn, cu::VirtualMemoryRequest request, const void* blob = nullptr,
                      size_t bytes = 0) {
    return call(c, fn, [&](WireWriter& w) {
      put_record(w, request);
      if (blob != nullptr || fn == cu::Fn::cuMemCreate || fn == cu::Fn::cuMemSetAccess) {
        w.put_blob(blob, bytes);
      }
    });
  };
  const auto answer = [](const Reply& r) {
    uint64_t value = 0;
    if (r.rest.size() == sizeof value) std::memcpy(&value, r.rest.data(), sizeof value);
    return value;
  };
  constexpr uint64_t kPage = 2 << 20;
  Reply r = vm(cu::Fn::cuMemAddressReserve, {0, 4 * kPage, 0, 0, 0});
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  const uint64_t base = answer(r);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  r = vm(cu::Fn::cuMemCreate, {0, kPage, 0, 0, 0}, &prop, sizeof prop);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  const uint64_t handle = answer(r);
  EXPECT_EQ(vm(cu::Fn::cuMemMap, {base + 4 * kPage, kPage, 0, handle, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "outside the reservation";
  EXPECT_EQ(vm(cu::Fn::cuMemMap, {0x7fff00000000, kPage, 0, handle, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "no reservation of the session";
  EXPECT_EQ(vm(cu::Fn::cuMemMap, {base, kPage, 0, handle + 1000, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "a handle the session never got";
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  EXPECT_EQ(vm(cu::Fn::cuMemSetAccess, {base, kPage, 0, 0, 0}, &access, sizeof access).status,
            CUDA_ERROR_INVALID_VALUE)
      << "nothing mapped yet";
  ASSERT_EQ(vm(cu::Fn::cuMemMap, {base, kPage, 0, handle, 0}).status, CUDA_SUCCESS);
  ASSERT_EQ(vm(cu::Fn::cuMemSetAccess, {base, kPage, 0, 0, 0}, &access, sizeof access).status,
            CUDA_SUCCESS);
  const auto memset = [&](uint64_t address, size_t bytes) {
    return call(c, cu::Fn::cuMemsetD8_v2,
                [&](WireWriter& w) {
                  mr::put_value(w, CUdeviceptr{address});
                  mr::put_value(w, static_cast<unsigned char>(7));
                  mr::put_value(w, bytes);
                })
        .status;
  };
  EXPECT_EQ(memset(base, kPage), CUDA_SUCCESS) << "mapped memory is the session's";
  EXPECT_EQ(memset(base + kPage, 64), CUDA_ERROR_INVALID_VALUE) << "reserved, not mapped";
  // The queries name only the session's mappings and handles.
  Reply got =
      vm(cu::Fn::cuMemGetAccess, {base + 64, 1, 0, 0, 0}, &prop.location, sizeof prop.location);
  EXPECT_EQ(got.status, CUDA_SUCCESS);
  EXPECT_EQ(answer(got), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  EXPECT_EQ(
      vm(cu::Fn::cuMemGetAccess, {base + kPage, 1, 0, 0, 0}, &prop.location, sizeof prop.location)
          .status,
      CUDA_ERROR_INVALID_VALUE)
      << "reserved, not mapped";
  EXPECT_EQ(vm(cu::Fn::cuMemGetAllocationPropertiesFromHandle, {0, 0, 0, handle, 0}).status,
            CUDA_SUCCESS);
  EXPECT_EQ(vm(cu::Fn::cuMemGetAllocationPropertiesFromHandle, {0, 0, 0, handle + 1000, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "a handle the session never got";
  EXPECT_EQ(vm(cu::Fn::cuMemAddressFree, {base, 4 * kPage, 0, 0, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "still mapped";
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  EXPECT_EQ(vm(cu::Fn::cuMemCreate, {0, kPage, 0, 0, 0}, &prop, sizeof prop).status,
            CUDA_ERROR_NOT_SUPPORTED)
      << "a Windows handle, which Linux lacks";
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  // A mapped address's handle, one more reference the session counts.
  r = vm(cu::Fn::cuMemRetainAllocationHandle, {base + 64, 0, 0, 0, 0});
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(answer(r), handle);
  EXPECT_EQ(vm(cu::Fn::cuMemRetainAllocationHandle, {base + kPage, 0, 0, 0, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "reserved, not mapped";
  EXPECT_EQ(vm(cu::Fn::cuMemRelease, {0, 0, 0, handle, 0}).status, CUDA_SUCCESS)
      << "the retained reference";
  EXPECT_EQ(vm(cu::Fn::cuMemGetAllocationPropertiesFromHandle, {0, 0, 0, handle, 0}).status,
            CUDA_SUCCESS)
      << "still held by cuMemCreate's reference";
  ASSERT_EQ(vm(cu::Fn::cuMemUnmap, {base, kPage, 0, 0, 0}).status, CUDA_SUCCESS);
  EXPECT_EQ(memset(base, 64), CUDA_ERROR_INVALID_VALUE) << "unmapped again";
  EXPECT_EQ(vm(cu::Fn::cuMemRetainAllocationHandle, {base, 0, 0, 0, 0}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "unmapped: nothing to retain";
  EXPECT_EQ(vm(cu::Fn::cuMemRelease, {0, 0, 0, handle, 0}).status, CUDA_SUCCESS);
  EXPECT_EQ(vm(cu::Fn::cuMemRelease, {0, 0, 0, handle, 0}).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(vm(cu::Fn::cuMemAddressFree, {base, 4 * kPage, 0, 0, 0}).status, CUDA_SUCCESS);
  expect_session_goes_on(c);
  r = vm(cu::Fn::cuMemCreate, {0, kPage, 0, 0, 0}, &prop, sizeof prop - 1);
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// Graphs: handles the session never got are refused; a stream in the middle of a capture takes no
// copy from the client's memory (the graph would read the backend's transient copy of it later).
TEST_F(HostileDriver, graphs_and_captures_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  CUgraphExec executable = nullptr;
  Reply r = call(c, cu::Fn::cuGraphInstantiateWithFlags, [&](WireWriter& w) {
    mr::put_output(w, &executable);
    mr::put_value(w, reinterpret_cast<CUgraph>(uintptr_t{0x5000}));
    mr::put_value(w, 0ull);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  r = call(c, cu::Fn::cuGraphDestroy,
           [](WireWriter& w) { mr::put_value(w, reinterpret_cast<CUgraph>(uintptr_t{0x5000})); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  // A graph's nodes: only the session's graphs, and however large an array the client claims,
  // the backend holds no more than kMaxGraphNodes for the answer.
  const auto nodes_of = [&](CUgraph graph, uint64_t capacity) {
    return call(c, cu::Fn::cuGraphGetNodes, [&](WireWriter& w) {
      mr::put_value(w, graph);
      w.put<uint64_t>(capacity);
    });
  };
  EXPECT_EQ(nodes_of(reinterpret_cast<CUgraph>(uintptr_t{0x5000}), 0).status,
            CUDA_ERROR_INVALID_HANDLE);
  CUgraph empty = nullptr;
  r = call(c, cu::Fn::cuGraphCreate, [&](WireWriter& w) {
    mr::put_output(w, &empty);
    mr::put_value(w, 0u);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&empty, r.rest.data() + 1, sizeof empty);
  r = nodes_of(empty, uint64_t{1} << 62);
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(r.rest.size(), sizeof(uint64_t) + sizeof(uint32_t)) << "a count of 0 and no nodes";
  CUstream stream = nullptr;
  r = call(c, cu::Fn::cuStreamCreate, [&](WireWriter& w) {
    mr::put_output(w, &stream);
    mr::put_value(w, 1u);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&stream, r.rest.data() + 1, sizeof stream);
  r = call(c, cu::Fn::cuStreamBeginCapture_v2, [&](WireWriter& w) {
    mr::put_value(w, stream);
    mr::put_value(w, CU_STREAM_CAPTURE_MODE_RELAXED);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  CUdeviceptr dptr = 0;
  r = call(c, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
    mr::put_output(w, &dptr);
    mr::put_value(w, size_t{256});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&dptr, r.rest.data() + 1, sizeof dptr);
  const std::vector<std::byte> data(64);
  r = call(c, cu::Fn::cuMemcpyHtoDAsync_v2, [&](WireWriter& w) {
    put_record(w, cu::CopyRequest{dptr, data.size(), stream});
    w.put_raw(data.data(), data.size());
  });
  EXPECT_EQ(r.status, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  r = call(c, cu::Fn::cuMemcpyDtoHAsync_v2, [&](WireWriter& w) {
    put_record(w, cu::CopyRequest{dptr, 64, stream});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_TRUE(r.rest.empty()) << "no bytes after a failure";
  CUgraph graph = nullptr;
  r = call(c, cu::Fn::cuStreamEndCapture, [&](WireWriter& w) {
    mr::put_value(w, stream);
    mr::put_output(w, &graph);
  });
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  expect_session_goes_on(c);
}

// Pool attributes: a pool the session never got is refused; an attribute the driver does not
// define is malformed and ends only its session.
TEST_F(HostileDriver, pool_attributes_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const auto foreign = reinterpret_cast<CUmemoryPool>(uintptr_t{0x6000});
  Reply r = call(c, cu::Fn::cuMemPoolGetAttribute, [&](WireWriter& w) {
    put_record(w, cu::PoolAttributeRequest{foreign, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(r.rest.size(), sizeof(uint64_t)) << "the value follows, 0, as the stub reads it";
  expect_session_goes_on(c);
  r = call(c, cu::Fn::cuMemPoolSetAttribute, [&](WireWriter& w) {
    put_record(w, cu::PoolAttributeRequest{foreign, 99, 0});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// Graph calls naming an executable graph, a graph or an upload stream the session does not hold:
// refused before the driver, which would dereference them (undefined natively, so the parity
// program driver_api.cu does not make these calls).
TEST_F(HostileDriver, graph_calls_naming_handles_the_session_does_not_hold_are_refused) {
  const auto owned = client();
  Client& c = *owned;
  constexpr uintptr_t kBogus = 0x7e7e7e00;
  Reply r = call(c, cu::Fn::cuGraphExecGetFlags, [](WireWriter& w) {
    marshal::put_value(w, reinterpret_cast<CUgraphExec>(kBogus));
    const cuuint64_t flags = 0;
    marshal::put_output(w, &flags);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  r = call(c, cu::Fn::cuGraphClone, [](WireWriter& w) {
    const CUgraph clone = nullptr;
    marshal::put_output(w, &clone);
    marshal::put_value(w, reinterpret_cast<CUgraph>(kBogus));
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  CUgraph graph = nullptr;
  r = call(c, cu::Fn::cuGraphCreate, [&](WireWriter& w) {
    marshal::put_output(w, &graph);
    marshal::put_value(w, 0u);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  WireReader created(r.rest, "cuGraphCreate's reply");
  marshal::get_output(created, &graph);
  ASSERT_NE(graph, nullptr);
  r = call(c, cu::Fn::cuGraphInstantiateWithParams, [&](WireWriter& w) {
    marshal::put_value(w, graph);
    w.put<uint64_t>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    marshal::put_value(w, reinterpret_cast<CUstream>(kBogus));
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
}

TEST_F(HostileDriver, enumerations_and_names_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  // A module the session never loaded: refused, no handles after the status.
  Reply r = call(c, cu::Fn::cuModuleEnumerateFunctions, [](WireWriter& w) {
    put_record(w, cu::EnumerateRequest{0x7000, 4});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(r.rest.empty());
  r = call(c, cu::Fn::cuLibraryEnumerateKernels, [](WireWriter& w) {
    put_record(w, cu::EnumerateRequest{0x7000, 4});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  r = call(c, cu::Fn::cuFuncGetName, [](WireWriter& w) { w.put<uint64_t>(0x8000); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(r.rest.empty());
  // The session's own module: its one function, adopted, whose name comes back.
  const CUfunction function = saxpy(c);
  ASSERT_NE(function, nullptr);
  r = call(c, cu::Fn::cuFuncGetName,
           [&](WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(function)); });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  WireReader name_reader(r.rest, "name");
  EXPECT_EQ(name_reader.get_string(), "_Z5saxpyifPKfPf");
  expect_session_goes_on(c);
  // More handles than an enumeration returns: malformed.
  r = call(c, cu::Fn::cuModuleEnumerateFunctions, [](WireWriter& w) {
    put_record(w, cu::EnumerateRequest{0x7000, cu::kMaxEnumerated + 1});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// A kernel's layout whole (gvirtusKernelParamLayout, gvirtus's own call): saxpy's four parameters
// at their offsets for a function the session holds; a made-up one is refused with no slots, and
// a short request ends only its session.
TEST_F(HostileDriver, a_layout_is_given_only_for_the_sessions_functions) {
  const auto owned = client();
  Client& c = *owned;
  const auto layout_of = [&](CUfunction f) {
    return call(c, cu::Fn::gvirtusKernelParamLayout,
                [&](WireWriter& w) { put_record(w, cu::ParamLayoutRequest{f}); });
  };
  const Reply r = layout_of(saxpy(c));
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  WireReader in(r.rest, "layout");
  ASSERT_EQ(in.get<uint32_t>(), 4u);
  const std::pair<uint32_t, uint32_t> expected[] = {{0, 4}, {4, 4}, {8, 8}, {16, 8}};
  for (const auto& [offset, size] : expected) {
    const auto slot = get_record<cu::ParamSlot>(in);
    EXPECT_EQ(slot.offset, offset);
    EXPECT_EQ(slot.size, size);
  }
  const Reply forged = layout_of(reinterpret_cast<CUfunction>(uintptr_t{0x1000}));
  EXPECT_EQ(forged.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(forged.rest.size(), sizeof(uint32_t)) << "a count of no slots";
  const Reply shortened =
      call(c, cu::Fn::gvirtusKernelParamLayout, [](WireWriter& w) { w.put<uint32_t>(1); });
  EXPECT_EQ(shortened.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// Green contexts' resources carry the driver's private bytes, which the driver reads back: only a
// resource the driver gave the session, byte for byte, reaches it; a made-up one, or a given one
// altered, is refused before it, and so are green contexts and descriptors the session never had.
TEST_F(HostileDriver, device_resources_and_green_contexts_are_the_sessions_own) {
  const auto owned = client();
  Client& c = *owned;
  CUdevResource given{};
  const Reply got = call(c, cu::Fn::cuDeviceGetDevResource, [&](WireWriter& w) {
    mr::put_value(w, CUdevice{0});
    mr::put_output(w, &given);
    mr::put_value(w, CU_DEV_RESOURCE_TYPE_SM);
  });
  ASSERT_EQ(got.status, CUDA_SUCCESS);
  ASSERT_EQ(got.rest.size(), 1 + sizeof given);  // the output's presence, then the resource
  std::memcpy(&given, got.rest.data() + 1, sizeof given);
  const auto split = [&](const CUdevResource& input) {
    unsigned groups = 0;
    return call(c, cu::Fn::cuDevSmResourceSplitByCount,
                [&](WireWriter& w) {
                  mr::put_array(w, static_cast<const CUdevResource*>(nullptr), 0);
                  mr::put_output(w, &groups);
                  mr::put_output(w, &input);
                  mr::put_output(w, static_cast<const CUdevResource*>(nullptr));
                  mr::put_value(w, 0u);
                  mr::put_value(w, 8u);
                })
        .status;
  };
  EXPECT_EQ(split(given), CUDA_SUCCESS);
  CUdevResource made_up{};
  made_up.type = CU_DEV_RESOURCE_TYPE_SM;
  made_up.sm.smCount = 132;
  EXPECT_EQ(split(made_up), CUDA_ERROR_INVALID_VALUE);
  CUdevResource altered = given;
  altered._internal_padding[5] ^= 0x40;
  EXPECT_EQ(split(altered), CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(backend_.logged("cuDevSmResourceSplitByCount rejected device resource"))
      << backend_.log();
  // A descriptor of a made-up resource, and handles the session never had.
  CUdevResourceDesc desc = nullptr;
  EXPECT_EQ(call(c, cu::Fn::cuDevResourceGenerateDesc,
                 [&](WireWriter& w) {
                   mr::put_output(w, &desc);
                   mr::put_array(w, &made_up, 1);
                   mr::put_value(w, 1u);
                 })
                .status,
            CUDA_ERROR_INVALID_VALUE);
  CUgreenCtx green = nullptr;
  EXPECT_EQ(call(c, cu::Fn::cuGreenCtxCreate,
                 [&](WireWriter& w) {
                   mr::put_output(w, &green);
                   mr::put_value(w, reinterpret_cast<CUdevResourceDesc>(uintptr_t{0x7100}));
                   mr::put_value(w, CUdevice{0});
                   mr::put_value(w, unsigned{CU_GREEN_CTX_DEFAULT_STREAM});
                 })
                .status,
            CUDA_ERROR_INVALID_HANDLE);
  unsigned long long id = 0;
  EXPECT_EQ(call(c, cu::Fn::cuGreenCtxGetId,
                 [&](WireWriter& w) {
                   mr::put_value(w, reinterpret_cast<CUgreenCtx>(uintptr_t{0x7200}));
                   mr::put_output(w, &id);
                 })
                .status,
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(backend_.logged("rejected green context")) << backend_.log();
  expect_session_goes_on(c);
}

// A PTX module whose kernel `k` takes `pointers` pointers (8 bytes each).
std::vector<std::byte> ptx_with_pointers(int pointers) {
  std::string text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(";
  for (int i = 0; i < pointers; ++i)
    text += (i ? ", " : "") + std::string(".param .u64 p") + std::to_string(i);
  text += ")\n{\n  ret;\n}\n";
  std::vector<std::byte> image(text.size() + 1);  // with its NUL
  std::memcpy(image.data(), text.data(), text.size());
  return image;
}

// The driver hands a function's address out again once its module is gone, for code whose
// parameters differ (XLA loads and unloads modules by the hundred while it tunes): what the backend
// learnt of the old function's layout holds no longer, and a launch by the new one's passes.
TEST_F(HostileDriver, a_function_address_handed_out_again_has_its_new_layout) {
  const auto owned = client();
  Client& c = *owned;
  const auto function_of = [&](const std::vector<std::byte>& image, CUmodule& module) {
    int32_t status = -1;
    module = load(c, image, status);
    EXPECT_EQ(status, CUDA_SUCCESS);
    CUfunction out = nullptr;
    const Reply r = call(c, cu::Fn::cuModuleGetFunction, [&](WireWriter& w) {
      mr::put_output(w, &out);
      mr::put_value(w, module);
      mr::put_c_string(w, "k");
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    return created<CUfunction>(r);
  };
  const auto launch = [&](CUfunction f, size_t bytes) {
    const std::vector<std::byte> params(bytes);
    return call(c, cu::Fn::cuLaunchKernel,
                [&](WireWriter& w) {
                  put_record(w, cu::LaunchRequest{f, 1, 1, 1, 1, 1, 1, 0, nullptr});
                  w.put_blob(params.data(), params.size());
                })
        .status;
  };
  const auto unload = [&](CUmodule module) {
    return call(c, cu::Fn::cuModuleUnload, [&](WireWriter& w) { mr::put_value(w, module); }).status;
  };
  // Modules of two, three and four pointers in turn: loads and unloads allocate alike, so a
  // module's function lands where an earlier one's was, whose layout differed.
  std::map<CUfunction, int> layout_at;  // pointers of the last function at each address
  bool reused = false;
  for (int attempt = 0; attempt < 24; ++attempt) {
    const int pointers = 2 + attempt % 3;
    CUmodule module = nullptr;
    const CUfunction f = function_of(ptx_with_pointers(pointers), module);
    const auto seen = layout_at.find(f);
    const bool again = seen != layout_at.end() && seen->second != pointers;
    reused = reused || again;
    EXPECT_EQ(launch(f, 8 * pointers), CUDA_SUCCESS)
        << "attempt " << attempt << (again ? ": an earlier function's address, a new layout" : "");
    EXPECT_EQ(launch(f, 8 * (pointers + 1)), CUDA_ERROR_INVALID_VALUE) << "a larger buffer";
    ASSERT_EQ(unload(module), CUDA_SUCCESS);
    layout_at[f] = pointers;
  }
  expect_session_goes_on(c);
  if (!reused)
    GTEST_SKIP() << "the simulated device never gave a function's address again (an "
                    "allocator's quarantine, as ASan's): the launches above passed";
}

TEST_F(HostileDriver, an_enumeration_returns_the_modules_functions_as_the_sessions_own) {
  const auto owned = client();
  Client& c = *owned;
  int32_t status = -1;
  const CUmodule module = load(c, file(GVIRTUS_SAXPY_FATBIN), status);
  ASSERT_EQ(status, CUDA_SUCCESS);
  const Reply r = call(c, cu::Fn::cuModuleEnumerateFunctions, [&](WireWriter& w) {
    put_record(w, cu::EnumerateRequest{reinterpret_cast<uintptr_t>(module), 8});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  WireReader in(r.rest, "enumeration");
  ASSERT_EQ(in.get<uint32_t>(), 1u) << "saxpy's fatbinary holds one kernel";
  const auto function = mr::get_value<CUfunction>(in);
  // The enumerated handle is the session's: a launch through it passes the handle check.
  const std::vector<std::byte> params(24);
  const Reply launch = call(c, cu::Fn::cuLaunchKernel, [&](WireWriter& w) {
    put_record(w, cu::LaunchRequest{function, 1, 1, 1, 1, 1, 1, 0, nullptr});
    w.put_blob(params.data(), params.size());
  });
  EXPECT_EQ(launch.status, CUDA_SUCCESS);
  expect_session_goes_on(c);
}

// What a context of one's own held goes with it: a stream made in it is forgotten when it is
// destroyed, and survives a reset of the primary context, whose own stream it takes along.
TEST_F(HostileDriver, a_context_of_ones_own_takes_what_it_held_and_only_that) {
  const auto owned = client();
  Client& c = *owned;
  const auto create_context = [&] {
    const Reply r = call(c, cu::Fn::cuCtxCreate_v4, [&](WireWriter& w) {
      w.put<uint32_t>(0);
      w.put<int32_t>(0);
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    CUcontext context = nullptr;
    if (r.rest.size() >= sizeof context) std::memcpy(&context, r.rest.data(), sizeof context);
    return context;
  };
  const auto set_current = [&](CUcontext context) {
    return call(c, cu::Fn::cuCtxSetCurrent, [&](WireWriter& w) { mr::put_value(w, context); })
        .status;
  };
  CUcontext primary = nullptr;
  ASSERT_EQ(call(c, cu::Fn::cuDevicePrimaryCtxRetain,
                 [&](WireWriter& w) {
                   mr::put_output(w, &primary);
                   mr::put_value(w, CUdevice{0});
                 })
                .status,
            CUDA_SUCCESS);
  // Device memory made in a context is freed with it: the session forgets it, and refuses it
  // from then on rather than hand the driver an address it may have given to something else.
  const auto allocate = [&] {
    CUdeviceptr dptr = 0;
    const Reply r = call(c, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
      mr::put_output(w, &dptr);
      mr::put_value(w, size_t{4096});
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    if (r.rest.size() >= 1 + sizeof dptr) std::memcpy(&dptr, r.rest.data() + 1, sizeof dptr);
    return dptr;
  };
  const auto memset = [&](CUdeviceptr dptr) {
    return call(c, cu::Fn::cuMemsetD8_v2,
                [&](WireWriter& w) {
                  mr::put_value(w, dptr);
                  mr::put_value(w, static_cast<unsigned char>(7));
                  mr::put_value(w, size_t{4096});
                })
        .status;
  };
  const CUcontext first = create_context();  // current now
  const CUstream in_first = create_stream(c);
  const CUdeviceptr memory_of_first = allocate();
  [[maybe_unused]] const CUcontext second = create_context();
  const CUstream in_second = create_stream(c);
  const CUdeviceptr memory_of_second = allocate();
  ASSERT_EQ(memset(memory_of_first), CUDA_SUCCESS);
  ASSERT_EQ(
      call(c, cu::Fn::cuCtxDestroy_v2, [&](WireWriter& w) { mr::put_value(w, first); }).status,
      CUDA_SUCCESS);
  EXPECT_EQ(synchronize(c, in_first), CUDA_ERROR_INVALID_HANDLE) << "gone with its context";
  EXPECT_EQ(synchronize(c, in_second), CUDA_SUCCESS) << "another context's";
  EXPECT_EQ(memset(memory_of_first), CUDA_ERROR_INVALID_VALUE) << "freed with its context";
  EXPECT_EQ(memset(memory_of_second), CUDA_SUCCESS) << "another context's";
  // A reset of the primary context takes the primary context's stream, not the second's.
  ASSERT_EQ(set_current(nullptr), CUDA_SUCCESS);
  const Reply retained = call(c, cu::Fn::cuDevicePrimaryCtxRetain, [&](WireWriter& w) {
    mr::put_output(w, &primary);
    mr::put_value(w, CUdevice{0});
  });
  ASSERT_EQ(retained.status, CUDA_SUCCESS);
  ASSERT_GE(retained.rest.size(), 1 + sizeof primary);
  primary = created<CUcontext>(retained);
  ASSERT_EQ(set_current(primary), CUDA_SUCCESS);
  const CUstream in_primary = create_stream(c);
  const CUdeviceptr memory_of_primary = allocate();
  ASSERT_EQ(call(c, cu::Fn::cuDevicePrimaryCtxReset_v2,
                 [](WireWriter& w) { mr::put_value(w, CUdevice{0}); })
                .status,
            CUDA_SUCCESS);
  EXPECT_EQ(synchronize(c, in_primary), CUDA_ERROR_INVALID_HANDLE) << "gone with the reset";
  EXPECT_EQ(synchronize(c, in_second), CUDA_SUCCESS) << "a context of one's own outlives the reset";
  ASSERT_EQ(set_current(primary), CUDA_SUCCESS);  // retained again by the reset's next use
  EXPECT_EQ(memset(memory_of_primary), CUDA_ERROR_INVALID_VALUE) << "freed by the reset";
  EXPECT_EQ(memset(memory_of_second), CUDA_SUCCESS) << "a context of one's own's";
  EXPECT_TRUE(backend_.logged("cuStreamSynchronize rejected stream")) << backend_.log();
  expect_session_goes_on(c);
}

// The release of a primary context's last reference destroys it as a reset does: the session
// forgets its streams and modules then, and not while another reference keeps it.
TEST_F(HostileDriver, the_last_release_of_a_primary_context_forgets_what_it_held) {
  const auto owned = client();
  Client& c = *owned;
  const auto retain = [&] {
    CUcontext context = nullptr;
    return call(c, cu::Fn::cuDevicePrimaryCtxRetain,
                [&](WireWriter& w) {
                  mr::put_output(w, &context);
                  mr::put_value(w, CUdevice{0});
                })
        .status;
  };
  const auto release = [&] {
    return call(c, cu::Fn::cuDevicePrimaryCtxRelease_v2,
                [&](WireWriter& w) { mr::put_value(w, CUdevice{0}); })
        .status;
  };
  ASSERT_EQ(retain(), CUDA_SUCCESS);  // the second reference: client() holds the first
  const CUstream stream = create_stream(c);
  ASSERT_NE(stream, nullptr);
  int32_t status = -1;
  const CUmodule module = load(c, file(GVIRTUS_SAXPY_FATBIN), status);
  ASSERT_EQ(status, CUDA_SUCCESS);
  ASSERT_EQ(release(), CUDA_SUCCESS);
  EXPECT_EQ(synchronize(c, stream), CUDA_SUCCESS) << "another reference keeps the context";
  EXPECT_EQ(get_saxpy(c, module).status, CUDA_SUCCESS);
  ASSERT_EQ(release(), CUDA_SUCCESS);
  EXPECT_EQ(synchronize(c, stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(get_saxpy(c, module).status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(backend_.logged("cuStreamSynchronize rejected stream")) << backend_.log();
  EXPECT_EQ(release(), CUDA_ERROR_INVALID_CONTEXT) << "no reference is left";
  expect_session_goes_on(c);
}

// A primary context's reset destroys what the context held: the session forgets its streams and
// modules (the driver would dereference them), and keeps its libraries (context-independent).
TEST_F(HostileDriver, a_primary_context_reset_forgets_what_the_context_held) {
  const auto owned = client();
  Client& c = *owned;
  const auto get_function = [&](CUmodule module) {
    CUfunction out = nullptr;
    return call(c, cu::Fn::cuModuleGetFunction,
                [&](WireWriter& w) {
                  mr::put_output(w, &out);
                  mr::put_value(w, module);
                  mr::put_c_string(w, "_Z5saxpyifPKfPf");
                })
        .status;
  };
  const CUstream stream = create_stream(c);
  int32_t status = -1;
  const CUmodule module = load(c, file(GVIRTUS_SAXPY_FATBIN), status);
  ASSERT_EQ(status, CUDA_SUCCESS);
  const auto image = file(GVIRTUS_SAXPY_FATBIN);
  const Reply loaded = call(c, cu::Fn::cuLibraryLoadData, [&](WireWriter& w) {
    w.put<uint8_t>(cu::kImageBytes);
    w.put_blob(image.data(), image.size());
    w.put<uint32_t>(0);  // no JIT options
    w.put<uint32_t>(0);  // no library options
  });
  ASSERT_EQ(loaded.status, CUDA_SUCCESS);
  CUlibrary library = nullptr;
  ASSERT_GE(loaded.rest.size(), 1 + sizeof library);  // the answer, then the library
  std::memcpy(&library, loaded.rest.data() + 1, sizeof library);
  ASSERT_EQ(synchronize(c, stream), CUDA_SUCCESS);
  ASSERT_EQ(get_function(module), CUDA_SUCCESS);

  ASSERT_EQ(call(c, cu::Fn::cuDevicePrimaryCtxReset_v2,
                 [](WireWriter& w) { mr::put_value(w, CUdevice{0}); })
                .status,
            CUDA_SUCCESS);
  EXPECT_EQ(synchronize(c, stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(get_function(module), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(backend_.logged("cuda: cuStreamSynchronize rejected stream")) << backend_.log();
  EXPECT_TRUE(backend_.logged("cuda: cuModuleGetFunction rejected module")) << backend_.log();
  CUkernel kernel = nullptr;
  EXPECT_EQ(call(c, cu::Fn::cuLibraryGetKernel,
                 [&](WireWriter& w) {
                   mr::put_output(w, &kernel);
                   mr::put_value(w, library);
                   mr::put_c_string(w, "_Z5saxpyifPKfPf");
                 })
                .status,
            CUDA_SUCCESS)
      << "a library outlives the context";
  const CUstream fresh = create_stream(c);
  EXPECT_EQ(synchronize(c, fresh), CUDA_SUCCESS);
  expect_session_goes_on(c);
}

// The linker's inputs are checked as module images are; a made-up link state is refused, a type
// the driver does not define ends only the session.
TEST_F(HostileDriver, link_inputs_and_states_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const Reply created = call(c, cu::Fn::cuLinkCreate_v2, [](WireWriter& w) {
    w.put<uint32_t>(0);  // no JIT options
  });
  ASSERT_EQ(created.status, CUDA_SUCCESS);
  uint64_t state = 0;
  ASSERT_GE(created.rest.size(), sizeof state);
  std::memcpy(&state, created.rest.data(), sizeof state);
  const auto add = [&](uint64_t link, uint32_t type, const std::vector<std::byte>& data) {
    return call(c, cu::Fn::cuLinkAddData_v2, [&](WireWriter& w) {
      put_record(w, cu::LinkInputRequest{link, type});
      w.put_blob(data.data(), data.size());
      w.put_string("input");
      w.put<uint32_t>(0);
    });
  };
  // A fatbinary claiming more bytes than arrived.
  std::vector<std::byte> lying = file(GVIRTUS_SAXPY_FATBIN);
  lying.resize(lying.size() / 2);
  EXPECT_EQ(add(state, CU_JIT_INPUT_FATBINARY, lying).status, CUDA_ERROR_INVALID_IMAGE);
  // PTX without its NUL.
  const std::string text = ".version 8.0\n.target sm_90\n";
  std::vector<std::byte> ptx(text.size());
  std::memcpy(ptx.data(), text.data(), text.size());
  EXPECT_EQ(add(state, CU_JIT_INPUT_PTX, ptx).status, CUDA_ERROR_INVALID_IMAGE);
  // A link state the session never created.
  ptx.push_back(std::byte{0});
  EXPECT_EQ(add(0x7100, CU_JIT_INPUT_PTX, ptx).status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, cu::Fn::cuLinkComplete, [](WireWriter& w) { w.put<uint64_t>(0x7100); }).status,
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, cu::Fn::cuLinkDestroy, [](WireWriter& w) { w.put<uint64_t>(0x7100); }).status,
            CUDA_ERROR_INVALID_HANDLE);
  // The session's own link, destroyed once.
  EXPECT_EQ(call(c, cu::Fn::cuLinkDestroy, [&](WireWriter& w) { w.put<uint64_t>(state); }).status,
            CUDA_SUCCESS);
  EXPECT_EQ(call(c, cu::Fn::cuLinkDestroy, [&](WireWriter& w) { w.put<uint64_t>(state); }).status,
            CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
  EXPECT_EQ(add(state, CU_JIT_NUM_INPUT_TYPES, ptx).error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// Shared host memory over a transport that shares none is no request a stub sends.
TEST_F(HostileDriver, shared_host_blocks_over_tcp_end_only_their_session) {
  const auto owned = client();
  Client& c = *owned;
  const Reply r = call(c, cu::Fn::cuMemHostRegister_v2, [](WireWriter& w) {
    put_record(w, cu::SharedHostRequest{0, cu::kSharedHostPage, 0});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  EXPECT_TRUE(backend_.logged("over a transport that shares none")) << backend_.log();
  expect_session_ended_alone(c);
}

// A pool's properties with Windows handle types are no request a stub sends; a pool the session
// never created is refused.
TEST_F(HostileDriver, pools_of_ones_own_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const auto foreign = reinterpret_cast<CUmemoryPool>(uintptr_t{0x6100});
  EXPECT_EQ(
      call(c, cu::Fn::cuMemPoolDestroy, [&](WireWriter& w) { mr::put_value(w, foreign); }).status,
      CUDA_ERROR_INVALID_HANDLE);
  const Reply created = call(c, cu::Fn::cuMemPoolCreate, [](WireWriter& w) {
    put_record(w, cu::PoolCreateRequest{CU_MEM_ALLOCATION_TYPE_PINNED, 0,
                                        CU_MEM_LOCATION_TYPE_DEVICE, 0, 0, 0});
  });
  ASSERT_EQ(created.status, CUDA_SUCCESS);
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(created.rest.size(), sizeof pool);
  std::memcpy(&pool, created.rest.data(), sizeof pool);
  EXPECT_EQ(
      call(c, cu::Fn::cuMemPoolDestroy, [&](WireWriter& w) { mr::put_value(w, pool); }).status,
      CUDA_SUCCESS);
  expect_session_goes_on(c);
  const Reply windows = call(c, cu::Fn::cuMemPoolCreate, [](WireWriter& w) {
    put_record(w, cu::PoolCreateRequest{CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_HANDLE_TYPE_WIN32,
                                        CU_MEM_LOCATION_TYPE_DEVICE, 0, 0, 0});
  });
  EXPECT_EQ(windows.error, ErrorKind::kDisconnected) << "a handle type the stub never sends";
  expect_session_ended_alone(c);
}

// Multicast objects (rows 304-309): the simulated device has none to give (as a GPU without
// NVSwitch); every other call names an object, memory or range the session never got, and is
// refused before the driver; a malformed property blob ends only its session.
TEST_F(HostileDriver, multicast_objects_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  CUmulticastObjectProp prop{};
  prop.numDevices = 1;
  prop.size = 2 << 20;
  Reply r = call(c, cu::Fn::cuMulticastCreate, [&](WireWriter& w) {
    put_record(w, cu::VirtualMemoryRequest{0, 0, 0, 0, 0});
    w.put_blob(&prop, sizeof prop);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_NOT_SUPPORTED) << "no multicast on the simulated device";
  const auto multicast = [&](cu::Fn fn, cu::VirtualMemoryRequest request) {
    return call(c, fn,
                [&](WireWriter& w) {
                  put_record(w, request);
                  if (fn == cu::Fn::cuMulticastBindMem) w.put<uint64_t>(0x99);
                })
        .status;
  };
  EXPECT_EQ(multicast(cu::Fn::cuMulticastAddDevice, {0, 0, 0, 0x77, 0}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(multicast(cu::Fn::cuMulticastBindMem, {0, 4096, 0, 0x77, 0}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(multicast(cu::Fn::cuMulticastBindAddr, {uint64_t{1} << 44, 4096, 0, 0x77, 0}),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(multicast(cu::Fn::cuMulticastUnbind, {0, 4096, 0, 0x77, 0}), CUDA_ERROR_INVALID_VALUE);
  expect_session_goes_on(c);
  EXPECT_NE(call(c, cu::Fn::cuMulticastCreate,
                 [&](WireWriter& w) {
                   put_record(w, cu::VirtualMemoryRequest{0, 0, 0, 0, 0});
                   w.put_blob(&prop, 5);
                 })
                .error,
            ErrorKind{0});
  expect_session_ended_alone(c);
}

// The error log (rows 297-301): a registration without a token and a dump over the driver's
// buffer end only their session; a handle never registered is refused; a notification never
// relayed is answered as none.
TEST_F(HostileDriver, log_requests_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  Reply r =
      call(c, cu::Fn::cuLogsUnregisterCallback, [](WireWriter& w) { w.put<uint64_t>(0x7000); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  r = call(c, cu::Fn::gvirtusNotification, [](WireWriter& w) { w.put<uint32_t>(12345); });
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  ASSERT_EQ(r.rest.size(), 1u);
  EXPECT_EQ(r.rest[0], std::byte{0}) << "no such message";
  expect_session_goes_on(c);
  EXPECT_NE(
      call(c, cu::Fn::cuLogsRegisterCallback, [](WireWriter& w) { w.put<uint64_t>(0); }).error,
      ErrorKind{0});
  expect_session_ended_alone(c);
  const auto other = client();
  EXPECT_NE(call(*other, cu::Fn::cuLogsDumpToMemory,
                 [](WireWriter& w) {
                   w.put<uint8_t>(0);
                   w.put<uint32_t>(0);
                   w.put<uint64_t>(kMaxLogDumpBytes + 1);
                   w.put<uint32_t>(0);
                 })
                .error,
            ErrorKind{0});
  expect_session_ended_alone(*other);
}

// Shareable handles (rows 288-293): exports of pools, pointers and physical allocations the
// session never got are refused; an import whose token names no exporting session, or a forged
// secret, is refused and the session goes on; a blob of the wrong size, or a handle type the stub
// never sends, ends only its session.
TEST_F(HostileDriver, shareable_handles_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const auto foreign = reinterpret_cast<CUmemoryPool>(uintptr_t{0x6500});
  const auto export_of = [&](Client& client, cu::Fn fn, uint64_t handle, uint32_t type) {
    return call(client, fn, [&](WireWriter& w) {
      put_record(w, ShareableRequest{handle, type, 0});
    });
  };
  Reply r = export_of(c, cu::Fn::cuMemPoolExportToShareableHandle,
                      reinterpret_cast<uintptr_t>(foreign), kHandlePosixFd);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  r = export_of(c, cu::Fn::cuMemExportToShareableHandle, 0x77, kHandlePosixFd);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE) << "a physical allocation the session never made";
  r = call(c, cu::Fn::cuMemPoolExportPointer,
           [](WireWriter& w) { w.put<uint64_t>(uint64_t{1} << 44); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  const auto import_of = [&](Client& client, cu::Fn fn, uint32_t type, const void* blob,
                             size_t bytes) {
    return call(client, fn, [&](WireWriter& w) {
      put_record(w, ShareableRequest{0, type, 0});
      w.put_blob(blob, bytes);
    });
  };
  ShareableToken nobody{};
  nobody.server[3] = 0x77;
  r = import_of(c, cu::Fn::cuMemPoolImportFromShareableHandle, kHandlePosixFd, &nobody,
                sizeof nobody);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(backend_.log().find("the exporting session is gone"), std::string::npos)
      << backend_.log();
  r = import_of(c, cu::Fn::cuMemImportFromShareableHandle, kHandlePosixFd, &nobody, sizeof nobody);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  // A real export, then its token with a forged secret.
  const Reply created = call(c, cu::Fn::cuMemPoolCreate, [](WireWriter& w) {
    put_record(w, cu::PoolCreateRequest{CU_MEM_ALLOCATION_TYPE_PINNED, kHandlePosixFd,
                                        CU_MEM_LOCATION_TYPE_DEVICE, 0, 0, 0});
  });
  ASSERT_EQ(created.status, CUDA_SUCCESS);
  CUmemoryPool pool = nullptr;
  std::memcpy(&pool, created.rest.data(), sizeof pool);
  r = export_of(c, cu::Fn::cuMemPoolExportToShareableHandle, reinterpret_cast<uintptr_t>(pool),
                kHandlePosixFd);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  ASSERT_EQ(r.rest.size(), sizeof(uint64_t) + sizeof(ShareableToken)) << "the token's blob";
  ShareableToken token{};
  std::memcpy(&token, r.rest.data() + sizeof(uint64_t), sizeof token);
  const auto other = client();
  EXPECT_EQ(import_of(*other, cu::Fn::cuMemPoolImportFromShareableHandle, kHandlePosixFd, &token,
                      sizeof token)
                .status,
            CUDA_SUCCESS)
      << "another session imports the real token";
  token.secret[0] ^= 0xff;
  EXPECT_EQ(import_of(*other, cu::Fn::cuMemPoolImportFromShareableHandle, kHandlePosixFd, &token,
                      sizeof token)
                .status,
            CUDA_ERROR_INVALID_VALUE)
      << "a forged secret";
  // A pointer into a pool the session never got.
  CUmemPoolPtrExportData data{};
  r = call(*other, cu::Fn::cuMemPoolImportPointer, [&](WireWriter& w) {
    mr::put_value(w, foreign);
    w.put_blob(&data, sizeof data);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
  expect_session_goes_on(*other);
  EXPECT_NE(
      import_of(c, cu::Fn::cuMemPoolImportFromShareableHandle, kHandlePosixFd, &token, 3).error,
      ErrorKind{0})
      << "a token of the wrong size";
  expect_session_ended_alone(c);
  EXPECT_NE(export_of(*other, cu::Fn::cuMemPoolExportToShareableHandle,
                      reinterpret_cast<uintptr_t>(pool), CU_MEM_HANDLE_TYPE_NONE)
                .error,
            ErrorKind{0})
      << "a handle type the stub never sends";
  expect_session_ended_alone(*other);
}

// A stream attribute for launches only (it may carry an event handle) never reaches the driver; a
// stream the session never created is refused.
TEST_F(HostileDriver, stream_attributes_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  CUstreamAttrValue value{};
  value.programmaticEvent.event = reinterpret_cast<CUevent>(uintptr_t{0x6200});
  Reply r = call(c, cu::Fn::cuStreamSetAttribute, [&](WireWriter& w) {
    put_record(w, cu::StreamAttributeRequest{nullptr, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT});
    w.put_raw(&value, sizeof value);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  r = call(c, cu::Fn::cuStreamGetAttribute, [&](WireWriter& w) {
    put_record(w, cu::StreamAttributeRequest{reinterpret_cast<CUstream>(uintptr_t{0x6300}),
                                             CU_LAUNCH_ATTRIBUTE_PRIORITY});
    w.put_raw(&value, sizeof value);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(r.rest.size(), sizeof value) << "the value follows, zeroed, as the stub reads it";
  expect_session_goes_on(c);
}

// Array copies: an array the session never created is refused (no bytes after the failure); a
// chunk over the limit ends only the session.
TEST_F(HostileDriver, array_copies_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const auto foreign = reinterpret_cast<CUarray>(uintptr_t{0x6400});
  Reply r = call(c, cu::Fn::cuMemcpyAtoH_v2, [&](WireWriter& w) {
    put_record(w, cu::ArrayCopyRequest{foreign, 0, 64, nullptr});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(r.rest.empty()) << "no bytes after a failure";
  const std::vector<std::byte> data(64);
  r = call(c, cu::Fn::cuMemcpyHtoA_v2, [&](WireWriter& w) {
    put_record(w, cu::ArrayCopyRequest{foreign, 0, data.size(), nullptr});
    w.put_raw(data.data(), data.size());
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
  r = call(c, cu::Fn::cuMemcpyAtoH_v2, [&](WireWriter& w) {
    put_record(w, cu::ArrayCopyRequest{foreign, 0, cu::kCopyChunkBytes + 1, nullptr});
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// An array of 16 x 4 floats (with `flags`: CUDA_ARRAY3D_SURFACE_LDST for a surface), made in
// `c`'s session.
CUarray make_array(Client& c, unsigned flags = 0) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 16;
  d.Height = 4;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 1;
  d.Flags = flags;
  CUarray array = nullptr;
  WireWriter w;
  mr::put_output(w, &array);
  mr::put_output(w, &d);
  const ByteView piece = w.view();
  c.call(cu::call_id(cu::Fn::cuArray3DCreate_v2), std::span(&piece, 1), [&](WireReader& in) {
    EXPECT_EQ(in.get<int32_t>(), CUDA_SUCCESS);
    const auto rest = in.get_raw(in.remaining());
    if (rest.size() >= 1 + sizeof array) std::memcpy(&array, rest.data() + 1, sizeof array);
  });
  return array;
}

CUdeviceptr allocate(Client& c, size_t bytes) {
  CUdeviceptr dptr = 0;
  WireWriter w;
  mr::put_output(w, &dptr);
  mr::put_value(w, bytes);
  const ByteView piece = w.view();
  c.call(cu::call_id(cu::Fn::cuMemAlloc_v2), std::span(&piece, 1), [&](WireReader& in) {
    EXPECT_EQ(in.get<int32_t>(), CUDA_SUCCESS);
    const auto rest = in.get_raw(in.remaining());
    if (rest.size() >= 1 + sizeof dptr) std::memcpy(&dptr, rest.data() + 1, sizeof dptr);
  });
  return dptr;
}

// A box copy request of width x height x 1 between two sides, each an array, device memory at
// `device` (pitch 64) or the client's memory, packed.
cu::ArrayBoxRequest box(cu::BoxSide src, CUarray src_array, CUdeviceptr src_device, cu::BoxSide dst,
                        CUarray dst_array, CUdeviceptr dst_device, uint64_t width,
                        uint64_t height) {
  cu::ArrayBoxRequest r{};
  const auto pitch_of = [&](cu::BoxSide side) { return side == cu::BoxSide::kHost ? width : 64; };
  r.src_side = static_cast<uint32_t>(src), r.src_array = src_array, r.src_device = src_device;
  r.src_pitch = pitch_of(src), r.src_height = height;
  r.dst_side = static_cast<uint32_t>(dst), r.dst_array = dst_array, r.dst_device = dst_device;
  r.dst_pitch = pitch_of(dst), r.dst_height = height;
  r.width = width, r.height = height, r.depth = 1;
  return r;
}

// Copies with arrays: an array the session never created is refused (no bytes after the
// failure), and the device memory a box spans must be the session's; a side of no kind is
// malformed and ends only the session.
TEST_F(HostileDriver, box_copies_with_arrays_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const CUarray array = make_array(c);
  const CUdeviceptr dptr = allocate(c, 4096);
  const auto foreign = reinterpret_cast<CUarray>(uintptr_t{0x6400});
  const auto copy = [&](const cu::ArrayBoxRequest& request) {
    return call(c, cu::Fn::cuMemcpy3D_v2, [&](WireWriter& w) { put_record(w, request); });
  };
  using cu::BoxSide;
  Reply r = copy(box(BoxSide::kArray, array, 0, BoxSide::kHost, nullptr, 0, 64, 4));
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(r.rest.size(), sizeof(uint64_t) + 64 * 4) << "the array's rows, packed";
  r = copy(box(BoxSide::kArray, foreign, 0, BoxSide::kHost, nullptr, 0, 64, 4));
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(r.rest.empty()) << "no bytes after a failure";
  EXPECT_EQ(copy(box(BoxSide::kArray, array, 0, BoxSide::kDevice, nullptr, dptr, 64, 4)).status,
            CUDA_SUCCESS);
  cu::ArrayBoxRequest past = box(BoxSide::kArray, array, 0, BoxSide::kDevice, nullptr, dptr, 64, 4);
  past.dst_pitch = 2048;
  EXPECT_EQ(copy(past).status, CUDA_ERROR_INVALID_VALUE) << "the fourth row lies past the memory";
  EXPECT_EQ(copy(box(BoxSide::kDevice, nullptr, CUdeviceptr{0x7fff0000}, BoxSide::kArray, array, 0,
                     64, 4))
                .status,
            CUDA_ERROR_INVALID_VALUE)
      << "a source the session never allocated";
  EXPECT_EQ(copy(box(BoxSide::kArray, array, 0, BoxSide::kArray, foreign, 0, 64, 4)).status,
            CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
  // A side named by a unified address exists only on graph copy nodes: malformed on a copy.
  const auto owned_unified = client();
  EXPECT_EQ(call(*owned_unified, cu::Fn::cuMemcpy3D_v2,
                 [&](WireWriter& w) {
                   put_record(
                       w, box(BoxSide::kArray, array, 0, BoxSide::kUnified, nullptr, dptr, 64, 4));
                 })
                .error,
            ErrorKind::kDisconnected);
  cu::ArrayBoxRequest odd = box(BoxSide::kArray, array, 0, BoxSide::kHost, nullptr, 0, 64, 4);
  odd.dst_side = 9;
  EXPECT_EQ(copy(odd).error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// A box with its client side's bytes over a chunk, or with no array at all, is no request a stub
// sends: each ends only its session.
TEST_F(HostileDriver, a_box_over_a_chunk_or_without_an_array_ends_only_its_session) {
  using cu::BoxSide;
  for (const cu::ArrayBoxRequest& request :
       {box(BoxSide::kArray, reinterpret_cast<CUarray>(uintptr_t{0x6400}), 0, BoxSide::kHost,
            nullptr, 0, 1 << 20, 32),
        box(BoxSide::kDevice, nullptr, CUdeviceptr{0x1000}, BoxSide::kDevice, nullptr,
            CUdeviceptr{0x2000}, 64, 4)}) {
    const auto owned = client();
    const Reply r =
        call(*owned, cu::Fn::cuMemcpy3D_v2, [&](WireWriter& w) { put_record(w, request); });
    EXPECT_EQ(r.error, ErrorKind::kDisconnected);
    expect_session_ended_alone(*owned);
  }
}

// Texture and surface objects: what the resource names must be the session's (an array, device
// memory over its whole extent); objects the session never got, or destroyed, are refused, and a
// surface object is no texture object though both be 1. A mipmapped array's level cannot be
// destroyed alone, and goes with its mipmapped array. A malformed view flag ends the session.
TEST_F(HostileDriver, texture_and_surface_objects_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  const auto texture = [&](const CUDA_RESOURCE_DESC& resource) {
    CUDA_TEXTURE_DESC desc{};
    return call(c, cu::Fn::cuTexObjectCreate, [&](WireWriter& w) {
      w.put<uint32_t>(0);
      w.put_raw(&resource, sizeof resource);
      w.put_raw(&desc, sizeof desc);
    });
  };
  const auto object_call = [&](cu::Fn fn, uint64_t object) {
    return call(c, fn, [&](WireWriter& w) { w.put<uint64_t>(object); });
  };
  CUDA_RESOURCE_DESC resource{};
  resource.resType = CU_RESOURCE_TYPE_ARRAY;
  resource.res.array.hArray = reinterpret_cast<CUarray>(uintptr_t{0x6400});
  Reply r = texture(resource);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE) << "an array the session never created";
  const CUdeviceptr dptr = allocate(c, 4096);
  CUDA_RESOURCE_DESC linear{};
  linear.resType = CU_RESOURCE_TYPE_LINEAR;
  linear.res.linear.devPtr = dptr;
  linear.res.linear.format = CU_AD_FORMAT_FLOAT;
  linear.res.linear.numChannels = 1;
  linear.res.linear.sizeInBytes = 8192;
  EXPECT_EQ(texture(linear).status, CUDA_ERROR_INVALID_VALUE) << "past the allocation";
  CUDA_RESOURCE_DESC pitched{};
  pitched.resType = CU_RESOURCE_TYPE_PITCH2D;
  pitched.res.pitch2D.devPtr = dptr;
  pitched.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
  pitched.res.pitch2D.numChannels = 1;
  pitched.res.pitch2D.width = 16;
  pitched.res.pitch2D.height = 64;
  pitched.res.pitch2D.pitchInBytes = 128;
  EXPECT_EQ(texture(pitched).status, CUDA_ERROR_INVALID_VALUE) << "rows past the allocation";
  resource.res.array.hArray = make_array(c);
  r = texture(resource);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  uint64_t tex = 0;
  std::memcpy(&tex, r.rest.data(), sizeof tex);
  resource.res.array.hArray = make_array(c, CUDA_ARRAY3D_SURFACE_LDST);
  r = call(c, cu::Fn::cuSurfObjectCreate,
           [&](WireWriter& w) { w.put_raw(&resource, sizeof resource); });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  uint64_t surf = 0;
  std::memcpy(&surf, r.rest.data(), sizeof surf);
  EXPECT_EQ(tex, surf) << "the simulated device numbers both kinds from 1";
  EXPECT_EQ(object_call(cu::Fn::cuSurfObjectDestroy, surf + 1).status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(object_call(cu::Fn::cuTexObjectDestroy, tex).status, CUDA_SUCCESS);
  r = object_call(cu::Fn::cuTexObjectGetResourceDesc, tex);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE) << "destroyed";
  EXPECT_EQ(r.rest.size(), sizeof(CUDA_RESOURCE_DESC)) << "zeroed, as the stub reads it";
  EXPECT_EQ(object_call(cu::Fn::cuSurfObjectGetResourceDesc, surf).status, CUDA_SUCCESS)
      << "the surface object of the same value lives on";

  CUDA_ARRAY3D_DESCRIPTOR mip{};
  mip.Width = 32;
  mip.Height = 32;
  mip.Format = CU_AD_FORMAT_FLOAT;
  mip.NumChannels = 1;
  CUmipmappedArray mipmapped = nullptr;
  r = call(c, cu::Fn::cuMipmappedArrayCreate, [&](WireWriter& w) {
    mr::put_output(w, &mipmapped);
    mr::put_output(w, &mip);
    mr::put_value(w, 3u);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&mipmapped, r.rest.data() + 1, sizeof mipmapped);
  r = call(c, cu::Fn::cuMipmappedArrayGetLevel, [&](WireWriter& w) {
    w.put<uint64_t>(reinterpret_cast<uintptr_t>(mipmapped));
    w.put<uint32_t>(1);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  uint64_t level = 0;
  std::memcpy(&level, r.rest.data(), sizeof level);
  const auto describe_level = [&] {
    return call(c, cu::Fn::cuArray3DGetDescriptor_v2, [&](WireWriter& w) {
      CUDA_ARRAY3D_DESCRIPTOR d{};
      mr::put_output(w, &d);
      mr::put_value(w, reinterpret_cast<CUarray>(static_cast<uintptr_t>(level)));
    });
  };
  EXPECT_EQ(describe_level().status, CUDA_SUCCESS) << "a level is an array of the session's";
  EXPECT_EQ(object_call(cu::Fn::cuArrayDestroy, level).status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(
      object_call(cu::Fn::cuMipmappedArrayDestroy, reinterpret_cast<uintptr_t>(mipmapped)).status,
      CUDA_SUCCESS);
  EXPECT_EQ(describe_level().status, CUDA_ERROR_INVALID_HANDLE) << "gone with its mipmapped array";
  expect_session_goes_on(c);
  r = call(c, cu::Fn::cuTexObjectCreate, [&](WireWriter& w) {
    w.put<uint32_t>(2);
    w.put_raw(&resource, sizeof resource);
  });
  EXPECT_EQ(r.error, ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

// The direct copies between backends of a pool (backend/peer_copies.h): a range the session never
// allocated is refused before anything listens or connects; a token no open names is refused; a
// sender with another token is turned away and the receiver goes on waiting for the right one; a
// send with no port or host ends only its session.
TEST_F(HostileDriver, direct_copies_between_backends_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  Reply r = call(c, cu::Fn::gvirtusPeerReceiveOpen, [&](WireWriter& w) {
    put_record(w, cu::PeerReceiveOpenRequest{CUdeviceptr{0x7000}, 64});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  r = call(c, cu::Fn::gvirtusPeerReceive, [&](WireWriter& w) {
    put_record(w, cu::PeerToken{1, 2, 3, 4});
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE) << "no open names that token";
  r = call(c, cu::Fn::gvirtusPeerSend, [&](WireWriter& w) {
    put_record(w, cu::PeerSendRequest{CUdeviceptr{0x7000}, 64, 9});
    put_record(w, cu::PeerToken{1, 2, 3, 4});
    w.put_string("127.0.0.1");
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE) << "not the session's memory: nothing is sent";

  // A real transfer within one session: the receiver turns a stranger away and takes the sender.
  const CUdeviceptr src = allocate(c, 4096), dst = allocate(c, 4096);
  r = call(c, cu::Fn::gvirtusPeerReceiveOpen, [&](WireWriter& w) {
    put_record(w, cu::PeerReceiveOpenRequest{dst, 4096});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  ASSERT_EQ(r.rest.size(), sizeof(uint32_t) + sizeof(cu::PeerToken));
  uint32_t port = 0;
  cu::PeerToken token{};
  std::memcpy(&port, r.rest.data(), sizeof port);
  std::memcpy(&token, r.rest.data() + sizeof port, sizeof token);
  EXPECT_NE(port, 0u);
  {  // a stranger with a wrong token
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    const cu::PeerToken wrong{token.w0 ^ 1, token.w1, token.w2, token.w3};
    const uint64_t bytes = 4096;
    ::send(fd, &wrong, sizeof wrong, MSG_NOSIGNAL);
    ::send(fd, &bytes, sizeof bytes, MSG_NOSIGNAL);
    ::close(fd);
  }
  // The receive waits on this session's thread; the send goes from a second session (as the other
  // backend would), so both run at once.
  const auto sender = client();
  std::thread receive([&] {
    r = call(c, cu::Fn::gvirtusPeerReceive, [&](WireWriter& w) { put_record(w, token); });
  });
  // The sender's session does not own `src`: refused, and the receiver still waits.
  const Reply refused = call(*sender, cu::Fn::gvirtusPeerSend, [&](WireWriter& w) {
    put_record(w, cu::PeerSendRequest{src, 4096, port});
    put_record(w, token);
    w.put_string("127.0.0.1");
  });
  EXPECT_EQ(refused.status, CUDA_ERROR_INVALID_VALUE);
  const CUdeviceptr own = allocate(*sender, 4096);
  const Reply sent = call(*sender, cu::Fn::gvirtusPeerSend, [&](WireWriter& w) {
    put_record(w, cu::PeerSendRequest{own, 4096, port});
    put_record(w, token);
    w.put_string("127.0.0.1");
  });
  receive.join();
  EXPECT_EQ(sent.status, CUDA_SUCCESS);
  EXPECT_EQ(r.status, CUDA_SUCCESS);

  const Reply malformed = call(*sender, cu::Fn::gvirtusPeerSend, [&](WireWriter& w) {
    put_record(w, cu::PeerSendRequest{own, 4096, 0});
    put_record(w, token);
    w.put_string("");
  });
  EXPECT_NE(malformed.error, ErrorKind{0}) << "no port and no host: malformed";
  expect_session_goes_on(c);
}

// IPC: another session's memory, opened, is this session's device memory until closed, and only
// then; a session closes only what it opened; a handle cut short ends only its session. Memory
// not the session's has no handle.
TEST_F(HostileDriver, ipc_memory_is_the_opening_sessions_until_it_closes_it) {
  const auto exporter_owned = client();
  const auto opener_owned = client();
  Client& exporter = *exporter_owned;
  Client& opener = *opener_owned;
  CUdeviceptr exported = 0;
  Reply r = call(exporter, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
    mr::put_output(w, &exported);
    mr::put_value(w, size_t{4096});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&exported, r.rest.data() + 1, sizeof exported);
  CUipcMemHandle handle{};
  const auto get_handle = [&](CUdeviceptr address) {
    return call(exporter, cu::Fn::cuIpcGetMemHandle, [&](WireWriter& w) {
      mr::put_output(w, &handle);
      mr::put_value(w, address);
    });
  };
  EXPECT_EQ(get_handle(exported + (uint64_t{1} << 40)).status, CUDA_ERROR_INVALID_VALUE);
  r = get_handle(exported);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  ASSERT_EQ(r.rest.size(), 1 + sizeof handle);
  std::memcpy(&handle, r.rest.data() + 1, sizeof handle);
  const auto memset_of = [&](CUdeviceptr address) {
    return call(opener, cu::Fn::cuMemsetD8_v2, [&](WireWriter& w) {
      mr::put_value(w, address);
      mr::put_value(w, static_cast<unsigned char>(7));
      mr::put_value(w, size_t{4096});
    });
  };
  const auto close_of = [&](CUdeviceptr address) {
    return call(opener, cu::Fn::cuIpcCloseMemHandle,
                [&](WireWriter& w) { w.put<uint64_t>(address); });
  };
  r = call(opener, cu::Fn::cuIpcOpenMemHandle_v2, [&](WireWriter& w) {
    w.put_raw(&handle, sizeof handle);
    w.put<uint32_t>(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  ASSERT_EQ(r.rest.size(), 2 * sizeof(uint64_t));
  uint64_t opened = 0, bytes = 0;
  std::memcpy(&opened, r.rest.data(), sizeof opened);
  std::memcpy(&bytes, r.rest.data() + sizeof opened, sizeof bytes);
  EXPECT_NE(opened, 0u);
  EXPECT_GE(bytes, 4096u) << "its whole size comes back";
  EXPECT_EQ(memset_of(opened).status, CUDA_SUCCESS) << "the opener's device memory now";
  EXPECT_EQ(close_of(opened + 16).status, CUDA_ERROR_INVALID_VALUE) << "not what it opened";
  // (Each backend process places its simulated memory alike under ASan: the opened copy may lie
  // at the exporter's address there.)
  if (exported != opened) {
    EXPECT_EQ(close_of(exported).status, CUDA_ERROR_INVALID_VALUE) << "the exporter's, not opened";
  }
  EXPECT_EQ(close_of(opened).status, CUDA_SUCCESS);
  EXPECT_EQ(memset_of(opened).status, CUDA_ERROR_INVALID_VALUE) << "closed: no longer its";
  EXPECT_EQ(close_of(opened).status, CUDA_ERROR_INVALID_VALUE) << "closed once";
  expect_session_goes_on(opener);
  expect_session_goes_on(exporter);
  r = call(opener, cu::Fn::cuIpcOpenMemHandle_v2, [&](WireWriter& w) {
    w.put_raw(&handle, 10);  // a handle cut short
  });
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(opener);
  expect_session_goes_on(exporter);
}

// Instantiation with parameters vets the graph and the upload stream inside the parameters; a
// graph's DOT description is the session's graphs' only.
TEST_F(HostileDriver, graph_parameters_and_descriptions_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  CUgraph graph = nullptr;
  Reply r = call(c, cu::Fn::cuGraphCreate, [&](WireWriter& w) {
    mr::put_output(w, &graph);
    mr::put_value(w, 0u);
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&graph, r.rest.data() + 1, sizeof graph);
  const auto instantiate = [&](CUgraph g, CUstream upload) {
    return call(c, cu::Fn::cuGraphInstantiateWithParams, [&](WireWriter& w) {
      mr::put_value(w, g);
      w.put<uint64_t>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
      mr::put_value(w, upload);
    });
  };
  const auto foreign = reinterpret_cast<CUgraph>(uintptr_t{0x5000});
  EXPECT_EQ(instantiate(foreign, nullptr).status, CUDA_ERROR_INVALID_HANDLE);
  r = instantiate(graph, reinterpret_cast<CUstream>(uintptr_t{0x5000}));
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(r.rest.size(), 2 * sizeof(uint64_t) + sizeof(int32_t));
  int32_t instantiated = -1;
  std::memcpy(&instantiated, r.rest.data() + sizeof(uint64_t), sizeof instantiated);
  EXPECT_EQ(instantiated, CUDA_GRAPH_INSTANTIATE_ERROR);
  EXPECT_EQ(instantiate(graph, nullptr).status, CUDA_SUCCESS);
  const auto describe = [&](CUgraph g) {
    return call(c, cu::Fn::cuGraphDebugDotPrint, [&](WireWriter& w) {
      mr::put_value(w, g);
      w.put<uint32_t>(0);
    });
  };
  r = describe(foreign);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(r.rest.size(), sizeof(uint64_t)) << "an empty description";
  r = describe(graph);
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  const std::string text(reinterpret_cast<const char*>(r.rest.data()) + sizeof(uint64_t),
                         r.rest.size() - sizeof(uint64_t));
  EXPECT_EQ(text.rfind("digraph", 0), 0u) << text;
  expect_session_goes_on(c);
}

// A batch of stream memory operations: each wait's and write's word must be the session's device
// memory (all of it); an operation the driver does not define, or a batch over the limit, ends
// only its session.
TEST_F(HostileDriver, batches_of_stream_memory_operations_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  CUdeviceptr word = 0;
  Reply r = call(c, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
    mr::put_output(w, &word);
    mr::put_value(w, size_t{8});
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&word, r.rest.data() + 1, sizeof word);
  const auto batch = [&](Client& client, std::vector<cu::MemOpRecord> ops, uint32_t count) {
    return call(client, cu::Fn::cuStreamBatchMemOp_v2, [&](WireWriter& w) {
      mr::put_value(w, CUstream{nullptr});
      w.put<uint32_t>(0);
      w.put<uint32_t>(count);
      for (const auto& op : ops) put_record(w, op);
    });
  };
  using Op = cu::MemOpRecord;
  EXPECT_EQ(batch(c, {Op{CU_STREAM_MEM_OP_WRITE_VALUE_64, word, 5, 0}}, 1).status, CUDA_SUCCESS);
  EXPECT_EQ(batch(c, {Op{CU_STREAM_MEM_OP_WRITE_VALUE_64, word + 4, 5, 0}}, 1).status,
            CUDA_ERROR_INVALID_VALUE)
      << "a word reaching past the allocation";
  EXPECT_EQ(batch(c,
                  {Op{CU_STREAM_MEM_OP_WRITE_VALUE_32, word, 5, 0},
                   Op{CU_STREAM_MEM_OP_WAIT_VALUE_32, word + (uint64_t{1} << 40), 5, 0}},
                  2)
                .status,
            CUDA_ERROR_INVALID_VALUE)
      << "one foreign word refuses the whole batch";
  expect_session_goes_on(c);
  EXPECT_NE(batch(c, {Op{42, word, 5, 0}}, 1).error, ErrorKind{0});
  expect_session_ended_alone(c);
  const auto other = client();
  EXPECT_NE(batch(*other, {}, cu::kMaxBatchMemOps + 1).error, ErrorKind{0});
  expect_session_ended_alone(*other);
}

// Batches of managed prefetches and discards (rows 285-287): every range must be the session's
// device memory; a batch over its limits, longer than its request, or a discard naming
// locations, ends only its session.
TEST_F(HostileDriver, managed_batches_are_vetted) {
  const auto owned = client();
  Client& c = *owned;
  CUdeviceptr managed = 0;
  Reply r = call(c, cu::Fn::cuMemAllocManaged, [&](WireWriter& w) {
    mr::put_output(w, &managed);
    mr::put_value(w, size_t{4096});
    mr::put_value(w, 1u);  // CU_MEM_ATTACH_GLOBAL
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&managed, r.rest.data() + 1, sizeof managed);
  CUstream stream = nullptr;
  r = call(c, cu::Fn::cuStreamCreate, [&](WireWriter& w) {
    mr::put_output(w, &stream);
    mr::put_value(w, 1u);  // CU_STREAM_NON_BLOCKING
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  std::memcpy(&stream, r.rest.data() + 1, sizeof stream);
  CUmemLocation device{};
  device.type = CU_MEM_LOCATION_TYPE_DEVICE;
  const size_t first = 0;
  const auto prefetch = [&](Client& client, CUdeviceptr address, size_t bytes) {
    return call(client, cu::Fn::cuMemPrefetchBatchAsync, [&](WireWriter& w) {
      mr::put_value(w, stream);
      put_managed_batch(w, 0, &address, &bytes, 1, &device, &first, 1);
    });
  };
  EXPECT_EQ(prefetch(c, managed, 4096).status, CUDA_SUCCESS);
  EXPECT_EQ(prefetch(c, managed + 2048, 4096).status, CUDA_ERROR_INVALID_VALUE)
      << "a range reaching past the allocation";
  EXPECT_EQ(prefetch(c, managed + (uint64_t{1} << 40), 64).status, CUDA_ERROR_INVALID_VALUE)
      << "memory the session never got";
  expect_session_goes_on(c);
  const auto discard_naming_a_location =
      call(c, cu::Fn::cuMemDiscardBatchAsync, [&](WireWriter& w) {
        mr::put_value(w, stream);
        const size_t bytes = 64;
        put_managed_batch(w, 0, &managed, &bytes, 1, &device, &first, 1);
      });
  EXPECT_NE(discard_naming_a_location.error, ErrorKind{0});
  expect_session_ended_alone(c);
  const auto other = client();
  EXPECT_NE(call(*other, cu::Fn::cuMemDiscardAndPrefetchBatchAsync,
                 [&](WireWriter& w) {
                   mr::put_value(w, CUstream{nullptr});
                   w.put<uint64_t>(0);
                   w.put<uint64_t>(kMaxManagedBatch + 1);  // ranges, and none follow
                 })
                .error,
            ErrorKind{0});
  expect_session_ended_alone(*other);
}

}  // namespace
}  // namespace gvirtus::testing
