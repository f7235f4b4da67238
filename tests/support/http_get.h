// A minimal HTTP/1.0 GET for tests that read what a server on loopback serves (the backend's
// /metrics, Prometheus's HTTP API): one request per connection, the whole body read until the
// server closes. No redirects, no chunked encoding (HTTP/1.0 servers send neither).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gvirtus::testing {

struct HttpResponse {
  int status = 0;    // 200, 404, ...
  std::string body;  // after the headers
};

// GET http://127.0.0.1:`port``target`; nullopt when nothing answered within `timeout_ms`.
std::optional<HttpResponse> http_get(uint16_t port, const std::string& target,
                                     int timeout_ms = 5000);

// `text` with every byte outside [A-Za-z0-9-_.~] percent-encoded, for a query parameter.
std::string url_encode(const std::string& text);

}  // namespace gvirtus::testing
