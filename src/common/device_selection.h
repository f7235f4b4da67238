// Which GPUs an application sees: a selection in CUDA_VISIBLE_DEVICES's syntax, made by the
// client (GVIRTUS_VISIBLE_DEVICES, else the configuration's "visible_devices") and applied by the
// backend's worker, which sets CUDA_VISIBLE_DEVICES in its own environment before any plugin
// initialises CUDA. NVIDIA's runtime and driver then number the selected GPUs 0..k-1 in the order
// given, exactly as for a local program.
//
// A client selects among the devices the backend offers. An operator may already have limited the
// backend itself with CUDA_VISIBLE_DEVICES (in its systemd unit, say); the client's indexes then
// count in that list, and the worker composes the two. Unlike CUDA, which silently stops at an
// entry it cannot use, gvirtus refuses a malformed selection with an error naming it: a mistyped
// selection must not quietly give a job the wrong GPUs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gvirtus {

// The most devices a selection may name, and the longest text the hello carries for one.
inline constexpr size_t kMaxSelectedDevices = 64;
inline constexpr size_t kMaxSelectionText = 1024;

// Parses "2,0,3": distinct non-negative device indexes separated by commas (spaces around entries
// allowed). nullopt for an empty or blank text (every device); an empty list for "none" (no device:
// what a Slurm job that asked for no GPU gets). Throws Error (kInvalidInput) naming `what` (the
// variable or key it came from) for anything else.
std::optional<std::vector<uint32_t>> parse_device_selection(std::string_view text,
                                                            const std::string& what);

// "2,0,3" for {2, 0, 3}; "none" for no device.
std::string format_device_selection(const std::vector<uint32_t>& devices);

// The CUDA_VISIBLE_DEVICES a worker sets for a client that selected `selection`, when the
// backend's own is `backend` (null or empty: unset, every GPU). Its entries (indexes, or UUIDs
// such as GPU-8f3c... or MIG-...) are taken by position. Throws Error (kInvalidInput) when the
// selection names a position the backend's list does not have.
std::string compose_visible_devices(const char* backend, const std::vector<uint32_t>& selection);

}  // namespace gvirtus
