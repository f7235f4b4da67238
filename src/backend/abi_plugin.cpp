#include "backend/abi_plugin.h"

#include <cstddef>
#include <memory>
#include <string>

#include "common/error.h"

namespace gvirtus {
namespace {

[[noreturn]] void raise_result(const gvirtus_result_v1& result, const char* what) {
  const ErrorKind kind =
      is_valid_error_kind(result.error_kind) ? ErrorKind(result.error_kind) : ErrorKind::kFailed;
  raise(kind, result.error_message != nullptr ? result.error_message
                                              : std::string(what) + " failed without a message");
}

class AbiSession final : public PluginSession {
 public:
  AbiSession(const gvirtus_plugin_table_v1* table, void* state) : table_(table), state_(state) {}
  ~AbiSession() override { table_->close_session(state_); }
  AbiSession(const AbiSession&) = delete;
  AbiSession& operator=(const AbiSession&) = delete;

  void handle(Call& call) override {
    const gvirtus_call_v1 c{call.header.call_id,
                            call.header.flags,
                            call.header.thread_id,
                            call.header.request_id,
                            call.args.remaining() ? call.args.get_raw(0).data() : nullptr,
                            call.args.remaining()};
    gvirtus_result_v1 result{};
    table_->handle(state_, &c, &result);
    if (result.error_kind != 0) raise_result(result, "a call");
    call.reply_bytes = std::span(static_cast<const std::byte*>(result.reply), result.reply_size);
  }

 private:
  const gvirtus_plugin_table_v1* table_;
  void* state_;
};

class AbiPlugin final : public BackendPlugin {
 public:
  explicit AbiPlugin(const gvirtus_plugin_table_v1* table)
      : table_(table),
        identity_{table->id, table->name, table->table_hash, table->version},
        quiet_(covers(table, offsetof(gvirtus_plugin_table_v1, quiet), sizeof table->quiet)
                   ? table->quiet
                   : nullptr) {}

  PluginIdentity identity() const override { return identity_; }

  bool quiet(uint16_t function) const override {
    return quiet_ != nullptr && quiet_(function) != 0;
  }

  std::unique_ptr<PluginSession> open_session(const SessionInfo& session) override {
    const gvirtus_session_info_v1 info{
        sizeof(gvirtus_session_info_v1), session.peer.c_str(), session.transport.c_str(),
        session.program.c_str(), session.client_pid, session.shared_memory.data(),
        session.shared_memory.size(),
        // The ABI passes the shared counter as plain memory: a lock-free 64-bit atomic.
        reinterpret_cast<uint64_t*>(session.device_bytes), session.registry,
        session.module_cache_dir.c_str(), session.module_cache_max_bytes,
        // The same lock-free int: the ABI passes it as plain memory.
        reinterpret_cast<const int*>(session.client_gone)};
    static_assert(sizeof(std::atomic<int>) == sizeof(int) && std::atomic<int>::is_always_lock_free);
    gvirtus_result_v1 result{};
    void* state = table_->open_session(&info, &result);
    if (state == nullptr) {
      if (result.error_kind == 0) result.error_kind = static_cast<uint32_t>(ErrorKind::kFailed);
      raise_result(result, "opening the session");
    }
    return std::make_unique<AbiSession>(table_, state);
  }

 private:
  // Whether a table (struct_size) has a field: tables of older plugins end before later fields.
  static bool covers(const gvirtus_plugin_table_v1* table, size_t offset, size_t size) {
    return table->struct_size >= offset + size;
  }

  const gvirtus_plugin_table_v1* table_;
  PluginIdentity identity_;
  int (*quiet_)(uint16_t);  // null: any call may print
};

}  // namespace

BackendPlugin* adapt_abi_plugin(const gvirtus_plugin_table_v1* table) {
  return new AbiPlugin(table);  // lives as long as the process, like the library it adapts
}

}  // namespace gvirtus
