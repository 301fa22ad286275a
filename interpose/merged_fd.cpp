#include "merged_fd.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace tent::interpose {

bool MergedFd::open(int provider) {
    provider_fd = provider;
    event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (event_fd < 0 || epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &ev) != 0 ||
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, provider_fd, &ev) != 0) {
        close();
        event_fd = epoll_fd = -1;
        return false;
    }
    return true;
}

void MergedFd::close() const {
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (event_fd >= 0) ::close(event_fd);
}

void MergedFd::signal() const {
    std::uint64_t one = 1;
    ssize_t put = write(event_fd, &one, sizeof one);  // only fails if the count overflows
    (void)put;
}

void MergedFd::take() const {
    std::uint64_t one;
    ssize_t got = read(event_fd, &one, sizeof one);  // one count per queued event
    (void)got;
}

bool MergedFd::nonblocking() const { return (fcntl(epoll_fd, F_GETFL) & O_NONBLOCK) != 0; }

bool MergedFd::provider_readable() const {
    pollfd p{provider_fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1;
}

int MergedFd::wait(bool nonblocking) const {
    epoll_event ev[2];
    int n = epoll_wait(epoll_fd, ev, 2, nonblocking ? 0 : 100);
    if (n < 0 && errno != EINTR) return -1;
    if (n == 0 && nonblocking) {
        errno = EAGAIN;
        return -1;
    }
    return 0;
}

} // namespace tent::interpose
