// Crash reports: on SIGSEGV, SIGBUS, SIGFPE or SIGABRT, print the signal and a
// symbolised backtrace (libunwind), then hand the signal on to whoever had it
// before, so the process still dies the way it would have (core dumps keep
// working) or the previous handler still runs.
//
// Opt-in: a library inside someone else's process installs no signal handler
// unless asked (backtrace knob, TENT_BACKTRACE=1).
//
//   tent: pid 4242: crash: signal SIGSEGV (segmentation fault), code 1, address 0x0
//   tent: pid 4242: crash:   #0 0x55d0c0de1139 crash_here+0x9
//   tent: pid 4242: crash:   #1 0x55d0c0de1150 main+0x12
#pragma once

#include "common/status.h"

namespace tent {

// Installs the handlers (once per process; later calls do nothing) and an
// alternate signal stack for the calling thread, so a stack overflow there is
// reported too. The handler uses only async-signal-safe calls.
Status install_crash_reporter();

} // namespace tent
