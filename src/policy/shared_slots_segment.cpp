#include "policy/shared_slots_segment.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <thread>
#include <utility>

#include "common/log.h"

namespace tent {

static_assert(offsetof(QuotaHeader, magic) == 0 && offsetof(QuotaHeader, version) == 8 &&
                  offsetof(QuotaHeader, state) == 12 && offsetof(QuotaHeader, size) == 16,
              "the version-independent prefix must not move");

namespace {

// Creators that lose a race with the last process leaving (which retires and
// unlinks the old segment) simply start over; a few rounds always suffice.
constexpr int kOpenAttempts = 4;
constexpr Duration kReadyPoll = std::chrono::milliseconds(1);

// Owns a file descriptor and a mapping until released to a QuotaSegment.
struct Mapping {
    int fd = -1;
    QuotaHeader* header = nullptr;
    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() {
        if (header) ::munmap(header, sizeof(QuotaHeader));
        if (fd >= 0) ::close(fd);
    }
    Status map(const std::string& name) {
        void* p = ::mmap(nullptr, sizeof(QuotaHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) return Status::from_errno(errno, name + ": cannot map quota segment");
        header = static_cast<QuotaHeader*>(p);
        return Status::ok();
    }
};

std::int64_t to_ns(TimePoint t) { return t.time_since_epoch().count(); }

Status init_mutex(pthread_mutex_t* m, const std::string& name) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    int rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    if (rc == 0) rc = pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) return Status::from_errno(rc, name + ": cannot initialise quota mutex");
    return Status::ok();
}

// We won the O_EXCL race: size, map and fill the header, then publish it.
Status initialise(Mapping& m, const std::string& name, Duration interval, const Clock& clock) {
    if (::ftruncate(m.fd, sizeof(QuotaHeader)) != 0)
        return Status::from_errno(errno, name + ": cannot size quota segment");
    if (Status s = m.map(name); !s) return s;
    QuotaHeader* h = m.header;  // zero-filled by ftruncate
    h->version = kQuotaVersion;
    h->size = sizeof(QuotaHeader);
    h->magic.store(kQuotaMagic, std::memory_order_release);
    h->creator_pid = ::getpid();
    h->epoch_ns = to_ns(clock.now());
    h->interval_ns = interval.count();
    if (Status s = init_mutex(&h->mutex, name); !s) return s;
    // Counted before anyone can attach, so nobody mistakes the new segment
    // for an abandoned one.
    participants_add(*h, ::getpid());
    h->state.store(kQuotaReady, std::memory_order_release);
    return Status::ok();
}

Status stale_error(const std::string& name) {
    return Status(Code::Timeout, name + ": initialisation never completed (stale segment; remove " +
                                     shm_file_for(name) + ")");
}

// Someone else created the segment: wait (bounded) until it is ready and
// check that it is ours. A foreign or mismatched segment fails at once.
Status attach_existing(Mapping& m, const std::string& name, Duration timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        struct stat st;
        if (::fstat(m.fd, &st) != 0) return Status::from_errno(errno, name + ": cannot stat quota segment");
        const auto file_size = static_cast<std::uint64_t>(st.st_size);
        if (file_size > 0 && file_size < kQuotaPrefixSize)
            return Status(Code::InvalidArgument,
                          name + ": not a tent quota segment (only " + std::to_string(file_size) +
                              " bytes)");
        if (file_size >= kQuotaPrefixSize) {
            if (!m.header)
                if (Status s = m.map(name); !s) return s;
            const QuotaHeader* h = m.header;
            const std::uint64_t magic = h->magic.load(std::memory_order_acquire);
            if (magic != 0 && magic != kQuotaMagic)
                return Status(Code::InvalidArgument, name + ": not a tent quota segment (bad magic)");
            if (magic == kQuotaMagic) {
                if (h->version != kQuotaVersion)
                    return Status(Code::InvalidArgument,
                                  name + ": version " + std::to_string(h->version) + ", expected " +
                                      std::to_string(kQuotaVersion) +
                                      " (segment of another tent release; remove " +
                                      shm_file_for(name) + ")");
                if (h->size != sizeof(QuotaHeader) || file_size < sizeof(QuotaHeader))
                    return Status(Code::InvalidArgument,
                                  name + ": quota segment size " + std::to_string(file_size) +
                                      ", expected " + std::to_string(sizeof(QuotaHeader)) +
                                      " (remove " + shm_file_for(name) + ")");
                if (h->state.load(std::memory_order_acquire) == kQuotaReady) {
                    if (h->interval_ns <= 0)
                        return Status(Code::InvalidArgument,
                                      name + ": corrupt quota segment (interval " +
                                          std::to_string(h->interval_ns) + " ns; remove " +
                                          shm_file_for(name) + ")");
                    return Status::ok();
                }
            }
        }
        if (std::chrono::steady_clock::now() >= deadline) return stale_error(name);
        std::this_thread::sleep_for(kReadyPoll);
    }
}

// Removes `name` only if it still names the segment open on `fd`, so a
// segment someone created since is left alone.
void unlink_if_still_named(const std::string& name, int fd) {
    struct stat ours, named;
    if (::fstat(fd, &ours) != 0 || ::stat(shm_file_for(name).c_str(), &named) != 0) return;
    if (ours.st_dev == named.st_dev && ours.st_ino == named.st_ino) ::shm_unlink(name.c_str());
}

} // namespace

std::string shm_file_for(const std::string& name) { return "/dev/shm" + name; }

Status validate_shm_name(const std::string& name) {
    if (name.size() < 2 || name.size() > 255 || name[0] != '/' ||
        name.find('/', 1) != std::string::npos)
        return Status(Code::InvalidArgument,
                      "'" + name + "' is not a POSIX shared-memory name (expected '/' and 1-254 " +
                          "characters without '/', e.g. /tent-quota)");
    return Status::ok();
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

namespace {

void clear_pending(QuotaHeader& h, std::size_t row) {
    for (auto& n : h.pending[row]) n.store(0, std::memory_order_relaxed);
}

} // namespace

bool participants_add(QuotaHeader& h, pid_t pid) { return participants_add_row(h, pid) >= 0; }

int participants_add_row(QuotaHeader& h, pid_t pid) {
    for (std::size_t i = 0; i < kQuotaMaxParticipants; ++i) {
        if (h.participants[i] == 0) {
            h.participants[i] = pid;
            clear_pending(h, i);
            ++h.participant_count;
            if (h.rows_used.load(std::memory_order_relaxed) < i + 1)
                h.rows_used.store(static_cast<std::uint32_t>(i + 1), std::memory_order_release);
            return static_cast<int>(i);
        }
    }
    return -1;
}

bool participants_remove(QuotaHeader& h, pid_t pid) {
    for (std::size_t i = 0; i < kQuotaMaxParticipants; ++i) {
        if (h.participants[i] == pid) {
            h.participants[i] = 0;
            clear_pending(h, i);
            if (h.participant_count > 0) --h.participant_count;
            return true;
        }
    }
    return false;
}

int participant_row(const QuotaHeader& h, pid_t pid) {
    for (std::size_t i = 0; i < kQuotaMaxParticipants; ++i)
        if (h.participants[i] == pid) return static_cast<int>(i);
    return -1;
}

bool higher_pending(const QuotaHeader& h, int level) {
    const std::size_t rows = std::min<std::size_t>(h.rows_used.load(std::memory_order_acquire), kQuotaMaxParticipants);
    const auto above = static_cast<std::size_t>(std::clamp(level, 0, static_cast<int>(kQuotaLevels)));
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t l = 0; l < above; ++l)
            if (h.pending[i][l].load(std::memory_order_relaxed) != 0) return true;
    return false;
}

std::size_t participants_repair(QuotaHeader& h, const std::function<bool(pid_t)>& alive) {
    std::size_t dropped = 0;
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < kQuotaMaxParticipants; ++i) {
        auto& slot = h.participants[i];
        if (slot == 0) continue;
        if (!alive(slot)) {
            slot = 0;
            clear_pending(h, i);
            ++dropped;
        } else {
            ++count;
        }
    }
    // The count is derived; recomputing it also repairs an update a dead
    // process left half done.
    h.participant_count = count;
    return dropped;
}

QuotaLock::QuotaLock(QuotaLock&& other) noexcept
    : header_(std::exchange(other.header_, nullptr)), recovered_(other.recovered_) {}

QuotaLock& QuotaLock::operator=(QuotaLock&& other) noexcept {
    if (this != &other) {
        if (header_) pthread_mutex_unlock(&header_->mutex);
        header_ = std::exchange(other.header_, nullptr);
        recovered_ = other.recovered_;
    }
    return *this;
}

QuotaLock::~QuotaLock() {
    if (header_) pthread_mutex_unlock(&header_->mutex);
}

QuotaSegment::QuotaSegment(Key, std::string name, int fd, QuotaHeader* header, bool created,
                           Duration lock_timeout)
    : name_(std::move(name)), fd_(fd), header_(header), created_(created),
      lock_timeout_(lock_timeout) {}

Result<std::unique_ptr<QuotaSegment>> QuotaSegment::open(const QuotaSegmentOptions& options,
                                                         const Clock& clock) {
    const std::string& name = options.name;
    if (Status s = validate_shm_name(name); !s) return s;
    if (options.interval.count() <= 0)
        return Status(Code::InvalidArgument, name + ": slot rotation interval must be positive");

    for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
        Mapping m;
        bool created = false;
        m.fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (m.fd >= 0) {
            created = true;
            if (Status s = initialise(m, name, options.interval, clock); !s) {
                // Leave no half-made segment for others to wait on.
                ::shm_unlink(name.c_str());
                return s;
            }
        } else if (errno == EEXIST) {
            m.fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
            if (m.fd < 0 && errno == ENOENT) continue;  // removed meanwhile: create it
            if (m.fd < 0) return Status::from_errno(errno, name + ": cannot open quota segment");
            if (Status s = attach_existing(m, name, options.ready_timeout); !s) return s;
        } else {
            return Status::from_errno(errno, name + ": cannot create quota segment");
        }

        auto seg = std::make_unique<QuotaSegment>(Key{}, name, std::exchange(m.fd, -1),
                                                  std::exchange(m.header, nullptr), created,
                                                  options.lock_timeout);
        auto lock = seg->lock();
        if (!lock) return lock.status();
        QuotaHeader& h = lock->header();
        if (h.retired) {
            // Its last user left and unlinked it (or died between the two):
            // make sure the name is gone, then start over with a fresh one.
            lock = QuotaLock();
            unlink_if_still_named(name, seg->fd_);
            continue;
        }
        participants_repair(h, process_alive);
        if (!created && h.participant_count == 0) {
            // Everyone who used it is gone (killed: nobody retired it). Start a
            // fresh schedule with this process's settings rather than follow a
            // dead job's. Safe: whoever attaches later sees us in the table.
            h.epoch_ns = clock.now().time_since_epoch().count();
            h.interval_ns = options.interval.count();
            TENT_INFO("quota segment reused", "%s: left by processes that are gone; schedule restarted",
                      name.c_str());
        }
        const int row = created ? participant_row(h, ::getpid()) : participants_add_row(h, ::getpid());
        if (row >= 0) {
            seg->registered_pid_ = ::getpid();
            seg->row_ = row;
        } else {
            TENT_WARN("quota participants full",
                      "%s: %zu processes attached already; this one is not counted", name.c_str(),
                      kQuotaMaxParticipants);
        }
        if (!created && h.interval_ns != options.interval.count()) {
            TENT_WARN("quota interval mismatch",
                      "%s: following the slot rotation interval of the processes already attached "
                      "(%g ms) instead of this process's slot_rotation_interval_ms (%g ms)",
                      name.c_str(), static_cast<double>(h.interval_ns) / 1e6,
                      static_cast<double>(options.interval.count()) / 1e6);
        }
        lock = QuotaLock();  // unlock before handing the segment out
        return seg;
    }
    return Status(Code::Busy, name + ": quota segment kept being removed while opening it");
}

Result<QuotaLock> QuotaSegment::lock() {
    struct timespec abs;
    ::clock_gettime(CLOCK_MONOTONIC, &abs);
    const auto ns = lock_timeout_.count();
    abs.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
    abs.tv_nsec += static_cast<long>(ns % 1'000'000'000);
    if (abs.tv_nsec >= 1'000'000'000) {
        abs.tv_sec += 1;
        abs.tv_nsec -= 1'000'000'000;
    }
    int rc = pthread_mutex_clocklock(&header_->mutex, CLOCK_MONOTONIC, &abs);
    if (rc == 0) return QuotaLock(header_, false);
    if (rc == EOWNERDEAD) {
        // A process died holding the mutex, maybe in the middle of an update:
        // rebuild what the mutex guards, then tell the mutex it is usable again.
        std::size_t dropped = participants_repair(*header_, process_alive);
        ++header_->recoveries;
        pthread_mutex_consistent(&header_->mutex);
        TENT_WARN("quota mutex recovered",
                  "%s: a process died holding it; %zu dead participant(s) removed",
                  name_.c_str(), dropped);
        return QuotaLock(header_, true);
    }
    if (rc == ENOTRECOVERABLE)
        return Status(Code::SystemError, name_ + ": quota mutex is not recoverable (remove " +
                                             shm_file_for(name_) + ")");
    if (rc == ETIMEDOUT)
        return Status(Code::Timeout, name_ + ": quota mutex still held after " +
                                         std::to_string(lock_timeout_.count() / 1'000'000) + " ms");
    return Status::from_errno(rc, name_ + ": cannot lock quota mutex");
}

void QuotaSegment::publish_pending(const std::array<std::uint32_t, kQuotaLevels>& counts) {
    if (row_ < 0) return;
    auto& row = header_->pending[static_cast<std::size_t>(row_)];
    for (std::size_t l = 0; l < kQuotaLevels; ++l) row[l].store(counts[l], std::memory_order_relaxed);
}

Status QuotaSegment::repair() {
    auto lock = this->lock();
    if (!lock) return lock.status();
    participants_repair(lock->header(), process_alive);
    return Status::ok();
}

void QuotaSegment::detach() {
    auto lock = this->lock();
    if (!lock) {
        TENT_DEBUG("quota detach failed", "%s", lock.status().to_string().c_str());
        return;
    }
    QuotaHeader& h = lock->header();
    if (row_ >= 0 && h.participants[row_] == registered_pid_) {
        h.participants[row_] = 0;
        clear_pending(h, static_cast<std::size_t>(row_));
        if (h.participant_count > 0) --h.participant_count;
    } else {
        participants_remove(h, registered_pid_);
    }
    participants_repair(h, process_alive);
    if (h.participant_count == 0 && !h.retired) {
        // Under the mutex, so a process attaching now sees `retired` and
        // creates a fresh segment instead of joining a name that is gone.
        h.retired = 1;
        ::shm_unlink(name_.c_str());
    }
}

QuotaSegment::~QuotaSegment() {
    if (registered_pid_ != 0 && registered_pid_ == ::getpid()) detach();
    if (header_) ::munmap(header_, sizeof(QuotaHeader));
    if (fd_ >= 0) ::close(fd_);
}

TimePoint QuotaSegment::epoch() const { return TimePoint(Duration(header_->epoch_ns)); }

Duration QuotaSegment::interval() const { return Duration(header_->interval_ns); }

} // namespace tent
