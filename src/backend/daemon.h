// gvirtus-backend's main loop: listens on every configured endpoint and forks one worker process
// per client session.
//
// The daemon is single-threaded and never initialises CUDA, so fork() is safe. It waits with
// poll() on the listeners and a signalfd: SIGCHLD reaps finished workers, SIGINT/SIGTERM stop the
// daemon, which then terminates its workers (SIGTERM, then SIGKILL after a grace period) and
// returns only when none is left. Workers die with the daemon (PR_SET_PDEATHSIG) if it is killed.
// Before forking anything it maps the session table (session_table.h) through which workers
// publish what status queries (gvirtus-smi) report.
#pragma once

#include "common/config.h"

namespace gvirtus {

// Runs until SIGINT or SIGTERM. Throws Error if an endpoint cannot be served or a plugin cannot
// be loaded (before accepting anything); returns the exit status otherwise.
int run_daemon(const Config& config);

}  // namespace gvirtus
