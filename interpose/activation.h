// When the interposer acts. libtent.so is both the preloaded interposer and
// the library C API users (tent-bench, the Open MPI component) link: its
// ibv_* definitions then sit in front of libibverbs in either case, so
// they act only when libtent was preloaded, and never for tent's own engine.
#pragma once

namespace tent::interpose {

// True when LD_PRELOAD names libtent (read once, at load time).
bool preloaded();

// Set while the interposer calls into tent (creating the engine opens
// devices and QPs of tent's own) and while a wrapper calls the real verb
// (libibverbs calls some exported verbs internally): such calls pass
// through untouched.
bool inside_tent();

class TentScope {
public:
    TentScope();
    ~TentScope();
    TentScope(const TentScope&) = delete;
    TentScope& operator=(const TentScope&) = delete;
};

// The interposer acts on this call: preloaded and not re-entered.
inline bool acting() { return preloaded() && !inside_tent(); }

} // namespace tent::interpose
