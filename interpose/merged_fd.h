// MergedFd: the descriptor the program sees in place of a provider's
// (a completion channel's fd, a context's async_fd): an epoll set holding
// the provider's descriptor and an eventfd the interposer counts its own
// events on, so the program's poll() wakes for either. Shared by the
// completion channels and the asynchronous event queues.
#pragma once

namespace tent::interpose {

struct MergedFd {
    int provider_fd = -1;
    int event_fd = -1;  // counts the interposer's events not yet taken
    int epoll_fd = -1;  // what the program sees

    // Builds the set around provider_fd; false (nothing left open) when the
    // system refuses, and the program keeps the provider's descriptor.
    bool open(int provider);
    // Closes the set and the eventfd; the provider's descriptor stays.
    void close() const;
    // One more event of the interposer's; takes one back.
    void signal() const;
    void take() const;
    // The program made its descriptor non-blocking: so are the waits.
    bool nonblocking() const;
    bool provider_readable() const;
    // Sleeps until either member is readable (100 ms at most, so a caller
    // re-checks its queue), or returns at once when nonblocking. 0 to look
    // again; -1 with errno set (EAGAIN: nothing, non-blocking).
    int wait(bool nonblocking) const;
};

} // namespace tent::interpose
