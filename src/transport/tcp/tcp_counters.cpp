#include "transport/tcp/tcp_counters.h"

// The kernel's struct tcp_info: glibc's copy in <netinet/tcp.h> stops before
// the segment counters, so this file uses the kernel's header (and only it:
// the two conflict).
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>

namespace tent::tcp {

Result<TcpCounters> read_tcp_counters(int fd) {
    tcp_info info{};
    socklen_t length = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0)
        return Status::from_errno(errno, "getsockopt(TCP_INFO)");
    // An older kernel fills a shorter structure.
    if (length < offsetof(tcp_info, tcpi_data_segs_out) + sizeof info.tcpi_data_segs_out)
        return Status(Code::Unsupported, "tcp_info without segment counters");
    const bool has_dsack = length >= offsetof(tcp_info, tcpi_dsack_dups) + sizeof info.tcpi_dsack_dups;
    return TcpCounters{info.tcpi_data_segs_out, info.tcpi_total_retrans, info.tcpi_segs_in,
                       has_dsack ? info.tcpi_dsack_dups : 0u};
}

} // namespace tent::tcp
