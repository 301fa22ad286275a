// The bootstrap socket: a plain TCP connection between client and server
// that carries the run's parameters, the tent address blob and remote key,
// and at the end the "done" handshake and the server's check result. It
// carries no data of the benchmark itself.
#ifndef TENT_BENCH_BOOTSTRAP_H
#define TENT_BENCH_BOOTSTRAP_H

#include <cstdint>
#include <string>
#include <vector>

namespace tent_bench {

class Socket {
public:
    Socket() = default;
    explicit Socket(int fd) : fd_(fd) {}
    Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Socket& operator=(Socket&& o) noexcept;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    ~Socket();
    int fd() const { return fd_; }

    bool send_all(const void* p, std::size_t n);
    bool recv_all(void* p, std::size_t n);
    bool send_u64(std::uint64_t v) { return send_all(&v, 8); }
    bool recv_u64(std::uint64_t& v) { return recv_all(&v, 8); }
    bool send_bytes(const std::vector<std::uint8_t>& b);
    // A length-prefixed byte string of at most max bytes.
    bool recv_bytes(std::vector<std::uint8_t>& b, std::size_t max);

private:
    int fd_ = -1;
};

// Listens on host:port (port 0: any free port); bound_port is the port.
bool listen_on(const std::string& host, std::uint16_t port, Socket& out, std::uint16_t& bound_port,
               std::string& error);
bool accept_one(Socket& listener, Socket& out, std::string& error);
bool connect_to(const std::string& host, std::uint16_t port, Socket& out, std::string& error);

} // namespace tent_bench

#endif
