// Measures one call as a worker serves it and records it in the process's metrics table
// (backend/metrics_table.h) when it goes out of scope: its plugin, its bytes each way, how long
// it took, and whether it failed. Where no table is set (tests that run a session directly) it
// records nothing. A call that ends its session (an exception unwinds through the meter) counts
// as failed.
//
// Thread affinity: one meter per call, on the thread that serves it.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>

#include "backend/metrics_table.h"

namespace gvirtus {

class CallMeter {
 public:
  CallMeter(size_t transport, uint16_t plugin_id, uint64_t request_bytes)
      : table_(current_metrics()),
        transport_(transport),
        plugin_id_(plugin_id),
        request_bytes_(request_bytes),
        start_(std::chrono::steady_clock::now()),
        exceptions_(std::uncaught_exceptions()) {}
  ~CallMeter() {
    if (table_ == nullptr) return;
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start_);
    const bool unwinding = std::uncaught_exceptions() > exceptions_;
    table_->record_call(transport_, table_->plugin_index(plugin_id_), request_bytes_, reply_bytes_,
                        static_cast<uint64_t>(took.count()), failed_ || unwinding);
  }
  CallMeter(const CallMeter&) = delete;
  CallMeter& operator=(const CallMeter&) = delete;

  // The reply went out: `bytes` with its header.
  void replied(uint64_t bytes) { reply_bytes_ += bytes; }
  // The reply was an error.
  void failed(uint64_t bytes) {
    failed_ = true;
    reply_bytes_ += bytes;
  }

 private:
  MetricsTable* table_;
  size_t transport_;
  uint16_t plugin_id_;
  uint64_t request_bytes_;
  uint64_t reply_bytes_ = 0;
  bool failed_ = false;
  std::chrono::steady_clock::time_point start_;
  int exceptions_;
};

}  // namespace gvirtus
