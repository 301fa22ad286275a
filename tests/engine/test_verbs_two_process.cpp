// Two engines in two processes over verbs rails on simverbs (the software
// HCA), with 1, 2 and 4 HCAs per process: WRITE and READ back into the
// child's memory and SEND echoed by the child, every byte checked from 1 B
// to 16 MiB, all on RDMA rails (transport hint), every rail carrying data.
#include <criterion/criterion.h>

#include <string>

#include "../unit/verbs/simverbs_env.h"
#include "two_process.h"

namespace tent::test {
namespace {

Config verbs_config() {
    Config c = loopback_control_config();
    Source api = api_source();
    (void)c.set(Knob::ConnectTimeoutMs, "5000", api);
    // A data test, not a timeout test: an ACK timer a loaded machine cannot
    // outrun (4.096 us x 2^17 x 8 tries = 4.3 s).
    (void)c.set(Knob::VerbsQpTimeout, "17", api);
    return c;
}

PostOptions on_rdma() {
    PostOptions o;
    o.hint = TransportKind::Rdma;
    return o;
}

// Echoes each message from one registered buffer (verbs sends need an lkey);
// the parent waits for each echo before the next, so it is never reused early.
struct RegisteredEcho {
    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kTwoProcessMax, 0);
    std::shared_ptr<const Registration> reg;

    bool install(Engine& e) {
        auto r = e.register_memory(buf.data(), buf.size(), wire::kAccessAll);
        if (!r) return false;
        reg = *r;
        e.set_recv_callback([this, &e](PeerId peer, std::span<const std::uint8_t> m) {
            std::memcpy(buf.data(), m.data(), m.size());
            (void)e.post_send(peer, buf.data(), m.size(), on_rdma());
        });
        return true;
    }
};

void run(int devices) {
    verbstest::isolate();
    setenv("SIMVERBS_DEVICES", std::to_string(devices).c_str(), 1);
    auto child = ChildProcess::start([](int to_parent, int from_parent) {
        serve_as_child<RegisteredEcho>(verbs_config(), 120, to_parent, from_parent);
    });
    cr_assert(child.forked());
    ChildInfo info;
    cr_assert(child.read_info(info), "child did not start");
    auto e = make_engine(verbs_config());
    cr_assert_not_null(e);
    auto peer = e->connect(info.address);
    cr_assert(peer.is_ok(), "connect: %s", peer.status().to_string().c_str());
    check_every_size(*e, *peer, info, on_rdma(), std::chrono::seconds(30));

    int rdma = 0;
    for (auto& s : e->rail_stats()) {
        if (s.kind != TransportKind::Rdma) continue;
        ++rdma;
        cr_expect_gt(s.bytes, 1u << 20, "rail %s carried %llu bytes", s.name.c_str(), (unsigned long long)s.bytes);
    }
    cr_expect_eq(rdma, devices);
    int status = 0;
    cr_assert(child.finish(status));
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    e.reset();
    verbstest::remove_fabric();
}

} // namespace
} // namespace tent::test

Test(engine_verbs, one_rail, .timeout = 120) { tent::test::run(1); }
Test(engine_verbs, two_rails, .timeout = 120) { tent::test::run(2); }
Test(engine_verbs, four_rails, .timeout = 120) { tent::test::run(4); }
