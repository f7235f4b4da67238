// Shared-secret authentication through the real gvirtus-backend: the right secret opens a
// session both ways; a wrong or missing one is refused with a clear message on both sides; a
// replayed proof opens nothing; the daemon refuses to start with an unsafe or missing secret.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/frame.h"
#include "communicators/tcp/tcp_communicator.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "protocol/handshake.h"
#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gvirtus-auth-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  // Writes a file with `mode` and returns its path.
  std::string file(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Config client_config(const BackendProcess& backend, const std::string& extra) {
  return parse_config(R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",)"
                      R"("server_address":"127.0.0.1","port":")" +
                          std::to_string(backend.port()) +
                          R"("},"plugins":[]}],"connect_timeout_ms":3000)" +
                          (extra.empty() ? "" : "," + extra) + "}",
                      "client.json");
}

std::string secret_json(const std::string& path, bool secure = true) {
  return R"("secret_file":")" + path + R"(","secure_application":)" + (secure ? "true" : "false");
}

// A ping; the error message if it failed, "" if it worked.
std::string ping_error(Client& client) {
  const std::string text = "auth";
  const ByteView piece(reinterpret_cast<const std::byte*>(text.data()), text.size());
  try {
    client.call(core::call_id(core::Fn::kPing), std::span(&piece, 1),
                [](WireReader& in) { (void)in.get_raw(in.remaining()); });
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool logged(const BackendProcess& backend, const std::string& text) {
  return backend.logged(text);
}

constexpr const char* kSecret = "c2VjcmV0IHNoYXJlZCBieSBib3RoIHNpZGVzIG9mIHRoZSB0ZXN0Cg==\n";
constexpr const char* kOtherSecret = "YW5vdGhlciBzZWNyZXQsIG5vdCB0aGUgYmFja2VuZCdzIG9uZQo=\n";

TEST(Auth, the_right_secret_opens_a_session_and_calls_work) {
  TempDir dir;
  const std::string secret = dir.file("secret", kSecret);
  BackendProcess backend(secret_json(secret));
  EXPECT_THAT(backend.log(), HasSubstr("clients must authenticate"));
  Client client(client_config(backend, secret_json(secret)), {});
  for (int i = 0; i < 10; ++i) ASSERT_EQ(ping_error(client), "");
  Client second(client_config(backend, secret_json(secret, false)), {});
  EXPECT_EQ(ping_error(second), "");  // a client with the secret but not insisting also works
}

// Whether `needle` occurs in the readable memory of process `pid` (its /proc/PID/mem, which a
// test may read for its own descendants); nullopt when that memory cannot be read at all.
// Mappings over 1 GiB are reservations (a sanitizer's shadow memory), not where a secret lives.
std::optional<bool> memory_holds(pid_t pid, const std::string& needle) {
  constexpr uint64_t kLargestScanned = uint64_t{1} << 30;
  constexpr size_t kChunk = size_t{1} << 20;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
  if (!maps || mem < 0) return std::nullopt;
  bool read_any = false, found = false;
  std::string line;
  std::vector<char> buffer(kChunk + needle.size());
  while (!found && std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms;
    fields >> range >> perms;
    if (perms.empty() || perms[0] != 'r' || line.find("[vvar]") != std::string::npos) continue;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uint64_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (end - start > kLargestScanned) continue;
    // Chunks that overlap by the needle's length, so that none is missed at a boundary.
    for (uint64_t at = start; !found && at < end; at += kChunk) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(end - at, buffer.size()));
      const ssize_t got = ::pread(mem, buffer.data(), want, static_cast<off_t>(at));
      if (got <= 0) break;
      read_any = true;
      found = std::string_view(buffer.data(), static_cast<size_t>(got)).find(needle) !=
              std::string_view::npos;
    }
  }
  ::close(mem);
  if (!read_any) return std::nullopt;
  return found;
}

TEST(Auth, a_worker_forgets_the_secret_once_its_client_is_authenticated) {
  // A session's client may run kernels, which on some systems reach the worker's memory (HMM):
  // the worker keeps no copy of the secret once it no longer needs it. The daemon keeps its own.
  TempDir dir;
  BackendProcess backend(secret_json(dir.file("secret", kSecret)));
  const std::string secret = std::string(kSecret).substr(0, std::string(kSecret).size() - 1);
  const std::optional<bool> daemon_holds = memory_holds(backend.pid(), secret);
  if (!daemon_holds) GTEST_SKIP() << "cannot read the backend's memory here (ptrace policy)";
  EXPECT_TRUE(*daemon_holds) << "the scan finds the secret where it must be";
  Client client(client_config(backend, secret_json(dir.file("client", kSecret))), {});
  ASSERT_EQ(ping_error(client), "");
  const auto worker = static_cast<pid_t>(client.backend().worker_pid);
  const std::optional<bool> worker_holds = memory_holds(worker, secret);
  ASSERT_TRUE(worker_holds.has_value());
  EXPECT_FALSE(*worker_holds);
  EXPECT_EQ(ping_error(client), "");  // the session goes on without it
}

TEST(Auth, a_wrong_secret_is_refused_with_a_clear_message_on_both_sides) {
  TempDir dir;
  BackendProcess backend(secret_json(dir.file("secret", kSecret)));
  Client client(client_config(backend, secret_json(dir.file("other", kOtherSecret))), {});
  const std::string error = ping_error(client);
  EXPECT_THAT(error, HasSubstr("authentication failed"));
  EXPECT_THAT(error, HasSubstr("did not prove that it holds our secret"));
  EXPECT_THAT(ping_error(client), HasSubstr("authentication failed"));  // final, not retried
  EXPECT_TRUE(logged(backend, "the client rejected this backend's proof")) << backend.log();
  EXPECT_TRUE(eventually(5000, [&] { return backend.workers().empty(); }));
}

TEST(Auth, a_client_without_a_secret_is_refused_with_a_clear_message_on_both_sides) {
  TempDir dir;
  BackendProcess backend(secret_json(dir.file("secret", kSecret)));
  Client client(client_config(backend, ""), {});
  const std::string error = ping_error(client);
  EXPECT_THAT(error, HasSubstr("requires authentication"));
  EXPECT_THAT(error, HasSubstr("client.json names no secret_file"));
  EXPECT_TRUE(logged(backend, "the client has no secret_file")) << backend.log();
}

TEST(Auth, a_secure_client_refuses_a_backend_that_does_not_authenticate) {
  TempDir dir;
  BackendProcess backend;  // no secret
  Client client(client_config(backend, secret_json(dir.file("secret", kSecret))), {});
  EXPECT_THAT(ping_error(client), HasSubstr("does not authenticate itself"));
}

TEST(Auth, a_secure_client_without_secret_file_fails_at_once_naming_its_config) {
  BackendProcess backend;
  Client client(client_config(backend, R"("secure_application":true)"), {});
  const std::string error = ping_error(client);
  EXPECT_THAT(error, HasSubstr("client.json: secure_application: true needs \"secret_file\""));
}

// Speaks the handshake by hand: hello, then reads the challenge.
struct RawSession {
  std::unique_ptr<Connection> connection;
  HelloReply reply;
};

RawSession raw_hello(const BackendProcess& backend, const WireWriter& hello) {
  RawSession s;
  s.connection = make_tcp_communicator({"127.0.0.1", backend.port()})->connect(2s);
  FrameHeader h;
  h.flags = kFlagRequest;
  h.call_id = core::call_id(core::Fn::kHello);
  h.payload_bytes = static_cast<uint32_t>(hello.size());
  const EncodedHeader header = encode_header(h);
  const ByteView pieces[] = {header.view(), hello.view()};
  s.connection->send(pieces);
  const Frame frame = decode_frame(s.connection->recv(2s), kDefaultMaxMessageBytes);
  WireReader in(frame.payload, "hello reply");
  s.reply = decode_hello_reply(in);
  return s;
}

void send_core(Connection& connection, core::Fn fn, const WireWriter& payload) {
  FrameHeader h;
  h.flags = kFlagRequest;
  h.call_id = core::call_id(fn);
  h.request_id = 1;
  h.payload_bytes = static_cast<uint32_t>(payload.size());
  const EncodedHeader header = encode_header(h);
  const ByteView pieces[] = {header.view(), payload.view()};
  connection.send(pieces);
}

TEST(Auth, a_replayed_proof_opens_nothing_and_skipping_authentication_is_refused) {
  TempDir dir;
  const std::string path = dir.file("secret", kSecret);
  BackendProcess backend(secret_json(path));
  const Secret secret = load_secret(path, SecretReader::kClient);
  WireWriter hello;
  encode(HelloRequest{kProtocolVersion, "replayer", 1, 0, {}, random_nonce()}, hello);

  // A genuine proof for the first challenge...
  RawSession first = raw_hello(backend, hello);
  ASSERT_EQ(first.reply.auth, AuthScheme::kHmacSha256);
  const AuthDigest digest = hello_digest(hello.view());
  WireWriter proof;
  encode(AuthenticateRequest{AuthOutcome::kProof,
                             client_proof(secret, digest, first.reply.backend_nonce,
                                          first.reply.backend_proof)},
         proof);
  // ...replayed against a second session with the same hello: a fresh nonce, so it fails.
  RawSession second = raw_hello(backend, hello);
  EXPECT_NE(second.reply.backend_nonce, first.reply.backend_nonce);
  send_core(*second.connection, core::Fn::kAuthenticate, proof);
  const Frame refused = decode_frame(second.connection->recv(2s), kDefaultMaxMessageBytes);
  EXPECT_TRUE(refused.header.is_error());
  EXPECT_TRUE(logged(backend, "wrong proof")) << backend.log();
  // The genuine one still works for its own session.
  send_core(*first.connection, core::Fn::kAuthenticate, proof);
  const Frame accepted = decode_frame(first.connection->recv(2s), kDefaultMaxMessageBytes);
  EXPECT_FALSE(accepted.header.is_error());

  // A peer that calls before authenticating is refused and its session ends.
  RawSession skipper = raw_hello(backend, hello);
  send_core(*skipper.connection, core::Fn::kPing, WireWriter());
  const Frame answer = decode_frame(skipper.connection->recv(2s), kDefaultMaxMessageBytes);
  EXPECT_TRUE(answer.header.is_error());
  EXPECT_THROW(skipper.connection->recv(2s), Error);  // hung up
  EXPECT_TRUE(logged(backend, "requires authentication, and the client sent")) << backend.log();
}

// Runs gvirtus-backend with `config_text`; its exit status and stderr (it must not start).
std::pair<int, std::string> run_backend(const TempDir& dir, const std::string& config_text) {
  const std::string config = dir.file("properties.json", config_text);
  const std::string out = dir.path() + "/stderr.txt";
  const std::string bin = std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-backend";
  const int rc = std::system(("timeout 10 " + bin + " --config " + config + " 2> " + out).c_str());
  std::ifstream in(out);
  return {rc, std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}

std::string config_with(const std::string& extra) {
  return R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp","port":"0"}}],)" +
         extra + "}";
}

TEST(Auth, the_backend_refuses_to_start_with_a_secret_file_others_can_read) {
  TempDir dir;
  const std::string secret = dir.file("secret", kSecret, 0644);
  const auto [rc, err] = run_backend(dir, config_with(secret_json(secret)));
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << rc;
  EXPECT_THAT(err, HasSubstr("secret_file " + secret + ": mode 0644"));
  EXPECT_THAT(err, HasSubstr("chmod 600"));
  ::chmod(secret.c_str(), 0640);
  EXPECT_THAT(run_backend(dir, config_with(secret_json(secret))).second, HasSubstr("mode 0640"));
}

TEST(Auth, the_backend_refuses_to_start_secure_without_a_usable_secret) {
  TempDir dir;
  auto [rc, err] = run_backend(dir, config_with(R"("secure_application":true)"));
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << rc;
  EXPECT_THAT(err, HasSubstr("secure_application: true needs \"secret_file\""));
  std::tie(rc, err) = run_backend(dir, config_with(secret_json(dir.path() + "/missing")));
  EXPECT_THAT(err, HasSubstr("cannot open"));
  std::tie(rc, err) = run_backend(dir, config_with(secret_json(dir.file("short", "tiny\n"))));
  EXPECT_THAT(err, HasSubstr("holds 4 bytes; a secret needs at least 16"));
}

}  // namespace
}  // namespace gvirtus::testing
