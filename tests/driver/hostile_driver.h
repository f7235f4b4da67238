// The fixture of the hostile driver tests (hostile_driver_test.cpp, hostile_graph_nodes_test.cpp):
// a client that speaks the cuda (driver) table but sends what no stub would, against a backend on
// the simulated device, with helpers to send one request and read its reply as it came.
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/wire.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "frontend/client.h"
#include "plugins/cuda/common/driver_wire.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {

namespace cu = cuda;
namespace mr = marshal;

// The status of a reply (the first four bytes of every cuda reply), or the error the call ended
// with.
struct Reply {
  int32_t status = -1;
  ErrorKind error{};
  std::vector<std::byte> rest;
};

class HostileDriver : public ::testing::Test {
 protected:
  HostileDriver() : backend_("", R"(["cuda-simulated"])") {}

  // A session after the driver's first call, so that the simulated device serves the rest, and
  // (unless `with_context` is false: a test that counts the primary context's references) with
  // device 0's primary context retained and current, as NVIDIA's runtime leaves it: a driver
  // refuses allocations, streams and modules on a thread with none.
  std::unique_ptr<Client> client(bool with_context = true) {
    auto c = std::make_unique<Client>(backend_.client_config(),
                                      std::vector<PluginRef>{to_ref(cu::kIdentity)});
    EXPECT_EQ(call(*c, cu::Fn::cuInit, [](WireWriter& w) { w.put<uint32_t>(0); }).status, 0);
    if (!with_context) return c;
    CUcontext primary = nullptr;
    const Reply retained = call(*c, cu::Fn::cuDevicePrimaryCtxRetain, [&](WireWriter& w) {
      marshal::put_output(w, &primary);
      marshal::put_value(w, CUdevice{0});
    });
    EXPECT_EQ(retained.status, 0);
    primary = created<CUcontext>(retained);
    EXPECT_EQ(
        call(*c, cu::Fn::cuCtxSetCurrent, [&](WireWriter& w) { marshal::put_value(w, primary); })
            .status,
        0);
    return c;
  }

  template <typename Encode>
  static Reply call(Client& c, cu::Fn fn, Encode encode) {
    WireWriter w;
    encode(w);
    const ByteView piece = w.view();
    Reply reply;
    try {
      c.call(cu::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
        reply.status = in.get<int32_t>();
        const auto rest = in.get_raw(in.remaining());
        reply.rest.assign(rest.begin(), rest.end());
      });
    } catch (const Error& e) {
      reply.error = e.kind();
    }
    return reply;
  }

  // A module from `image`, or null with the status.
  static CUmodule load(Client& c, const std::vector<std::byte>& image, int32_t& status) {
    const Reply r = call(c, cu::Fn::cuModuleLoadData, [&](WireWriter& w) {
      w.put<uint8_t>(cu::kImageBytes);
      w.put_blob(image.data(), image.size());
    });
    status = r.status;
    CUmodule module = nullptr;
    // The answer (kImageLoaded), then the module.
    if (r.rest.size() == 1 + sizeof(uint64_t) && r.rest[0] == std::byte{cu::kImageLoaded}) {
      std::memcpy(&module, r.rest.data() + 1, sizeof module);
    }
    return module;
  }

  static std::vector<std::byte> file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::vector<std::byte> out(bytes.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  // cuModuleGetFunction of saxpy in `module`: its reply (the function after a byte).
  static Reply get_saxpy(Client& c, CUmodule module) {
    CUfunction out = nullptr;
    return call(c, cu::Fn::cuModuleGetFunction, [&](WireWriter& w) {
      mr::put_output(w, &out);
      mr::put_value(w, module);
      mr::put_c_string(w, "_Z5saxpyifPKfPf");
    });
  }

  // A function of the saxpy fatbinary (saxpy(int, float, const float*, float*): 24 bytes of
  // parameters), loaded in `c`'s session.
  static CUfunction saxpy(Client& c) {
    int32_t status = -1;
    const CUmodule module = load(c, file(GVIRTUS_SAXPY_FATBIN), status);
    EXPECT_EQ(status, CUDA_SUCCESS);
    const Reply r = get_saxpy(c, module);
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    CUfunction f = nullptr;
    if (r.rest.size() >= 1 + sizeof f) std::memcpy(&f, r.rest.data() + 1, sizeof f);
    return f;
  }

  // A handle from a create call's reply (its presence byte, then the handle).
  template <typename T>
  static T created(const Reply& r) {
    T handle{};
    if (r.rest.size() >= 1 + sizeof handle) std::memcpy(&handle, r.rest.data() + 1, sizeof handle);
    return handle;
  }

  // A handle `fn` creates with the flags 0 (cuStreamCreate, cuGraphCreate: the output, then the
  // flags), expected to succeed; null if the backend refused it.
  template <typename T>
  static T create_with_no_flags(Client& c, cu::Fn fn) {
    T handle{};
    const Reply r = call(c, fn, [&](WireWriter& w) {
      mr::put_output(w, &handle);
      mr::put_value(w, 0u);
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    return created<T>(r);
  }

  // A stream of `c`'s session (null if the backend refused it), and its synchronisation's status.
  static CUstream create_stream(Client& c) {
    return create_with_no_flags<CUstream>(c, cu::Fn::cuStreamCreate);
  }
  static int32_t synchronize(Client& c, CUstream stream) {
    return call(c, cu::Fn::cuStreamSynchronize, [&](WireWriter& w) { mr::put_value(w, stream); })
        .status;
  }

  void expect_session_goes_on(Client& c) { EXPECT_TRUE(ping(c)); }

  void expect_session_ended_alone(Client& c) {
    EXPECT_NE(error_of([&] { ping(c); }), ErrorKind{0});
    const auto fresh = client();
    EXPECT_TRUE(ping(*fresh));
  }

  BackendProcess backend_;
};

}  // namespace gvirtus::testing
