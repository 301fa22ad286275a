// Cross-process slots in the engine (shared_quota_shm_path): while another
// process on the host has a high-priority request pending, this engine's
// low-priority request waits in its QoS queue for the slot that serves low
// priority; with no high-priority work pending anywhere it starts at once,
// whatever the slot. The other process is a forked child publishing its
// pending counts in the shared segment, as an engine does.
#include <criterion/criterion.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_pair.h"
#include "policy/shared_slots.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr int kIntervalMs = 300;

int read_byte(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return -1;
    unsigned char c;
    return ::read(fd, &c, 1) == 1 ? c : -1;
}

} // namespace

Test(engine_slots, low_waits_for_its_slot_only_while_another_process_has_high_pending) {
    const std::string name = "/tent-test-eslots-" + std::to_string(::getpid());
    ::shm_unlink(name.c_str());
    int to_child[2], to_parent[2];
    cr_assert_eq(::pipe(to_child), 0);
    cr_assert_eq(::pipe(to_parent), 0);
    // No later than the segment's epoch (the child makes it after this), so
    // "within 2 intervals of created" is in slot 0 or 1 and "2 intervals
    // after created" may still be slot 2's start at the latest.
    const auto created = std::chrono::steady_clock::now();
    // Forked before any engine thread exists. The child creates the segment:
    // its first slot (high only) starts now.
    pid_t child = ::fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        QuotaSegmentOptions o;
        o.name = name;
        o.interval = std::chrono::milliseconds(kIntervalMs);
        auto s = SharedSlots::open(o, SteadyClock::instance());
        if (!s) ::_exit(2);
        (*s)->publish_pending({1, 0, 0});
        (void)!::write(to_parent[1], "H", 1);
        if (read_byte(to_child[0]) != 'C') ::_exit(3);
        (*s)->publish_pending({0, 0, 0});
        (void)!::write(to_parent[1], "C", 1);
        if (read_byte(to_child[0]) != 'X') ::_exit(4);
        ::_exit(0);
    }
    cr_assert_eq(read_byte(to_parent[0]), 'H');
    Config c = loopback_config();
    (void)c.set(Knob::SharedQuotaShmPath, name, api_source());
    (void)c.set(Knob::SlotRotationIntervalMs, std::to_string(kIntervalMs), api_source());
    int exit_code = -1;
    {
        EnginePair p(1, {0}, c);
        cr_assert(p.a && p.b && p.a_to_b);
        std::vector<std::uint8_t> src(256 * 1024), dst(src.size(), 0);
        fill(src, 9);
        auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
        auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
        cr_assert(rs.is_ok() && rd.is_ok());
        auto waited = [&] { return p.a->metrics_registry().snapshot().value("tent_qos_waited_total", {"low"}, 0); };
        auto write_low = [&](std::uint64_t cookie) {
            cr_assert(p.a->post_write(p.a_to_b, src.data(), src.size(), handle_bytes(**rd),
                                      reinterpret_cast<std::uint64_t>(dst.data()), with_cookie(cookie, Priority::Low))
                          .is_ok());
            auto done = wait_completions(*p.a, 1);
            cr_assert_eq(done.size(), 1u);
            cr_expect(done[0].status.is_ok(), "%s", done[0].status.to_string().c_str());
            cr_expect(dst == src, "every byte");
            std::fill(dst.begin(), dst.end(), 0);
        };
        const auto posted = std::chrono::steady_clock::now();
        write_low(1);
        // Posted in slot 0 or 1 (the first 2 intervals since the segment was
        // made): it waited for slot 2. Checked, not assumed.
        cr_log_info("low write posted %.0f ms after the segment was made, completed after %.0f ms, waited %g",
                    std::chrono::duration<double, std::milli>(posted - created).count(),
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - created).count(),
                    waited());
        if (posted - created < std::chrono::milliseconds(2 * kIntervalMs)) {
            cr_expect_eq(waited(), 1, "the low write waited for its slot");
            cr_expect_geq(std::chrono::steady_clock::now() - created, std::chrono::milliseconds(2 * kIntervalMs),
                          "it completed in slot 2 or later");
        }
        (void)!::write(to_child[1], "C", 1);
        cr_assert_eq(read_byte(to_parent[0]), 'C');
        const double before = waited();
        write_low(2);
        cr_expect_eq(waited(), before, "nothing high pending anywhere: the low write started at once");
        (void)!::write(to_child[1], "X", 1);
        int status = 0;
        if (::waitpid(child, &status, 0) == child && WIFEXITED(status)) exit_code = WEXITSTATUS(status);
    }
    cr_expect_eq(exit_code, 0, "child");
}
