// Which streams capture, as a stub knows them (the driver stub's stream_capture.cpp and the
// runtime stub's graphs.cpp share it): for the stub's own work that a capture cannot hold as it
// is (a copy of the program's memory, which the stub stages instead; a wait, which would end the
// capture). A stub notes the captures it begins and ends. A stream also joins a capture by
// waiting for an event recorded in it (fork and join), which only the backend's library knows:
// so while a capture begun through the stub is under way, a stream the stub does not know as
// capturing is asked about (one round trip), and never otherwise - a process that captures
// nothing pays nothing.
//
// Thread-safe. Never destroyed by its users (exit handlers may ask).
#pragma once

#include <initializer_list>
#include <mutex>
#include <set>

namespace gvirtus {

template <typename Stream>
class CapturingStreams {
 public:
  // A capture the stub began on `stream` (cuStreamBeginCapture, cudaStreamBeginCaptureToGraph).
  void began(Stream stream) {
    std::lock_guard lock(mutex_);
    began_.insert(stream);
  }
  // Its end, whatever the library answered.
  void ended(Stream stream) {
    std::lock_guard lock(mutex_);
    began_.erase(stream);
  }

  // Whether `stream` captures: one the stub began capturing, or, while such a capture is under
  // way, one that `ask(stream)` (the backend's library) says captures. Streams in `never` (the
  // null and legacy streams, which no capture takes) are never asked about.
  template <typename Ask>
  bool capturing(Stream stream, std::initializer_list<Stream> never, Ask ask) const {
    {
      std::lock_guard lock(mutex_);
      if (began_.count(stream) != 0) return true;
      if (began_.empty()) return false;  // no stream can have joined a capture
    }
    for (const Stream predefined : never) {
      if (stream == predefined) return false;
    }
    return ask(stream);
  }

 private:
  mutable std::mutex mutex_;
  std::set<Stream> began_;
};

}  // namespace gvirtus
