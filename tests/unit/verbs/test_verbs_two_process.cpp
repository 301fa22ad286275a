// Two VerbsRails in two processes (the engine's real setting): each side
// publishes its HCA port and QP in an encoded AddressBlob frame over a
// socketpair (as the control channel would), the other rebuilds the rail's
// remote end from it alone; the parent writes, reads and sends, the child
// checks every byte it got.
#include <criterion/criterion.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cstring>

#include "rail_pair.h"
#include "simverbs_env.h"
#include "transport/verbs/verbs_address.h"
#include "wire/frame_codec.h"

using namespace tent;
using namespace verbstest;
using namespace std::chrono_literals;

namespace {

void setup() { isolate(); }

struct Region {
    std::uint64_t addr;
    std::uint32_t rkey;
};

bool send_all(int fd, const void* p, std::size_t n) { return write(fd, p, n) == static_cast<ssize_t>(n); }
bool recv_all(int fd, void* p, std::size_t n) {
    pollfd pf{fd, POLLIN, 0};
    if (poll(&pf, 1, 10000) != 1) return false;
    return recv(fd, p, n, MSG_WAITALL) == static_cast<ssize_t>(n);
}

// Sends this side's AddressBlob (one HCA, one QP) and returns the remote end
// of the rail built from the peer's.
Result<VerbsRailInfo> exchange_addresses(int sock, const VerbsDevice& dev, const VerbsRail& rail) {
    wire::AddressBlob blob;
    blob.engine_id = static_cast<std::uint64_t>(getpid());
    blob.hostname = "localhost";
    blob.hcas.push_back(hca_address(dev));
    blob.hcas[0].qpns.push_back(rail.qp_num());
    wire::Frame frame;
    frame.body = blob;
    auto bytes = wire::encode_frame(frame);
    if (!bytes) return bytes.status();
    std::uint32_t len = static_cast<std::uint32_t>(bytes->size());
    if (!send_all(sock, &len, sizeof len) || !send_all(sock, bytes->data(), len))
        return Status(Code::SystemError, "send address");
    if (!recv_all(sock, &len, sizeof len) || len > 65536) return Status(Code::SystemError, "receive address length");
    std::vector<std::uint8_t> in(len);
    if (!recv_all(sock, in.data(), len)) return Status(Code::SystemError, "receive address");
    auto decoded = wire::decode_frame(in);
    if (!decoded) return decoded.status();
    const auto* peer = std::get_if<wire::AddressBlob>(&decoded->body);
    if (!peer || peer->hcas.size() != 1 || peer->hcas[0].qpns.size() != 1)
        return Status(Code::InvalidArgument, "unexpected address blob");
    return remote_rail_info(peer->hcas[0], peer->hcas[0].qpns[0]);
}

constexpr std::size_t kSize = 4u << 20;
constexpr std::size_t kMessages = 20;

std::uint8_t child_byte(std::size_t i) { return static_cast<std::uint8_t>(i * 7 + 3); }

// The child: a rail on its mlx5_1, a region the parent writes into and
// reads from; it receives messages and reports how many were intact.
int child_main(int sock) {
    auto dev = VerbsDevice::open("mlx5_1");
    if (!dev) return 10;
    auto rail = VerbsRail::create(*dev, VerbsRailParams::from_config(Config()), SteadyClock::instance());
    if (!rail) return 11;
    std::vector<std::uint8_t> buf(2 * kSize);
    for (std::size_t i = 0; i < kSize; ++i) buf[kSize + i] = child_byte(i);  // second half: for the parent to read
    auto mr = (*dev)->register_memory(buf.data(), buf.size(), kRemoteAccess);
    if (!mr) return 12;
    auto remote = exchange_addresses(sock, **dev, **rail);
    if (!remote) return 13;
    Region region{};  // zeroed padding too: the whole struct goes through the socket
    region.addr = reinterpret_cast<std::uintptr_t>(buf.data());
    region.rkey = (*mr)->rkey();
    if (!send_all(sock, &region, sizeof region)) return 13;
    if (!(*rail)->connect(*remote, "peer mlx5_0:1").is_ok()) return 14;
    std::size_t intact = 0, got = 0;
    std::vector<RailCompletion> done;
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (got < kMessages && std::chrono::steady_clock::now() < deadline) {
        (*rail)->progress(done, [&](const RailMessage& m) {
            bool ok = m.header.size() == 8 && m.payload.size() == 1000 + got;
            std::uint64_t seq = 0;
            if (ok) std::memcpy(&seq, m.header.data(), 8);
            ok = ok && seq == got;
            for (std::size_t i = 0; ok && i < m.payload.size(); ++i) ok = m.payload[i] == pattern(got, i);
            intact += ok;
            ++got;
        });
        (*rail)->prepare_to_wait();
        pollfd p{(*rail)->wait_fd(), POLLIN, 0};
        poll(&p, 1, 10);
    }
    // The parent's write has completed before its first send was posted.
    bool written = true;
    for (std::size_t i = 0; i < kSize && written; ++i) written = buf[i] == pattern(kSize, i);
    std::uint64_t report[2] = {intact, written ? 1u : 0u};
    if (!send_all(sock, report, sizeof report)) return 15;
    char bye;
    recv_all(sock, &bye, 1);  // keep the QP up until the parent is done
    return 0;
}

} // namespace

TestSuite(verbs_two_process, .init = setup, .fini = remove_fabric, .timeout = 60);

Test(verbs_two_process, write_read_send_between_processes) {
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pid_t pid = fork();  // before this process touches any device
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(child_main(sv[1]));
    }
    close(sv[1]);
    int sock = sv[0];

    auto dev = VerbsDevice::open("mlx5_0");
    cr_assert(dev.is_ok(), "%s", dev.status().message().c_str());
    auto rail = VerbsRail::create(*dev, params_with({}), SteadyClock::instance());
    cr_assert(rail.is_ok(), "%s", rail.status().message().c_str());
    std::vector<std::uint8_t> buf(2 * kSize);
    auto mr = (*dev)->register_memory(buf.data(), buf.size(), kRemoteAccess);
    cr_assert(mr.is_ok());
    auto remote = exchange_addresses(sock, **dev, **rail);
    cr_assert(remote.is_ok(), "%s", remote.status().message().c_str());
    Region theirs{};
    cr_assert(recv_all(sock, &theirs, sizeof theirs), "no region from the child");
    Status s = (*rail)->connect(*remote, "peer mlx5_1:1");
    cr_assert(s.is_ok(), "%s", s.message().c_str());

    std::vector<RailCompletion> done;
    auto wait_for = [&](std::size_t n) {
        auto deadline = std::chrono::steady_clock::now() + 20s;
        while (done.size() < n && std::chrono::steady_clock::now() < deadline) {
            (*rail)->progress(done, nullptr);
            (*rail)->prepare_to_wait();
            pollfd p{(*rail)->wait_fd(), POLLIN, 0};
            poll(&p, 1, 10);
        }
        return done.size() >= n;
    };
    for (std::size_t i = 0; i < kSize; ++i) buf[i] = pattern(kSize, i);
    cr_assert((*rail)->post(op(1, RailOpcode::Write, buf.data(), kSize, (*mr)->lkey(), theirs.addr, theirs.rkey))
                  .is_ok());
    cr_assert((*rail)->post(op(2, RailOpcode::Read, buf.data() + kSize, kSize, (*mr)->lkey(), theirs.addr + kSize,
                               theirs.rkey))
                  .is_ok());
    cr_assert(wait_for(2), "write/read did not complete");
    for (const auto& c : done) cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.message().c_str());
    for (std::size_t i = 0; i < kSize; ++i) cr_assert_eq(buf[kSize + i], child_byte(i), "read byte %zu", i);

    std::vector<std::uint64_t> headers(kMessages);
    for (std::size_t k = 0; k < kMessages; ++k) {
        headers[k] = k;
        std::uint8_t* payload = buf.data() + k * 4096;
        for (std::size_t i = 0; i < 1000 + k; ++i) payload[i] = pattern(k, i);
        RailOp o = op(10 + k, RailOpcode::Send, payload, 1000 + k, (*mr)->lkey());
        o.send_header = {reinterpret_cast<const std::uint8_t*>(&headers[k]), 8};
        cr_assert((*rail)->post(o).is_ok());
    }
    cr_assert(wait_for(2 + kMessages), "sends did not complete");
    for (const auto& c : done) cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.message().c_str());

    std::uint64_t report[2] = {0, 0};
    cr_assert(recv_all(sock, report, sizeof report), "no report from the child");
    cr_expect_eq(report[0], kMessages, "%llu of %zu messages arrived intact and in order",
                 static_cast<unsigned long long>(report[0]), kMessages);
    cr_expect_eq(report[1], 1u, "the child's region does not hold the written bytes");
    char bye = 0;
    cr_assert(send_all(sock, &bye, 1));
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    close(sock);
}
