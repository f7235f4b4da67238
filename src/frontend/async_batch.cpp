#include "frontend/async_batch.h"

#include <cstring>

namespace gvirtus {

void AsyncBatch::add(std::span<const ByteView> pieces) {
  if (frames_.empty()) since_ = std::chrono::steady_clock::now();
  const size_t offset = bytes_.size();
  size_t total = 0;
  for (const ByteView& piece : pieces) total += piece.size();
  bytes_.resize(offset + total);
  size_t at = offset;
  for (const ByteView& piece : pieces) {
    if (piece.empty()) continue;
    std::memcpy(bytes_.data() + at, piece.data(), piece.size());
    at += piece.size();
  }
  frames_.push_back({offset, total});
}

void AsyncBatch::send(Connection& connection, std::span<const ByteView> also) {
  // One view per held frame; reserved first so that the spans into views_ stay valid.
  views_.clear();
  messages_.clear();
  views_.reserve(frames_.size());
  for (const Held& frame : frames_) views_.emplace_back(bytes_.data() + frame.offset, frame.bytes);
  for (size_t i = 0; i < views_.size(); ++i) messages_.emplace_back(&views_[i], 1);
  if (!also.empty()) messages_.push_back(also);
  struct Empty {  // whatever happens, the batch is gone
    AsyncBatch& batch;
    ~Empty() {
      batch.bytes_.clear();
      batch.frames_.clear();
    }
  } empty{*this};
  if (messages_.size() == 1) {
    connection.send(messages_[0]);
  } else if (!messages_.empty()) {
    connection.send_many(messages_);
  }
}

}  // namespace gvirtus
