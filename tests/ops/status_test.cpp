// The status call's pieces without a daemon: the reply codec against hostile input, the shared
// session table across fork(), and gvirtus-smi's tables.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/session_table.h"
#include "common/error.h"
#include "protocol/status.h"
#include "smi/smi_report.h"

namespace gvirtus {
namespace {

BackendStatus sample_status() {
  BackendStatus s;
  s.backend_version = "gvirtus-backend 9.9";
  s.daemon_pid = 100;
  s.started_unix_s = 1000;
  s.max_sessions = 64;
  GpuStatus gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.bus_id = "00000000:19:00.0";
  gpu.memory_used_bytes = uint64_t{1024} << 20;
  gpu.memory_total_bytes = uint64_t{81559} << 20;
  gpu.utilization_percent = 37;
  s.gpus.push_back(gpu);
  SessionStatus session;
  session.worker_pid = 201;
  session.peer = "tcp://10.0.0.7:41234";
  session.transport = "tcp";
  session.program = "train";
  session.client_pid = 4242;
  session.started_unix_s = 1000;
  session.calls = 123456;
  session.bytes_in = 3 << 20;
  session.bytes_out = 512;
  session.allocated_bytes = uint64_t{768} << 20;
  session.device_memory_bytes = uint64_t{900} << 20;
  s.sessions.push_back(session);
  return s;
}

TEST(StatusCodec, round_trips_every_field) {
  WireWriter out;
  encode(sample_status(), out);
  WireReader in(out.view(), "status");
  const BackendStatus back = decode_backend_status(in);
  EXPECT_EQ(back.backend_version, "gvirtus-backend 9.9");
  EXPECT_EQ(back.max_sessions, 64u);
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back.gpus[0].utilization_percent, 37u);
  ASSERT_EQ(back.sessions.size(), 1u);
  EXPECT_EQ(back.sessions[0].peer, "tcp://10.0.0.7:41234");
  EXPECT_EQ(back.sessions[0].calls, 123456u);
  EXPECT_EQ(back.sessions[0].allocated_bytes, uint64_t{768} << 20);
  EXPECT_EQ(back.sessions[0].device_memory_bytes, uint64_t{900} << 20);
}

TEST(StatusCodec, refuses_truncated_and_oversized_replies) {
  WireWriter out;
  encode(sample_status(), out);
  for (size_t cut : {size_t{0}, size_t{10}, out.size() / 2, out.size() - 1}) {
    WireReader in(out.view().subspan(0, cut), "status");
    EXPECT_THROW(decode_backend_status(in), Error) << "cut at " << cut;
  }
  WireWriter huge;
  huge.put_string("v");
  huge.put<uint32_t>(1);
  huge.put<uint64_t>(0);
  huge.put<uint32_t>(1);
  huge.put_string("");
  huge.put<uint32_t>(static_cast<uint32_t>(kMaxStatusGpus + 1));  // more GPUs than allowed
  WireReader in(huge.view(), "status");
  try {
    decode_backend_status(in);
    FAIL() << "accepted " << kMaxStatusGpus + 1 << " GPUs";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("exceed the limit"), std::string::npos) << e.what();
  }
}

TEST(SessionTable, a_forked_worker_publishes_and_counts_and_the_parent_sees_it) {
  SessionTable table(4);
  const int slot = table.claim();
  ASSERT_GE(slot, 0);
  EXPECT_TRUE(table.snapshot().empty()) << "a claimed slot is not a session until published";
  const pid_t child = ::fork();
  if (child == 0) {
    set_current_session_slot(&table, slot);
    publish_current_session("tcp://127.0.0.1:5555", "tcp", "app", 77);
    for (int i = 0; i < 5; ++i) count_current_request(100);
    count_current_reply(40);
    current_session_device_bytes()->store(4096);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const auto sessions = table.snapshot();
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].worker_pid, static_cast<uint32_t>(child));
  EXPECT_EQ(sessions[0].peer, "tcp://127.0.0.1:5555");
  EXPECT_EQ(sessions[0].program, "app");
  EXPECT_EQ(sessions[0].client_pid, 77u);
  EXPECT_EQ(sessions[0].calls, 5u);
  EXPECT_EQ(sessions[0].bytes_in, 500u);
  EXPECT_EQ(sessions[0].bytes_out, 40u);
  EXPECT_EQ(sessions[0].allocated_bytes, 4096u);
  table.release(slot);
  EXPECT_TRUE(table.snapshot().empty());
}

TEST(SessionTable, hands_out_each_slot_once_and_reuses_released_ones_with_zeroed_counters) {
  SessionTable table(2);
  const int a = table.claim();
  const int b = table.claim();
  EXPECT_NE(a, b);
  EXPECT_EQ(table.claim(), -1);
  table.publish(a, 1, "p", "tcp", "x", 1);
  table.count_request(a, 10);
  table.release(a);
  EXPECT_EQ(table.claim(), a);
  table.publish(a, 2, "q", "tcp", "y", 2);
  ASSERT_EQ(table.snapshot().size(), 1u);
  EXPECT_EQ(table.snapshot()[0].calls, 0u);
  table.count_request(-1, 1);  // out of range: ignored, not a crash
  table.count_request(7, 1);
}

TEST(SmiReport, prints_gpus_and_sessions_like_nvidia_smi) {
  const std::string text = smi::format_backend("tcp 10.0.0.1:9999", sample_status(), 1000 + 3723);
  EXPECT_NE(text.find("Backend tcp 10.0.0.1:9999: gvirtus-backend 9.9, pid 100, up 1:02:03, "
                      "1 of 64 sessions"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NVIDIA H100 80GB HBM3"), std::string::npos) << text;
  EXPECT_NE(text.find("1024MiB / 81559MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("37%"), std::string::npos) << text;
  EXPECT_NE(text.find("tcp://10.0.0.7:41234"), std::string::npos) << text;
  EXPECT_NE(text.find("123456"), std::string::npos) << text;
  EXPECT_NE(text.find("3.0MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("900MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("768.0MiB"), std::string::npos) << text;
}

TEST(SmiReport, a_pool_numbers_each_backends_gpus_as_the_clients_driver_does) {
  BackendStatus two = sample_status();
  two.gpus.push_back(two.gpus.front());
  BackendStatus none = sample_status();
  none.gpus.clear();
  std::vector<smi::BackendResult> results(5);
  results[0] = {.endpoint = "tcp a:1", .status = two, .pool_backend = "a"};
  results[1] = {.endpoint = "shm a", .status = two, .pool_backend = "a"};  // a's alternative
  results[2] = {.endpoint = "tcp b:1", .state = "UNREACHABLE", .pool_backend = "b"};
  results[3] = {.endpoint = "tcp c:1", .status = none, .pool_backend = "c"};
  results[4] = {.endpoint = "tcp d:1", .status = sample_status(), .pool_backend = "d"};
  smi::assign_pool_devices(results);
  EXPECT_EQ(smi::pool_line(results[0]), "Pool: backend \"a\", devices 0-1 of the pool\n");
  EXPECT_EQ(smi::pool_line(results[1]), "") << "a is counted once, at its first answer";
  EXPECT_EQ(smi::pool_line(results[2]), "") << "an unreachable backend adds no device";
  EXPECT_EQ(smi::pool_line(results[3]), "Pool: backend \"c\", no device of the pool\n");
  EXPECT_EQ(smi::pool_line(results[4]), "Pool: backend \"d\", device 2 of the pool\n");
  const std::string text =
      smi::format_backend("tcp d:1", sample_status(), 2000, smi::pool_line(results[4]));
  EXPECT_NE(text.find("sessions\nPool: backend \"d\", device 2 of the pool\n+"), std::string::npos)
      << text;
  const std::string json = smi::format_json("p.json", results);
  EXPECT_NE(json.find(R"("pool_backend": "d")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("pool_devices": {"first": 2, "count": 1})"), std::string::npos) << json;
}

TEST(SmiReport, unknown_figures_read_na_and_no_gpu_gives_the_reason) {
  BackendStatus status = sample_status();
  status.gpus.clear();
  status.gpu_error = "no NVIDIA driver: NVML cannot be loaded";
  status.sessions[0].device_memory_bytes = SessionStatus::kUnknown;
  const std::string text = smi::format_backend("tcp x:1", status, 2000);
  EXPECT_NE(text.find("GPUs: 0 (no NVIDIA driver: NVML cannot be loaded)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("N/A"), std::string::npos) << text;
  EXPECT_EQ(smi::duration(90061), "1d 1:01:01");
  EXPECT_EQ(smi::format_unreachable("tcp x:1", "REFUSED", "overloaded"),
            "Backend tcp x:1: REFUSED: overloaded\n");
  EXPECT_EQ(smi::mebibytes(GpuStatus::kUnknown), "N/A");
}

}  // namespace
}  // namespace gvirtus
