// The backend's side of session authentication (protocol/auth.h describes the exchange).
//
// Used by the session's handshake, in the worker process: after a valid hello, issue_challenge()
// puts the challenge into the hello reply; once that reply is sent, await_client_proof() reads
// the client's Authenticate call and either opens the session (an empty reply) or refuses it
// with an error reply and throws Error{kInvalidInput} saying why, which ends the session.
#pragma once

#include <chrono>
#include <span>

#include "communicators/communicator.h"
#include "protocol/auth.h"
#include "protocol/handshake.h"

namespace gvirtus {

struct BackendChallenge {
  AuthDigest hello{};
  AuthNonce nonce{};
  AuthProof proof{};
};

// Fills reply.auth, backend_nonce and backend_proof; returns what the client's proof must match.
BackendChallenge issue_challenge(const Secret& secret, std::span<const std::byte> hello_payload,
                                 HelloReply& reply);

// Blocks until the client's Authenticate frame arrives (at most `timeout`), checks it and answers.
void await_client_proof(Connection& connection, const Secret& secret,
                        const BackendChallenge& challenge, uint64_t max_frame_bytes,
                        std::chrono::milliseconds timeout);

}  // namespace gvirtus
