// Contexts of one's own (cuCtxCreate) as owners of what is made in them: each gets an owner number
// of its own, apart from the devices' (which own what their primary contexts make), so that
// destroying the context forgets what it held and a primary context's reset leaves it alone
// (device_resets.cpp).
//
// Thread-safe (a session's executors run on several threads).
#pragma once

#include <cuda.h>

#include <optional>

namespace gvirtus::cuda {

// Numbers above every device ordinal and every special owner.
inline constexpr int kFirstOwnContextOwner = 1 << 20;

// `context` was created by the session: what is made while it is current is its own.
void note_own_context(CUcontext context);
// The owner number of a context of one's own, none for any other context.
std::optional<int> own_context_owner(CUcontext context);
// `context` was destroyed: its owner number, which owned what it held, if it was one's own.
std::optional<int> forget_own_context(CUcontext context);

}  // namespace gvirtus::cuda
