// The shared-memory side of cross-process slots, with real processes: one
// initialisation however many start at once, a common schedule, recovery
// from a process SIGKILLed while it holds the mutex, and clear errors for
// foreign, other-version and stale segments.
#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "policy/shared_slots.h"

using namespace tent;
using namespace std::chrono_literals;

namespace {

std::string unique_name(const char* tag) {
    return "/tent-test-slots-" + std::to_string(::getpid()) + "-" + tag;
}

bool name_exists(const std::string& name) {
    int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

QuotaSegmentOptions options_for(const std::string& name) {
    QuotaSegmentOptions o;
    o.name = name;
    o.interval = 2ms;
    o.ready_timeout = 200ms;
    o.lock_timeout = 200ms;
    return o;
}

// Writes `bytes` as the whole content of a new segment `name`.
void write_segment(const std::string& name, const void* bytes, std::size_t len) {
    ::shm_unlink(name.c_str());
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0, "shm_open %s: %s", name.c_str(), std::strerror(errno));
    cr_assert_eq(::write(fd, bytes, len), static_cast<ssize_t>(len));
    ::close(fd);
}

// A header prefix as another writer would leave it.
std::vector<unsigned char> header_bytes(std::uint64_t magic, std::uint32_t version,
                                        std::uint32_t state, std::uint64_t size) {
    std::vector<unsigned char> b(sizeof(QuotaHeader), 0);
    std::memcpy(&b[0], &magic, 8);
    std::memcpy(&b[8], &version, 4);
    std::memcpy(&b[12], &state, 4);
    std::memcpy(&b[16], &size, 8);
    return b;
}

// Waits up to 5 s for one byte on fd; returns it, or -1.
int read_byte(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return -1;
    unsigned char c;
    return ::read(fd, &c, 1) == 1 ? c : -1;
}

// Exit status of a child, or -1 if it did not exit normally within 5 s.
int wait_child(pid_t pid) {
    for (int i = 0; i < 500; ++i) {
        int status = 0;
        pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ::usleep(10000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
}

// Log lines go to a temporary file the test reads back.
struct LogCapture {
    FILE* file = std::tmpfile();
    LogCapture() { set_log_fd(::fileno(file)); }
    ~LogCapture() {
        set_log_fd(-1);
        std::fclose(file);
    }
    std::string text() const {
        std::string out;
        char buf[4096];
        ::lseek(::fileno(file), 0, SEEK_SET);
        ssize_t n;
        while ((n = ::read(::fileno(file), buf, sizeof buf)) > 0) out.append(buf, n);
        return out;
    }
};

} // namespace

Test(shared_slots, first_open_creates_second_attaches_to_the_same_schedule) {
    const std::string name = unique_name("attach");
    ManualClock clock_a(TimePoint(std::chrono::hours(2)));
    ManualClock clock_b(TimePoint(std::chrono::hours(2) + 7ms));
    auto a = SharedSlots::open(options_for(name), clock_a);
    cr_assert(a.is_ok(), "%s", a.status().to_string().c_str());
    auto b = SharedSlots::open(options_for(name), clock_b);
    cr_assert(b.is_ok(), "%s", b.status().to_string().c_str());
    cr_expect((*a)->segment().created());
    cr_expect_not((*b)->segment().created());
    // The creator's clock set the epoch; the second process follows it.
    cr_expect((*b)->schedule().epoch == clock_a.now());
    cr_expect((*b)->schedule().interval == 2ms);
    for (int i = 0; i < 50; ++i) {
        TimePoint t = clock_b.now() + i * 300us;
        for (int p = 0; p < 3; ++p) cr_expect_eq((*a)->allowed(p, t), (*b)->allowed(p, t));
    }
    {
        auto lock = (*a)->segment().lock();
        cr_assert(lock.is_ok());
        cr_expect_eq(lock->header().participant_count, 2u);
    }
    // The name lives while someone is attached and goes with the last one.
    a = Result<std::unique_ptr<SharedSlots>>(std::unique_ptr<SharedSlots>());
    cr_expect(name_exists(name));
    b = Result<std::unique_ptr<SharedSlots>>(std::unique_ptr<SharedSlots>());
    cr_expect_not(name_exists(name));
}

Test(shared_slots, the_creators_interval_wins_with_a_warning) {
    const std::string name = unique_name("interval");
    ManualClock clock;
    LogCapture log;
    auto a = SharedSlots::open(options_for(name), clock);
    cr_assert(a.is_ok());
    auto other = options_for(name);
    other.interval = 5ms;
    auto b = SharedSlots::open(other, clock);
    cr_assert(b.is_ok());
    cr_expect((*b)->schedule().interval == 2ms);
    std::string text = log.text();
    cr_expect(text.find("quota interval mismatch") != std::string::npos, "log: %s", text.c_str());
}

Test(shared_slots, concurrent_first_opens_initialise_once) {
    const std::string name = unique_name("race");
    constexpr int kChildren = 4;
    int start[2], results[2], done[2];
    cr_assert_eq(::pipe(start), 0);
    cr_assert_eq(::pipe(results), 0);
    cr_assert_eq(::pipe(done), 0);
    std::vector<pid_t> kids;
    for (int i = 0; i < kChildren; ++i) {
        pid_t pid = ::fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            ::close(start[1]);
            ::close(done[1]);
            char c;
            (void)::read(start[0], &c, 1);  // returns 0 when the parent closes: all go at once
            ManualClock clock(TimePoint(std::chrono::hours(1) + i * 1s));
            auto s = SharedSlots::open(options_for(name), clock);
            struct {
                int ok, created;
                long long epoch, own_clock;
            } r = {s.is_ok(), s.is_ok() && (*s)->segment().created(),
                   s.is_ok() ? (long long)(*s)->schedule().epoch.time_since_epoch().count() : 0,
                   (long long)clock.now().time_since_epoch().count()};
            (void)::write(results[1], &r, sizeof r);
            (void)::read(done[0], &c, 1);  // stay attached until everyone has reported
            s = Result<std::unique_ptr<SharedSlots>>(std::unique_ptr<SharedSlots>());
            ::_exit(0);
        }
        kids.push_back(pid);
    }
    ::close(start[0]);
    ::close(results[1]);
    ::close(done[0]);
    ::close(start[1]);
    int created = 0;
    long long epoch = -1;
    for (int i = 0; i < kChildren; ++i) {
        struct pollfd p = {results[0], POLLIN, 0};
        cr_assert_eq(::poll(&p, 1, 5000), 1, "child %d did not report", i);
        struct {
            int ok, created;
            long long epoch, own_clock;
        } r;
        cr_assert_eq(::read(results[0], &r, sizeof r), (ssize_t)sizeof r);
        cr_expect(r.ok);
        created += r.created;
        if (r.created) cr_expect_eq(r.epoch, r.own_clock, "the creator's clock sets the epoch");
        if (epoch < 0) epoch = r.epoch;
        cr_expect_eq(r.epoch, epoch, "every process must see the creator's epoch");
    }
    cr_expect_eq(created, 1, "exactly one process initialises the segment");
    ::close(done[1]);
    for (pid_t pid : kids) cr_expect_eq(wait_child(pid), 0);
    cr_expect_not(name_exists(name), "the last process to leave removes the name");
}

Test(shared_slots, a_process_killed_holding_the_mutex_does_not_stop_the_others) {
    const std::string name = unique_name("kill");
    ManualClock clock;
    auto parent = SharedSlots::open(options_for(name), clock);
    cr_assert(parent.is_ok(), "%s", parent.status().to_string().c_str());

    int ready[2];
    cr_assert_eq(::pipe(ready), 0);
    pid_t holder = ::fork();
    cr_assert_geq(holder, 0);
    if (holder == 0) {
        auto s = SharedSlots::open(options_for(name), clock);
        if (!s) ::_exit(2);
        auto lock = (*s)->segment().lock();
        if (!lock) ::_exit(3);
        (void)::write(ready[1], "L", 1);
        for (;;) ::pause();  // SIGKILLed here, mutex held
    }
    cr_assert_eq(read_byte(ready[0]), 'L');
    // It really holds the mutex: we cannot take it.
    auto blocked = (*parent)->segment().lock();
    cr_expect_not(blocked.is_ok());
    cr_expect(blocked.status().code() == Code::Timeout, "%s", blocked.status().to_string().c_str());

    cr_assert_eq(::kill(holder, SIGKILL), 0);
    int status = 0;
    cr_assert_eq(::waitpid(holder, &status, 0), holder);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    LogCapture log;
    {
        auto lock = (*parent)->segment().lock();
        cr_assert(lock.is_ok(), "%s", lock.status().to_string().c_str());
        cr_expect(lock->recovered(), "EOWNERDEAD must be reported as a recovery");
        cr_expect_eq(lock->header().recoveries, 1u);
        // The dead holder was dropped from the table: only we remain.
        cr_expect_eq(lock->header().participant_count, 1u);
    }
    std::string text = log.text();
    cr_expect(text.find("quota mutex recovered") != std::string::npos, "log: %s", text.c_str());
    cr_expect(text.find(name) != std::string::npos, "log names the segment: %s", text.c_str());

    // Another process carries on with the segment as if nothing happened.
    pid_t other = ::fork();
    cr_assert_geq(other, 0);
    if (other == 0) {
        int code = 0;
        {
            ManualClock c2(clock.now() + 1ms);
            auto s = SharedSlots::open(options_for(name), c2);
            if (!s) ::_exit(10);
            auto lock = (*s)->segment().lock();
            if (!lock) code = 11;
            else if (lock->recovered()) code = 12;
            else if (lock->header().participant_count != 2) code = 13;
            lock = Result<QuotaLock>(QuotaLock());
            if (!code && (*s)->schedule().epoch != (*parent)->schedule().epoch) code = 14;
        }
        ::_exit(code);
    }
    cr_expect_eq(wait_child(other), 0, "second process could not use the segment");

    // And so do we, without another recovery.
    auto again = (*parent)->segment().lock();
    cr_assert(again.is_ok());
    cr_expect_not(again->recovered());
    cr_expect_eq(again->header().recoveries, 1u);
    cr_expect_eq(again->header().participant_count, 1u);
}

Test(shared_slots, foreign_segment_is_a_clear_error_naming_it) {
    const std::string name = unique_name("foreign");
    std::vector<unsigned char> garbage(4096, 0xab);
    write_segment(name, garbage.data(), garbage.size());
    ManualClock clock;
    auto start = std::chrono::steady_clock::now();
    auto s = SharedSlots::open(options_for(name), clock);
    auto elapsed = std::chrono::steady_clock::now() - start;
    cr_assert_not(s.is_ok());
    cr_expect(s.status().code() == Code::InvalidArgument);
    std::string expected = name + ": not a tent quota segment (bad magic)";
    std::string got = s.status().message();
    cr_expect_str_eq(got.c_str(), expected.c_str());
    cr_expect(elapsed < 100ms, "a foreign segment must fail at once, not after the ready wait");
    cr_expect(name_exists(name), "someone else's segment is never removed");
    ::shm_unlink(name.c_str());
}

Test(shared_slots, tiny_foreign_segment_is_rejected) {
    const std::string name = unique_name("tiny");
    const char bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    write_segment(name, bytes, sizeof bytes);
    ManualClock clock;
    auto s = SharedSlots::open(options_for(name), clock);
    cr_assert_not(s.is_ok());
    std::string expected = name + ": not a tent quota segment (only 8 bytes)";
    std::string got = s.status().message();
    cr_expect_str_eq(got.c_str(), expected.c_str());
    ::shm_unlink(name.c_str());
}

Test(shared_slots, other_version_is_a_clear_error) {
    const std::string name = unique_name("version");
    auto bytes = header_bytes(kQuotaMagic, 1, kQuotaReady, sizeof(QuotaHeader));  // version 1: no pending counts
    write_segment(name, bytes.data(), bytes.size());
    ManualClock clock;
    auto s = SharedSlots::open(options_for(name), clock);
    cr_assert_not(s.is_ok());
    std::string expected = name + ": version 1, expected 2 (segment of another tent release; remove /dev/shm" + name + ")";
    std::string got = s.status().message();
    cr_expect_str_eq(got.c_str(), expected.c_str());
    ::shm_unlink(name.c_str());
}

Test(shared_slots, creator_that_died_before_ready_leaves_a_stale_error) {
    const std::string name = unique_name("stale");
    // Magic, version and size written, state never set: the creator died mid-way.
    auto bytes = header_bytes(kQuotaMagic, kQuotaVersion, 0, sizeof(QuotaHeader));
    write_segment(name, bytes.data(), bytes.size());
    ManualClock clock;
    auto options = options_for(name);
    options.ready_timeout = 50ms;
    auto start = std::chrono::steady_clock::now();
    auto s = SharedSlots::open(options, clock);
    auto elapsed = std::chrono::steady_clock::now() - start;
    cr_assert_not(s.is_ok());
    cr_expect(s.status().code() == Code::Timeout);
    std::string expected =
        name + ": initialisation never completed (stale segment; remove /dev/shm" + name + ")";
    std::string got = s.status().message();
    cr_expect_str_eq(got.c_str(), expected.c_str());
    cr_expect(elapsed >= 50ms && elapsed < 1s, "bounded wait for ready");
    ::shm_unlink(name.c_str());
}

Test(shared_slots, creator_that_died_before_sizing_leaves_a_stale_error) {
    const std::string name = unique_name("empty");
    write_segment(name, "", 0);
    ManualClock clock;
    auto options = options_for(name);
    options.ready_timeout = 20ms;
    auto s = SharedSlots::open(options, clock);
    cr_assert_not(s.is_ok());
    std::string got = s.status().message();
    cr_expect(got.find("initialisation never completed") != std::string::npos, "%s", got.c_str());
    ::shm_unlink(name.c_str());
}

Test(shared_slots, a_retired_segment_is_replaced_not_joined) {
    // The last process to leave sets `retired` and unlinks; one that died
    // between the two left a retired segment under the name.
    const std::string name = unique_name("retired");
    ManualClock clock;
    auto old = QuotaSegment::open(options_for(name), clock);
    cr_assert(old.is_ok());
    {
        auto lock = (*old)->lock();
        cr_assert(lock.is_ok());
        lock->header().retired = 1;
    }
    clock.advance(1s);
    auto fresh = SharedSlots::open(options_for(name), clock);
    cr_assert(fresh.is_ok(), "%s", fresh.status().to_string().c_str());
    cr_expect((*fresh)->segment().created());
    cr_expect((*fresh)->schedule().epoch == clock.now());
}

Test(shared_slots, bad_names_are_rejected) {
    ManualClock clock;
    for (const char* bad : {"tent-quota", "/", "/a/b", ""}) {
        auto options = options_for(bad);
        auto s = SharedSlots::open(options, clock);
        cr_expect_not(s.is_ok(), "'%s' accepted", bad);
        cr_expect(s.status().code() == Code::InvalidArgument);
    }
}

Test(shared_slots, from_config_is_off_by_default_and_names_the_knob) {
    ManualClock clock;
    Config config;
    auto off = SharedSlots::from_config(config, clock);
    cr_assert(off.is_ok());
    cr_expect(*off == nullptr, "empty shared_quota_shm_path turns slots off");

    const std::string name = unique_name("config");
    cr_assert(config.set(Knob::SharedQuotaShmPath, name, Source{}).is_ok());
    cr_assert(config.set(Knob::SlotRotationIntervalMs, "7", Source{}).is_ok());
    auto on = SharedSlots::from_config(config, clock);
    cr_assert(on.is_ok(), "%s", on.status().to_string().c_str());
    cr_expect((*on)->schedule().interval == 7ms);
    on = Result<std::unique_ptr<SharedSlots>>(std::unique_ptr<SharedSlots>());

    std::vector<unsigned char> garbage(64, 0x5a);
    write_segment(name, garbage.data(), garbage.size());
    auto bad = SharedSlots::from_config(config, clock);
    cr_assert_not(bad.is_ok());
    std::string expected = "shared_quota_shm_path: " + name + ": not a tent quota segment (bad magic)";
    std::string got = bad.status().message();
    cr_expect_str_eq(got.c_str(), expected.c_str());
    ::shm_unlink(name.c_str());
}

Test(shared_slots, participant_repair_drops_the_dead_and_recounts) {
    auto header = std::make_unique<QuotaHeader>();
    QuotaHeader& h = *header;
    cr_expect(participants_add(h, 100));
    cr_expect(participants_add(h, 200));
    cr_expect(participants_add(h, 300));
    cr_expect_eq(h.participant_count, 3u);
    h.participant_count = 77;  // a process died in the middle of an update
    std::size_t dropped = participants_repair(h, [](pid_t pid) { return pid != 200; });
    cr_expect_eq(dropped, 1u);
    cr_expect_eq(h.participant_count, 2u);
    cr_expect(participants_remove(h, 100));
    cr_expect_not(participants_remove(h, 200));
    cr_expect_eq(h.participant_count, 1u);
    for (std::size_t i = 1; i < kQuotaMaxParticipants; ++i) cr_expect(participants_add(h, 1000 + i));
    cr_expect_not(participants_add(h, 5), "a full table refuses");
}

Test(shared_slots, a_segment_whose_users_were_all_killed_restarts_with_new_settings) {
    const std::string name = unique_name("orphan");
    int ready[2];
    cr_assert_eq(::pipe(ready), 0);
    pid_t user = ::fork();
    cr_assert_geq(user, 0);
    if (user == 0) {
        ManualClock c(TimePoint(std::chrono::hours(3)));
        auto s = SharedSlots::open(options_for(name), c);  // 2 ms
        (void)::write(ready[1], s.is_ok() ? "O" : "E", 1);
        for (;;) ::pause();
    }
    cr_assert_eq(read_byte(ready[0]), 'O');
    ::kill(user, SIGKILL);
    ::waitpid(user, nullptr, 0);
    cr_assert(name_exists(name), "a killed process leaves its segment behind");

    ManualClock clock(TimePoint(std::chrono::hours(4)));
    auto options = options_for(name);
    options.interval = 5ms;
    auto s = SharedSlots::open(options, clock);
    cr_assert(s.is_ok(), "%s", s.status().to_string().c_str());
    cr_expect_not((*s)->segment().created());
    cr_expect((*s)->schedule().interval == 5ms, "the dead job's interval must not stick");
    cr_expect((*s)->schedule().epoch == clock.now());
    s = Result<std::unique_ptr<SharedSlots>>(std::unique_ptr<SharedSlots>());
    cr_expect_not(name_exists(name));
}

// Work-conserving slots across processes: a forked process with high
// priority work pending makes this one's low work wait for its slot; with
// nothing higher pending anywhere low work may start in any slot.
Test(shared_slots, low_waits_for_its_slot_only_while_another_process_has_high_pending) {
    const std::string name = unique_name("pending");
    ManualClock clock;  // slot 0 (high only) starts now
    auto parent = SharedSlots::open(options_for(name), clock);
    cr_assert(parent.is_ok(), "%s", parent.status().to_string().c_str());
    const TimePoint slot0 = clock.now(), slot2 = clock.now() + 2 * options_for(name).interval;
    cr_expect((*parent)->may_start(kSlotPriorityLow, slot0), "nothing pending anywhere: low runs at once");

    int to_child[2], to_parent[2];
    cr_assert_eq(::pipe(to_child), 0);
    cr_assert_eq(::pipe(to_parent), 0);
    pid_t child = ::fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        auto s = SharedSlots::open(options_for(name), clock);
        if (!s) ::_exit(2);
        (*s)->publish_pending({1, 0, 0});  // one high request
        (void)::write(to_parent[1], "H", 1);
        if (read_byte(to_child[0]) != 'C') ::_exit(3);
        (*s)->publish_pending({0, 0, 4});  // high done, low of its own
        (void)::write(to_parent[1], "C", 1);
        if (read_byte(to_child[0]) != 'X') ::_exit(4);
        ::_exit(0);
    }
    cr_assert_eq(read_byte(to_parent[0]), 'H');
    cr_expect_not((*parent)->may_start(kSlotPriorityLow, slot0), "high pending elsewhere: low waits in slot 0");
    cr_expect_not((*parent)->may_start(kSlotPriorityMedium, slot0), "medium too");
    cr_expect((*parent)->may_start(kSlotPriorityHigh, slot0));
    cr_expect((*parent)->may_start(kSlotPriorityLow, slot2), "slot 2 serves everyone");
    (void)::write(to_child[1], "C", 1);
    cr_assert_eq(read_byte(to_parent[0]), 'C');
    cr_expect((*parent)->may_start(kSlotPriorityLow, slot0), "no high pending anywhere: low runs in slot 0");
    cr_expect((*parent)->may_start(kSlotPriorityMedium, slot0));
    (void)::write(to_child[1], "X", 1);
    cr_expect_eq(wait_child(child), 0);
}

// A process killed while holding the mutex, with high work pending, holds
// nobody back for long: its row is cleared when the table is repaired.
Test(shared_slots, a_killed_process_with_high_pending_does_not_hold_low_back) {
    const std::string name = unique_name("dead-pending");
    ManualClock clock;
    auto parent = SharedSlots::open(options_for(name), clock);
    cr_assert(parent.is_ok(), "%s", parent.status().to_string().c_str());
    int ready[2];
    cr_assert_eq(::pipe(ready), 0);
    pid_t holder = ::fork();
    cr_assert_geq(holder, 0);
    if (holder == 0) {
        auto s = SharedSlots::open(options_for(name), clock);
        if (!s) ::_exit(2);
        (*s)->publish_pending({3, 0, 0});
        auto lock = (*s)->segment().lock();
        if (!lock) ::_exit(3);
        (void)::write(ready[1], "L", 1);
        for (;;) ::pause();  // SIGKILLed here, mutex held, high pending
    }
    cr_assert_eq(read_byte(ready[0]), 'L');
    cr_assert_eq(::kill(holder, SIGKILL), 0);
    cr_assert_eq(::waitpid(holder, nullptr, 0), holder);
    clock.advance(SharedSlots::kRepairInterval);
    const SlotSchedule& sched = (*parent)->schedule();
    const Duration cycle = kSlotCount * sched.interval;
    const TimePoint slot0 = sched.epoch + ((clock.now() - sched.epoch) / cycle + 1) * cycle;
    cr_assert_eq(slot_at(sched, slot0), 0);
    LogCapture log;
    cr_expect((*parent)->may_start(kSlotPriorityLow, slot0),
              "the dead process's row was cleared");
    cr_expect(log.text().find("quota mutex recovered") != std::string::npos, "log: %s", log.text().c_str());
    auto lock = (*parent)->segment().lock();
    cr_assert(lock.is_ok());
    cr_expect_eq(lock->header().participant_count, 1u);
}
